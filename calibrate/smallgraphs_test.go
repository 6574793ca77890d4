package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// The small-graph probe reports every call of every shape, and its
// instantiate figures read back the config's instantiate model: a kernel
// more costs instantiate_per_node_ns, a copy more instantiate_per_copy_node_ns.
func TestSmallGraphBuildsReadBackTheInstantiateModel(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	cfg.Host.InstantiatePerNodeNs, cfg.Host.InstantiatePerCopyNodeNs = 3000, 700
	rep, err := Measure(mustSim(t, cfg), []string{"small graph builds"}, nil)
	require.NoError(t, err)
	get := func(shape, call string) float64 {
		t.Helper()
		m, ok := rep.byName(smallGraphName(shape, call))
		require.True(t, ok, "%s: %s", shape, call)
		return m.Value
	}
	for _, sh := range smallGraphShapes {
		for _, call := range smallGraphCalls {
			assert.Positive(t, get(sh, call), "%s: %s", sh, call)
		}
	}
	assert.InDelta(t, 3000, get("kk", "instantiate")-get("k", "instantiate"), 1, "a kernel node")
	assert.InDelta(t, 700, get("cc", "instantiate")-get("c", "instantiate"), 1, "a copy node")
	assert.InDelta(t, 2*700, get("ckc", "instantiate")-get("k", "instantiate"), 1, "two copies around a kernel")
}
