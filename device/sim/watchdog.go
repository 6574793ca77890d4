package sim

import (
	"errors"
	"fmt"
	"time"
)

// The livelock watchdog. The deadlock detector (finish.go) fires when no
// event and no runnable host thread is left; a host thread that polls
// (Query, StreamQuery, DQDone, a queue's Len) on work that can never finish
// stays runnable forever, so it never fires. The watchdog counts a
// thread's polls that find their target not done while nothing can
// change it: no device event is pending and nothing else happened since
// the thread's previous such poll (no event, no other driver call, no
// queue Put, Close or Get, by any thread; other threads' failed polls do
// not count). Past a budget of such polls, or of simulated time spent
// polling, the Run ends with a *device.DeadlockError marked Livelock that
// names what polls on what and what the device waits for.
//
// A legitimate poll has device work in flight (an event pending), or
// another thread about to act; the budgets only bound how long a thread
// may poll while a second thread spends host time (Host.Spend) without a
// driver call, which no scheduler does for seconds.
const (
	// DefaultLivelockPolls is the budget of polls of a frozen device
	// (1.7 simulated seconds at the H100 config's 400 ns per query).
	DefaultLivelockPolls = 1 << 22
	// DefaultLivelockSpan is the budget of simulated time a thread may
	// poll a frozen device.
	DefaultLivelockSpan = time.Minute
)

// WithLivelockBudget sets the watchdog's budgets (default
// DefaultLivelockPolls and DefaultLivelockSpan): a Run ends in a livelock
// error after polls polls, or span of simulated time, of a host thread
// polling work that nothing can complete.
func WithLivelockBudget(polls int, span time.Duration) Option {
	return func(o *options) error {
		if polls < 1 || span <= 0 {
			return errors.New("sim: WithLivelockBudget needs at least one poll and a positive span")
		}
		o.livePolls, o.liveSpan = polls, fromDuration(min(span, Horizon))
		return nil
	}
}

// pollState is one host thread's watchdog state.
type pollState struct {
	polls    int        // failed polls of a frozen device in a row
	since    Time       // the thread's clock at the first of them
	activity uint64     // d.activity at the last of them
	what     pollTarget // what the last one polled
	lenZeros int        // Len calls that returned 0 with no driver call between them
	polling  bool       // in a poll's charge, which is no activity
}

// pollTarget is what a poll asked about, formatted only for a report:
// the call's format with the id of its event or stream, or a queue's name.
type pollTarget struct {
	format string
	id     int64
	queue  string
}

func (p pollTarget) String() string {
	if p.queue != "" {
		return fmt.Sprintf(p.format, p.queue)
	}
	return fmt.Sprintf(p.format, p.id)
}

// progress notes something that may change what a poll sees.
func (d *Device) progress() { d.activity++ }

// chargePoll charges a poll's cost, which is no activity: a poll changes
// nothing another poll could see.
func (th *thread) chargePoll(cost Time, call string) {
	th.poll.polling = true
	th.charge(cost, call)
	th.poll.polling = false
}

// failedPoll is called by a poll (after its charge and catch-up) that
// found its target not done.
func (th *thread) failedPoll(what pollTarget) {
	d := th.d
	p := &th.poll
	if len(d.heap) > 0 || d.passPend {
		p.polls = 0 // the device is still working
		return
	}
	if p.polls == 0 || p.activity != d.activity {
		p.polls, p.since = 0, th.clock
	}
	p.polls++
	p.activity, p.what = d.activity, what
	if p.polls >= d.livePolls() || th.clock-p.since >= d.liveSpan() {
		d.livelock(th)
	}
}

// queueLen is called when host thread th reads a queue's length n. A run
// of zero lengths with no driver call between them is a livelock from its
// start (nothing else runs meanwhile); the budget only tells it from a
// scheduler checking several queues in turn.
func (th *thread) queueLen(q *queue, n int) {
	p := &th.poll
	if n > 0 {
		p.lenZeros = 0
		return
	}
	p.lenZeros++
	p.what = pollTarget{format: "Len(queue %q)", queue: q.name}
	if p.lenZeros >= th.d.livePolls() {
		th.d.livelock(th)
	}
}

func (d *Device) livePolls() int {
	if d.opts.livePolls > 0 {
		return d.opts.livePolls
	}
	return DefaultLivelockPolls
}

func (d *Device) liveSpan() Time {
	if d.opts.liveSpan > 0 {
		return d.opts.liveSpan
	}
	return fromDuration(DefaultLivelockSpan)
}

// livelock ends the Run at poller th's clock: the pollers, then what the
// device waits for.
func (d *Device) livelock(th *thread) {
	e := d.deadlock()
	e.At, e.Livelock = th.clock.Duration().String(), true
	var polling []string
	for _, th := range d.threads {
		p := &th.poll
		switch {
		case p.lenZeros > 0:
			polling = append(polling, fmt.Sprintf("host thread %s calls %s %d times in a row with no driver call between them, so nothing else runs",
				th.name, p.what, p.lenZeros))
		case th.state != thFinished && p.polls > 0 && p.activity == d.activity:
			polling = append(polling, fmt.Sprintf("host thread %s polls %s: %d polls over %v found it not done, and nothing can complete it",
				th.name, p.what, p.polls, (th.clock-p.since).Duration()))
		}
	}
	e.Waiting = append(polling, e.Waiting...)
	d.stopRun(e)
}
