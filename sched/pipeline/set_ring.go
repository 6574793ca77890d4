package pipeline

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// SET's exec ring (the Ring option; see the package doc). Each worker owns
// Ring instantiated graphs of the job shape, all over its private buffers
// and launched on its one stream, used in a fixed cyclic order:
//
//	[next-inFlight, next)          launched, not yet known complete
//	[next, next+prepared)          prepared: nodes already hold a job
//	the rest                       free: complete, holding a finished job
//
// A completion callback covering n jobs frees the n oldest launched execs
// (a stream runs its commands in order, and a callback behind job j runs
// only after every earlier command of the stream), so an exec is updated
// only after its last launch has completed, and dispatching a prepared job
// is one graph launch (plus one callback enqueue per Coalesce jobs).

// ringSlot is one of a worker's graph execs.
type ringSlot struct {
	exec device.GraphExec
	cur  boundJob // the parameters its nodes hold now
	// stream is the worker's stream, except under the test-only
	// streamPerExec negative control.
	stream device.Stream
}

// ringDone is a completion message of the single dispatcher's pool: n
// more jobs of worker have completed.
type ringDone struct{ worker, n int }

// validateRing checks the Ring option against Depth and Coalesce.
func (s *SET) validateRing() error {
	if s.Ring < 0 || s.Ring > 8 {
		return fmt.Errorf("set: ring (graph execs per worker) must be between 0 (off: one exec per worker) and 8, got %d", s.Ring)
	}
	if s.Ring > 0 && s.Depth > s.Ring {
		return fmt.Errorf("set: depth %d needs a ring of at least %d graph execs per worker, got ring %d: each job in flight holds its own exec", s.Depth, s.Depth, s.Ring)
	}
	if s.streamPerExec && s.Ring == 0 {
		return fmt.Errorf("set: streamPerExec needs a ring")
	}
	return nil
}

// prepareRing captures the job shape Ring times for worker wk, every exec
// with wk's first queued job (as the paper's SET captures its one graph):
// the first job then needs no node update, and every later one the same
// updates as in the paper's SET. All execs start free; Run prepares them.
func (s *SET) prepareRing(h device.Host, wk *worker, first *boundJob) error {
	wk.ring = make([]*ringSlot, s.Ring)
	for i := range wk.ring {
		sl := &ringSlot{stream: wk.stream}
		if s.streamPerExec && i > 0 {
			st, err := h.NewStream(device.StreamOptions{})
			if err != nil {
				return err
			}
			sl.stream = st
		}
		wk.ring[i] = sl
		x, err := s.capture(h, sl.stream, first)
		if err != nil {
			return err
		}
		sl.exec = x
		sl.cur = boundJob{job: first.job, launches: append([]device.Launch(nil), first.launches...), copies: append([]device.Copy(nil), first.copies...)}
	}
	return nil
}

// ringCallbacks makes wk's completion callbacks for the single dispatcher:
// dones[n] reports n completed jobs of wk to the shared pool. The messages
// are boxed once here so a callback allocates nothing.
func (s *SET) ringCallbacks(wk *worker) {
	free := s.free
	wk.dones = make([]func(), s.coalesce()+1)
	for n := 1; n <= s.coalesce(); n++ {
		var msg any = ringDone{worker: wk.id, n: n}
		wk.dones[n] = func() { free.Put(msg) }
	}
}

// ringAdvance does all that worker wk can do now: launch prepared execs
// while fewer than Depth of its jobs are in flight, and prepare free execs
// with its next jobs (its own queue's, else stolen from a peer and
// retargeted into its buffers); launches come first, so a prepared job
// never waits behind an update. When no job is left anywhere and nothing
// more will be launched, the jobs not yet behind a callback get one.
// threaded selects the threads' job queues (and bd is the caller's
// retargeting scratch).
func (s *SET) ringAdvance(h device.Host, wk *worker, m *Metrics, bd *binder, threaded bool) error {
	r := len(wk.ring)
	for {
		for wk.inFlight < s.Depth && wk.prepared > 0 {
			sl := wk.ring[wk.next]
			wk.next = (wk.next + 1) % r
			wk.prepared--
			wk.inFlight++
			wk.uncovered++
			var done func()
			if wk.uncovered == s.coalesce() {
				done, wk.uncovered = wk.dones[wk.uncovered], 0
			}
			if err := s.graphLaunch(h, sl.stream, sl.exec, sl.cur.job, m, done); err != nil {
				return fmt.Errorf("set: job %d on worker %d: %w", sl.cur.job, wk.id, err)
			}
		}
		if wk.inFlight+wk.prepared == r {
			// Every exec is in flight or prepared, so Depth jobs are in
			// flight and, with Coalesce <= Depth, at least one of them is
			// behind a callback: a completion will come.
			return nil
		}
		// Steal only for a job that can launch now: a stolen job parked
		// in a spare exec would wait behind this worker's jobs in flight
		// while its own worker may be about to run it.
		job, steal, deferred := s.ringTake(h, wk, threaded, wk.inFlight+wk.prepared < s.Depth)
		if deferred {
			return nil // Depth jobs are in flight: a completion will come
		}
		if job == nil {
			if wk.prepared == 0 && wk.uncovered > 0 {
				t := h.Now()
				if err := h.HostFunc(wk.ring[(wk.next+r-1)%r].stream, wk.dones[wk.uncovered]); err != nil {
					return fmt.Errorf("set: worker %d's last callback: %w", wk.id, err)
				}
				since(h, t, &m.Schedule)
				wk.uncovered = 0
			}
			return nil
		}
		if steal {
			t := h.Now()
			bd.bind(job.job, wk.slots, &wk.stolen)
			h.Spend(time.Duration(s.bufArgs) * s.retargetCost)
			since(h, t, &m.Schedule)
			job = &wk.stolen
			m.Steals++
		}
		sl := wk.ring[(wk.next+wk.prepared)%r]
		if err := s.setNodes(h, sl.exec, &sl.cur, job, m); err != nil {
			return fmt.Errorf("set: preparing job %d on worker %d: %w", job.job, wk.id, err)
		}
		wk.prepared++
	}
}

// ringTake returns wk's next job: the front of its own queue, or else, if
// maySteal, one stolen from a peer (steal), which the caller must retarget.
// deferred means wk's queue is empty and it may not steal now; a nil job
// otherwise means no queue has a job left.
func (s *SET) ringTake(h device.Host, wk *worker, threaded, maySteal bool) (job *boundJob, steal, deferred bool) {
	if threaded {
		if v, ok := h.Get(s.jobsQ[wk.id]); ok {
			return v.(*boundJob), false, false
		}
	} else if wk.head < len(wk.queue) {
		wk.head++
		return &wk.queue[wk.head-1], false, false
	}
	if !maySteal {
		return nil, false, true
	}
	if threaded {
		job, steal = s.takeQueued(h, wk)
		return job, steal, false
	}
	job, steal, _ = s.take(wk)
	return job, steal, false
}

// runRing is the single dispatcher with exec rings: it advances every
// worker once, then, per completion message, frees that worker's oldest
// execs and advances it again, until every job has completed.
func (s *SET) runRing(h device.Host) error {
	m := &s.metrics
	*m = Metrics{Jobs: s.js.jobs(), HostThreads: 1}
	start := h.Now()
	if err := s.gaps.begin(h, s.workers[0].stream); err != nil {
		return err
	}
	for _, wk := range s.workers {
		if err := s.ringAdvance(h, wk, m, s.bd, false); err != nil {
			return err
		}
	}
	for completed := 0; completed < m.Jobs; {
		t := h.Now()
		v, ok := h.Get(s.free)
		since(h, t, &m.Wait)
		if !ok {
			return fmt.Errorf("set: the completion pool closed with %d of %d jobs complete", completed, m.Jobs)
		}
		c := v.(ringDone)
		wk := s.workers[c.worker]
		wk.inFlight -= c.n
		completed += c.n
		if err := s.ringAdvance(h, wk, m, s.bd, false); err != nil {
			return err
		}
	}
	m.Makespan = h.Now() - start
	return s.gaps.finish(h, m)
}

// ringWorkerLoop is one worker's host thread with an exec ring: advance,
// wait for a completion callback, repeat until the worker has nothing in
// flight and no job is left to take.
func (s *SET) ringWorkerLoop(h device.Host, wk *worker) error {
	m := &wk.metrics
	*m = Metrics{}
	for {
		if err := s.ringAdvance(h, wk, m, wk.bd, true); err != nil {
			return err
		}
		if wk.inFlight == 0 {
			return nil // nothing launched, so nothing was left to take
		}
		t := h.Now()
		v, ok := h.Get(wk.free)
		if !ok {
			return fmt.Errorf("set: worker %d's completion queue closed with jobs in flight", wk.id)
		}
		since(h, t, &m.Wait)
		wk.inFlight -= v.(int)
	}
}
