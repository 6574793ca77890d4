package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "copies around kernels in a graph" (issue #18, session 31): the
// tournament's serial+graph rows on SET's sobel and bp jobs (the whole
// program captured on one stream: each job's copy in, kernel, copy out)
// take as long on the GPU as the same calls issued to the stream (four
// H100 and one H200 lease), where the simulator ran them 33-53% faster:
// it charged every copy past a launch's first on its engine
// copy.graph_latency_ns, which "copies in a graph" measured on copies
// that follow one another with nothing between. This probe puts kernels
// between them: chains of n = 1, 2, 4, 8 jobs, each a 64 KiB pinned copy
// in and a kernel (empty, or one block spinning 5 or 20 us), or a copy
// in, a kernel and a 64 KiB copy out, each job its own buffers; captured
// as one graph and launched, or issued to the stream, behind a 200 us
// gate kernel; timed from the gate's end to the chain's end. Per job past
// the first (the slope), a graph's job costs what a stream's does if its
// copies pay the whole latency.
var cjShapes = []cjShape{
	{name: "copy in, empty kernel"},
	{name: "copy in, 5 us kernel", spin: 5 * time.Microsecond},
	{name: "copy in, 20 us kernel", spin: 20 * time.Microsecond},
	{name: "copy in, empty kernel, copy out", out: true},
	{name: "copy in, 5 us kernel, copy out", spin: 5 * time.Microsecond, out: true},
}

// cjShape is one job: its kernel's spin (0: an empty kernel), whether it
// has no kernel, and whether a copy out follows.
type cjShape struct {
	name     string
	spin     time.Duration
	noKernel bool
	out      bool
}

const cjBytes = 64 << 10

// cjModes are how a chain is issued.
var cjModes = []string{"as a graph", "on the stream"}

func (c *calibrator) copiesAroundKernelsInAGraph(h device.Host) error {
	n := cfCounts[len(cfCounts)-1]
	env, err := newGatedCopyEnv(h, n, cjBytes)
	if err != nil {
		return err
	}
	done, err := h.Malloc(4)
	if err != nil {
		return err
	}
	for _, sh := range cjShapes {
		for _, mode := range cjModes {
			if err := c.cjShape(h, env, done, sh, mode); err != nil {
				return fmt.Errorf("copies around kernels in a graph, %s, %s: %w", sh.name, mode, err)
			}
		}
	}
	return nil
}

// cjShape measures and records one shape issued one way, every count.
func (c *calibrator) cjShape(h device.Host, env *gatedCopyEnv, done device.Buffer, sh cjShape, mode string) error {
	times := make([][]float64, len(cfCounts)) // per count, per round
	for k, n := range cfCounts {
		issue := func() error { return c.cjIssue(h, env, done, sh, n) }
		var x device.GraphExec
		if mode == cjModes[0] {
			var err error
			if x, err = c.instantiate(h, env.streams[0], issue); err != nil {
				return err
			}
			issue = func() error { return h.GraphLaunch(x, env.streams[0]) }
		}
		var err error
		if times[k], err = c.medianRounds(gcReps, func() (float64, error) { return c.cjTime(h, env, issue) }); err != nil {
			return err
		}
		if x != nil {
			if err := h.Destroy(x); err != nil {
				return err
			}
		}
		c.record(fmt.Sprintf("copies around kernels in a graph, %s, %d jobs %s", sh.name, n, mode), "", "ns",
			fmt.Sprintf("Elapsed from a %d us gate kernel's end to the chain's end, issued behind the gate, 64 KiB pinned copies, each job its own buffers; median of %d a round", gcGateUs, gcReps), times[k])
	}
	c.record(fmt.Sprintf("copies around kernels in a graph, %s, each job past the first %s", sh.name, mode), "", "ns",
		"per round, the least-squares slope through the one-job point of the time over the jobs past the first (n = 2, 4, 8)", perExtraCopy(times))
	return nil
}

// cjIssue issues n jobs of shape sh on env's first stream, one after the
// other.
func (c *calibrator) cjIssue(h device.Host, env *gatedCopyEnv, done device.Buffer, sh cjShape, n int) error {
	s := env.streams[0]
	for i := 0; i < n; i++ {
		if err := h.Copy(s, env.copy(device.HostToDevice, i, cjBytes)); err != nil {
			return err
		}
		l := c.emptyLaunch(1)
		if sh.spin > 0 {
			l = c.spinLaunch(sh.spin, done)
		}
		if err := h.Launch(s, l); err != nil {
			return err
		}
		if sh.out {
			if err := h.Copy(s, env.copy(device.DeviceToHost, i, cjBytes)); err != nil {
				return err
			}
		}
	}
	return nil
}

// cjTime issues a chain behind a gcGateUs gate kernel and returns the
// gate's end to the chain's end (ns).
func (c *calibrator) cjTime(h device.Host, env *gatedCopyEnv, issue func() error) (float64, error) {
	s := env.streams[0]
	if err := h.Launch(env.gate.s, c.spinLaunch(us(gcGateUs), env.gate.done)); err != nil {
		return 0, err
	}
	if err := h.Record(env.gate.e0, env.gate.s); err != nil {
		return 0, err
	}
	if err := h.Wait(s, env.gate.e0); err != nil {
		return 0, err
	}
	if err := issue(); err != nil {
		return 0, err
	}
	if err := h.Record(env.ends[0], s); err != nil {
		return 0, err
	}
	return env.lastEnd(h, 1)
}

// "copy jobs over streams" (issue #18, session 31): KeSCo's streams on
// SET's job pipelines (each job a copy in, a kernel and a copy out, jobs
// dealt round-robin over the streams) run 16-59% faster on the GPU than
// simulated (configs/experiments/graph-copies-gpu.yaml; the tournament's
// kesco rows on sobel and bp, +37..+53%), and the simulated rows are
// bound by the copy engines, each copy waiting copy.latency_ns: on the
// GPU a copy queued behind other streams' copies seems to wait less. This
// probe issues 32 jobs of 64 KiB pinned copies, each its own buffers,
// round-robin over s = 1, 2, 4, 8 streams behind a 1 ms gate kernel (the
// host issues every job before it ends, so the engines see the whole
// queue), as copy in, empty kernel, copy out; copy in, copy out; and copy
// in alone, and times the gate's end to the last stream's end.
var (
	csStreams = []int{1, 2, 4, 8}
	csShapes  = []cjShape{
		{name: "copy in, empty kernel, copy out", out: true},
		{name: "copy in, copy out", out: true, noKernel: true},
		{name: "copy in", noKernel: true},
	}
)

const (
	csJobs   = 32
	csGateUs = 1000
)

func (c *calibrator) copyJobsOverStreams(h device.Host) error {
	env, err := newGatedCopyEnv(h, csJobs, cjBytes)
	if err != nil {
		return err
	}
	for _, sh := range csShapes {
		for _, s := range csStreams {
			times, err := c.medianRounds(gcReps, func() (float64, error) { return c.csTime(h, env, sh, s) })
			if err != nil {
				return fmt.Errorf("copy jobs over streams, %s, %d streams: %w", sh.name, s, err)
			}
			c.record(fmt.Sprintf("copy jobs over streams, %s, %d jobs on %d streams", sh.name, csJobs, s), "", "ns",
				fmt.Sprintf("Elapsed from a %d us gate kernel's end to the last stream's end, jobs dealt round-robin, issued behind the gate, 64 KiB pinned copies, each job its own buffers; median of %d a round", csGateUs, gcReps), times)
		}
	}
	return nil
}

// csTime issues csJobs jobs of shape sh round-robin over s of env's streams
// behind a csGateUs gate and returns the gate's end to the last stream's
// end (ns).
func (c *calibrator) csTime(h device.Host, env *gatedCopyEnv, sh cjShape, s int) (float64, error) {
	if err := h.Launch(env.gate.s, c.spinLaunch(us(csGateUs), env.gate.done)); err != nil {
		return 0, err
	}
	if err := h.Record(env.gate.e0, env.gate.s); err != nil {
		return 0, err
	}
	for i := 0; i < s; i++ {
		if err := h.Wait(env.streams[i], env.gate.e0); err != nil {
			return 0, err
		}
	}
	for j := 0; j < csJobs; j++ {
		st := env.streams[j%s]
		if err := h.Copy(st, env.copy(device.HostToDevice, j, cjBytes)); err != nil {
			return 0, err
		}
		if !sh.noKernel {
			if err := h.Launch(st, c.emptyLaunch(1)); err != nil {
				return 0, err
			}
		}
		if sh.out {
			if err := h.Copy(st, env.copy(device.DeviceToHost, j, cjBytes)); err != nil {
				return 0, err
			}
		}
	}
	for i := 0; i < s; i++ {
		if err := h.Record(env.ends[i], env.streams[i]); err != nil {
			return 0, err
		}
	}
	return env.lastEnd(h, s)
}
