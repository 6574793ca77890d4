package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator a branch of the probe's graphs adds to the launch call
// graph_launch_branch_ns and its nodes' charges: a kernel
// graph_launch_node_ns, an upload graph_launch_copy_node_ns, and an upload
// feeding a kernel graph_launch_copy_edge_ns more.
func TestGraphLaunchOfUploadsReadsTheCharges(t *testing.T) {
	cfg := loadConfig(t, "h200")
	_, value := measured(t, cfg, "graph launch of uploads")
	h := cfg.Host
	want := map[string]float64{
		"kernel":         h.GraphLaunchBranchNs + h.GraphLaunchNodeNs,
		"upload":         h.GraphLaunchBranchNs + h.GraphLaunchCopyNodeNs,
		"upload, kernel": h.GraphLaunchBranchNs + h.GraphLaunchCopyNodeNs + h.GraphLaunchCopyEdgeNs + h.GraphLaunchNodeNs,
	}
	for kind, per := range want {
		call := func(n int) float64 {
			return value(fmt.Sprintf("graph launch of uploads, %d branches of %s: launch call", n, kind))
		}
		slope := (call(32) - call(8)) / 24
		assert.InDelta(t, per, slope, per*0.02, kind)
	}
}
