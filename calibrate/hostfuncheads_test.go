package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// On the simulator every head is measured on every stream count, and on
// one stream each host function holds its stream for the callback
// thread's wake, its run and the release of the next head: twelve of them
// add at least that much, whatever the head.
func TestHostFuncsAfterHeadsMeasuresEveryHead(t *testing.T) {
	cfg, err := sim.LoadConfig("h200")
	require.NoError(t, err)
	rep, err := Measure(mustSim(t, cfg), []string{"host functions after heads"}, nil)
	require.NoError(t, err)
	get := func(head string, s int, hostFunc bool) float64 {
		t.Helper()
		m, ok := rep.byName(hhName(head, s, hostFunc))
		require.True(t, ok, "%s on %d streams, host functions %v", head, s, hostFunc)
		require.Positive(t, m.Value)
		return m.Value
	}
	fe := cfg.FrontEnd
	perCallback := fe.CallbackWakeNs + fe.CallbackNs + fe.CallbackReleaseNs
	for _, hd := range hhHeads {
		for _, s := range sbStreams {
			assert.Greater(t, get(hd.name, s, true), get(hd.name, s, false), "%s on %d streams", hd.name, s)
		}
		// The last host function releases nothing behind it but the
		// gate's join record.
		assert.GreaterOrEqual(t, get(hd.name, 1, true)-get(hd.name, 1, false), float64(sbLaunches-1)*perCallback, hd.name)
	}
	// Heads on eight streams run side by side: the spin kernels all at
	// once, the copies one engine's share at a time.
	assert.Less(t, get("35 us spin kernel", 8, false), 3*float64(hhSpin.Nanoseconds()))
	assert.Greater(t, get("HtoD copy", 8, false), 0.9*get("HtoD copy", 1, false))
}
