package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On the simulator the callback thread's wake looks at nothing but its own
// idle time and the copies in flight: a host function's hand-off after a
// spin kernel costs the same with 0, 1 or 3 other streams running a graph
// (but for host.busy_stream_ns's few ns a call per other busy stream),
// and (every idle here below front_end.callback_park_after_ns)
// front_end.callback_wake_ns more than without the wake. Beside other
// streams' copies it costs front_end.callback_copy_delay of their time
// left more, up to front_end.callback_copy_delay_max_ns: the bound beside
// 6.6 MB copies each way at every idle time, nothing beside 0.4 MB copies
// done before the kernel is, more beside three streams than one, and
// nothing beside any copies without the field.
func TestCallbacksBesideGraphsReadTheWake(t *testing.T) {
	with, v, v0 := measuredWakeOnOff(t, "h200", "callbacks beside running graphs")
	bound := with.FrontEnd.CallbackCopyDelayMaxNs
	require.Positive(t, bound)
	off := loadConfig(t, "h200")
	off.FrontEnd.CallbackCopyDelay = 0
	_, vOff := measured(t, off, "callbacks beside running graphs")
	for _, idle := range cbBesideIdles {
		alone := v(cbBesideName(idle, 0, 0))
		// The kernel's length is taken out: what is left is the wake and
		// the calls around it (launch, host function, callback, hand-off).
		assert.Greater(t, alone-with.FrontEnd.CallbackWakeNs, 5000.0, "idle %d us", idle)
		assert.Less(t, alone-with.FrontEnd.CallbackWakeNs, 20000.0, "idle %d us", idle)
		assert.InDelta(t, with.FrontEnd.CallbackWakeNs, alone-v0(cbBesideName(idle, 0, 0)), 1, "idle %d us: the wake", idle)
		for w, work := range cbBesideWork {
			for _, n := range cbBesideOthers[1:] {
				assert.InDelta(t, alone, vOff(cbBesideName(idle, n, w)), 50, "idle %d us, %d others %s, no copy delay", idle, n, work)
				assert.InDelta(t, v(cbBesideMeanName(idle, n, w))-alone, v(cbBesideExtraName(idle, n, w)), 50, "idle %d us, %d others %s: the mean", idle, n, work)
				extra := v(cbBesideExtraName(idle, n, w))
				assert.GreaterOrEqual(t, extra, 0.0, "idle %d us, %d others %s", idle, n, work)
				assert.LessOrEqual(t, extra, bound+50, "idle %d us, %d others %s", idle, n, work)
			}
		}
		for _, n := range cbBesideOthers[1:] {
			assert.InDelta(t, 0, v(cbBesideExtraName(idle, n, 0)), 50, "idle %d us, %d others running a graph", idle, n)
			assert.InDelta(t, bound, v(cbBesideExtraName(idle, n, 3)), 50, "idle %d us, %d others copying 6.6 MB", idle, n)
			if idle >= 50 {
				assert.InDelta(t, 0, v(cbBesideExtraName(idle, n, 2)), 50, "idle %d us, %d others copying 0.4 MB", idle, n)
			}
		}
		assert.Greater(t, v(cbBesideExtraName(idle, 3, 1)), v(cbBesideExtraName(idle, 1, 1))+1000, "idle %d us: 1.6 MB copies on three streams over one", idle)
	}
}
