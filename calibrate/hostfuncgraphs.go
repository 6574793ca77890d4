package calibrate

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gpusched/gpusched/device"
)

// "host functions before graphs" (issue #18, session 24): SET-batch ends
// every launch of a job graph with a host function on its worker's
// stream, and with a second launch queued behind it. At three workers the
// GPU loses about 43 us of makespan per host function where the simulator
// loses 4.5 (setbatch-inflight-gpu, session 23), and adding the queued
// graph's launch cost to front_end.callback_release_ns moved those rows
// toward the GPU. Whether the callback thread pays for the work queued
// behind a host function (the driver submitting it when the function
// returns) is what this probe asks: on 1 to 3 streams, a host function
// with a 5 us kernel or a graph of 1, 4 or 16 one-kernel branches queued
// behind it, all becoming ready at once. If the thread pays per branch,
// the first span grows with the branches, and so does the rise per
// function on more streams (each waits for the thread). Beside the
// bursts, SET-batch's loop: one host thread keeps a graph launch and a
// host function in flight on each of 1 to 3 streams, 48 jobs.
var (
	hgStreams  = []int{1, 2, 3}
	hgBranches = []int{0, 1, 4, 16} // 0: a 5 us kernel behind the host function
)

const (
	hgLeadUs   = 300 // covers the issue of three graph launches of 16 branches
	hgKernelUs = 5
	hgLoopJobs = 48
)

// hgEnv is the probe's streams (from "host functions over streams") and,
// per branch count, one graph exec per stream (an exec runs one launch at
// a time).
type hgEnv struct {
	*hfStreamsEnv
	execs map[int][]device.GraphExec
	next  *device.Launch // the kernel behind the host function (branches 0)
}

func (c *calibrator) newHGEnv(h device.Host) (*hgEnv, error) {
	maxN := hgStreams[len(hgStreams)-1]
	hf, err := c.newHFStreamsEnv(h, maxN)
	if err != nil {
		return nil, err
	}
	gd, err := c.newGDEnv(h, gdSmall)
	if err != nil {
		return nil, err
	}
	env := &hgEnv{hfStreamsEnv: hf, execs: map[int][]device.GraphExec{}, next: c.spinLaunch(us(hgKernelUs), hf.done)}
	for _, b := range hgBranches {
		if b == 0 {
			continue
		}
		sh := gdShape{name: fmt.Sprintf("kernel, %d branches, kernel", b), head: "k", tail: "k", branches: b, perBranch: 1}
		for i := 0; i < maxN; i++ {
			x, err := c.instantiate(h, gd.ss.t.s, gd.issue(h, sh))
			if err != nil {
				return nil, fmt.Errorf("host functions before graphs, %s: %w", sh.name, err)
			}
			env.execs[b] = append(env.execs[b], x)
		}
	}
	return env, nil
}

// behind issues, on stream i, what follows the host function: the 5 us
// kernel (branches 0) or stream i's graph of that many branches.
func (env *hgEnv) behind(h device.Host, i, branches int) error {
	if branches == 0 {
		return h.Launch(env.streams[i], env.next)
	}
	return h.GraphLaunch(env.execs[branches][i], env.streams[i])
}

// hgBurst issues, on n streams behind a 300 us kernel, a 5 us kernel, a
// record, a host function that Puts, a record, what comes behind and a
// record; Gets the n Puts; and returns, in the order the kernels ended,
// each host function's span (kernel end to the next record) and what is
// behind's time after the release.
func (c *calibrator) hgBurst(h device.Host, env *hgEnv, n, branches int, w hgWait) (span, after []float64, err error) {
	if err := h.Launch(env.lead.s, c.spinLaunch(us(w.leadUs), env.done)); err != nil {
		return nil, nil, err
	}
	if err := h.Record(env.lead.e0, env.lead.s); err != nil {
		return nil, nil, err
	}
	for i := 0; i < n; i++ {
		s := env.streams[i]
		for _, issue := range []func() error{
			func() error { return h.Wait(s, env.lead.e0) },
			func() error { return h.Launch(s, c.spinLaunch(us(hgKernelUs), env.done)) },
			func() error { return h.Record(env.kernel[i], s) },
			func() error { return h.HostFunc(s, env.puts[i]) },
			func() error { return h.Record(env.release[i], s) },
			func() error { return env.behind(h, i, branches) },
			func() error { return h.Record(env.hfStreamsEnv.next[i], s) },
		} {
			if err := issue(); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := w.before(h, env, n); err != nil {
		return nil, nil, err
	}
	for i := 0; i < n; i++ {
		if _, ok := h.Get(env.q); !ok {
			return nil, nil, errors.New("host functions before graphs: queue closed")
		}
	}
	if err := h.Synchronize(); err != nil {
		return nil, nil, err
	}
	type times struct{ end, release, next float64 }
	ts := make([]times, n)
	for i := range ts {
		for _, p := range []struct {
			e   device.Event
			dst *float64
		}{{env.kernel[i], &ts[i].end}, {env.release[i], &ts[i].release}, {env.hfStreamsEnv.next[i], &ts[i].next}} {
			d, err := h.Elapsed(env.lead.e0, p.e)
			if err != nil {
				return nil, nil, err
			}
			*p.dst = ns(d)
		}
	}
	sort.SliceStable(ts, func(x, y int) bool { return ts[x].end < ts[y].end })
	for _, t := range ts {
		span = append(span, t.release-t.end)
		after = append(after, t.next-t.release)
	}
	return span, after, nil
}

// hostFuncsBeforeGraphs records, per stream count and branch count, the
// first host function's span, the mean span, the span's rise per function
// in arrival order and the mean time of what is behind after its release
// (medians of 4 bursts per round); then SET-batch's loop per job.
func (c *calibrator) hostFuncsBeforeGraphs(h device.Host) error {
	env, err := c.newHGEnv(h)
	if err != nil {
		return err
	}
	type key struct{ n, b int }
	figs := map[key]*hfFigures{}
	for _, n := range hgStreams {
		for _, b := range hgBranches {
			figs[key{n, b}] = &hfFigures{}
		}
	}
	if err := c.warmRounds(func(measured bool) error {
		for _, n := range hgStreams {
			for _, b := range hgBranches {
				f, err := c.hgBursts(h, env, n, b, hgWaits[0])
				if err != nil {
					return fmt.Errorf("host functions before graphs, %d streams, %d branches: %w", n, b, err)
				}
				if measured {
					figs[key{n, b}].add(f)
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, n := range hgStreams {
		for _, b := range hgBranches {
			f, what := figs[key{n, b}], hgName(n, b)
			c.record(what+": first span", "", "ns", hfSpanMethod+"the first ready's, median of 4 bursts per round", f.first)
			c.record(what+": mean span", "", "ns", hfSpanMethod+"mean over the burst, median of 4", f.mean)
			c.record(what+": behind", "", "ns", "event timestamps: the record after the host function to the one after what is behind it, mean over the burst, median of 4", f.next)
			if n > 1 {
				c.record(what+": span rise per function", "", "ns", hfSpanMethod+"least-squares slope over arrival order, median of 4", f.slope)
			}
		}
	}
	if err := c.hgWaitModes(h, env); err != nil {
		return err
	}
	return c.hgLoops(h, env)
}

// hgWait is what the host does while the host functions run: with the
// 300 us lead, a Get at once waits past host.park_after_ns (the host
// thread parks), so the other modes keep it out of Get until the last
// release: spinning (Host.Spend, no driver call), polling the last
// release event (cuEventQuery: driver calls while the callbacks run) or
// blocked in a device synchronize. A 40 us lead with a Get at once is
// "host functions over streams"' burst.
type hgWait struct {
	name   string
	leadUs int
	before func(h device.Host, env *hgEnv, n int) error
}

var hgWaits = []hgWait{
	{name: "300 us lead, Get at once", leadUs: hgLeadUs, before: func(device.Host, *hgEnv, int) error { return nil }},
	{name: "40 us lead, Get at once", leadUs: hfLeadUs, before: func(device.Host, *hgEnv, int) error { return nil }},
	{name: "300 us lead, host spins 500 us", leadUs: hgLeadUs, before: func(h device.Host, _ *hgEnv, _ int) error {
		h.Spend(us(500))
		return nil
	}},
	{name: "300 us lead, host polls the release event", leadUs: hgLeadUs, before: func(h device.Host, env *hgEnv, n int) error {
		for i := 0; i < 1<<20; i++ {
			done, err := h.Query(env.hfStreamsEnv.next[n-1])
			if err != nil || done {
				return err
			}
		}
		return errors.New("host functions before graphs: the polled event never completed")
	}},
	{name: "300 us lead, host synchronizes", leadUs: hgLeadUs, before: func(h device.Host, _ *hgEnv, _ int) error { return h.Synchronize() }},
}

// hgWaitModes records, for a host function with a 5 us kernel behind it
// on 1 and 3 streams, its span under each of hgWaits.
func (c *calibrator) hgWaitModes(h device.Host, env *hgEnv) error {
	for _, w := range hgWaits {
		for _, n := range []int{1, 3} {
			var figs hfFigures
			if err := c.warmRounds(func(measured bool) error {
				f, err := c.hgBursts(h, env, n, 0, w)
				if err != nil {
					return fmt.Errorf("host function, %s: %w", w.name, err)
				}
				if measured {
					figs.add(f)
				}
				return nil
			}); err != nil {
				return err
			}
			what := fmt.Sprintf("host functions before a 5 us kernel on %d streams, %s", n, w.name)
			c.record(what+": first span", "", "ns", hfSpanMethod+"the first ready's, median of 4 bursts per round", figs.first)
			c.record(what+": mean span", "", "ns", hfSpanMethod+"mean over the burst, median of 4", figs.mean)
		}
	}
	return nil
}

// hgBursts runs hfReps bursts of n streams, branches behind, under w and
// returns their medians: the first span, the mean span, what is behind
// (next) and, on more than one stream, the span's rise per function.
func (c *calibrator) hgBursts(h device.Host, env *hgEnv, n, branches int, w hgWait) (hfFigures, error) {
	var all hfFigures
	for r := 0; r < hfReps; r++ {
		span, after, err := c.hgBurst(h, env, n, branches, w)
		if err != nil {
			return hfFigures{}, err
		}
		all.first, all.mean = append(all.first, span[0]), append(all.mean, meanOf(span))
		all.next = append(all.next, meanOf(after))
		if n > 1 {
			all.slope = append(all.slope, lsSlope(span))
		}
	}
	return all.medians(), nil
}

// hgName names one burst shape's figures.
func hgName(n, branches int) string {
	if branches == 0 {
		return fmt.Sprintf("host functions before a 5 us kernel on %d streams", n)
	}
	return fmt.Sprintf("host functions before graphs of %d branches on %d streams", branches, n)
}

// hgLoops is SET-batch's dispatcher: per stream, a graph launch and a host
// function that Puts the stream, two jobs in flight per stream; per Put
// the next job on that stream. Per job, the wall time.
func (c *calibrator) hgLoops(h device.Host, env *hgEnv) error {
	for _, b := range hgBranches {
		if b == 0 {
			continue
		}
		for _, n := range hgStreams {
			var perJob []float64
			if err := c.warmRounds(func(measured bool) error {
				wall, err := c.hgLoopRound(h, env, n, b)
				if measured {
					perJob = append(perJob, wall/hgLoopJobs)
				}
				return err
			}); err != nil {
				return err
			}
			c.record(fmt.Sprintf("host function loop, graphs of %d branches, %d streams: per job", b, n), "", "ns",
				"SET-batch's dispatcher: Host.Now over 48 jobs (graph launch + host function that Puts the stream, two in flight per stream; per Put the next job there), per job", perJob)
		}
	}
	return h.Synchronize()
}

// hgLoopRound runs hgLoopJobs graph launches of branches over n streams,
// two in flight per stream (one exec per stream: the second launch queues
// behind the first), and returns the wall time (ns).
func (c *calibrator) hgLoopRound(h device.Host, env *hgEnv, n, branches int) (float64, error) {
	launch := func(i int) error {
		if err := env.behind(h, i, branches); err != nil {
			return err
		}
		return h.HostFunc(env.streams[i], env.puts[i])
	}
	start := h.Now()
	next := 0
	for ; next < 2*n && next < hgLoopJobs; next++ {
		if err := launch(next % n); err != nil {
			return 0, err
		}
	}
	for done := 0; done < hgLoopJobs; done++ {
		v, ok := h.Get(env.q)
		if !ok {
			return 0, errors.New("host function loop: queue closed")
		}
		if next < hgLoopJobs {
			if err := launch(v.(int)); err != nil {
				return 0, err
			}
			next++
		}
	}
	return ns(h.Now() - start), nil
}
