package acs

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// windowRun is one Run of the window thread (dispatch window): the window,
// what each scheduler thread has in flight, and the jobs handed out.
type windowRun struct {
	s           *SW
	in          *workloads.Instance
	w           *window
	inflight    []int // per thread: jobs sent and not yet reported done
	outstanding int   // jobs sent and not yet reported done, in all
	// recorded (Params.Waits) is the event recorded after each launched
	// operation.
	recorded []device.Event
	// jobs holds every job of the run: every operation goes out in exactly
	// one job. Without graphs it is reused by the next Run: no job is
	// referenced once Run returns (every one was reported), while a graph
	// job stays on a released list until its thread frees or caches its
	// graph. Its capacity is the operation count, so pointers into it stay
	// valid.
	jobs []job
	// batched (Handoff batched): per thread, the chain of jobs this
	// dispatch pass gives it, sent as one message by flush.
	batched      bool
	heads, tails []*job
	firstErr     error
}

func (s *SW) newWindowRun(in *workloads.Instance) *windowRun {
	r := &windowRun{s: s, in: in, w: s.window(in), inflight: make([]int, s.p.Threads)}
	if s.p.Waits {
		r.recorded = make([]device.Event, in.N())
	}
	r.jobs = s.jobs[:0]
	if cap(r.jobs) < in.N() || s.p.Batch > 1 {
		r.jobs = make([]job, 0, in.N())
	}
	if s.p.Batch < 2 {
		s.jobs = r.jobs
	}
	r.batched = s.p.Handoff == HandoffBatched
	if r.batched {
		r.heads, r.tails = make([]*job, s.p.Threads), make([]*job, s.p.Threads)
	}
	return r
}

// run admits and dispatches operations and retires completions until
// every operation is done (or, after an error, until nothing is in
// flight).
func (r *windowRun) run(h device.Host) error {
	start := h.Now()
	defer func() {
		st := &r.s.wstats
		st.wall += h.Now() - start
		st.kernels += int64(r.in.N())
	}()
	w := r.w
	s := r.s
	s.timedPart(h, &s.wcalls.check, func() {
		w.admit()
		h.Spend(w.takeCost())
	})
	r.dispatch(h)
	for r.outstanding > 0 || (r.firstErr == nil && !w.finished()) {
		if r.outstanding == 0 {
			return fmt.Errorf("acs-sw: %d of %d operations done and nothing in flight: a dependency cycle (bug)", w.done, w.n)
		}
		if err := r.retire(h); err != nil {
			return err
		}
		if r.firstErr != nil {
			continue // drain what is in flight, issue nothing more
		}
		// Newly ready kernels go out before the window spends time
		// inserting the operations that the freed slots admit.
		r.dispatch(h)
		admitted := 0
		s.timedPart(h, &s.wcalls.check, func() {
			if admitted = w.admit(); admitted > 0 {
				h.Spend(w.takeCost())
			}
		})
		if admitted > 0 {
			r.dispatch(h)
		}
	}
	return r.firstErr
}

// send hands ops (behind waits) to thread t: at once, or under Handoff
// batched onto t's chain for flush.
func (r *windowRun) send(h device.Host, t int, ops []int, waits []device.Event) {
	s := r.s
	for _, k := range ops {
		r.w.issue(k, t)
	}
	r.jobs = append(r.jobs, job{in: r.in, ops: ops, release: s.released[t], waits: waits})
	j := &r.jobs[len(r.jobs)-1]
	switch {
	case !r.batched:
		s.timedPart(h, &s.wcalls.put, func() {
			s.work[t].Put(j)
		})
	case r.heads[t] == nil:
		r.heads[t], r.tails[t] = j, j
	default:
		r.tails[t].next, r.tails[t] = j, j
	}
	s.released[t] = nil
	r.inflight[t]++
	r.outstanding++
}

// flush sends every thread its chain of jobs (Handoff batched).
func (r *windowRun) flush(h device.Host) {
	s := r.s
	for t, j := range r.heads {
		if j != nil {
			s.timedPart(h, &s.wcalls.put, func() {
				s.work[t].Put(j)
			})
			r.heads[t], r.tails[t] = nil, nil
		}
	}
}

// dispatch gives every idle thread ready operations (one, or a batch),
// then, with InFlight > 1, issues pending operations behind their
// upstream ones on one stream or, with Waits, behind event waits.
func (r *windowRun) dispatch(h device.Host) {
	s, w := r.s, r.w
	idle := 0
	for _, n := range r.inflight {
		if n == 0 {
			idle++
		}
	}
	for t := 0; t < len(r.inflight) && len(w.ready) > 0; t++ {
		if r.inflight[t] != 0 {
			continue
		}
		if s.p.Batch < 2 {
			r.send(h, t, s.one(w.ready[0]), nil)
		} else {
			r.send(h, t, w.batch(s.p.Batch, idle), nil)
		}
		idle--
	}
	if s.p.InFlight > 1 {
		// Pending operations in program order; send removes the one it
		// issues from w.pending.
		for i := 0; i < len(w.pending); {
			k := w.pending[i]
			if t, ok := w.streamOrdered(k); ok && r.inflight[t] < s.p.InFlight {
				r.send(h, t, s.one(k), nil)
				continue
			} else if s.p.Waits {
				if t, waits, ok := s.waitTarget(w, k, r.inflight, r.recorded); ok {
					r.send(h, t, s.one(k), waits)
					continue
				}
			}
			i++
		}
	}
	if r.batched {
		r.flush(h)
	}
}

// retire blocks for the next message on the completion queue and handles
// it and every message already waiting behind it: launched events are
// noted, finished jobs' operations completed in the window.
func (r *windowRun) retire(h device.Host) error {
	s := r.s
	t0 := h.Now()
	v, ok := h.Get(s.done)
	t1 := h.Now()
	s.wstats.blocked += t1 - t0
	if s.p.CallStats {
		defer func() { s.wcalls.retire += h.Now() - t1 }()
	}
	for ok {
		switch m := v.(type) {
		case launchedMsg:
			if r.w.state[m.job.ops[0]] != stateDone {
				for _, k := range m.job.ops {
					r.recorded[k] = m.job.event
				}
			}
		case *doneMsg:
			r.done(h, m)
		default:
			return fmt.Errorf("acs-sw: unexpected message %T on the completion queue", v)
		}
		if s.done.Len() == 0 {
			break
		}
		v, ok = h.Get(s.done)
	}
	if !ok {
		return errors.New("acs-sw: completion queue closed during a run")
	}
	return nil
}

// done retires a done message's jobs: their operations complete in the
// window (or the first error is kept) and graph jobs go on their thread's
// released list.
func (r *windowRun) done(h device.Host, m *doneMsg) {
	s := r.s
	for j := m.job; j != nil; j = j.doneNext {
		h.Spend(windowRetireCost)
		r.inflight[m.thread]--
		r.outstanding--
		if m.err != nil {
			if r.firstErr == nil {
				r.firstErr = m.err
			}
			continue
		}
		for _, k := range j.ops {
			r.w.complete(k)
		}
		if len(j.ops) > 1 { // only a graph has an exec to release
			s.released[m.thread] = append(s.released[m.thread], j)
		}
	}
}
