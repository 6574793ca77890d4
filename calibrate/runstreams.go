package calibrate

import (
	"fmt"
	"sort"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Stream counts, kernels per run and timed runs per round of "runs over
// streams".
var runStreamCounts = []int{1, 2, 4, 8, 16, 32, 64}

const (
	runKernels = 64
	runRepeats = 5
)

// runSpins are the one-block spin kernels of "runs over streams": shorter
// than a launch call (host-bound runs) and four launch calls long
// (device-bound runs). Spin kernels last what they are told on the GPU and
// on the simulator alike, so the runs' differences are the streams' and
// events' costs, not a kernel model's.
var runSpins = []time.Duration{2 * time.Microsecond, 20 * time.Microsecond}

// runPattern is how a run of "runs over streams" spreads its kernels over
// s streams and which kernels wait on another stream's kernel: the shapes
// of the DAG schedulers' plans, apart from any workload.
type runPattern struct {
	name string
	// assign is kernel j's stream of s.
	assign func(j, s int) int
	// dep is the kernel kernel j depends on (-1: none); a dependency on
	// another stream's kernel is a record behind that kernel and a wait
	// before j, as the schedulers issue it.
	dep func(j, s int) int
}

// pathOf is kernel j's stream when each stream runs runKernels/s
// consecutive kernels (one path a stream, as Nimble's plans).
func pathOf(j, s int) int { return j * s / runKernels }

var runPatterns = []runPattern{
	{"paths", pathOf, func(j, s int) int { return -1 }},
	{"paths in a chain", pathOf, func(j, s int) int {
		if j > 0 && pathOf(j-1, s) != pathOf(j, s) {
			return j - 1 // each path's first kernel waits on the path before
		}
		return -1
	}},
	{"round-robin chain", func(j, s int) int { return j % s }, func(j, s int) int { return j - 1 }},
	{"layers", func(j, s int) int { return j % s }, func(j, s int) int {
		// layer l's kernel on stream i waits on layer l-1's kernel on
		// stream i+1 (one cross-stream edge a kernel, s kernels at once)
		if j < s {
			return -1
		}
		return j - s + (j%s+1)%s - j%s
	}},
}

// runCosts are one run's host times: the whole run as the runner times it
// (Synchronize, Now, issue, synchronize every used stream in turn,
// Synchronize, Now), its issue, its synchronizes, and per call kind the
// summed Host.Now around each call (a launch that is its stream's first in
// the run apart), with their counts; and the run's device time behind a
// gate kernel.
type runCosts struct {
	wall, issue, syncs, firstLaunch, launch, record, wait, gated float64
	nFirst, nLaunch, nRecord, nWait                              int
}

// runIssue issues one run of pattern p over s streams (ls: one launch per
// stream, evs: one event per kernel) into c.
func runIssue(h device.Host, ss *streamSet, ls []*device.Launch, evs []device.Event, p runPattern, s int, c *runCosts) error {
	timed := func(into *float64, n *int, call func() error) error {
		t0 := h.Now()
		err := call()
		*into += ns(h.Now() - t0)
		*n++
		return err
	}
	used := make([]bool, s)
	recorded := make([]bool, runKernels)
	for j := 0; j < runKernels; j++ {
		if u := p.dep(j, s); u >= 0 && p.assign(u, s) != p.assign(j, s) {
			recorded[u] = true
		}
	}
	for j := 0; j < runKernels; j++ {
		i := p.assign(j, s)
		st := ss.stream(i)
		if u := p.dep(j, s); u >= 0 && p.assign(u, s) != i {
			if err := timed(&c.wait, &c.nWait, func() error { return h.Wait(st, evs[u]) }); err != nil {
				return err
			}
		}
		into, n := &c.launch, &c.nLaunch
		if !used[i] {
			into, n, used[i] = &c.firstLaunch, &c.nFirst, true
		}
		if err := timed(into, n, func() error { return h.Launch(st, ls[i]) }); err != nil {
			return err
		}
		if recorded[j] {
			if err := timed(&c.record, &c.nRecord, func() error { return h.Record(evs[j], st) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// runOnce is one run as the runner times a scheduler's: the device
// synchronized, then the issue, then every stream the run used
// synchronized in turn (as the multi-stream schedulers end a run).
func runOnce(h device.Host, ss *streamSet, ls []*device.Launch, evs []device.Event, p runPattern, s int, c *runCosts) error {
	if err := h.Synchronize(); err != nil {
		return err
	}
	t0 := h.Now()
	if err := runIssue(h, ss, ls, evs, p, s, c); err != nil {
		return err
	}
	t1 := h.Now()
	for i := 0; i < s; i++ {
		if err := h.StreamSynchronize(ss.stream(i)); err != nil {
			return err
		}
	}
	t2 := h.Now()
	if err := h.Synchronize(); err != nil {
		return err
	}
	t3 := h.Now()
	c.wall, c.issue, c.syncs = ns(t3-t0), ns(t1-t0), ns(t2-t1)
	return nil
}

// runVariant is one variant of "runs over streams": the spin, the pattern
// and the stream count.
type runVariant struct {
	d time.Duration
	p runPattern
	s int
}

// runStreams is "runs over streams": runs of runKernels one-block spin kernels
// spread over 1 to 64 streams in the runPatterns, each timed as the runner
// times a scheduler's run, after an untimed warm run of the same (as
// sched.Warm): the run's host time, its issue, its synchronizes of every
// stream in turn, each call kind's host cost (a stream's first launch in
// the run apart), and its device time behind a gate kernel (#18: what a
// multi-stream schedule costs beyond its calls' one-stream costs; the
// interleaved-stream slopes cancel any cost per stream and run), with the
// runSpins kernels. Every round runs every variant once, so that the host's
// drift over the section falls on all alike; each run's wall time is also
// reported less the same round's one-stream run of its spin.
func (c *calibrator) runStreams(h device.Host) error {
	maxS := runStreamCounts[len(runStreamCounts)-1]
	ss, evs, err := newStreamsAndEvents(h, maxS, runKernels)
	if err != nil {
		return err
	}
	var variants []runVariant
	launches := map[time.Duration][]*device.Launch{}
	for _, d := range runSpins {
		spin := c.spinLaunch(d, ss.t.done)
		ls := make([]*device.Launch, maxS)
		for i := range ls {
			ls[i] = spin
		}
		launches[d] = ls
		for _, p := range runPatterns {
			for _, s := range runStreamCounts {
				if s == 1 && p.name != "paths" {
					continue // one stream: no cross-stream edge, the paths' run
				}
				variants = append(variants, runVariant{d, p, s})
			}
		}
	}
	per := make([][]runCosts, len(variants))
	if err := c.warmRounds(func(measured bool) error {
		for i, v := range variants {
			x, err := c.runVariantOnce(h, ss, launches[v.d], evs, v)
			if err != nil {
				return err
			}
			if measured {
				per[i] = append(per[i], x)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for i, v := range variants {
		var base []runCosts
		for j, w := range variants {
			if w.d == v.d && w.s == 1 {
				base = per[j]
			}
		}
		c.recordRun(v, per[i], base)
	}
	return nil
}

// runVariantOnce is one round of variant v: a warm run, then runRepeats
// timed runs (the one of median wall time kept), then the device time
// behind a gate.
func (c *calibrator) runVariantOnce(h device.Host, ss *streamSet, ls []*device.Launch, evs []device.Event, v runVariant) (runCosts, error) {
	var warm runCosts
	if err := runOnce(h, ss, ls, evs, v.p, v.s, &warm); err != nil {
		return warm, err
	}
	runs := make([]runCosts, runRepeats)
	for r := range runs {
		if err := runOnce(h, ss, ls, evs, v.p, v.s, &runs[r]); err != nil {
			return warm, err
		}
	}
	sort.Slice(runs, func(a, b int) bool { return runs[a].wall < runs[b].wall })
	mid := runs[runRepeats/2]
	var gated runCosts
	y, err := c.gatedFanOut(h, ss, v.s, runKernels+2*v.s, func() error { return runIssue(h, ss, ls, evs, v.p, v.s, &gated) })
	if err != nil {
		return mid, err
	}
	mid.gated = y
	return mid, h.Synchronize()
}

// runVariantName names one variant of "runs over streams".
func runVariantName(v runVariant) string {
	return fmt.Sprintf("%s, %d us spins, %d streams", v.p.name, v.d.Microseconds(), v.s)
}

// recordRun records variant v's rounds; base are the same rounds' runs of
// one stream with v's spin.
func (c *calibrator) recordRun(v runVariant, rounds, base []runCosts) {
	d, p, s := v.d, v.p, v.s
	what := runVariantName(v)
	how := fmt.Sprintf("%d one-block %d us spin kernels as %q over %d streams, after a warm run; median of %d runs a round",
		runKernels, d.Microseconds(), p.name, s, runRepeats)
	get := func(f func(runCosts) float64) []float64 { return pick(rounds, f) }
	per := func(sum func(runCosts) float64, n func(runCosts) int) func(runCosts) float64 {
		return func(x runCosts) float64 {
			if n(x) == 0 {
				return 0
			}
			return sum(x) / float64(n(x))
		}
	}
	c.record("run over streams, "+what, "", "ns", "Host.Now around Synchronize, the issue of "+how+", a synchronize of every stream in turn, Synchronize", get(func(x runCosts) float64 { return x.wall }))
	if s > 1 {
		less := make([]float64, len(rounds))
		for r := range rounds {
			less[r] = rounds[r].wall - base[r].wall
		}
		c.record("run over streams: wall less one stream's, "+what, "", "ns", "per round, the run's wall time less the same round's run of its spins on one stream", less)
	}
	c.record("run over streams: issue, "+what, "", "ns", "the same, Host.Now around the issue", get(func(x runCosts) float64 { return x.issue }))
	c.record("run over streams: synchronizes, "+what, "", "ns", "the same, Host.Now around the synchronizes in turn", get(func(x runCosts) float64 { return x.syncs }))
	c.record("run over streams: first launch a stream, "+what, "", "ns", "the same, Host.Now around each stream's first launch of the run, mean",
		get(per(func(x runCosts) float64 { return x.firstLaunch }, func(x runCosts) int { return x.nFirst })))
	if rounds[0].nLaunch > 0 {
		c.record("run over streams: other launches, "+what, "", "ns", "the same, Host.Now around the other launches, mean",
			get(per(func(x runCosts) float64 { return x.launch }, func(x runCosts) int { return x.nLaunch })))
	}
	if rounds[0].nRecord > 0 {
		c.record("run over streams: record, "+what, "", "ns", "the same, Host.Now around each record, mean",
			get(per(func(x runCosts) float64 { return x.record }, func(x runCosts) int { return x.nRecord })))
		c.record("run over streams: wait, "+what, "", "ns", "the same, Host.Now around each wait, mean",
			get(per(func(x runCosts) float64 { return x.wait }, func(x runCosts) int { return x.nWait })))
	}
	c.record("run over streams: device time, "+what, "", "ns", "Elapsed around "+how+" issued behind a gate kernel, forked from it and joined back", get(func(x runCosts) float64 { return x.gated }))
}
