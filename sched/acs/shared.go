package acs

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Dispatch is who hands ready kernels to the scheduler threads.
type Dispatch string

const (
	// DispatchWindow is the paper: a window thread owns the window, hands
	// each ready kernel to an idle scheduler thread and learns of each
	// completion from it, two handoffs between host threads per kernel.
	DispatchWindow Dispatch = "window"
	// DispatchShared has the K scheduler threads share the window under a
	// lock: a thread that learns of its kernel's completion marks it done,
	// inserts the operations the freed slots admit, takes the next kernel
	// for its own stream and launches it, with no handoff. A thread with
	// nothing to launch and nothing in flight sleeps until another thread
	// leaves work it cannot take itself.
	DispatchShared Dispatch = "shared"
)

// sharedRun is one Run's state under DispatchShared: the window and the
// bookkeeping the window thread keeps under DispatchWindow, guarded by
// lock, a queue holding one token (host threads coordinate only through
// device.Queue: on the simulator they are coroutines in simulated time,
// and a contended lock costs a thread's wake-up, as a futex does).
type sharedRun struct {
	in   *workloads.Instance
	w    *window
	lock device.Queue
	// wake[t] wakes idle thread t; under completion callback it also
	// carries thread t's completions (*doneMsg).
	wake []device.Queue

	inflight    []int
	outstanding int
	idle        []bool
	recorded    []device.Event // Params.Waits: the event recorded after each launched operation
	firstErr    error
}

// runShared is Run under DispatchShared: the calling thread inserts the
// first window's operations, hands the run to every scheduler thread and
// waits until each has finished its part.
func (s *SW) runShared(h device.Host, in *workloads.Instance) error {
	k := s.p.Threads
	r := &sharedRun{
		in:       in,
		w:        newWindow(in.N(), s.p.Window, func(op int) []device.Arg { return s.access(in, op) }, s.p.CheckCost),
		lock:     h.NewQueue("acs-window-lock"),
		wake:     make([]device.Queue, k),
		inflight: make([]int, k),
		idle:     make([]bool, k),
	}
	if s.p.Waits {
		r.recorded = make([]device.Event, in.N())
	}
	for t := range r.wake {
		r.wake[t] = h.NewQueue(fmt.Sprintf("acs-wake-%d", t))
	}
	r.w.admit()
	h.Spend(r.w.takeCost())
	r.lock.Put(struct{}{})
	for t := 0; t < k; t++ {
		s.work[t].Put(r)
	}
	for finished := 0; finished < k; {
		v, ok := h.Get(s.done)
		if !ok {
			return fmt.Errorf("acs-sw: completion queue closed during a run")
		}
		if _, ok := v.(sharedDone); !ok {
			return fmt.Errorf("acs-sw: unexpected message %T on the completion queue", v)
		}
		finished++
	}
	if r.firstErr == nil && !r.w.finished() {
		return fmt.Errorf("acs-sw: %d of %d operations done when every thread stopped (bug)", r.w.done, r.w.n)
	}
	return r.firstErr
}

// sharedDone tells runShared that a scheduler thread has finished its part
// of a run.
type sharedDone struct{ thread int }

// loopShared is a scheduler thread under DispatchShared: per run, it runs
// its part and reports.
func (ts *threadState) loopShared() {
	for {
		v, ok := ts.h.Get(ts.s.work[ts.t])
		if !ok {
			return
		}
		ts.runShared(v.(*sharedRun))
		ts.s.done.Put(sharedDone{ts.t})
	}
}

// retired is a job a thread learned finished (or failed to launch).
type retired struct {
	ops []int
	err error
}

// flight is a job this thread launched and has not seen finish.
type flight struct {
	j  *job
	ev device.Event // completion event
}

// runShared is one thread's part of a run: under the lock, retire the
// completions it learned, publish the events it recorded, admit
// operations, take work for its own stream; outside it, launch what it
// took, or wait for its oldest kernel, or sleep when it has nothing.
func (ts *threadState) runShared(r *sharedRun) {
	s, h, t := ts.s, ts.h, ts.t
	var mine []flight      // launched, not known finished, in launch order
	var finished []retired // learned finished, to retire
	var launched []*job
	for {
		if _, ok := h.Get(r.lock); !ok {
			return
		}
		w := r.w
		for _, j := range launched {
			if w.state[j.ops[0]] != stateDone {
				r.recorded[j.ops[0]] = j.event
			}
		}
		launched = launched[:0]
		for _, f := range finished {
			r.inflight[t]--
			r.outstanding--
			if f.err != nil {
				if r.firstErr == nil {
					r.firstErr = f.err
				}
				continue
			}
			for _, k := range f.ops {
				w.complete(k)
			}
		}
		finished = finished[:0]
		var take []*job
		if r.firstErr == nil {
			if w.admit() > 0 {
				h.Spend(w.takeCost()) // the insertion's check, under the lock
			}
			take = ts.pick(r)
		}
		busy := len(mine) + len(take)
		if busy == 0 && r.firstErr == nil && !w.finished() && r.outstanding == 0 {
			r.firstErr = fmt.Errorf("acs-sw: %d of %d operations done and nothing in flight: a dependency cycle (bug)", w.done, w.n)
		}
		exit := busy == 0 && (r.firstErr != nil || w.finished())
		r.idle[t] = busy == 0 && !exit
		r.wakeIdle(s, t)
		r.lock.Put(struct{}{})
		if exit {
			return
		}
		if busy == 0 {
			h.Get(r.wake[t]) // a wake-up token: look again
			continue
		}
		if len(take) > 0 {
			for _, j := range take {
				if err := ts.launch(j); err != nil {
					finished = append(finished, retired{j.ops, err})
					continue
				}
				f := flight{j: j, ev: j.event}
				switch s.p.Completion {
				case CompletionEvent:
					if f.ev == nil {
						f.ev = s.events[t][ts.seq%len(s.events[t])]
						ts.seq++
						if err := h.Record(f.ev, ts.stream); err != nil {
							finished = append(finished, retired{j.ops, err})
							continue
						}
					}
				case CompletionCallback:
					wake, msg := r.wake[t], &doneMsg{thread: t, job: j}
					if err := h.HostFunc(ts.stream, func() { wake.Put(msg) }); err != nil {
						finished = append(finished, retired{j.ops, err})
						continue
					}
				}
				if s.p.Waits {
					launched = append(launched, j)
				}
				mine = append(mine, f)
			}
			// Publish the recorded events and take more before blocking,
			// if there can be more: only thread t changes inflight[t].
			if len(launched) > 0 || r.inflight[t] < s.p.InFlight {
				continue
			}
		}
		switch s.p.Completion {
		case CompletionSync:
			err := h.StreamSynchronize(ts.stream)
			for _, f := range mine {
				finished = append(finished, retired{f.j.ops, err})
			}
			mine = mine[:0]
		case CompletionEvent:
			err := h.EventSynchronize(mine[0].ev)
			finished = append(finished, retired{mine[0].j.ops, err})
			mine = mine[1:]
		default:
			v, ok := h.Get(r.wake[t])
			if !ok {
				return
			}
			if m, isDone := v.(*doneMsg); isDone {
				finished = append(finished, retired{m.job.ops, nil})
				mine = mine[1:] // one stream: callbacks run in launch order
			}
		}
	}
}

// pick takes, under the lock, the work thread t can launch on its own
// stream by DispatchWindow's rules: the oldest ready operation when it has
// nothing in flight; with inflight > 1, pending operations whose
// unfinished upstream operations are all on its stream; with waits,
// pending operations whose upstream operations have all been launched
// (their events recorded), behind waits on the other streams' last-issued
// ones.
func (ts *threadState) pick(r *sharedRun) []*job {
	s, t, w := ts.s, ts.t, r.w
	var take []*job
	add := func(k int, waits []device.Event) {
		w.issue(k, t)
		r.inflight[t]++
		r.outstanding++
		take = append(take, &job{in: r.in, ops: []int{k}, waits: waits})
	}
	if r.inflight[t] == 0 && len(w.ready) > 0 {
		add(w.ready[0], nil)
	}
	if s.p.InFlight < 2 {
		return take
	}
	for i := 0; i < len(w.members) && r.inflight[t] < s.p.InFlight; i++ {
		k := w.members[i]
		if w.state[k] != statePending {
			continue
		}
		if st, ok := w.streamOrdered(k); ok && st == t {
			add(k, nil)
		} else if s.p.Waits {
			if waits, ok := waitsOn(w, k, t, len(r.inflight), r.recorded); ok {
				add(k, waits)
			}
		}
	}
	return take
}

// wakeIdle wakes, under the lock, as many idle threads as there are ready
// operations left (other than thread t), or every idle thread once the run
// is over or failed.
func (r *sharedRun) wakeIdle(s *SW, t int) {
	n := len(r.w.ready)
	if r.firstErr != nil || r.w.finished() {
		n = len(r.idle)
	} else if s.p.Waits && n == 0 {
		// Pending operations whose upstream kernels are all launched can
		// go to an idle thread's stream.
		for _, k := range r.w.members {
			if r.w.state[k] == statePending {
				if _, ok := waitsOn(r.w, k, -1, len(r.inflight), r.recorded); ok {
					n = 1
					break
				}
			}
		}
	}
	for u := range r.idle {
		if n == 0 {
			return
		}
		if u != t && r.idle[u] {
			r.idle[u] = false
			r.wake[u].Put(struct{}{})
			n--
		}
	}
}
