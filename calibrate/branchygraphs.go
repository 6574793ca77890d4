package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// "branchy graphs over streams" (issue #18, session 29): SET-batch's
// 12-job chunk graphs run about 94 us alone on an H200 and 150-185 us each
// with four workers' chunks beside them, and the four-worker rows take
// 26-52% longer as 12 branches than as 2 (set-batch-concurrency-gpu),
// where the simulator, right on one worker, runs the branches of
// concurrent chunks as freely as one chunk's. The chunks are 4 KiB copies
// around 48 empty kernels here (the workloads' kernels are about a
// microsecond), as 1 to 16 branches of 48/B kernels: sbLaunches launches
// (one exec each) round-robin over 1, 2, 4 and 8 streams behind a gate.
// What the time counts (all branches running, per stream, the other
// launches' branches) is what a model of the loss must count.
var bgBranches = []int{1, 2, 4, 8, 12, 16}

const bgKernels = 48

// bgName is the name of a "branchy graphs over streams" measurement.
func bgName(branches, streams int) string {
	return fmt.Sprintf("branchy graph of %d branches of %d kernels on %d streams", branches, bgKernels/branches, streams)
}

func (c *calibrator) branchyGraphs(h device.Host) error {
	env, err := c.newGDEnv(h, gdSmall)
	if err != nil {
		return err
	}
	for _, b := range bgBranches {
		sh := gdShape{name: bgName(b, 1), head: "c", tail: "c", branches: b, perBranch: bgKernels / b, copyBytes: gdSmall}
		xs, err := c.uploadedExecs(h, env, sbLaunches, env.issue(h, sh))
		if err != nil {
			return fmt.Errorf("branchy graph of %d branches: %w", b, err)
		}
		for _, s := range sbStreams {
			out, err := c.gatedRounds(h, env.ss, s, len(xs)*(3+b), func() error {
				for j, x := range xs {
					if err := h.GraphLaunch(x, env.ss.stream(j%s)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("branchy graph of %d branches on %d streams: %w", b, s, err)
			}
			c.record(bgName(b, s), "", "ns",
				fmt.Sprintf("Elapsed behind a gate kernel of %d launches (one exec each) of a graph of a 4 KiB copy in, %d parallel chains of %d empty kernels and a 4 KiB copy out, round-robin over the streams, total", len(xs), b, bgKernels/b), out)
		}
		if err := destroyExecs(h, xs); err != nil {
			return err
		}
	}
	return nil
}
