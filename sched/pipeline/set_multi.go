package pipeline

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Several jobs per graph launch (the JobsPerLaunch option, with a ring;
// why: docs/history/set.md). Each of a worker's ring positions holds,
// for every n from 1 to J, an exec that is a chain of n job slots captured
// on the worker's one stream: slot i+1's copy-in depends on slot i's
// copy-out, so all slots share the worker's private buffers and a slot's
// buffers are reused only after the previous slot has copied its result
// out (the race checker verifies it; a test capturing the slots unchained
// is caught). Node i*ops+k of a chain is operation k of its slot i.
//
// A dispatch takes up to J jobs (the front of the worker's own queue, or
// else up to J from the back of one peer's queue, retargeted into the
// thief's buffers), writes them into the n-slot exec of a free position
// (n is how many it got: J, or fewer at a queue's tail) and launches that
// exec once. The other execs of the position stay untouched until the
// position is prepared again, which, as for one job per launch, happens
// only after the completion callbacks report its last launch complete.
// Capturing every chain length in Prepare costs J execs per position
// (Ring x J per worker), in exchange for no capture or instantiation
// inside Run and no partly empty launch at a tail.

// takeLimit is how many queue entries one dispatch takes: up to
// JobsPerLaunch jobs, or under copies batched one chunk (an entry that
// stands for up to JobsPerLaunch consecutive jobs).
func (s *SET) takeLimit() int {
	if s.p.Copies == CopiesBatched {
		return 1
	}
	return s.p.JobsPerLaunch
}

// captureJobs records jobs' commands on st into one graph, job after job,
// and instantiates it. A stream capture orders each command after the
// previous one, so the jobs form a chain. Under the test-only
// unchainedSlots negative control, every job after the first is captured
// on a stream of its own forked from the capture's start, so the jobs run
// unordered over the same buffers.
func (s *SET) captureJobs(h device.Host, st device.Stream, jobs []*boundJob) (x device.GraphExec, err error) {
	if err := h.BeginCapture(st); err != nil {
		return nil, err
	}
	var fork, join device.Event
	var sides []device.Stream
	defer func() {
		for _, o := range []device.Event{fork, join} {
			if o != nil {
				err = errors.Join(err, h.Destroy(o))
			}
		}
		for _, o := range sides {
			err = errors.Join(err, h.Destroy(o))
		}
	}()
	fail := func(e error) (device.GraphExec, error) {
		return nil, sched.AbortCapture(h, st, e)
	}
	if s.unchainedSlots {
		if fork, err = h.NewEvent(device.EventOptions{}); err != nil {
			return fail(err)
		}
		if join, err = h.NewEvent(device.EventOptions{}); err != nil {
			return fail(err)
		}
		if err := h.Record(fork, st); err != nil {
			return fail(err)
		}
	}
	for i, job := range jobs {
		on := st
		if s.unchainedSlots && i > 0 {
			if on, err = h.NewStream(device.StreamOptions{}); err != nil {
				return fail(err)
			}
			sides = append(sides, on)
			if err := h.Wait(on, fork); err != nil {
				return fail(err)
			}
		}
		if err := s.issueOps(h, on, job, 0, s.js.ops); err != nil {
			return fail(err)
		}
		if on != st {
			if err := h.Record(join, on); err != nil {
				return fail(err)
			}
			if err := h.Wait(st, join); err != nil {
				return fail(err)
			}
		}
	}
	g, err := h.EndCapture(st)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, h.Destroy(g)) }()
	if g.Nodes() != len(jobs)*s.js.ops {
		return nil, fmt.Errorf("captured graph has %d nodes for %d jobs of %d operations", g.Nodes(), len(jobs), s.js.ops)
	}
	return h.Instantiate(g)
}

// issueOps issues operations lo to hi-1 of job (bound to a worker's
// buffers) on st.
func (s *SET) issueOps(h device.Host, st device.Stream, job *boundJob, lo, hi int) error {
	in := s.js.in
	first, _ := in.StepRange(job.job)
	for k := lo; k < hi; k++ {
		var err error
		if in.Op(first+k).Kind == workloads.OpKernel {
			err = h.Launch(st, &job.launches[k])
		} else {
			err = h.Copy(st, &job.copies[k])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// prepareMultiRing gives worker wk Ring positions of chains of 1 to J job
// slots, each captured with wk's first queued jobs (first where its queue
// has too few), so wk's first launch needs no node update.
func (s *SET) prepareMultiRing(h device.Host, wk *worker, first *boundJob) error {
	J := s.p.JobsPerLaunch
	wk.stolen, wk.batch = make([]boundJob, J), make([]*boundJob, 0, J)
	shape := make([]*boundJob, J)
	for i := range shape {
		shape[i] = first
		if i < len(wk.queue) {
			shape[i] = &wk.queue[i]
		}
	}
	return s.makeRing(h, wk, J, func(sl *ringSlot, n int) error {
		x, err := s.captureJobs(h, sl.stream, shape[:n])
		if err != nil {
			return fmt.Errorf("a chain of %d jobs: %w", n, err)
		}
		sl.execs = append(sl.execs, x)
		cur := make([]boundJob, n)
		for i := range cur {
			cur[i] = cloneJob(shape[i])
		}
		sl.cur = append(sl.cur, cur)
		return nil
	})
}

// takeOwn moves up to takeLimit jobs (or chunks) from the front of wk's
// own queue into wk.batch (one dispatcher).
func (s *SET) takeOwn(wk *worker) {
	for len(wk.batch) < s.takeLimit() && wk.head < len(wk.queue) {
		wk.batch = append(wk.batch, &wk.queue[wk.head])
		wk.head++
	}
}

// steal moves up to takeLimit jobs (or chunks) from the back of the next
// non-empty peer queue, in round-robin order, into wk.batch (one
// dispatcher).
func (s *SET) steal(wk *worker) {
	for i := 0; i < s.p.Workers; i++ {
		v := s.workers[wk.victim]
		wk.victim = (wk.victim + 1) % s.p.Workers
		if v == wk || v.head == len(v.queue) {
			continue
		}
		for len(wk.batch) < s.takeLimit() && v.head < len(v.queue) {
			last := len(v.queue) - 1
			wk.batch = append(wk.batch, &v.queue[last])
			v.queue = v.queue[:last]
		}
		return
	}
}

// takeOwnQueued moves up to takeLimit jobs (or chunks) from wk's own job
// queue into wk.batch (Threaded; the queues were closed when filled, so a Get on an
// empty one returns at once).
func (s *SET) takeOwnQueued(h device.Host, wk *worker) {
	for len(wk.batch) < s.takeLimit() {
		v, ok := h.Get(s.jobsQ[wk.id])
		if !ok {
			return
		}
		wk.batch = append(wk.batch, v.(*boundJob))
	}
}

// stealQueued moves up to takeLimit jobs (or chunks) from the next peer's
// job queue with jobs left, in round-robin order, into wk.batch (Threaded).
func (s *SET) stealQueued(h device.Host, wk *worker) {
	for i := 0; i < s.p.Workers; i++ {
		v := wk.victim
		wk.victim = (wk.victim + 1) % s.p.Workers
		if v == wk.id || s.jobsQ[v].Len() == 0 {
			continue
		}
		for len(wk.batch) < s.takeLimit() {
			got, ok := h.Get(s.jobsQ[v])
			if !ok {
				break
			}
			wk.batch = append(wk.batch, got.(*boundJob))
		}
		if len(wk.batch) > 0 {
			return
		}
	}
}

// launchSlot launches the exec of ring position sl that holds its sl.n
// prepared jobs, on its stream, between the jobs' timing events when Gaps
// is on (with several jobs per launch, each job's span is the launch's),
// then enqueues done behind it if done is not nil.
func (s *SET) launchSlot(h device.Host, sl *ringSlot, m *Metrics, done func()) error {
	if sl.n == 1 {
		return s.graphLaunch(h, sl.stream, sl.execs[0], sl.jobs[0], m, done)
	}
	for _, j := range sl.jobs[:sl.n] {
		if err := s.gaps.jobStart(h, sl.stream, j); err != nil {
			return err
		}
	}
	t := h.Now()
	if err := h.GraphLaunch(sl.execs[sl.n-1], sl.stream); err != nil {
		return err
	}
	m.launched(h, t)
	for _, j := range sl.jobs[:sl.n] {
		if err := s.gaps.jobEnd(h, sl.stream, j); err != nil {
			return err
		}
	}
	if done != nil {
		return m.hostFunc(h, sl.stream, done)
	}
	return nil
}
