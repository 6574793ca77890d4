package pipeline

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// SET's exec ring (the Ring option; why: docs/history/set.md). Each worker owns
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
// is one graph launch (plus one callback enqueue per Coalesce jobs). With
// JobsPerLaunch J > 1 (set_multi.go) a position holds up to J jobs, and
// Depth, Coalesce, inFlight and prepared count launches, not jobs.

// ringSlot is one of a worker's ring positions: a graph exec of the job
// shape, or with JobsPerLaunch J > 1, J execs, one per chain length (see
// set_multi.go), of which the one holding the prepared jobs is launched.
type ringSlot struct {
	// execs[n-1] is a chain of n job slots; cur[n-1][i] the parameters
	// its slot i's nodes hold now.
	execs []device.GraphExec
	cur   [][]boundJob
	// n is how many jobs the position holds while prepared or in flight,
	// and jobs those jobs.
	n    int
	jobs []int
	// stream is the worker's stream, except under the test-only
	// streamPerExec negative control.
	stream device.Stream
	// copies[n-1], under copies batched (set_batch.go), are the parameters
	// the copy nodes of execs[n-1] (an exec for a chunk of n jobs) hold
	// now, in the order of batchLayout.copies; cur is unused then.
	copies [][]device.Copy
}

// ringDone is a completion message of the single dispatcher's pool: n
// more jobs of worker have completed.
type ringDone struct{ worker, n int }

// validateHooks checks the tests' negative controls against the
// parameters.
func (s *SET) validateHooks() error {
	if s.streamPerExec && s.p.Ring == 0 {
		return fmt.Errorf("set: streamPerExec needs a ring")
	}
	if s.unchainedSlots && s.p.JobsPerLaunch < 2 {
		return fmt.Errorf("set: unchainedSlots needs several jobs per launch")
	}
	return nil
}

// prepareRing captures the job shape Ring times for worker wk, every exec
// with wk's first queued job (as the paper's SET captures its one graph):
// the first job then needs no node update, and every later one the same
// updates as in the paper's SET. With JobsPerLaunch J > 1 each position
// gets a chain of n job slots for every n from 1 to J, captured with wk's
// first n queued jobs. All execs start free; Run prepares them.
func (s *SET) prepareRing(h device.Host, wk *worker, first *boundJob) error {
	if s.p.JobsPerLaunch > 1 {
		return s.prepareMultiRing(h, wk, first)
	}
	wk.stolen, wk.batch = make([]boundJob, 1), make([]*boundJob, 0, 1)
	return s.makeRing(h, wk, 1, func(sl *ringSlot, _ int) error {
		x, err := s.capture(h, sl.stream, first)
		if err != nil {
			return err
		}
		sl.execs = []device.GraphExec{x}
		sl.cur = [][]boundJob{{cloneJob(first)}}
		return nil
	})
}

// makeRing gives worker wk Ring positions for up to per jobs per launch,
// each on wk's stream (or, under the test-only streamPerExec negative
// control, on a stream of its own for every position but the first), and
// calls add(sl, n) for every n from 1 to per to capture position sl's exec
// for n jobs.
func (s *SET) makeRing(h device.Host, wk *worker, per int, add func(sl *ringSlot, n int) error) error {
	wk.ring = make([]*ringSlot, s.p.Ring)
	for p := range wk.ring {
		sl := &ringSlot{stream: wk.stream, jobs: make([]int, per)}
		if s.streamPerExec && p > 0 {
			st, err := h.NewStream(device.StreamOptions{})
			if err != nil {
				return err
			}
			sl.stream = st
		}
		wk.ring[p] = sl
		for n := 1; n <= per; n++ {
			if err := add(sl, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// cloneJob is a copy of job with storage of its own.
func cloneJob(job *boundJob) boundJob {
	return boundJob{job: job.job, launches: append([]device.Launch(nil), job.launches...), copies: append([]device.Copy(nil), job.copies...)}
}

// ringCallbacks makes wk's completion callbacks for the single dispatcher:
// dones[n] reports n completed jobs of wk to the shared pool. The messages
// are boxed once here so a callback allocates nothing.
func (s *SET) ringCallbacks(wk *worker) {
	free := s.free
	wk.dones = make([]func(), s.p.Coalesce+1)
	for n := 1; n <= s.p.Coalesce; n++ {
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
		for wk.inFlight < s.depth && wk.prepared > 0 {
			sl := wk.ring[wk.next]
			wk.next = (wk.next + 1) % r
			wk.prepared--
			wk.inFlight++
			wk.uncovered++
			var done func()
			if wk.uncovered == s.p.Coalesce {
				done, wk.uncovered = wk.dones[wk.uncovered], 0
			}
			if err := s.launchSlot(h, sl, m, done); err != nil {
				return fmt.Errorf("set: job %d on worker %d: %w", sl.jobs[0], wk.id, err)
			}
		}
		if wk.inFlight+wk.prepared == r {
			// Every exec is in flight or prepared, so Depth launches are
			// in flight and, with Coalesce <= Depth, at least one of them
			// is behind a callback: a completion will come.
			return nil
		}
		// Steal only for jobs that can launch now: stolen jobs parked in
		// a spare exec would wait behind this worker's jobs in flight
		// while their own worker may be about to run them.
		steal, deferred := s.ringTake(h, wk, threaded, wk.inFlight+wk.prepared < s.depth)
		if deferred {
			return nil // Depth launches are in flight: a completion will come
		}
		if len(wk.batch) == 0 {
			if wk.prepared == 0 && wk.uncovered > 0 {
				if err := m.hostFunc(h, wk.ring[(wk.next+r-1)%r].stream, wk.dones[wk.uncovered]); err != nil {
					return fmt.Errorf("set: worker %d's last callback: %w", wk.id, err)
				}
				wk.uncovered = 0
			}
			return nil
		}
		if err := s.prepareSlot(h, wk, wk.ring[(wk.next+wk.prepared)%r], steal, m, bd); err != nil {
			return err
		}
		wk.prepared++
	}
}

// prepareSlot writes the jobs of wk.batch (stolen from a peer if steal)
// into ring position sl, whose launches have all completed: a stolen job
// is first retargeted into wk's buffers (bd is the caller's scratch), then
// the nodes of the exec for that many jobs are updated where they differ.
// Under copies batched wk.batch holds one chunk instead (set_batch.go).
func (s *SET) prepareSlot(h device.Host, wk *worker, sl *ringSlot, steal bool, m *Metrics, bd *binder) error {
	if s.p.Copies == CopiesBatched {
		return s.prepareChunk(h, wk, sl, steal, m)
	}
	if steal {
		t := h.Now()
		for i, job := range wk.batch {
			bd.bind(job.job, wk.slots, &wk.stolen[i])
			wk.batch[i] = &wk.stolen[i]
		}
		h.Spend(time.Duration(len(wk.batch)*s.bufArgs) * s.retargetCost)
		since(h, t, &m.Schedule)
		m.Steals += len(wk.batch)
	}
	n := len(wk.batch)
	for i, job := range wk.batch {
		if err := s.setNodesAt(h, sl.execs[n-1], i*s.js.ops, &sl.cur[n-1][i], job, m); err != nil {
			return fmt.Errorf("set: preparing job %d on worker %d: %w", job.job, wk.id, err)
		}
		sl.jobs[i] = job.job
	}
	sl.n = n
	return nil
}

// ringTake fills wk.batch with wk's next jobs, up to JobsPerLaunch (under
// copies batched, one chunk of them; see takeLimit): from
// the front of its own queue, or else, if maySteal, stolen from one peer
// (steal), which the caller must retarget. deferred means wk's queue is
// empty and it may not steal now; an empty batch otherwise means no queue
// has a job left.
func (s *SET) ringTake(h device.Host, wk *worker, threaded, maySteal bool) (steal, deferred bool) {
	wk.batch = wk.batch[:0]
	if threaded {
		s.takeOwnQueued(h, wk)
	} else {
		s.takeOwn(wk)
	}
	if len(wk.batch) > 0 {
		return false, false
	}
	if !maySteal {
		return false, true
	}
	if threaded {
		s.stealQueued(h, wk)
	} else {
		s.steal(wk)
	}
	return len(wk.batch) > 0, false
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
	for completed := 0; completed < m.Jobs; { // jobs, not launches
		t := h.Now()
		v, ok := h.Get(s.free)
		since(h, t, &m.Wait)
		if !ok {
			return fmt.Errorf("set: the completion pool closed with %d of %d jobs complete", completed, m.Jobs)
		}
		c := v.(ringDone)
		wk := s.workers[c.worker]
		for i := 0; i < c.n; i++ {
			// The oldest launch in flight has completed.
			completed += wk.ring[(wk.next-wk.inFlight+len(wk.ring))%len(wk.ring)].n
			wk.inFlight--
		}
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
