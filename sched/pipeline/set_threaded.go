package pipeline

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// startThreads fills the per-worker job queues and starts one host thread
// per worker, blocked until Run signals it (so Run pays for no thread
// start). A thread serves one Run per signal, until Cleanup releases it.
func (s *SET) startThreads(h device.Host) error {
	s.start = make([]device.Queue, s.p.Workers)
	s.doneQ = h.NewQueue("set workers done")
	for _, wk := range s.workers {
		s.start[wk.id] = h.NewQueue(fmt.Sprintf("set worker %d start", wk.id))
	}
	s.fillJobQueues(h)
	for _, wk := range s.workers {
		wk := wk
		h.Go(fmt.Sprintf("set worker %d", wk.id), func(h device.Host) error {
			for {
				if _, ok := h.Get(s.start[wk.id]); !ok {
					s.doneQ.Put(nil) // released by Cleanup
					return nil
				}
				s.doneQ.Put(s.workerLoop(h, wk))
			}
		})
	}
	s.running = true
	return nil
}

// fillJobQueues gives every worker a job queue holding its dealt jobs,
// closed, so that a Get on it returns at once when it is empty.
func (s *SET) fillJobQueues(h device.Host) {
	s.jobsQ = make([]device.Queue, s.p.Workers)
	for _, wk := range s.workers {
		q := h.NewQueue(fmt.Sprintf("set worker %d jobs", wk.id))
		for i := range wk.queue[:wk.jobs] {
			q.Put(&wk.queue[i])
		}
		q.Close()
		s.jobsQ[wk.id] = q
	}
}

// workerLoop is one worker's host thread: with a free slot (fewer than
// Depth of its jobs in flight), take a job from its own queue or else steal
// one round-robin from a peer, retarget it, launch it; when no queue has a
// job left, wait for its jobs in flight to complete.
func (s *SET) workerLoop(h device.Host, wk *worker) error {
	if s.p.Ring > 0 {
		return s.ringWorkerLoop(h, wk)
	}
	m := &wk.metrics
	*m = Metrics{}
	inFlight, uncovered := 0, 0 // jobs in flight; of them, not yet behind a callback
	var stolen boundJob
	for {
		if inFlight == s.depth {
			t := h.Now()
			v, ok := h.Get(wk.free)
			if !ok {
				return fmt.Errorf("set: worker %d's completion queue closed with jobs in flight", wk.id)
			}
			since(h, t, &m.Wait)
			inFlight -= v.(int)
		}
		job, steal := s.takeQueued(h, wk)
		if job == nil {
			break
		}
		if steal {
			t := h.Now()
			wk.bd.bind(job.job, wk.slots, &stolen)
			h.Spend(s.stealCost())
			since(h, t, &m.Schedule)
			job = &stolen
			m.Steals++
		}
		inFlight++
		uncovered++
		var done func()
		if uncovered == s.p.Coalesce {
			done, uncovered = wk.dones[uncovered], 0
		}
		if err := s.launch(h, wk, job, m, done); err != nil {
			return fmt.Errorf("set: job %d on worker %d: %w", job.job, wk.id, err)
		}
	}
	if uncovered > 0 {
		// The last jobs, fewer than Coalesce, get their own callback.
		if err := m.hostFunc(h, wk.stream, wk.dones[uncovered]); err != nil {
			return err
		}
	}
	for inFlight > 0 {
		t := h.Now()
		v, ok := h.Get(wk.free)
		if !ok {
			return fmt.Errorf("set: worker %d's completion queue closed with jobs in flight", wk.id)
		}
		since(h, t, &m.Wait)
		inFlight -= v.(int)
	}
	return nil
}

// takeQueued gets the next job from wk's own queue, or else from the next
// peer's in round-robin order. The queues were closed when filled, so a
// Get on an empty one returns at once.
func (s *SET) takeQueued(h device.Host, wk *worker) (job *boundJob, stolen bool) {
	if v, ok := h.Get(s.jobsQ[wk.id]); ok {
		return v.(*boundJob), false
	}
	for i := 0; i < s.p.Workers; i++ {
		v := wk.victim
		wk.victim = (wk.victim + 1) % s.p.Workers
		if v == wk.id || s.jobsQ[v].Len() == 0 {
			continue
		}
		if got, ok := h.Get(s.jobsQ[v]); ok {
			return got.(*boundJob), true
		}
	}
	return nil, false
}

// runThreaded starts the worker threads' work and waits for them.
func (s *SET) runThreaded(h device.Host) error {
	m := &s.metrics
	*m = Metrics{Jobs: s.js.jobs(), HostThreads: s.p.Workers}
	start := h.Now()
	if err := s.gaps.begin(h, s.workers[0].stream); err != nil {
		return err
	}
	for _, q := range s.start {
		q.Put(struct{}{})
	}
	var first error
	for range s.workers {
		v, ok := h.Get(s.doneQ)
		if !ok {
			break
		}
		if err, _ := v.(error); err != nil && first == nil {
			first = err
		}
	}
	m.Makespan = h.Now() - start
	// The threads wait for the next Run's signal; their queues are filled
	// again for it here, once every job of this one has completed.
	s.fillJobQueues(h)
	for _, wk := range s.workers {
		m.merge(&wk.metrics)
	}
	if first != nil {
		return first
	}
	return s.gaps.finish(h, m)
}
