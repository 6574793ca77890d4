package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator the callback thread's wake looks at nothing but its own
// idle time: a host function's hand-off after a spin kernel costs the same
// with 0, 1 or 3 other streams running a graph or copying (but for
// host.busy_stream_ns's few ns a call per other busy stream), and (every
// idle here below front_end.callback_park_after_ns)
// front_end.callback_wake_ns more than without the wake.
func TestCallbacksBesideGraphsReadTheWake(t *testing.T) {
	with, v, v0 := measuredWakeOnOff(t, "h200", "callbacks beside running graphs")
	for _, idle := range cbBesideIdles {
		alone := v(cbBesideName(idle, 0, 0))
		// The kernel's length is taken out: what is left is the wake and
		// the calls around it (launch, host function, callback, hand-off).
		assert.Greater(t, alone-with.FrontEnd.CallbackWakeNs, 5000.0, "idle %d us", idle)
		assert.Less(t, alone-with.FrontEnd.CallbackWakeNs, 20000.0, "idle %d us", idle)
		assert.InDelta(t, with.FrontEnd.CallbackWakeNs, alone-v0(cbBesideName(idle, 0, 0)), 1, "idle %d us: the wake", idle)
		for w, work := range cbBesideWork {
			for _, n := range cbBesideOthers[1:] {
				assert.InDelta(t, alone, v(cbBesideName(idle, n, w)), 50, "idle %d us, %d others %s", idle, n, work)
				assert.InDelta(t, 0, v(cbBesideExtraName(idle, n, w)), 50, "idle %d us, %d others %s", idle, n, work)
				assert.InDelta(t, v(cbBesideMeanName(idle, 0, 0)), v(cbBesideMeanName(idle, n, w)), 50, "idle %d us, %d others %s: the mean", idle, n, work)
			}
		}
	}
}
