package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The graph-exec-updates probe reads the simulator's update and launch
// costs: with set_node_ns 900, graph_launch_changed_node_ns 1000 and
// graph_launch_kernel_change_ns 300, at N = 4 every update costs 0.9 us,
// the launch after 4 grid changes 4 us more than the launch alone, after
// 4 kernel changes 4 x 1.3 us more, after one node's 1 us, after updates
// of the arguments alone nothing more.
func TestGraphExecUpdatesReadTheLaunchAfterUpdates(t *testing.T) {
	saved := guSizes
	guSizes = []int{4}
	defer func() { guSizes = saved }()
	cfg := loadConfig(t, "h100")
	cfg.Host.SetNodeNs = 900
	cfg.Host.SetNodeKernelChangeNs = 0
	cfg.Host.GraphLaunchChangedNodeNs = 1000
	cfg.Host.GraphLaunchKernelChangeNs = 300
	rep, err := Measure(mustSim(t, cfg), []string{"graph exec updates"}, nil)
	require.NoError(t, err)
	value := func(c, what string) float64 {
		name := fmt.Sprintf("graph exec updates N=4 %s: %s", c, what)
		m, ok := rep.byName(name)
		require.True(t, ok, name)
		return m.Value
	}
	alone := value("dnn no update", "launch")
	assert.Zero(t, value("dnn no update", "update per node"))
	for c, want := range map[string]float64{"dnn": 4000, "empty": 4000, "rl": 4000, "dnn kernel change": 5200, "dnn one node": 1000, "dnn arguments only": 0} {
		assert.InDelta(t, 900, value(c, "update per node"), 1, c)
		assert.InDelta(t, want, value(c, "launch")-alone, 1, c)
	}
	// Steps behind a spin kernel or over a running launch pay the same
	// on the simulator (no per-exec serialisation modelled).
	assert.InDelta(t, value("dnn", "launch"), value("dnn behind", "launch"), 1)
	assert.InDelta(t, alone, value("spin running", "launch"), 1)
	m, ok := rep.byName("graph exec updates N=4 copy: launch")
	require.True(t, ok)
	assert.Positive(t, m.Value)
}
