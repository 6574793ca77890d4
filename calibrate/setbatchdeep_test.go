package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// The deep chunks' probe measures every shape on every stream count, and
// it tells the branch-queue cost (front_end.graph_branch_queue_ns) apart
// from none: on one stream the cost is absent, on 8 the 16-branch chunks
// lose time and the 4-branch ones less.
func TestSetBatchDeepChunksMeasuresEveryShapeAndSeesBranchQueues(t *testing.T) {
	measure := func(branchQueueNs float64) func(shape string, s int) float64 {
		cfg, err := sim.LoadConfig("h100")
		require.NoError(t, err)
		cfg.FrontEnd.GraphBranchQueueNs = branchQueueNs
		rep, err := Measure(mustSim(t, cfg), []string{"set-batch deep chunks"}, nil)
		require.NoError(t, err)
		return func(shape string, s int) float64 {
			t.Helper()
			m, ok := rep.byName(sbDeepName(shape, s))
			require.True(t, ok, "%s on %d streams", shape, s)
			require.Positive(t, m.Value)
			return m.Value
		}
	}
	without, with := measure(0), measure(500)
	for _, sh := range sbDeepShapes {
		for _, s := range sbStreams {
			without(sh.name, s)
		}
		assert.InDelta(t, without(sh.name, 1), with(sh.name, 1), 1, "%s: one stream runs one graph at a time", sh.name)
	}
	for _, sh := range []string{"16x1", "16x4"} {
		assert.Greater(t, with(sh, 8)-without(sh, 8), with("4x4", 8)-without("4x4", 8), sh)
	}
}
