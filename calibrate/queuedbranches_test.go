package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// On the simulator every width and kind is measured; G's time, behind its
// gate, is its own device time: under the held stream's spin for every
// kind, and longer for 16 branches than for one.
func TestQueuedBranchesMeasuresEveryWidthAndKind(t *testing.T) {
	cfg, err := sim.LoadConfig("h200")
	require.NoError(t, err)
	rep, err := Measure(mustSim(t, cfg), []string{"queued graphs' branches"}, nil)
	require.NoError(t, err)
	get := func(b int, kind string) float64 {
		t.Helper()
		m, ok := rep.byName(qbName(b, kind))
		require.True(t, ok, "%d branches, %s", b, kind)
		require.Positive(t, m.Value)
		return m.Value
	}
	for _, b := range qbBranches {
		for _, kind := range qbKinds {
			assert.Less(t, get(b, kind), float64((qbBlock - qbGate).Nanoseconds()), "%d branches, %s", b, kind)
		}
	}
	assert.Greater(t, get(16, qbKinds[0]), get(1, qbKinds[0]))
}
