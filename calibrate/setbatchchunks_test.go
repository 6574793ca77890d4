package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

func TestSetBatchChunksMeasuresEveryShapeAndStreamCount(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	rep, err := Measure(mustSim(t, cfg), []string{"set-batch chunks"}, nil)
	require.NoError(t, err)
	get := func(shape string, s int, what string) float64 {
		t.Helper()
		m, ok := rep.byName(sbName(shape, s, what))
		require.True(t, ok, "%s on %d streams, %s", shape, s, what)
		require.Positive(t, m.Value)
		return m.Value
	}
	for _, sh := range sbShapes {
		for _, s := range sbStreams {
			for _, what := range []string{"gated", "gated, issue", "gated, calls", "gated, calls, issue", "dispatched", "dispatched, calls", "dispatched, wait"} {
				get(sh.name, s, what)
			}
			// The dispatcher's wall time holds its calls and its Gets.
			assert.LessOrEqual(t, get(sh.name, s, "dispatched, calls")+get(sh.name, s, "dispatched, wait"), get(sh.name, s, "dispatched")*1.001, "%s on %d streams", sh.name, s)
		}
		// One stream runs the chunks one after another; two overlap one
		// chunk's copy in with another's copy out.
		assert.Less(t, get(sh.name, 2, "gated"), 0.75*get(sh.name, 1, "gated"), sh.name)
		// A host function after each launch holds a lone stream (the
		// callback wake), so the calls cost time on one stream.
		assert.Greater(t, get(sh.name, 1, "gated, calls"), get(sh.name, 1, "gated"), sh.name)
	}
	for _, d := range sbSpins {
		for _, s := range sbStreams {
			without, ok := rep.byName(sbHostFuncName(d, s, false))
			require.True(t, ok)
			with, ok := rep.byName(sbHostFuncName(d, s, true))
			require.True(t, ok)
			// 12 spin kernels over s streams take at least their share of
			// one stream, and a host function after each adds time.
			assert.GreaterOrEqual(t, without.Value, float64(d.Nanoseconds())*float64(sbLaunches/s), "%v on %d streams", d, s)
			assert.Greater(t, with.Value, without.Value, "%v on %d streams", d, s)
		}
	}
	// Copies alone bound every shape from below.
	for _, s := range sbStreams {
		assert.LessOrEqual(t, get("copies", s, "gated"), get("16x1", s, "gated"), "%d streams", s)
	}
}

// Measured on a simulator with callback_wake_ns 38 us and callback_ns
// 4 us, "set-batch chunks"' host functions on one stream and the callback
// duration fit back to those two, and the fit says it used them.
func TestCallbackWakeFitsFromSetBatchHostFunctions(t *testing.T) {
	truth := loadConfig(t, "h100-datasheet")
	truth.FrontEnd.CallbackWakeNs, truth.FrontEnd.CallbackNs = 38000, 4000
	rep, err := Measure(mustSim(t, truth), []string{"host callbacks", "set-batch chunks"}, nil)
	require.NoError(t, err)
	d, what, ok := hostFuncOnOneStream(rep)
	require.True(t, ok)
	assert.InDelta(t, 42000, d, 50, "each host function on one stream pays the wake and the run")
	assert.Contains(t, what, "spin kernels on one stream")

	f := newFitted(loadConfig(t, "h100-datasheet"))
	f.fitCallbackWake(rep)
	assert.InDelta(t, 38000, f.Config.FrontEnd.CallbackWakeNs, 60)
	assert.InDelta(t, 4000, f.Config.FrontEnd.CallbackNs, 10)
	assert.Contains(t, f.Comments["front_end.callback_wake_ns"], "set-batch chunks, a no-op host function after each of 12")
}
