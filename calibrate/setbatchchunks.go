package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "set-batch chunks" (issue #18, session 13): SET-batch's rows
// (setbatch16s-b on sobel-192 s160) stay at about 1,200 us on the GPU for
// b = 2, 4 and 8 workers where the simulator speeds up with b, and the
// 16-branch chunks take about 92 us each on the GPU against 58 us as 2
// branches. "graph chunks over streams" (graphstreams.go) runs 16 chunks
// of 1 MiB copies and empty kernels, launched back to back or one per
// stream; this probe runs SET-batch's own sequence with the row's sizes,
// one difference at a time:
//
//	shapes     the sobel-192 s160 chunk: 1,638,400-byte copies around 16
//	           jobs of one kernel as 16 branches (setbatch16s), 2
//	           branches of 8 (-br2) and one chain (-br1), and the two
//	           copies alone (copy engines only)
//	gated      12 launches round-robin over 1, 2, 4, 8 streams behind a
//	           gate kernel, each exec its own: what the device takes with
//	           every launch queued (no host function, no node update)
//	calls      the same with SET-batch's calls per launch: both copy
//	           nodes updated before it, a no-op host function after it
//	dispatched SET-batch's dispatcher (ring 2): every stream keeps up to
//	           two launches in flight, each from one of its two execs with
//	           its copy nodes updated, followed by a host function that
//	           Puts its stream; per Get, that stream's next chunk (its own,
//	           else one still queued on another) is launched; wall time,
//	           host time in the calls (t_schedule) and in Get (t_wait)
//
// Chunk j goes to stream j mod s, as SET deals chunks to its workers.
//
// Beside the chunks, "host functions over streams" isolates the completion
// host functions: 12 one-block spin kernels of 20 or 60 us round-robin over
// 1, 2, 4, 8 streams behind a gate, each followed by a no-op host function
// or not. The driver has one callback thread; the simulator lets a host
// function reached while another runs (or wakes the thread) skip the wake
// (front_end.callback_wake_ns), and this measures whether host functions of
// different streams share the thread's wake on the GPU.
const (
	sbChunkBytes = 16 * 160 * 160 * 4
	sbLaunches   = 12
	sbRing       = 2
)

var sbStreams = []int{1, 2, 4, 8}

// sbSpins are the spin kernels' lengths of "host functions over streams".
var sbSpins = []time.Duration{20 * time.Microsecond, 60 * time.Microsecond}

var sbShapes = []gdShape{
	{name: "16x1", head: "c", tail: "c", branches: 16, perBranch: 1, copyBytes: sbChunkBytes},
	{name: "2x8", head: "c", tail: "c", branches: 2, perBranch: 8, copyBytes: sbChunkBytes},
	{name: "1x16", head: "c", tail: "c", branches: 1, perBranch: 16, copyBytes: sbChunkBytes},
	{name: "copies", head: "c", tail: "c", copyBytes: sbChunkBytes},
}

// sbName is the name of a "set-batch chunks" measurement.
func sbName(shape string, streams int, what string) string {
	return fmt.Sprintf("set-batch chunk %s on %d streams, %s", shape, streams, what)
}

func (c *calibrator) setBatchChunks(h device.Host) error {
	env, err := c.newGDEnv(h, sbChunkBytes)
	if err != nil {
		return err
	}
	if err := c.sbHostFuncs(h, env); err != nil {
		return err
	}
	for _, sh := range sbShapes {
		xs, err := c.sbExecs(h, env, sh, "set-batch chunk")
		if err != nil {
			return err
		}
		for _, s := range sbStreams {
			for _, calls := range []bool{false, true} {
				up := sh
				up.update, up.hostFunc = calls, calls
				gated, issued, err := c.sbGatedRounds(h, env, xs, up, s)
				if err != nil {
					return fmt.Errorf("set-batch chunk %s on %d streams: %w", sh.name, s, err)
				}
				what := "gated"
				if calls {
					what = "gated, calls"
				}
				c.record(sbName(sh.name, s, what), "", "ns",
					fmt.Sprintf("Elapsed behind a gate kernel of %d launches round-robin over the streams, total (calls: copy nodes updated before and a host function after each)", sbLaunches), gated)
				c.record(sbName(sh.name, s, what+", issue"), "", "ns", "Host.Now around the host's calls behind the gate", issued)
			}
			wall, sched, wait, err := c.sbDispatchRounds(h, env, xs, sh, s)
			if err != nil {
				return fmt.Errorf("set-batch chunk %s dispatched over %d streams: %w", sh.name, s, err)
			}
			c.record(sbName(sh.name, s, "dispatched"), "", "ns",
				fmt.Sprintf("SET-batch's dispatcher, ring %d: Host.Now from the first launch to the last completion's Get", sbRing), wall)
			c.record(sbName(sh.name, s, "dispatched, calls"), "", "ns", "the same: Host.Now around the node updates, launches and host-function calls, summed (SET's t_schedule)", sched)
			c.record(sbName(sh.name, s, "dispatched, wait"), "", "ns", "the same: Host.Now around the Gets, summed (SET's t_wait)", wait)
		}
		if err := destroyExecs(h, xs); err != nil {
			return err
		}
	}
	return nil
}

// sbExecs is uploadedExecs of sh: the chunks "set-batch chunks" and
// "set-batch deep chunks" time. label names the probe in an error.
func (c *calibrator) sbExecs(h device.Host, env *gdEnv, sh gdShape, label string) ([]device.GraphExec, error) {
	xs, err := c.uploadedExecs(h, env, sbLaunches, env.issue(h, sh))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", label, sh.name, err)
	}
	return xs, nil
}

// uploadedExecs instantiates n execs of what issue captures on env's
// timing stream and launches each once there (the first launch uploads
// it), then waits for the device.
func (c *calibrator) uploadedExecs(h device.Host, env *gdEnv, n int, issue func() error) ([]device.GraphExec, error) {
	xs := make([]device.GraphExec, n)
	for j := range xs {
		var err error
		if xs[j], err = c.instantiate(h, env.ss.t.s, issue); err != nil {
			return nil, err
		}
		if err := h.GraphLaunch(xs[j], env.ss.t.s); err != nil {
			return nil, err
		}
	}
	return xs, h.Synchronize()
}

// destroyExecs destroys xs in order, stopping at the first error.
func destroyExecs(h device.Host, xs []device.GraphExec) error {
	for _, x := range xs {
		if err := h.Destroy(x); err != nil {
			return err
		}
	}
	return nil
}

// sbCalls is what SET-batch does per chunk: update x's copy nodes (when
// sh.update), launch it on st, enqueue done after it (when sh.hostFunc).
func sbCalls(h device.Host, env *gdEnv, x device.GraphExec, sh gdShape, st device.Stream, i int, done func()) error {
	if err := env.launchUpdated(h, x, sh, i, st); err != nil {
		return err
	}
	if sh.hostFunc {
		return h.HostFunc(st, done)
	}
	return nil
}

// sbGatedRounds is, per round, the gated Elapsed of xs launched
// round-robin over s streams with sh's calls, and the host's time in them.
func (c *calibrator) sbGatedRounds(h device.Host, env *gdEnv, xs []device.GraphExec, sh gdShape, s int) (gated, issued []float64, err error) {
	nop := func() {}
	calls := len(xs) * (5 + sh.branches + sh.perBranch/8)
	if err := c.warmRounds(func(measured bool) error {
		var gi float64
		y, err := c.gatedFanOut(h, env.ss, s, calls, func() error {
			t := h.Now()
			for j, x := range xs {
				if err := sbCalls(h, env, x, sh, env.ss.stream(j%s), j, nop); err != nil {
					return err
				}
			}
			gi = float64(h.Now() - t)
			return nil
		})
		if err != nil {
			return err
		}
		if measured { // the first round warms the streams
			gated, issued = append(gated, y), append(issued, gi)
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return gated, issued, nil
}

// sbDispatchRounds runs, per round, SET-batch's ring dispatcher over s
// streams (see the file's comment) and returns its wall time, the host's
// time in the per-chunk calls and in the Gets.
func (c *calibrator) sbDispatchRounds(h device.Host, env *gdEnv, xs []device.GraphExec, sh gdShape, s int) (wall, sched, wait []float64, err error) {
	q := h.NewQueue("set-batch chunks: completions")
	dones := make([]func(), s)
	for i := range dones {
		i := i
		dones[i] = func() { q.Put(i) }
	}
	sh.update, sh.hostFunc = true, true
	if err := c.warmRounds(func(measured bool) error {
		d := newSBDispatcher(h, env, xs, sh, s, dones)
		start := h.Now()
		for i := 0; i < s; i++ {
			if err := d.advance(i); err != nil {
				return err
			}
		}
		var waited float64
		for done := 0; done < len(xs); done++ {
			t := h.Now()
			v, ok := h.Get(q)
			waited += float64(h.Now() - t)
			if !ok {
				return fmt.Errorf("completion queue closed")
			}
			i := v.(int)
			d.inFlight[i]--
			if err := d.advance(i); err != nil {
				return err
			}
		}
		w := float64(h.Now() - start)
		if measured {
			wall, sched, wait = append(wall, w), append(sched, d.spent), append(wait, waited)
		}
		return nil
	}); err != nil {
		return nil, nil, nil, err
	}
	return wall, sched, wait, nil
}

// sbDispatcher is one round of SET-batch's ring dispatcher over s streams:
// chunk j queued on stream j mod s, at most sbRing launches in flight per
// stream, each from one of the stream's two execs in turn.
type sbDispatcher struct {
	h                  device.Host
	env                *gdEnv
	xs                 []device.GraphExec
	sh                 gdShape
	s                  int
	dones              []func()
	queues             [][]int
	inFlight, launched []int
	spent              float64 // host time in the per-chunk calls
}

func newSBDispatcher(h device.Host, env *gdEnv, xs []device.GraphExec, sh gdShape, s int, dones []func()) *sbDispatcher {
	d := &sbDispatcher{h: h, env: env, xs: xs, sh: sh, s: s, dones: dones,
		queues: make([][]int, s), inFlight: make([]int, s), launched: make([]int, s)}
	for j := range xs {
		d.queues[j%s] = append(d.queues[j%s], j)
	}
	return d
}

// next takes stream i's next chunk: its own, else the first still queued
// on another stream, as SET's workers steal.
func (d *sbDispatcher) next(i int) (int, bool) {
	for k := 0; k < d.s; k++ {
		p := (i + k) % d.s
		if len(d.queues[p]) > 0 {
			j := d.queues[p][0]
			d.queues[p] = d.queues[p][1:]
			return j, true
		}
	}
	return 0, false
}

// advance launches stream i's next chunks while it has fewer than sbRing
// in flight. The ring's execs are stream i's two, used in turn: xs[i] and
// xs[s+i] where there are that many, else xs[i] alone.
func (d *sbDispatcher) advance(i int) error {
	for d.inFlight[i] < sbRing {
		j, ok := d.next(i)
		if !ok {
			return nil
		}
		x := d.xs[i]
		if d.launched[i]%sbRing == 1 && d.s+i < len(d.xs) {
			x = d.xs[d.s+i]
		}
		t := d.h.Now()
		if err := sbCalls(d.h, d.env, x, d.sh, d.env.ss.stream(i), j, d.dones[i]); err != nil {
			return err
		}
		d.spent += float64(d.h.Now() - t)
		d.inFlight[i]++
		d.launched[i]++
	}
	return nil
}

// sbHostFuncName is the name of a "host functions over streams"
// measurement.
func sbHostFuncName(spin time.Duration, streams int, hostFunc bool) string {
	name := fmt.Sprintf("set-batch host functions: %d us spin kernels on %d streams", spin.Microseconds(), streams)
	if hostFunc {
		name += ", host functions"
	}
	return name
}

// sbHostFuncs times sbLaunches one-block spin kernels round-robin over s
// streams behind a gate, with and without a no-op host function after
// each (see the file's comment).
func (c *calibrator) sbHostFuncs(h device.Host, env *gdEnv) error {
	for _, d := range sbSpins {
		for _, s := range sbStreams {
			for _, hostFunc := range []bool{false, true} {
				out, err := c.sbHostFuncRounds(h, env, d, s, hostFunc)
				if err != nil {
					return fmt.Errorf("host functions over %d streams: %w", s, err)
				}
				c.record(sbHostFuncName(d, s, hostFunc), "", "ns",
					fmt.Sprintf("Elapsed behind a gate kernel of %d one-block %v spin kernels round-robin over the streams, each followed by a no-op host function or not, total", sbLaunches, d), out)
			}
		}
	}
	return nil
}

// sbHostFuncRounds is, per round, the gated Elapsed of sbLaunches spin
// kernels of d round-robin over s streams, each followed by a no-op host
// function when hostFunc.
func (c *calibrator) sbHostFuncRounds(h device.Host, env *gdEnv, d time.Duration, s int, hostFunc bool) ([]float64, error) {
	nop := func() {}
	spin := c.spinLaunch(d, env.ss.t.done)
	return c.gatedRounds(h, env.ss, s, 2*sbLaunches, func() error {
		for j := 0; j < sbLaunches; j++ {
			st := env.ss.stream(j % s)
			if err := h.Launch(st, spin); err != nil {
				return err
			}
			if hostFunc {
				if err := h.HostFunc(st, nop); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
