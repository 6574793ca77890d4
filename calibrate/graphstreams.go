package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// gsLaunches is how many chunk graphs graphChunksOverStreams launches per
// measurement: SET-batch's 256 jobs in chunks of 16.
const gsLaunches = 16

// gsStreams are the stream counts the chunks are spread over: SET-batch's
// workers (b), one stream each.
var gsStreams = []int{1, 2, 4, 8}

// gsShapes are SET-batch's chunk graphs (1 MiB copies around 16 jobs of 4
// kernels as 16, 4 and 1 branches: setbatch16s, -br4, -br1).
var gsShapes = []gdShape{
	{name: "16x4", head: "c", tail: "c", branches: 16, perBranch: 4, copyBytes: gdChunk},
	{name: "4x16", head: "c", tail: "c", branches: 4, perBranch: 16, copyBytes: gdChunk},
	{name: "1x64", head: "c", tail: "c", branches: 1, perBranch: 64, copyBytes: gdChunk},
}

// graphChunksOverStreams (issue #18, SET's worst rows): SET-batch's
// dispatcher launches its 16 chunk graphs round-robin over b worker
// streams, each followed by a host function, and on the GPU 8 workers are
// slower than 4 where the simulator has them level. This launches 16
// warmed execs of each chunk shape round-robin over 1, 2, 4 and 8 streams
// (launch j on stream j mod s, exec j its own), with and without a no-op
// host function after each launch, two ways: behind a gate kernel
// (Elapsed: what the device takes with every launch queued) and as the
// host sees it (Host.Now from the first launch to a device synchronize
// after the last, as SET's makespan), and the host's time in the launch
// calls of the latter (SET's t_schedule); and as SET-batch's dispatcher
// issues them (gsDispatchRounds: each launch after its stream's previous
// completion, woken by the host function's Put): the wall time and the
// host's time in the launch calls. Records totals per measurement.
func (c *calibrator) graphChunksOverStreams(h device.Host) error {
	env, err := c.newGDEnv(h, gdChunk)
	if err != nil {
		return err
	}
	for _, sh := range gsShapes {
		xs := make([]device.GraphExec, gsLaunches)
		for j := range xs {
			if xs[j], err = c.instantiate(h, env.ss.t.s, env.issue(h, sh)); err != nil {
				return fmt.Errorf("chunk %s: %w", sh.name, err)
			}
			// Warm: the first launch of an exec uploads it.
			if err := h.GraphLaunch(xs[j], env.ss.t.s); err != nil {
				return err
			}
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		for _, hostFunc := range []bool{false, true} {
			for _, s := range gsStreams {
				gated, wall, issued, gatedIssued, err := c.gsRounds(h, env, xs, sh, s, hostFunc)
				if err != nil {
					return fmt.Errorf("chunk %s on %d streams: %w", sh.name, s, err)
				}
				name := chunkStreamsName(sh.name, s, hostFunc)
				c.record(name+", gated", "", "ns",
					fmt.Sprintf("Elapsed behind a gate kernel of %d launches round-robin over the streams, total", gsLaunches), gated)
				c.record(name+", gated, issue", "", "ns",
					fmt.Sprintf("Host.Now around the host's %d launch calls (and host functions) behind the gate, the streams' commands pending", gsLaunches), gatedIssued)
				c.record(name+", host", "", "ns",
					fmt.Sprintf("Host.Now from the first of %d launches round-robin over the streams to a device synchronize after the last", gsLaunches), wall)
				c.record(name+", issue", "", "ns",
					fmt.Sprintf("Host.Now around the host's %d launch calls (and host functions) alone, as the host measurement issues them", gsLaunches), issued)
			}
		}
		for _, st := range gsStreams {
			wall, sched, err := c.gsDispatchRounds(h, env, xs, st)
			if err != nil {
				return fmt.Errorf("chunk %s dispatched over %d streams: %w", sh.name, st, err)
			}
			name := fmt.Sprintf("chunk graph %s dispatched over %d streams", sh.name, st)
			c.record(name+", host", "", "ns",
				fmt.Sprintf("SET-batch's dispatcher: Host.Now from the first of %d launches to the last completion's Get, each launch after its stream's previous completion", gsLaunches), wall)
			c.record(name+", launch calls", "", "ns",
				fmt.Sprintf("the same: Host.Now around the %d launch and host-function calls, summed (SET's t_schedule)", gsLaunches), sched)
		}
		if err := c.gsManyExecs(h, env, xs, sh); err != nil {
			return err
		}
		for _, x := range xs {
			if err := h.Destroy(x); err != nil {
				return err
			}
		}
	}
	return nil
}

func chunkStreamsName(shape string, streams int, hostFunc bool) string {
	name := fmt.Sprintf("chunk graph %s on %d streams", shape, streams)
	if hostFunc {
		name += ", host functions"
	}
	return name
}

// gsRounds measures, per round, the gated Elapsed, the host's time of the
// 16 launches of xs round-robin over s streams to their end, and the
// host's time in the launch calls alone, ungated and gated.
func (c *calibrator) gsRounds(h device.Host, env *gdEnv, xs []device.GraphExec, sh gdShape, s int, hostFunc bool) (gated, wall, issued, gatedIssued []float64, err error) {
	nop := func() {}
	issue := func() error {
		for j, x := range xs {
			st := env.ss.stream(j % s)
			if err := h.GraphLaunch(x, st); err != nil {
				return err
			}
			if hostFunc {
				if err := h.HostFunc(st, nop); err != nil {
					return err
				}
			}
		}
		return nil
	}
	calls := len(xs) * (3 + sh.branches + sh.perBranch/8)
	if err := c.warmRounds(func(measured bool) error {
		var gi float64
		y, err := c.gatedFanOut(h, env.ss, s, calls, func() error {
			t := h.Now()
			err := issue()
			gi = float64(h.Now() - t)
			return err
		})
		if err != nil {
			return err
		}
		t := h.Now()
		if err := issue(); err != nil {
			return err
		}
		i := float64(h.Now() - t)
		if err := h.Synchronize(); err != nil {
			return err
		}
		w := float64(h.Now() - t)
		if measured { // the first round warms the streams
			gated, wall, issued = append(gated, y), append(wall, w), append(issued, i)
			gatedIssued = append(gatedIssued, gi)
		}
		return nil
	}); err != nil {
		return nil, nil, nil, nil, err
	}
	return gated, wall, issued, gatedIssued, nil
}

// gsDispatchRounds runs, per round, SET-batch's dispatcher over s streams
// with xs: a launch and a completion host function on each stream, then,
// per completion the host function Puts, the next launch on that stream,
// until all 16 have run. It returns the wall time to the last completion
// and the host's time in the launch and host-function calls (SET's
// t_schedule), where the back-to-back issue of gsRounds has no wait
// between calls.
func (c *calibrator) gsDispatchRounds(h device.Host, env *gdEnv, xs []device.GraphExec, s int) (wall, sched []float64, err error) {
	q := h.NewQueue("graph chunks over streams: completions")
	dones := make([]func(), s)
	for i := range dones {
		i := i
		dones[i] = func() { q.Put(i) }
	}
	if err := c.warmRounds(func(measured bool) error {
		var spent float64
		next := 0
		launch := func(i int) error {
			t := h.Now()
			st := env.ss.stream(i)
			if err := h.GraphLaunch(xs[next], st); err != nil {
				return err
			}
			if err := h.HostFunc(st, dones[i]); err != nil {
				return err
			}
			spent += float64(h.Now() - t)
			next++
			return nil
		}
		start := h.Now()
		for i := 0; i < s && next < len(xs); i++ {
			if err := launch(i); err != nil {
				return err
			}
		}
		for done := 0; done < len(xs); done++ {
			v, ok := h.Get(q)
			if !ok {
				return fmt.Errorf("completion queue closed")
			}
			if next < len(xs) {
				if err := launch(v.(int)); err != nil {
					return err
				}
			}
		}
		w := float64(h.Now() - start)
		if measured {
			wall, sched = append(wall, w), append(sched, spent)
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return wall, sched, nil
}

// gsManyLive is how many execs of the shape are live in gsManyExecs: as
// many as SET-batch at b = 8 holds (8 workers x ring 2 x one exec per
// chunk size 1 to 16), of which the 16 of xs are launched.
const gsManyLive = 256

// gsManyExecs repeats the back-to-back and dispatcher measurements on 2,
// 4 and 8 streams with gsManyLive execs of sh live (the extra ones warmed
// and idle): whether the driver's launch and callback costs grow with the
// execs it holds, as SET-batch's workers hold 32 each.
func (c *calibrator) gsManyExecs(h device.Host, env *gdEnv, xs []device.GraphExec, sh gdShape) error {
	extra := make([]device.GraphExec, 0, gsManyLive-len(xs))
	defer func() {
		for _, x := range extra {
			_ = h.Destroy(x)
		}
	}()
	for len(extra) < cap(extra) {
		x, err := c.instantiate(h, env.ss.t.s, env.issue(h, sh))
		if err != nil {
			return fmt.Errorf("chunk %s, extra exec %d: %w", sh.name, len(extra), err)
		}
		extra = append(extra, x)
		if err := h.GraphLaunch(x, env.ss.t.s); err != nil {
			return err
		}
	}
	if err := h.Synchronize(); err != nil {
		return err
	}
	tag := fmt.Sprintf(", %d execs live", gsManyLive)
	for _, s := range gsStreams[1:] {
		_, wall, issued, _, err := c.gsRounds(h, env, xs, sh, s, true)
		if err != nil {
			return fmt.Errorf("chunk %s on %d streams%s: %w", sh.name, s, tag, err)
		}
		name := chunkStreamsName(sh.name, s, true) + tag
		c.record(name+", host", "", "ns", "as without the extra execs", wall)
		c.record(name+", issue", "", "ns", "as without the extra execs", issued)
		dw, sched, err := c.gsDispatchRounds(h, env, xs, s)
		if err != nil {
			return fmt.Errorf("chunk %s dispatched over %d streams%s: %w", sh.name, s, tag, err)
		}
		name = fmt.Sprintf("chunk graph %s dispatched over %d streams%s", sh.name, s, tag)
		c.record(name+", host", "", "ns", "as without the extra execs", dw)
		c.record(name+", launch calls", "", "ns", "as without the extra execs", sched)
	}
	return nil
}
