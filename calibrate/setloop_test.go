package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// SET's job loop on the simulator gives back the config's per-call costs:
// a copy node's update costs set_node_ns, a host function behind the job's
// pending graph launch host_func_after_graph_ns and one on an idle stream
// host_func_ns; a chain of a copy in, a kernel and a copy out launches at
// graph_launch_ns plus its nodes' parts, the same in the loop as alone
// (the simulator has no cost for calls right after a callback); and more
// streams take less wall time per job.
func TestSETJobLoopReadsTheHostCosts(t *testing.T) {
	cfg := loadConfig(t, "h100")
	cfg.Host.HostFuncAfterGraphNs = 6000
	_, value := measured(t, cfg, "SET's job loop")
	assert.InDelta(t, cfg.Host.SetNodeNs, value("SET's job loop alone, 2 us kernel: update per node"), 1)
	assert.InDelta(t, 6000, value("SET's job loop alone, 2 us kernel: host function"), 1)
	assert.InDelta(t, 6000, value("SET's job shapes: iko: host function after the launch"), 1)
	assert.InDelta(t, cfg.Host.HostFuncNs, value("SET's job shapes: host function on an idle stream"), 1)
	iko := value("SET's job shapes: iko: launch")
	assert.Greater(t, iko, cfg.Host.GraphLaunchNs+2*cfg.Host.GraphLaunchCopyNodeNs)
	assert.InDelta(t, iko, value("SET's job loop, 8 streams, 2 us kernel: launch"), 10)
	assert.InDelta(t, iko, value("SET's job loop alone, settled, 2 us kernel: launch"), 10)
	assert.Less(t, value("SET's job loop, 4 streams, 2 us kernel: per job"),
		value("SET's job loop, 1 streams, 2 us kernel: per job")/2)
}
