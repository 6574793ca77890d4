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
	// lock: a thread that learns of its kernel's completion takes the
	// lock, marks the kernel done, inserts the operations the freed slots
	// admit, takes the next kernel for its own stream and launches it,
	// with no handoff. A thread that finds the lock taken does not wait
	// for it: it leaves its news (completions, recorded events) in an
	// inbox, and the lock's holder applies them and hands it its next
	// kernels, as the window thread would (so contended threads pay one
	// handoff, in parallel, instead of queueing for the lock one after
	// another). A thread with nothing to launch and nothing in flight
	// sleeps until a holder has work for it.
	DispatchShared Dispatch = "shared"
)

// sharedRun is one Run's state under DispatchShared: the window and the
// bookkeeping the window thread keeps under DispatchWindow, guarded by
// lock, a queue holding one token. Host threads coordinate only through
// device.Queue (on the simulator they are coroutines in simulated time), so
// the lock is taken only when its token is there (Len), never waited for:
// a parked waiter would hold up every thread behind its wake-up.
type sharedRun struct {
	s    *SW
	h    device.Host // the host of the thread holding the lock
	in   *workloads.Instance
	w    *window
	lock device.Queue
	// inbox holds the news (*report) of threads that found the lock taken.
	inbox device.Queue
	// wake[t] carries thread t's assignments (*assignment) and, under
	// completion callback, its completions (*doneMsg).
	wake []device.Queue

	inflight    []int
	outstanding int
	idle        []bool         // waiting for an assignment with nothing in flight
	recorded    []device.Event // Params.Waits: the event recorded after each launched operation
	firstErr    error
}

// report is what a thread learned since it last held the lock: jobs
// finished (or failed) and jobs whose events it recorded (Params.Waits).
type report struct {
	thread   int
	finished []retired
	launched []*job
}

// assignment is a lock holder's answer to a thread: jobs to launch on its
// stream (possibly none: go on waiting for those in flight), or exit.
type assignment struct {
	jobs []*job
	exit bool
}

// retired is a job a thread learned finished (or failed to launch).
type retired struct {
	ops []int
	err error
}

// flight is a job this thread launched and has not seen finish.
type flight struct {
	j  *job
	ev device.Event // completion event (CompletionEvent)
}

// runShared is Run under DispatchShared: the calling thread inserts the
// first window's operations, hands the run to every scheduler thread and
// waits until each has finished its part.
func (s *SW) runShared(h device.Host, in *workloads.Instance) error {
	k := s.p.Threads
	r := &sharedRun{
		s:        s,
		in:       in,
		w:        s.window(in),
		lock:     h.NewQueue("acs-window-lock"),
		inbox:    h.NewQueue("acs-window-inbox"),
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
	var threadErr error
	for finished := 0; finished < k; {
		v, ok := h.Get(s.done)
		if !ok {
			return fmt.Errorf("acs-sw: completion queue closed during a run")
		}
		d, ok := v.(sharedDone)
		if !ok {
			return fmt.Errorf("acs-sw: unexpected message %T on the completion queue", v)
		}
		if d.err != nil && threadErr == nil {
			threadErr = d.err
		}
		finished++
	}
	if threadErr != nil {
		return threadErr
	}
	if r.firstErr == nil && !r.w.finished() {
		return fmt.Errorf("acs-sw: %d of %d operations done when every thread stopped (bug)", r.w.done, r.w.n)
	}
	return r.firstErr
}

// sharedDone tells runShared that a scheduler thread has finished its part
// of a run; err is a failure of the protocol itself (a bug).
type sharedDone struct {
	thread int
	err    error
}

// loopShared is a scheduler thread under DispatchShared: per run, it runs
// its part and reports.
func (ts *threadState) loopShared() {
	for {
		v, ok := ts.h.Get(ts.s.work[ts.t])
		if !ok {
			return
		}
		err := ts.runShared(v.(*sharedRun))
		ts.s.done.Put(sharedDone{ts.t, err})
	}
}

// sharedPart is what one thread tracks during its part of a run.
type sharedPart struct {
	mine     []flight  // launched, not known finished, in launch order
	finished []retired // learned finished, not yet reported
	launched []*job    // events recorded, not yet reported
}

// runShared is one thread's part of a run: report what it learned and get
// its next jobs (itself under the lock, or from the holder), launch them,
// wait for its oldest kernel, until an assignment says exit.
func (ts *threadState) runShared(r *sharedRun) error {
	s, h := ts.s, ts.h
	var p sharedPart
	for {
		rep := &report{thread: ts.t, finished: p.finished, launched: p.launched}
		p.finished, p.launched = nil, nil
		var a *assignment
		if r.lock.Len() > 0 {
			h.Get(r.lock)
			a = r.session(h, rep)
		} else {
			r.inbox.Put(rep)
			r.help(h)
		}
		if a == nil {
			var err error
			if a, err = ts.await(r, &p.mine, &p.finished); err != nil {
				return err
			}
		}
		if a.exit {
			return nil
		}
		for _, j := range a.jobs {
			ts.launchShared(r, j, &p)
		}
		// Report failures, publish recorded events, and take more before
		// blocking, where there can be more (only this thread's reports
		// change inflight[t] downwards).
		if len(p.finished) > 0 || len(p.launched) > 0 || (len(a.jobs) > 0 && len(p.mine) < s.p.InFlight) {
			continue
		}
		if len(p.mine) == 0 {
			continue // nothing launched and nothing in flight: report, get work
		}
		if err := ts.waitOldest(r, &p); err != nil {
			return err
		}
	}
}

// launchShared launches job j with what its completion needs (an event, a
// callback); a failure becomes a finished job with its error.
func (ts *threadState) launchShared(r *sharedRun, j *job, p *sharedPart) {
	s, h, t := ts.s, ts.h, ts.t
	if err := ts.launch(j); err != nil {
		p.finished = append(p.finished, retired{j.ops, err})
		return
	}
	f := flight{j: j, ev: j.event}
	switch s.p.Completion {
	case CompletionEvent:
		if f.ev == nil {
			f.ev = s.events[t][ts.seq%len(s.events[t])]
			ts.seq++
			if err := h.Record(f.ev, ts.stream); err != nil {
				p.finished = append(p.finished, retired{j.ops, err})
				return
			}
		}
	case CompletionCallback:
		wake, msg := r.wake[t], &doneMsg{thread: t, job: j}
		if err := h.HostFunc(ts.stream, func() { wake.Put(msg) }); err != nil {
			p.finished = append(p.finished, retired{j.ops, err})
			return
		}
	}
	if s.p.Waits {
		p.launched = append(p.launched, j)
	}
	p.mine = append(p.mine, f)
}

// waitOldest blocks until the thread's oldest kernel in flight (under
// completion sync, every one) has finished.
func (ts *threadState) waitOldest(r *sharedRun, p *sharedPart) error {
	h, t := ts.h, ts.t
	switch ts.s.p.Completion {
	case CompletionSync:
		err := h.StreamSynchronize(ts.stream)
		for _, f := range p.mine {
			p.finished = append(p.finished, retired{f.j.ops, err})
		}
		p.mine = p.mine[:0]
	case CompletionEvent:
		err := h.EventSynchronize(p.mine[0].ev)
		p.finished = append(p.finished, retired{p.mine[0].j.ops, err})
		p.mine = p.mine[1:]
	default:
		v, ok := h.Get(r.wake[t])
		if !ok {
			return fmt.Errorf("acs-sw: thread %d's queue closed during a run", t)
		}
		m, isDone := v.(*doneMsg)
		if !isDone {
			return fmt.Errorf("acs-sw: thread %d got %T while waiting for a completion (bug)", t, v)
		}
		p.finished = append(p.finished, retired{m.job.ops, nil})
		p.mine = p.mine[1:] // one stream: callbacks run in launch order
	}
	return nil
}

// await waits for thread t's assignment; completions posted by callbacks
// meanwhile become finished jobs.
func (ts *threadState) await(r *sharedRun, mine *[]flight, finished *[]retired) (*assignment, error) {
	for {
		v, ok := ts.h.Get(r.wake[ts.t])
		if !ok {
			return nil, fmt.Errorf("acs-sw: thread %d's queue closed during a run", ts.t)
		}
		switch m := v.(type) {
		case *assignment:
			return m, nil
		case *doneMsg:
			*finished = append(*finished, retired{m.job.ops, nil})
			*mine = (*mine)[1:]
		default:
			return nil, fmt.Errorf("acs-sw: thread %d got %T (bug)", ts.t, v)
		}
	}
}

// help drains the inbox while the lock is free, so that news left there
// just after the last holder's final look is not stranded: a thread that
// leaves news checks the lock after it, a holder checks the inbox after
// releasing the lock, and one of the two sees the other.
func (r *sharedRun) help(h device.Host) {
	for r.inbox.Len() > 0 && r.lock.Len() > 0 {
		h.Get(r.lock)
		r.h = h
		r.answerAll(r.drain())
		r.assignIdle()
		r.lock.Put(struct{}{})
	}
}

// session is thread rep.thread's turn with the lock: apply its news and
// the inbox's, admit operations, take its own jobs first (it is running;
// the others would pay a wake-up), answer the threads that left news,
// give work to idle ones, release the lock. It returns the holder's own
// assignment, or nil when it is to wait for one (idle).
func (r *sharedRun) session(h device.Host, rep *report) *assignment {
	r.h = h
	r.apply(rep)
	from := r.drain()
	a := r.answer(rep.thread)
	r.answerAll(from)
	r.assignIdle()
	r.lock.Put(struct{}{})
	r.help(h)
	return a
}

// drain applies every report in the inbox (under the lock) and returns
// the threads that left them.
func (r *sharedRun) drain() []int {
	var from []int
	for r.inbox.Len() > 0 {
		v, _ := r.h.Get(r.inbox)
		rep := v.(*report)
		r.apply(rep)
		from = append(from, rep.thread)
	}
	return from
}

// answerAll sends each of threads its assignment, if it has one.
func (r *sharedRun) answerAll(threads []int) {
	for _, u := range threads {
		if a := r.answer(u); a != nil {
			r.wake[u].Put(a)
		}
	}
}

// apply retires a report's finished jobs, publishes its recorded events
// and admits the operations the freed slots take (charging their check to
// the holder).
func (r *sharedRun) apply(rep *report) {
	w := r.w
	for _, j := range rep.launched {
		if k := j.ops[0]; w.state[k] != stateDone {
			r.recorded[k] = j.event
		}
	}
	for _, f := range rep.finished {
		r.inflight[rep.thread]--
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
	if r.firstErr == nil && w.admit() > 0 {
		r.h.Spend(w.takeCost())
	}
}

// answer decides thread u's assignment after its news was applied: its
// jobs; an empty one while it has kernels in flight; exit once the run is
// over or failed and it has none; or nil: u is idle until assignIdle finds
// it work.
func (r *sharedRun) answer(u int) *assignment {
	var jobs []*job
	if r.firstErr == nil {
		jobs = r.pick(u)
	}
	if r.inflight[u] > 0 {
		return &assignment{jobs: jobs}
	}
	if r.firstErr == nil && !r.w.finished() && r.outstanding == 0 {
		r.firstErr = fmt.Errorf("acs-sw: %d of %d operations done and nothing in flight: a dependency cycle (bug)", r.w.done, r.w.n)
	}
	if r.firstErr != nil || r.w.finished() {
		return &assignment{exit: true}
	}
	r.idle[u] = true
	return nil
}

// assignIdle gives idle threads work, in thread order, or tells them to
// exit once the run is over or failed (under the lock).
func (r *sharedRun) assignIdle() {
	for u, idle := range r.idle {
		if !idle {
			continue
		}
		if r.firstErr != nil || r.w.finished() {
			r.idle[u] = false
			r.wake[u].Put(&assignment{exit: true})
			continue
		}
		if jobs := r.pick(u); len(jobs) > 0 {
			r.idle[u] = false
			r.wake[u].Put(&assignment{jobs: jobs})
		}
	}
}

// waitsHere reports whether pending operation k may go behind event waits
// on thread t's stream: as DispatchWindow's waitTarget prefers, the stream
// of its last-issued upstream operation (one wait fewer), or any stream
// when that one is full.
func (r *sharedRun) waitsHere(k, t int) bool {
	w := r.w
	newest := -1
	for _, u := range w.up[k] {
		if newest < 0 || w.order[u] > w.order[newest] {
			newest = u
		}
	}
	if newest < 0 || w.stream[newest] < 0 {
		return false
	}
	home := w.stream[newest]
	return home == t || r.inflight[home] >= r.s.p.InFlight
}

// pick takes, under the lock, the work thread t can launch on its own
// stream by DispatchWindow's rules: the oldest ready operation when it has
// nothing in flight; with inflight > 1, pending operations whose
// unfinished upstream operations are all on its stream; with waits,
// pending operations whose upstream operations have all been launched
// (their events recorded) and whose place (waitsHere) is its stream,
// behind waits on the other streams' last-issued ones.
func (r *sharedRun) pick(t int) []*job {
	s, w := r.s, r.w
	var take []*job
	add := func(k int, waits []device.Event) {
		w.issue(k, t)
		r.inflight[t]++
		r.outstanding++
		take = append(take, &job{in: r.in, ops: s.one(k), waits: waits})
	}
	if r.inflight[t] == 0 && len(w.ready) > 0 {
		add(w.ready[0], nil)
	}
	if s.p.InFlight < 2 {
		return take
	}
	// Pending operations in program order; add removes the one it issues
	// from w.pending.
	for i := 0; i < len(w.pending) && r.inflight[t] < s.p.InFlight; {
		k := w.pending[i]
		if st, ok := w.streamOrdered(k); ok && st == t {
			add(k, nil)
			continue
		} else if s.p.Waits && r.waitsHere(k, t) {
			if waits, ok := waitsOn(w, k, t, len(r.inflight), r.recorded); ok {
				add(k, waits)
				continue
			}
		}
		i++
	}
	return take
}
