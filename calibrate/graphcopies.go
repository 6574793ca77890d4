package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "copies in a graph" (issue #18, session 27): AutoGraph's graph of seed
// 1593488677's draw 1 holds 21 independent 405 KB uploads; the H200 runs
// the whole step, launch included, in 250-265 us on two leases, where the
// simulator spends 149 us in the launch call and then 277 us on one engine
// running the uploads one after the other at copy.latency_ns each. The
// stream probe ("copies one way on many streams") found no overlap of
// same-way copies; this one asks the same of a graph's copy nodes. It
// launches, behind a 200 us gate kernel (longer than any launch call here,
// so every node is ready when the gate opens), graphs of n = 1, 2, 4 and 8
// pinned copies the same way, as n parallel branches and as one chain, at
// 64 and 512 KiB, and times the gate's end to the graph's end.
var gcSizes = []int64{64 << 10, 512 << 10}

const (
	gcReps   = 4
	gcGateUs = 200
)

// gcShapes are the graphs' shapes: n branches of one copy each, or the n
// copies one after the other.
var gcShapes = []string{"parallel branches", "one chain"}

// copiesInAGraph records, per direction, size and shape, the time of each
// count's graph and what each copy past the first adds (perExtraCopy),
// and the launch calls of the largest count.
func (c *calibrator) copiesInAGraph(h device.Host) error {
	n := cfCounts[len(cfCounts)-1]
	env, err := newGatedCopyEnv(h, n+1, gcSizes[len(gcSizes)-1])
	if err != nil {
		return err
	}
	fj, err := newEventsWith(h, 2, device.EventOptions{DisableTiming: true})
	if err != nil {
		return err
	}
	for _, kind := range []device.CopyKind{device.HostToDevice, device.DeviceToHost} {
		for _, size := range gcSizes {
			if err := c.gcSize(h, env, fj, kind, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// gcSize measures and records one direction and size of copiesInAGraph.
func (c *calibrator) gcSize(h device.Host, env *gatedCopyEnv, fj []device.Event, kind device.CopyKind, size int64) error {
	way := "host-to-device"
	if kind == device.DeviceToHost {
		way = "device-to-host"
	}
	kib := size >> 10
	for _, shape := range gcShapes {
		times := make([][]float64, len(cfCounts)) // per count, per round
		var calls []float64                       // the largest count's launch calls, per round
		for k, n := range cfCounts {
			x, err := c.instantiate(h, env.streams[0], func() error { return gcCapture(h, env, fj, kind, shape, n, size) })
			if err != nil {
				return err
			}
			if err := c.warmRounds(func(measured bool) error {
				var reps, callReps []float64
				for r := 0; r < gcReps; r++ {
					t, call, err := c.gcTime(h, env, x)
					if err != nil {
						return fmt.Errorf("copies in a graph, %s, %s: %w", way, shape, err)
					}
					reps, callReps = append(reps, t), append(callReps, call)
				}
				if measured {
					times[k] = append(times[k], stats.Median(reps))
					if k == len(cfCounts)-1 {
						calls = append(calls, stats.Median(callReps))
					}
				}
				return nil
			}); err != nil {
				return err
			}
			if err := h.Destroy(x); err != nil {
				return err
			}
			c.record(fmt.Sprintf("copies in a graph, %s, %d KiB, %d as %s", way, kib, n, shape), "", "ns",
				fmt.Sprintf("Elapsed from a %d us gate kernel's end to the graph's end, launched behind the gate, pinned, each copy its own buffers; median of %d a round", gcGateUs, gcReps), times[k])
		}
		c.record(fmt.Sprintf("copies in a graph, %s, %d KiB, each copy past the first, as %s", way, kib, shape), "", "ns",
			"per round, the least-squares slope through the one-copy point of the time over the copies past the first (n = 2, 4, 8)", perExtraCopy(times))
		c.record(fmt.Sprintf("copies in a graph, %s, %d KiB, %d as %s: launch call", way, kib, cfCounts[len(cfCounts)-1], shape), "", "ns",
			fmt.Sprintf("Host.Now around cuGraphLaunch behind the gate; median of %d a round", gcReps), calls)
	}
	return nil
}

// gcCapture issues one graph of the probe on env's first stream: n copies
// of bytes the kind's way, on n side streams forked and joined back
// (parallel branches) or one after another on the origin.
func gcCapture(h device.Host, env *gatedCopyEnv, fj []device.Event, kind device.CopyKind, shape string, n int, bytes int64) error {
	s := env.streams[0]
	if shape == gcShapes[1] {
		for i := 0; i < n; i++ {
			if err := h.Copy(s, env.copy(kind, i, bytes)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := h.Record(fj[0], s); err != nil {
		return err
	}
	return sideIssues(h, s, env.streams[1:n+1], fj[0], fj[1], func(i int, side device.Stream) error {
		return h.Copy(side, env.copy(kind, i, bytes))
	})
}

// gcTime launches x behind a gcGateUs gate kernel and returns the gate's
// end to the graph's end and the launch call (ns).
func (c *calibrator) gcTime(h device.Host, env *gatedCopyEnv, x device.GraphExec) (float64, float64, error) {
	s := env.streams[0]
	if err := h.Launch(env.gate.s, c.spinLaunch(us(gcGateUs), env.gate.done)); err != nil {
		return 0, 0, err
	}
	if err := h.Record(env.gate.e0, env.gate.s); err != nil {
		return 0, 0, err
	}
	if err := h.Wait(s, env.gate.e0); err != nil {
		return 0, 0, err
	}
	t0 := h.Now()
	if err := h.GraphLaunch(x, s); err != nil {
		return 0, 0, err
	}
	call := ns(h.Now() - t0)
	if err := h.Record(env.ends[0], s); err != nil {
		return 0, 0, err
	}
	t, err := env.lastEnd(h, 1)
	return t, call, err
}
