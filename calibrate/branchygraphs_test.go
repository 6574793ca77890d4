package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// On the simulator every branch count is measured on every stream count;
// a one-branch chain runs side by side over streams, and on one stream a
// graph's branches run side by side too, so more branches take no longer
// there than the chain.
func TestBranchyGraphsMeasuresEveryShape(t *testing.T) {
	cfg, err := sim.LoadConfig("h200")
	require.NoError(t, err)
	rep, err := Measure(mustSim(t, cfg), []string{"branchy graphs over streams"}, nil)
	require.NoError(t, err)
	get := func(b, s int) float64 {
		t.Helper()
		m, ok := rep.byName(bgName(b, s))
		require.True(t, ok, "%d branches on %d streams", b, s)
		require.Positive(t, m.Value)
		return m.Value
	}
	for _, b := range bgBranches {
		for _, s := range sbStreams {
			get(b, s)
		}
		assert.LessOrEqual(t, get(b, 1), get(1, 1), "%d branches on one stream", b)
	}
	assert.Less(t, get(1, 2), 0.6*get(1, 1))
	assert.Less(t, get(1, 4), 0.6*get(1, 2))
}
