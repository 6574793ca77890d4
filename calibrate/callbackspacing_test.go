package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The spaced callbacks' probe reads the simulator's callback path: every
// second callback finds the callback thread idle and pays
// front_end.callback_wake_ns, at every gap, so the step it reports is 0
// (one regime); with the wake removed each costs that much less.
func TestCallbackSpacingSeesTheWakeAtEveryGap(t *testing.T) {
	measure := func(wakeNs float64) map[int]float64 {
		cfg := loadConfig(t, "h100")
		cfg.FrontEnd.CallbackWakeNs = wakeNs
		cfg.FrontEnd.CallbackReleaseNs = 0 // the wake alone (the release: hostfuncstreams_test.go)
		rep, err := Measure(mustSim(t, cfg), []string{"host callbacks spaced"}, nil)
		require.NoError(t, err)
		out := map[int]float64{}
		for _, gap := range callbackGaps {
			m, ok := rep.byName(fmt.Sprintf("spaced callbacks, second after a %d us gap", gap))
			require.True(t, ok, "gap %d us", gap)
			out[gap] = m.Value
		}
		step, ok := rep.byName("spaced callbacks: idle before the callback thread sleeps")
		require.True(t, ok)
		assert.Zero(t, step.Value, "one regime: the simulator has no awake window")
		return out
	}
	with, without := measure(31000), measure(0)
	for _, gap := range callbackGaps {
		assert.InDelta(t, 31000, with[gap]-without[gap], 1, "gap %d us", gap)
		assert.InDelta(t, with[callbackGaps[0]], with[gap], 1, "gap %d us", gap)
	}
}
