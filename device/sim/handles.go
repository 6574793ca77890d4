package sim

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// stream is a device.Stream: an in-order list of incomplete commands, bound
// to one hardware queue.
type stream struct {
	device.Base
	d         *Device
	id        int
	prio      int
	run       int
	destroyed bool
	conn      *conn
	// Incomplete commands in issue order; head is the oldest.
	head, tail *command
	pending    int
	waiters    []*thread // host threads in StreamSynchronize
	// last is the latest work the stream's commands follow (waits.go).
	last workDone
	// Capture state: the capture this stream takes part in and the nodes
	// its next command depends on.
	capture *capture
	capTail []int32
	// Ordering check (hb.go): the stream's agent and what its next command
	// is ordered after.
	agent int32
	vc    vclock
}

func (s *stream) ID() int       { return s.id }
func (s *stream) Priority() int { return s.prio }
func (s *stream) String() string {
	return fmt.Sprintf("stream %d", s.id)
}

// eventObj is a device.Event. Records are numbered (generations); a wait,
// an EventSynchronize or a Query binds to the generation last issued when
// it is called, and is satisfied when that record completes, whatever
// later records of the event do: records on different streams complete in
// any order, so completion is tracked per record (pend), not as a high-water
// mark.
type eventObj struct {
	device.Base
	d         *Device
	id        int
	run       int
	destroyed bool
	timing    bool
	issued    uint64    // records issued
	pend      []pendRec // issued records not yet complete, in issue order
	doneAt    Time      // when the latest record completed (for Elapsed)
	last      workDone  // what the latest record completed followed (waits.go)
	stream    int       // stream of the last issued record
	waiters   []*command
	hostWait  []evWaiter
	// recent are the latest completed records (with front_end.event_wait_ns
	// only): when a stream wait bound to one passes.
	recent []doneRec
	// Capture: set when last recorded on a capturing stream.
	capture  *capture
	capNodes []int32
	// Ordering check (hb.go): the clock of the last issued record, and the
	// clock the first record will fill when a wait came before it.
	lastRC, nextRC *recClock
}

// boundRC is the record clock a wait issued now binds to: the last record
// issued, or the first one to come.
func (e *eventObj) boundRC() *recClock {
	if e.issued > 0 {
		return e.lastRC
	}
	if e.nextRC == nil {
		e.nextRC = &recClock{}
	}
	return e.nextRC
}

func (e *eventObj) ID() int { return e.id }

// evWaiter is a host thread in EventSynchronize, waiting for record gen.
type evWaiter struct {
	th  *thread
	gen uint64
}

// doneRec is a completed record of an event: its generation, stream and
// completion time.
type doneRec struct {
	gen    uint64
	stream int
	at     Time
	wait   Time // what a wait on another stream adds (eventWaitNow)
}

// recentRecords is how many completed records an event remembers for
// front_end.event_wait_ns: a wait bound to an older one passes at once
// (the host is rarely that far ahead of the GPU).
const recentRecords = 16

// pendRec is an issued record of an event that has not completed.
type pendRec struct {
	gen    uint64
	stream int
}

// done reports whether record gen has completed (gen 0, no record, is
// always complete, as cuEventQuery reports an event never recorded).
func (e *eventObj) done(gen uint64) bool {
	if gen > e.issued {
		return false
	}
	for _, p := range e.pend {
		if p.gen == gen {
			return false
		}
	}
	return true
}

// recordStream is the stream record gen was issued on, while it is pending.
func (e *eventObj) recordStream(gen uint64) int {
	for _, p := range e.pend {
		if p.gen == gen {
			return p.stream
		}
	}
	return e.stream
}

// handle errors, as the driver names them.
func invalidHandle(call, what string) error {
	return &device.APIError{Call: call, Code: "CUDA_ERROR_INVALID_HANDLE", Msg: what}
}

func (d *Device) streamOf(s device.Stream, call string) (*stream, error) {
	st, ok := s.(*stream)
	switch {
	case s == nil || !ok || st == nil:
		return nil, invalidHandle(call, fmt.Sprintf("%T is not a stream of this simulator", s))
	case st.d != d:
		return nil, invalidHandle(call, fmt.Sprintf("stream %d belongs to another device", st.id))
	case st.run != d.run:
		return nil, invalidHandle(call, fmt.Sprintf("stream %d was created in another Run", st.id))
	case st.destroyed:
		return nil, invalidHandle(call, fmt.Sprintf("stream %d was destroyed", st.id))
	}
	return st, nil
}

func (d *Device) eventOf(e device.Event, call string) (*eventObj, error) {
	ev, ok := e.(*eventObj)
	switch {
	case e == nil || !ok || ev == nil:
		return nil, invalidHandle(call, fmt.Sprintf("%T is not an event of this simulator", e))
	case ev.d != d:
		return nil, invalidHandle(call, fmt.Sprintf("event %d belongs to another device", ev.id))
	case ev.run != d.run:
		return nil, invalidHandle(call, fmt.Sprintf("event %d was created in another Run", ev.id))
	case ev.destroyed:
		return nil, invalidHandle(call, fmt.Sprintf("event %d was destroyed", ev.id))
	}
	return ev, nil
}

// queue is a device.Queue: a FIFO mailbox whose Get parks a host thread.
type queue struct {
	d       *Device
	name    string
	run     int
	items   []any
	vcs     []vclock // the putter's clock of each item (ordering check)
	closeVC vclock   // the closer's clock
	head    int
	closed  bool
	waiters []*thread
}

// putTime is when a Put or Close from the current context takes effect:
// the calling host thread's clock, or engine time in a callback.
func (d *Device) putTime() Time {
	d.progress()
	if th := d.current; th != nil {
		th.order()
		th.poll.lenZeros = 0
		return th.clock
	}
	return d.now
}

func (q *queue) Put(v any) {
	d := q.d
	if q.run != d.run || q.closed {
		// A Put after Close, or to a queue of a finished Run, is a
		// scheduler bug. Queue.Put has no error to return: the value is
		// dropped and, from a host thread, that thread's function fails
		// with this error when it returns.
		if th := d.current; th != nil && th.misuse == nil {
			what := "closed"
			if q.run != d.run {
				what = "another Run's"
			}
			th.misuse = fmt.Errorf("Put on %s queue %q", what, q.name)
		}
		return
	}
	t := d.putTime()
	if th := d.current; th != nil && d.cost.queueLock > 0 {
		th.chargeQueueLock()
		t = th.clock
	}
	if th := d.current; th != nil && th.chargeQueueCall() {
		// The value is there once the call ends: a Get another thread
		// makes before then waits, and resumes host.handoff_ns after.
		t = d.putTime()
	}
	var vc vclock
	if d.hb.on {
		if th := d.current; th != nil {
			vc = th.vc
		} else {
			vc = d.hb.cbVC
		}
	}
	if len(q.waiters) > 0 {
		w := q.waiters[0]
		q.waiters = q.waiters[1:]
		w.qv, w.qok = v, true
		w.vc.join(vc)
		d.handOff(w, t, d.current == nil)
		return
	}
	q.items = append(q.items, v)
	if d.hb.on {
		q.vcs = append(q.vcs, append(vclock(nil), vc...))
	}
}

func (q *queue) Close() {
	d := q.d
	if q.run != d.run || q.closed {
		return
	}
	t := d.putTime()
	q.closed = true
	if d.hb.on {
		// A Get that finds the queue closed is ordered after the Close.
		if th := d.current; th != nil {
			q.closeVC.set(th.vc)
		} else {
			q.closeVC.set(d.hb.cbVC)
		}
	}
	for _, w := range q.waiters {
		w.qv, w.qok = nil, false
		w.vc.join(q.closeVC)
		d.handOff(w, t, d.current == nil)
	}
	q.waiters = nil
}

// Len is the number of values waiting. Read by a host thread, it counts
// toward the livelock watchdog (watchdog.go).
func (q *queue) Len() int {
	th := q.d.current
	own := th != nil && q.run == q.d.run // a host thread of this Run reads it
	if own {
		th.chargeQueueLock()
	}
	n := len(q.items) - q.head
	if own {
		th.queueLen(q, n)
		th.chargeQueueCall() // read as the call begins
	}
	return n
}

func (q *queue) take() (any, vclock) {
	v := q.items[q.head]
	q.items[q.head] = nil
	var vc vclock
	if q.head < len(q.vcs) {
		vc = q.vcs[q.head]
		q.vcs[q.head] = nil
	}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
		q.vcs = q.vcs[:0]
	}
	return v, vc
}
