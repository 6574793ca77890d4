package sim

import (
	"math"
	"time"
)

// Time is simulated time in picoseconds since the start of a Run.
type Time int64

// maxTime bounds every duration the simulator computes (about 13 days):
// durations and products saturate there instead of overflowing. No
// saturated figure is ever reported: it is past the horizon, so the Run
// ends in a *HorizonError (horizon.go).
const maxTime = Time(1) << 60

// addTime and mulTime are a+b and n*t for non-negative operands,
// saturated at maxTime.
func addTime(a, b Time) Time {
	if a >= maxTime-b {
		return maxTime
	}
	return a + b
}

func mulTime(n int64, t Time) Time {
	if n <= 0 || t <= 0 {
		return 0
	}
	if n >= int64(maxTime/t) {
		return maxTime
	}
	return Time(n) * t
}

// nsTime converts nanoseconds (a config figure, a block's work) to Time,
// rounded and saturated at maxTime.
func nsTime(ns float64) Time {
	ps := math.Round(ns * 1000)
	if ps >= float64(maxTime) {
		return maxTime
	}
	if ps <= -float64(maxTime) {
		return -maxTime
	}
	return Time(ps)
}

// Duration converts to a time.Duration (nanosecond resolution, truncated).
func (t Time) Duration() time.Duration { return time.Duration(t / 1000) }

func fromDuration(d time.Duration) Time { return Time(d) * 1000 }

// evKind says what an engine event does.
type evKind uint8

const (
	evConn            evKind = iota // try to dispatch commands from hardware queue a
	evActivate                      // kernel cmd reaches the block scheduler
	evBatchDone                     // b blocks of cmd complete on SM a
	evBlockDone                     // block b of a synchronizing kernel cmd completes on SM a
	evSchedule                      // a block-scheduling pass
	evCopyDone                      // copy cmd completes
	evCallback                      // host callback cmd runs and completes
	evDQInsert                      // a dependency-queue entry lands in the window (a: entry index)
	evDQComplete                    // the dependency queue processes a completion (cmd: the kernel)
	evGraphRelease                  // graph node b of the run of cmd becomes ready
	evBlockStart                    // block b of a synchronizing kernel cmd starts its work (start posts)
	evCallbackRelease               // the stream of host callback cmd is released (front_end.callback_release_ns)
)

// event is one entry of the engine's heap. It is a value type: the heap is a
// slice of events, so scheduling one allocates nothing.
type event struct {
	t    Time
	seq  uint64
	kind evKind
	a, b int32
	f    int32 // a flight's index + 1, or 1 for the copy, whose end the shared bandwidth moves (bandwidth.go); 0: none
	cmd  *command
}

// eventHeap is a binary min-heap ordered by (t, seq): events at equal times
// run in the order they were scheduled, so every run is repeatable.
type eventHeap []event

func (e *event) before(o *event) bool {
	return e.t < o.t || (e.t == o.t && e.seq < o.seq)
}

// push and pop move a hole instead of swapping, writing each event once.
func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = e
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s[n] = event{}
	s = s[:n]
	if n > 0 {
		i := 0
		for {
			l := 2*i + 1
			if l >= n {
				break
			}
			m := l
			if r := l + 1; r < n && s[r].before(&s[l]) {
				m = r
			}
			if !s[m].before(&last) {
				break
			}
			s[i] = s[m]
			i = m
		}
		s[i] = last
	}
	*h = s
	return top
}

// schedule adds an event at time t. A time past the horizon ends the Run
// with a *HorizonError naming the command that produced it.
func (d *Device) schedule(t Time, kind evKind, a, b int32, cmd *command) {
	d.scheduleF(t, kind, a, b, 0, cmd)
}

// scheduleF is schedule for an end the shared bandwidth may move (f, see
// event); it returns the event's seq.
func (d *Device) scheduleF(t Time, kind evKind, a, b, f int32, cmd *command) uint64 {
	if t > horizon || t < 0 {
		d.pastHorizon(t, kind, a, cmd)
		return 0
	}
	d.seq++
	d.heap.push(event{t: t, seq: d.seq, kind: kind, a: a, b: b, f: f, cmd: cmd})
	return d.seq
}

// handle runs one event in engine context.
func (d *Device) handle(ev event) {
	switch ev.kind {
	case evConn:
		c := &d.conns[ev.a]
		if c.wakeAt == ev.t {
			c.wakeAt = -1
		}
		d.kick(c)
	case evActivate:
		d.activate(ev.cmd)
	case evBatchDone:
		if ev.f != 0 {
			d.flightDone(ev.f)
		}
		d.batchDone(ev.cmd, int(ev.a), int(ev.b))
	case evBlockDone:
		if ev.f != 0 {
			d.flightDone(ev.f)
		}
		d.syncBlockDone(ev.cmd, int(ev.a), int(ev.b))
	case evCopyDone:
		switch {
		case ev.a == copyPick:
			d.pciePick(int(ev.b - 1))
			return
		case ev.a == copyMoves && ev.b > 0:
			d.pcieMoving(int(ev.b - 1))
			return
		case ev.a == copyMoves:
			d.copyMoving()
			return
		case ev.f != 0 && ev.b > 0:
			d.pcieDone(int(ev.b-1), ev.cmd)
		case ev.f != 0:
			d.dtodDone(ev.cmd)
		}
		d.copyDone(ev.cmd)
	case evCallback:
		d.runCallback(ev.cmd)
	case evDQInsert:
		d.dqInsert(ev.cmd)
	case evDQComplete:
		d.dqComplete(ev.cmd)
	case evGraphRelease:
		d.graphRelease(ev.cmd, int(ev.b))
	case evBlockStart:
		d.startPosts(ev.cmd, int(ev.b))
	case evCallbackRelease:
		d.finishCmd(ev.cmd)
	}
}
