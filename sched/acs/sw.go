package acs

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// SW is ACS-SW: a window thread (the host thread that calls Run) and K
// scheduler threads, each owning one stream.
type SW struct {
	p Params
	// access is an operation's access set: in.Access, replaceable by
	// tests (a scheduler that ignores dependencies must be caught).
	access func(in *workloads.Instance, k int) []device.Arg

	// Set up by Prepare, kept across Runs until Cleanup.
	started  bool
	streams  []device.Stream
	events   [][]device.Event // event completion or waits: a ring of InFlight per thread
	work     []device.Queue   // window thread -> scheduler thread t: *job
	done     device.Queue     // scheduler threads and callbacks -> window thread
	released [][]*job         // finished jobs whose graphs thread t may reuse or free

	// Kept across Runs, so that the window thread allocates nothing per
	// operation from the second Run on: the window, and ident[k] == k,
	// whose one-element slices are single-operation jobs' ops.
	win   *window
	ident []int
	jobs  []job

	// Dispatch graph: its stream and graphs (Prepare to Cleanup), its
	// counters (Stats) and the tests' breakage (graphHook).
	g      *graphDispatch
	gstats graphStats
	hook   graphHook

	// wstats: the window thread's time under dispatch window (Stats);
	// tstats: each scheduler thread's (threadStats).
	wstats windowStats
	tstats []threadStats

	// Params.CallStats: the scheduler threads in a driver call now, and
	// the window thread's time by part (callstats.go).
	pres   presence
	wcalls windowCalls
}

// windowStats is what the window thread did since the scheduler was
// made: its Runs' wall time, the part of it blocked (dispatch window: in
// the completion queue's Get, waiting for a scheduler thread; dispatch
// graph: in the run's final StreamSynchronize, every batch launched), and
// the kernels (operations) it ran. The rest of the wall time is the window
// thread's own work per operation (the check, the hand-offs' Puts, the
// bookkeeping): on a GPU the real CPU time, on the simulator what it
// charges.
type windowStats struct {
	wall, blocked time.Duration
	kernels       int64
}

// add puts the window thread's figures per operation into m (made when
// nil): window_busy_ns_per_op (the Runs' wall time less blocked, per
// operation), window_blocked_ns_per_op and window_kernels; m as it is
// before any Run.
func (st *windowStats) add(m map[string]float64) map[string]float64 {
	if st.kernels == 0 {
		return m
	}
	if m == nil {
		m = map[string]float64{}
	}
	n := float64(st.kernels)
	m["window_kernels"] = n
	m["window_busy_ns_per_op"] = float64((st.wall - st.blocked).Nanoseconds()) / n
	m["window_blocked_ns_per_op"] = float64(st.blocked.Nanoseconds()) / n
	return m
}

var (
	_ sched.Scheduler = (*SW)(nil)
	_ sched.Preparer  = (*SW)(nil)
)

// New returns ACS-SW with parameters p. Window <= 0 is an unbounded
// window. The constructor and Params are stable: other strategies (the
// graph package's GrSched-like runtime) build on it.
func New(p Params) (sched.Scheduler, error) { return NewSW(p) }

// NewSW is New with its concrete type.
func NewSW(p Params) (*SW, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &SW{p: p, access: (*workloads.Instance).Access}, nil
}

func (s *SW) Name() string { return s.p.Name() }

// Params returns the scheduler's parameters.
func (s *SW) Params() Params { return s.p }

// job is a unit handed to a scheduler thread: one operation, or a run of
// ready operations launched as one graph.
type job struct {
	in      *workloads.Instance
	ops     []int
	release []*job // earlier jobs of this thread known finished

	// waits are events of upstream kernels on other streams, to wait on
	// before launching (Params.Waits).
	waits []device.Event

	// Set by the scheduler thread.
	exec  device.GraphExec
	key   string
	event device.Event // recorded after the job's launch (Params.Waits)
	done  doneMsg      // the job's completion report, sent once

	// Handoff batched: the next job of the same message to the thread,
	// and the next job finished with this one, reported in its message.
	next, doneNext *job
}

// launchedMsg tells the window thread that a job's event has been recorded
// (Params.Waits): kernels downstream of it may now wait on that event.
type launchedMsg struct{ job *job }

// doneMsg reports a finished job (or its failure) to the window thread;
// with Handoff batched, also the jobs chained after it by doneNext, which
// finished without error.
type doneMsg struct {
	thread int
	job    *job
	err    error
}

// exitMsg reports that a scheduler thread has returned, with the first
// error it met releasing graphs (which no job reports).
type exitMsg struct {
	thread int
	err    error
}

// Prepare creates the streams, events and queues and starts the scheduler
// threads, which then wait for work: like the paper's thread pool, they
// exist before the timed region.
func (s *SW) Prepare(h device.Host, _ *workloads.Instance) error {
	if s.started {
		return errors.New("acs-sw: Prepare called twice without Cleanup")
	}
	if s.p.Dispatch == DispatchGraph {
		if err := s.prepareGraph(h); err != nil {
			return errors.Join(err, s.destroyGraph(h))
		}
		s.started = true
		return nil
	}
	k := s.p.Threads
	if len(s.tstats) != k {
		s.tstats = make([]threadStats, k)
	}
	s.streams = make([]device.Stream, 0, k)
	s.events = make([][]device.Event, k)
	s.work = make([]device.Queue, k)
	s.released = make([][]*job, k)
	s.done = h.NewQueue("acs-done")
	for t := 0; t < k; t++ {
		st, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return errors.Join(fmt.Errorf("acs-sw: stream %d: %w", t, err), s.destroy(h))
		}
		s.streams = append(s.streams, st)
		if s.p.Completion == CompletionEvent || s.p.Waits {
			for i := 0; i < s.p.InFlight; i++ {
				ev, err := h.NewEvent(device.EventOptions{DisableTiming: true})
				if err != nil {
					return errors.Join(fmt.Errorf("acs-sw: event: %w", err), s.destroy(h))
				}
				s.events[t] = append(s.events[t], ev)
			}
		}
		s.work[t] = h.NewQueue(fmt.Sprintf("acs-work-%d", t))
	}
	for t := 0; t < k; t++ {
		h.Go(fmt.Sprintf("acs-sched-%d", t), s.threadMain(t))
	}
	s.started = true
	return nil
}

// Cleanup hands the threads their last finished jobs, stops them, waits
// for them to return and releases the streams and events.
func (s *SW) Cleanup(h device.Host) error {
	if !s.started {
		return nil
	}
	if s.p.Dispatch == DispatchGraph {
		s.started = false
		return s.destroyGraph(h)
	}
	for t, q := range s.work {
		if len(s.released[t]) > 0 {
			q.Put(&job{release: s.released[t]})
			s.released[t] = nil
		}
		q.Close()
	}
	var errs []error
	for exited := 0; exited < len(s.work); {
		v, ok := h.Get(s.done)
		if !ok {
			return errors.New("acs-sw: completion queue closed while stopping")
		}
		if m, ok := v.(exitMsg); ok {
			exited++
			errs = append(errs, m.err)
		}
	}
	s.started = false
	return errors.Join(append(errs, s.destroy(h))...)
}

func (s *SW) destroy(h device.Host) error {
	var first error
	for _, evs := range s.events {
		for _, ev := range evs {
			if err := h.Destroy(ev); err != nil && first == nil {
				first = err
			}
		}
	}
	for _, st := range s.streams {
		if err := h.Destroy(st); err != nil && first == nil {
			first = err
		}
	}
	s.streams, s.events = nil, nil
	return first
}

// Run is the window thread: it inserts operations into the window in
// program order, hands ready ones to idle scheduler threads and retires
// completions, until every operation is done.
func (s *SW) Run(h device.Host, in *workloads.Instance) (err error) {
	if !s.started {
		if err := s.Prepare(h, in); err != nil {
			return err
		}
		defer sched.JoinCleanup(h, s, &err)
	}
	switch s.p.Dispatch {
	case DispatchShared:
		return s.runShared(h, in)
	case DispatchGraph:
		return s.runGraph(h, in)
	}
	return s.newWindowRun(in).run(h)
}

// window returns the scheduler's window, reset for a run over in.
func (s *SW) window(in *workloads.Instance) *window {
	access := func(k int) []device.Arg { return s.access(in, k) }
	if s.win == nil {
		s.win = newWindow(in.N(), s.p.Window, access, s.p.CheckCost)
	} else {
		s.win.reset(in.N(), s.p.Window, access, s.p.CheckCost)
	}
	for len(s.ident) < in.N() {
		s.ident = append(s.ident, len(s.ident))
	}
	return s.win
}

// one is the ops of a job of operation k alone.
func (s *SW) one(k int) []int { return s.ident[k : k+1 : k+1] }

// waitTarget decides where pending operation k can go behind event waits:
// every unfinished upstream operation must have been launched with its
// event recorded. It prefers the stream of k's last-issued upstream
// operation (one wait fewer), then the least loaded stream with room; it
// waits on the event of the last-issued upstream operation of every other
// stream (stream order covers the ones issued before it there).
func (s *SW) waitTarget(w *window, k int, inflight []int, recorded []device.Event) (int, []device.Event, bool) {
	newest := -1
	for _, u := range w.up[k] {
		if w.state[u] != stateIssued || recorded[u] == nil {
			return 0, nil, false
		}
		if newest < 0 || w.order[u] > w.order[newest] {
			newest = u
		}
	}
	t := -1
	if newest >= 0 && inflight[w.stream[newest]] < s.p.InFlight {
		t = w.stream[newest]
	} else {
		for c := range inflight {
			if inflight[c] < s.p.InFlight && (t < 0 || inflight[c] < inflight[t]) {
				t = c
			}
		}
	}
	if t < 0 {
		return 0, nil, false
	}
	waits, _ := waitsOn(w, k, t, len(inflight), recorded)
	return t, waits, true
}

// waitsOn reports whether every unfinished upstream operation of pending
// operation k has been launched with its event recorded, and the events a
// launch of k on stream t must wait on: that of the last-issued upstream
// operation of every other stream (stream order covers the ones issued
// before it there, and t's own). t < 0 asks only whether k is eligible.
func waitsOn(w *window, k, t, streams int, recorded []device.Event) ([]device.Event, bool) {
	for _, u := range w.up[k] {
		if w.state[u] != stateIssued || recorded[u] == nil {
			return nil, false
		}
	}
	if t < 0 {
		return nil, true
	}
	last := make([]int, streams)
	for c := range last {
		last[c] = -1
	}
	for _, u := range w.up[k] {
		if su := w.stream[u]; su != t && (last[su] < 0 || w.order[u] > w.order[last[su]]) {
			last[su] = u
		}
	}
	var waits []device.Event
	for _, u := range last {
		if u >= 0 {
			waits = append(waits, recorded[u])
		}
	}
	return waits, true
}

// threadState is a scheduler thread's own: its stream and its graph cache.
type threadState struct {
	s      *SW
	t      int
	h      device.Host
	stream device.Stream
	cache  map[string][]device.GraphExec
	seq    int // events recorded (the ring's position)
	acc    threadStats
	chain  *job  // Handoff batched: jobs of the last message not yet taken
	err    error // the first error releasing a graph, reported at exit
}

// keep records err if it is the thread's first.
func (ts *threadState) keep(err error) {
	if ts.err == nil {
		ts.err = err
	}
}

func (s *SW) threadMain(t int) func(h device.Host) error {
	return func(h device.Host) error {
		ts := &threadState{s: s, t: t, h: h, stream: s.streams[t], cache: map[string][]device.GraphExec{}}
		defer func() {
			for _, xs := range ts.cache {
				for _, x := range xs {
					ts.keep(h.Destroy(x))
				}
			}
			ts.flush()
			s.done.Put(exitMsg{t, ts.err})
		}()
		switch {
		case s.p.Dispatch == DispatchShared:
			ts.loopShared()
		case s.p.Completion == CompletionSync:
			ts.loopSync()
		case s.p.Completion == CompletionEvent:
			ts.loopEvent()
		default:
			ts.loopCallback()
		}
		return nil
	}
}

// next takes the thread's next job with operations, freeing or caching the
// graphs of the jobs it releases. ok is false once the queue is closed.
func (ts *threadState) next() (*job, bool) {
	for {
		j := ts.chain
		if j == nil {
			var v any
			var ok bool
			timed(ts.h, &ts.acc.get, func() { v, ok = ts.h.Get(ts.s.work[ts.t]) })
			if !ok {
				return nil, false
			}
			j = v.(*job)
		}
		ts.chain, j.next = j.next, nil
		for _, r := range j.release {
			if r.exec == nil {
				continue
			}
			if ts.s.p.GraphCache {
				ts.cache[r.key] = append(ts.cache[r.key], r.exec)
			} else {
				ts.keep(ts.h.Destroy(r.exec))
			}
			r.exec = nil
		}
		j.release = nil
		if len(j.ops) > 0 {
			return j, true
		}
	}
}

// more reports whether a job is waiting for the thread.
func (ts *threadState) more() bool {
	if ts.chain != nil {
		return true
	}
	var n int
	timed(ts.h, &ts.acc.queue, func() { n = ts.s.work[ts.t].Len() })
	return n > 0
}

func (ts *threadState) report(j *job, err error) {
	j.done = doneMsg{thread: ts.t, job: j, err: err}
	ts.flush()
	timed(ts.h, &ts.acc.queue, func() { ts.s.done.Put(&j.done) })
}

// loopSync: launch, synchronize the stream, report (the paper). Jobs that
// arrived meanwhile (inflight > 1) are launched before synchronizing.
func (ts *threadState) loopSync() {
	var batch []*job
	for {
		j, ok := ts.next()
		if !ok {
			return
		}
		batch = batch[:0]
		for {
			if err := ts.launch(j); err != nil {
				ts.report(j, err)
			} else {
				batch = append(batch, j)
			}
			if !ts.more() {
				break
			}
			if j, ok = ts.next(); !ok {
				break
			}
		}
		var err error
		timed(ts.h, &ts.acc.sync, func() { ts.inDriver(true, func() { err = ts.h.StreamSynchronize(ts.stream) }) })
		if ts.s.p.Handoff == HandoffBatched && err == nil && len(batch) > 0 {
			// One message for every job the synchronization finished.
			for i := 1; i < len(batch); i++ {
				batch[i-1].doneNext = batch[i]
			}
			ts.report(batch[0], nil)
		} else {
			for _, b := range batch {
				ts.report(b, err)
			}
		}
		if !ok {
			return
		}
	}
}

// loopEvent: launch and record an event; block on the oldest unfinished
// event only when no new job is waiting.
func (ts *threadState) loopEvent() {
	evs := ts.s.events[ts.t]
	type pending struct {
		j  *job
		ev device.Event
	}
	var fifo []pending
	for {
		if len(fifo) == 0 || ts.more() {
			j, ok := ts.next()
			if !ok {
				return
			}
			if err := ts.launch(j); err != nil {
				ts.report(j, err)
				continue
			}
			ev := j.event // recorded by launch when Params.Waits is set
			if ev == nil {
				ev = evs[ts.seq%len(evs)]
				ts.seq++
				var err error
				timed(ts.h, &ts.acc.record, func() { ts.inDriver(false, func() { err = ts.h.Record(ev, ts.stream) }) })
				if err != nil {
					ts.report(j, err)
					continue
				}
			}
			fifo = append(fifo, pending{j, ev})
			continue
		}
		p := fifo[0]
		fifo = fifo[1:]
		var err error
		timed(ts.h, &ts.acc.sync, func() { ts.inDriver(true, func() { err = ts.h.EventSynchronize(p.ev) }) })
		ts.report(p.j, err)
	}
}

// loopCallback: launch and enqueue a host function that reports the
// completion; never block on the device.
func (ts *threadState) loopCallback() {
	done := ts.s.done
	for {
		j, ok := ts.next()
		if !ok {
			return
		}
		if err := ts.launch(j); err != nil {
			ts.report(j, err)
			continue
		}
		j.done = doneMsg{thread: ts.t, job: j}
		msg := &j.done
		var err error
		timed(ts.h, &ts.acc.record, func() {
			ts.inDriver(false, func() { err = ts.h.HostFunc(ts.stream, func() { done.Put(msg) }) })
		})
		if err != nil {
			ts.report(j, err)
		}
	}
}

// launch issues a job on the thread's stream: one operation directly, or a
// run of operations as a graph.
func (ts *threadState) launch(j *job) error {
	h, st := ts.h, ts.stream
	var launching, syncing int
	if ts.s.p.CallStats {
		launching, syncing = ts.launchSeen()
		ts.s.pres.launching.Add(1)
	}
	t0 := h.Now()
	defer func() {
		d := h.Now() - t0
		ts.acc.launch += d
		ts.acc.jobs++
		if ts.s.p.CallStats {
			ts.s.pres.launching.Add(-1)
			ts.launched(launching, syncing, d)
		}
	}()
	for _, ev := range j.waits {
		if err := h.Wait(st, ev); err != nil {
			return err
		}
	}
	if err := ts.issue(j); err != nil {
		return err
	}
	if ts.s.p.Waits {
		evs := ts.s.events[ts.t]
		j.event = evs[ts.seq%len(evs)]
		ts.seq++
		if err := h.Record(j.event, st); err != nil {
			return err
		}
		if ts.s.p.Dispatch != DispatchShared {
			ts.s.done.Put(launchedMsg{j})
		}
	}
	return nil
}

// issue launches a job's operations: one directly, or a run as a graph.
func (ts *threadState) issue(j *job) error {
	h, st, in := ts.h, ts.stream, j.in
	if len(j.ops) == 1 {
		return in.Issue(h, st, j.ops[0])
	}
	if ts.s.p.GraphCache {
		j.key = sequenceKey(in, j.ops)
		if xs := ts.cache[j.key]; len(xs) > 0 {
			x := xs[len(xs)-1]
			ts.cache[j.key] = xs[:len(xs)-1]
			for i, k := range j.ops {
				var err error
				if l := in.Launch(k); l != nil {
					err = h.SetKernelNode(x, i, l)
				} else {
					err = h.SetCopyNode(x, i, in.CopyCmd(k))
				}
				if err != nil {
					return errors.Join(fmt.Errorf("acs-sw: update cached graph node %d: %w", i, err), h.Destroy(x))
				}
			}
			j.exec = x
			return h.GraphLaunch(x, st)
		}
	}
	if err := h.BeginCapture(st); err != nil {
		return err
	}
	for _, k := range j.ops {
		if err := in.Issue(h, st, k); err != nil {
			return sched.AbortCapture(h, st, err)
		}
	}
	g, err := h.EndCapture(st)
	if err != nil {
		return err
	}
	x, err := h.Instantiate(g)
	if err := errors.Join(err, h.Destroy(g)); err != nil {
		return err
	}
	j.exec = x
	return h.GraphLaunch(x, st)
}

// sequenceKey identifies a run of operations up to their parameters: the
// kernels (or copy directions) in order, which is what an instantiated
// graph can be updated across.
func sequenceKey(in *workloads.Instance, ops []int) string {
	return string(appendSequenceKey(nil, in, ops))
}

// appendSequenceKey appends ops' sequenceKey to b.
func appendSequenceKey(b []byte, in *workloads.Instance, ops []int) []byte {
	for _, k := range ops {
		op := in.Op(k)
		if op.Kind == workloads.OpKernel {
			b = append(b, op.Kernel.Module...)
			b = append(b, '.')
			b = append(b, op.Kernel.Name...)
		} else {
			b = append(b, "copy:"...)
			b = append(b, op.Copy.Kind.String()...)
		}
		b = append(b, ';')
	}
	return b
}
