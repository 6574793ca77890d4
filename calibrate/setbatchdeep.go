package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// "set-batch deep chunks" (issue #18, session 14): "set-batch chunks"
// has 16 branches of ONE empty kernel lose 100-200 us per 12 chunks on
// 2-8 streams behind a gate (none on one stream or one connection), which
// front_end.graph_branch_queue_ns models as a cost per branch of the other
// running launches. Its chunks cannot tell whether that cost is paid on
// every release of a launch or once per branch (when a branch begins):
// both are one release per branch there. This probe runs the same gated
// sequence (12 launches round-robin over 1, 2, 4, 8 streams behind a gate,
// no host calls) with the same 1,638,400-byte copies around branches of 2
// and 4 empty kernels (16x2, 16x4), 4 branches of 4 (4x4), and the 16x1
// chunk again as the reference of the same lease. Per release, 16x4 loses
// about four times what 16x1 does; per branch, about as much.
var sbDeepShapes = []gdShape{
	{name: "16x1", head: "c", tail: "c", branches: 16, perBranch: 1, copyBytes: sbChunkBytes},
	{name: "16x2", head: "c", tail: "c", branches: 16, perBranch: 2, copyBytes: sbChunkBytes},
	{name: "16x4", head: "c", tail: "c", branches: 16, perBranch: 4, copyBytes: sbChunkBytes},
	{name: "4x4", head: "c", tail: "c", branches: 4, perBranch: 4, copyBytes: sbChunkBytes},
}

// sbDeepName is the name of a "set-batch deep chunks" measurement.
func sbDeepName(shape string, streams int) string {
	return fmt.Sprintf("set-batch deep chunk %s on %d streams, gated", shape, streams)
}

func (c *calibrator) setBatchDeepChunks(h device.Host) error {
	env, err := c.newGDEnv(h, sbChunkBytes)
	if err != nil {
		return err
	}
	for _, sh := range sbDeepShapes {
		xs, err := c.sbExecs(h, env, sh, "set-batch deep chunk")
		if err != nil {
			return err
		}
		for _, s := range sbStreams {
			gated, _, err := c.sbGatedRounds(h, env, xs, sh, s)
			if err != nil {
				return fmt.Errorf("set-batch deep chunk %s on %d streams: %w", sh.name, s, err)
			}
			c.record(sbDeepName(sh.name, s), "", "ns",
				fmt.Sprintf("Elapsed behind a gate kernel of %d launches round-robin over the streams, total", sbLaunches), gated)
		}
		if err := destroyExecs(h, xs); err != nil {
			return err
		}
	}
	return nil
}
