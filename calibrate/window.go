package calibrate

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// Scheduler threads behind a window (issue #18, session 13): ACS-SW's
// window thread hands every kernel to one of K scheduler threads through
// that thread's queue and takes its completion back through one queue all
// of them share; the scheduler thread launches it on its own stream and
// waits for it (synchronize or event), or, with no GPU work, replies at
// once. "host threads at once" times the scheduler threads' loop alone
// (no window thread); this times the whole round trip per kernel, with
// every scheduler thread kept one kernel (or four) busy (ACS-SW inflight 1, 4), so the
// simulator's per-kernel cost of the window path can be checked against
// the GPU's for 1 to 8 threads.

// windowJobs is the kernels handed out per round.
const windowJobs = 256

// windowLoop is what a scheduler thread does with the kernels it gets:
// issue each (nil: nothing), then complete them (nil: reply at once).
type windowLoop struct {
	name, method string
	// inflight is how many kernels the window thread keeps handed to each
	// scheduler thread (ACS-SW inflight); the thread issues every kernel
	// in its queue, at most inflight, before completing them.
	inflight int
	prepare  func(c *calibrator, h device.Host, s device.Stream) (issue, complete func() error, err error)
}

func launchAndSynchronize(c *calibrator, h device.Host, s device.Stream) (issue, complete func() error, err error) {
	l := c.emptyLaunch(1)
	return func() error { return h.Launch(s, l) }, func() error { return h.StreamSynchronize(s) }, nil
}

var windowLoops = []windowLoop{
	{
		name:     "hand-off only",
		method:   "the scheduler thread Puts the completion back at once (no GPU call)",
		inflight: 1,
	},
	{
		name:     "launch + synchronize",
		method:   "the scheduler thread launches an empty kernel and StreamSynchronizes (ACS-SW completion sync)",
		inflight: 1,
		prepare:  launchAndSynchronize,
	},
	{
		name:     "launch + synchronize, 4 in flight",
		method:   "up to 4 kernels handed to each scheduler thread; it launches an empty kernel for each one queued, StreamSynchronizes and Puts a completion for each (ACS-SW completion sync, inflight 4)",
		inflight: 4,
		prepare:  launchAndSynchronize,
	},
	{
		name:     "launch + record + event synchronize",
		method:   "the scheduler thread launches an empty kernel, records an event and EventSynchronizes (ACS-SW completion event, one in flight)",
		inflight: 1,
		prepare: func(c *calibrator, h device.Host, s device.Stream) (func() error, func() error, error) {
			l := c.emptyLaunch(1)
			ev, err := h.NewEvent(device.EventOptions{})
			if err != nil {
				return nil, nil, err
			}
			return func() error {
					if err := h.Launch(s, l); err != nil {
						return err
					}
					return h.Record(ev, s)
				}, func() error {
					return h.EventSynchronize(ev)
				}, nil
		},
	},
}

// windowHandoffs measures each windowLoop over threadedCounts scheduler
// threads: per round, the time from the first hand-off to the last
// completion's Get over windowJobs kernels.
func (c *calibrator) windowHandoffs(h device.Host) error {
	for _, loop := range windowLoops {
		if c.windowOnly != "" && loop.name != c.windowOnly {
			continue
		}
		for _, n := range threadedCounts {
			var per []float64
			if err := c.warmRounds(func(measured bool) error {
				v, err := c.windowRound(h, loop, n)
				if err != nil {
					return fmt.Errorf("window, %s, %d thread(s): %w", loop.name, n, err)
				}
				if measured {
					per = append(per, v)
				}
				return nil
			}); err != nil {
				return err
			}
			c.record(windowName(loop.name, n), "", "ns",
				fmt.Sprintf("%d kernels per round handed from the window thread to %d scheduler threads (each its own queue and stream, at most %d kernel(s) in flight) and their completions back through one shared queue; %s: first Put to last completion's Get, per kernel", windowJobs, n, loop.inflight, loop.method), per)
		}
	}
	return nil
}

// windowRound runs one round of loop on n scheduler threads and returns
// the time per kernel in ns.
func (c *calibrator) windowRound(h device.Host, loop windowLoop, n int) (float64, error) {
	r := &windowRoundState{c: c, loop: loop, ready: h.NewQueue("window ready"), done: h.NewQueue("window done"),
		exited: h.NewQueue("window exited"), work: make([]device.Queue, n)}
	for w := range r.work {
		r.work[w] = h.NewQueue(fmt.Sprintf("window work %d", w))
		h.Go(fmt.Sprintf("window scheduler %d", w), r.scheduler(w))
	}
	errs := r.collect(h, r.ready)
	var per float64
	if len(errs) == 0 {
		var err error
		per, err = r.handOut(h)
		errs = append(errs, err)
	}
	for _, q := range r.work {
		q.Close()
	}
	return per, errors.Join(append(errs, r.collect(h, r.exited)...)...)
}

// windowRoundState is one round of "scheduler threads behind a window":
// the window thread's queues to and from its scheduler threads.
type windowRoundState struct {
	c                   *calibrator
	loop                windowLoop
	ready, done, exited device.Queue
	work                []device.Queue
}

// collect Gets one value from q per scheduler thread and returns the
// errors among them.
func (r *windowRoundState) collect(h device.Host, q device.Queue) []error {
	var errs []error
	for range r.work {
		v, ok := h.Get(q)
		if !ok {
			return append(errs, errors.New("window queue closed"))
		}
		if e, _ := v.(error); e != nil {
			errs = append(errs, e)
		}
	}
	return errs
}

// handOut is the window thread's timed part: it keeps every scheduler
// thread inflight kernels busy until windowJobs are done and returns the
// time per kernel.
func (r *windowRoundState) handOut(h device.Host) (float64, error) {
	t0 := h.Now()
	next := 0
	for i := 0; i < r.loop.inflight; i++ {
		for _, q := range r.work {
			if next < windowJobs {
				q.Put(next)
				next++
			}
		}
	}
	for got := 0; got < windowJobs; got++ {
		v, ok := h.Get(r.done)
		if !ok {
			return 0, errors.New("done queue closed")
		}
		d := v.(windowDone)
		if d.err != nil {
			return 0, d.err
		}
		if next < windowJobs {
			r.work[d.thread].Put(next)
			next++
		}
	}
	return ns(h.Now()-t0) / windowJobs, nil
}

// scheduler is scheduler thread w: it issues every kernel queued for it
// (at most inflight), completes them and reports each, until its queue is
// closed.
func (r *windowRoundState) scheduler(w int) func(h device.Host) error {
	return func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			r.ready.Put(err)
			r.exited.Put(nil)
			return err
		}
		var issue, complete func() error
		if r.loop.prepare != nil {
			issue, complete, err = r.loop.prepare(r.c, h, s)
			if err == nil { // loads the function and warms the thread's path
				err = errors.Join(issue(), complete())
			}
		}
		r.ready.Put(err)
		for err == nil {
			var taken int
			if taken, err = r.take(h, w, issue); taken == 0 {
				break
			}
			if err == nil && complete != nil {
				err = complete()
			}
			for range taken {
				r.done.Put(windowDone{thread: w, err: err})
			}
		}
		r.exited.Put(errors.Join(err, h.Destroy(s)))
		return nil
	}
}

// take Gets scheduler thread w's next kernel and issues it, then every
// other one already queued, up to inflight, and returns how many it took:
// 0 once the queue is closed.
func (r *windowRoundState) take(h device.Host, w int, issue func() error) (int, error) {
	q := r.work[w]
	taken := 0
	for {
		if _, ok := h.Get(q); !ok {
			return taken, nil
		}
		taken++
		if issue != nil {
			if err := issue(); err != nil {
				return taken, err
			}
		}
		if taken == r.loop.inflight || q.Len() == 0 {
			return taken, nil
		}
	}
}

// windowDone is a scheduler thread's report of one kernel completed.
type windowDone struct {
	thread int
	err    error
}

func windowName(loop string, n int) string {
	return fmt.Sprintf("window, %s, %d scheduler thread(s)", loop, n)
}
