package calibrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Scheduler threads' calls one by one (issue #18, session 15). ACS-SW's
// scheduler threads, timed on the GPU (session 14, acs-threads), pay three
// host costs the simulator gets wrong: the record of a timing-disabled
// event (calibrate's "event record cost" records a timing one), the work
// queue's calls (device/cuda's Queue: every Put, Len and Get of a Run under
// one mutex), and a launch made while 3 to 7 other threads launch and
// synchronize on their own streams. These probes time each such call
// alone (Host.Now around it), on 1, 2, 4 and 8 host threads, so that the
// simulator's host fields for them can be fitted on the calls themselves.

// untimedRecords measures "event records without timing": records of a
// timing-disabled event (ACS-SW's) and, timed the same way in the same
// Run, of a timing one.
func (c *calibrator) untimedRecords(h device.Host) error {
	s, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return err
	}
	defer func() { _ = h.Destroy(s) }()
	sync := func() error { return h.StreamSynchronize(s) }
	for _, timing := range []bool{false, true} {
		ev, err := h.NewEvent(device.EventOptions{DisableTiming: !timing})
		if err != nil {
			return err
		}
		r, err := c.perCall(h, batch, nil, func(int) error { return h.Record(ev, s) }, sync)
		if err := errors.Join(err, h.Destroy(ev)); err != nil {
			return err
		}
		// No field: the probe runs only when named; host.untimed_record_ns
		// is set by calibrate fit-thread-calls.
		name, what := untimedRecordName, "timing-disabled event (ACS-SW's)"
		if timing {
			name, what = timedRecordName, "timing event, as \"event record cost\""
		}
		c.record(name, "", "ns", fmt.Sprintf("Host.Now around %d records of a %s on one idle stream", batch, what), r)
	}
	return nil
}

const (
	untimedRecordName = "event record cost, timing disabled"
	timedRecordName   = "event record cost, timing event"
)

// callLoop is what each of N host threads does per iteration: the calls
// it times, in order, and the iteration itself, which adds each timed
// call's host time to acc (in the order of calls).
type callLoop struct {
	name, method string
	calls        []string
	iterations   int
	// sharedPuts is how many values an iteration Puts to the queue every
	// thread shares (the measuring thread Gets them as they come, as
	// ACS-SW's window thread Gets completions).
	sharedPuts int
	prepare    func(c *calibrator, e *callEnv) (iter func(acc []time.Duration) error, err error)
}

// callEnv is one thread's: its Host, stream and own queue, and the queue
// all threads share.
type callEnv struct {
	h         device.Host
	s         device.Stream
	own, done device.Queue
	owned     []device.Resource // destroyed when the thread ends
}

// timeCall adds call's host time to *into.
func timeCall(h device.Host, into *time.Duration, call func() error) error {
	t0 := h.Now()
	err := call()
	*into += h.Now() - t0
	return err
}

// queueCalls are the calls of one iteration of a queue loop: a Put to the
// thread's own queue, its Len, the Get of that value (there: no wait) and
// a Put to the shared queue: ACS-SW's scheduler thread's Get, Len and
// completion Put, and the window thread's Put to it.
func queueCalls(e *callEnv, acc []time.Duration) error {
	h := e.h
	_ = timeCall(h, &acc[0], func() error { e.own.Put(1); return nil })
	_ = timeCall(h, &acc[1], func() error { e.own.Len(); return nil })
	var ok bool
	_ = timeCall(h, &acc[2], func() error { _, ok = h.Get(e.own); return nil })
	if !ok {
		return errors.New("own queue closed")
	}
	return timeCall(h, &acc[3], func() error { e.done.Put(1); return nil })
}

var (
	queueLoopCalls = []string{"Put", "Len", "Get", "shared Put"}
	queueLoops     = []callLoop{
		{
			name:   "queue calls beside launch + synchronize",
			method: "an untimed empty-kernel launch and StreamSynchronize, then Put to the thread's own queue, its Len, Get of the value, Put to the queue all threads share (drained by the measuring thread), each timed (ACS-SW's scheduler thread's queue calls between its launches)",
			calls:  queueLoopCalls, iterations: 200, sharedPuts: 1,
			prepare: func(c *calibrator, e *callEnv) (func([]time.Duration) error, error) {
				l := c.emptyLaunch(1)
				return func(acc []time.Duration) error {
					if err := e.h.Launch(e.s, l); err != nil {
						return err
					}
					if err := e.h.StreamSynchronize(e.s); err != nil {
						return err
					}
					return queueCalls(e, acc)
				}, nil
			},
		},
		{
			name:   "queue calls back to back",
			method: "Put to the thread's own queue, its Len, Get of the value, Put to the queue all threads share (drained by the measuring thread), each timed, no GPU call between (the mutex most contended)",
			calls:  queueLoopCalls, iterations: 200, sharedPuts: 1,
			prepare: func(_ *calibrator, e *callEnv) (func([]time.Duration) error, error) {
				return func(acc []time.Duration) error { return queueCalls(e, acc) }, nil
			},
		},
	}
	launchLoops = []callLoop{
		{
			name:   "launch + synchronize",
			method: "an empty-kernel launch, then StreamSynchronize, each timed (ACS-SW's completion sync)",
			calls:  []string{"launch", "synchronize"}, iterations: 200,
			prepare: func(c *calibrator, e *callEnv) (func([]time.Duration) error, error) {
				l := c.emptyLaunch(1)
				return func(acc []time.Duration) error {
					if err := timeCall(e.h, &acc[0], func() error { return e.h.Launch(e.s, l) }); err != nil {
						return err
					}
					return timeCall(e.h, &acc[1], func() error { return e.h.StreamSynchronize(e.s) })
				}, nil
			},
		},
		{
			name:   "launch + untimed record + event synchronize",
			method: "an empty-kernel launch, a record of a timing-disabled event, EventSynchronize, each timed (ACS-SW's completion event)",
			calls:  []string{"launch", "record", "synchronize"}, iterations: 200,
			prepare: func(c *calibrator, e *callEnv) (func([]time.Duration) error, error) {
				l := c.emptyLaunch(1)
				ev, err := e.h.NewEvent(device.EventOptions{DisableTiming: true})
				if err != nil {
					return nil, err
				}
				e.owned = append(e.owned, ev)
				return func(acc []time.Duration) error {
					if err := timeCall(e.h, &acc[0], func() error { return e.h.Launch(e.s, l) }); err != nil {
						return err
					}
					if err := timeCall(e.h, &acc[1], func() error { return e.h.Record(ev, e.s) }); err != nil {
						return err
					}
					return timeCall(e.h, &acc[2], func() error { return e.h.EventSynchronize(ev) })
				}, nil
			},
		},
	}
)

// callName is a call loop's measurement of one call on n threads.
func callName(loop, call string, n int) string {
	return fmt.Sprintf("%s: %s, %d host thread(s)", loop, call, n)
}

// queueCallsOverThreads and launchesOverThreads are the sections "queue
// calls over threads" and "launches over threads".
func (c *calibrator) queueCallsOverThreads(h device.Host) error {
	return c.callLoops(h, queueLoops)
}

func (c *calibrator) launchesOverThreads(h device.Host) error {
	return c.callLoops(h, launchLoops)
}

// callLoops measures each loop over threadedCounts host threads: per
// round and call, the mean host time of one call over every thread's
// iterations.
func (c *calibrator) callLoops(h device.Host, loops []callLoop) error {
	for _, loop := range loops {
		if c.callsOnly != "" && loop.name != c.callsOnly {
			continue
		}
		for _, n := range threadedCounts {
			per := make([][]float64, len(loop.calls))
			if err := c.warmRounds(func(measured bool) error {
				got, err := c.callRound(h, loop, n)
				if err != nil {
					return fmt.Errorf("%s, %d thread(s): %w", loop.name, n, err)
				}
				if measured {
					for i, v := range got {
						per[i] = append(per[i], v)
					}
				}
				return nil
			}); err != nil {
				return err
			}
			for i, call := range loop.calls {
				c.record(callName(loop.name, call, n), "", "ns",
					fmt.Sprintf("%d iterations per thread of %s; %d thread(s), each on its own stream and queue, released at once: Host.Now around the %s, mean over every thread's iterations", loop.iterations, loop.method, n, call), per[i])
			}
		}
	}
	return nil
}

// callResult is one thread's figures: its time in each call.
type callResult struct {
	acc []time.Duration
	err error
}

// callRound runs one round of loop on n threads and returns each call's
// mean host time in ns.
func (c *calibrator) callRound(h device.Host, loop callLoop, n int) ([]float64, error) {
	results, done := h.NewQueue("calls results"), h.NewQueue("calls shared")
	rel := newThreadRelease(h, "calls", n, func(h device.Host, w int, rel *threadRelease) error {
		return c.callThread(h, loop, rel, w, results, done)
	})
	_, err := rel.Release(h)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	} else {
		for i := 0; i < n*loop.iterations*loop.sharedPuts; i++ {
			if _, ok := h.Get(done); !ok {
				return nil, errors.New("shared queue closed")
			}
		}
	}
	sum := make([]time.Duration, len(loop.calls))
	for range n {
		v, ok := h.Get(results)
		if !ok {
			return nil, errors.New("results queue closed")
		}
		r := v.(callResult)
		errs = append(errs, r.err)
		for i, d := range r.acc {
			sum[i] += d
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]float64, len(sum))
	for i, d := range sum {
		out[i] = ns(d) / float64(n*loop.iterations)
	}
	return out, nil
}

// callThread is thread w of a call loop: it prepares, runs one untimed
// iteration (loads the function, warms its path), waits for the release
// and runs the timed iterations.
func (c *calibrator) callThread(h device.Host, loop callLoop, rel *threadRelease, w int, results, done device.Queue) error {
	s, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		rel.Ready(err)
		results.Put(callResult{err: err})
		return nil
	}
	e := &callEnv{h: h, s: s, own: h.NewQueue("calls own"), done: h.NewQueue("calls warm-up")}
	iter, err := loop.prepare(c, e)
	if err == nil {
		err = iter(make([]time.Duration, len(loop.calls)))
		if err == nil && loop.sharedPuts > 0 {
			_, _ = h.Get(e.done) // the warm-up's shared Put went to a queue of its own
		}
	}
	e.done = done
	rel.Ready(err)
	acc := make([]time.Duration, len(loop.calls))
	if err == nil {
		if rel.Wait(h, w) {
			i := 0
			for ; i < loop.iterations && err == nil; i++ {
				err = iter(acc)
			}
			// The measuring thread Gets every iteration's shared Puts:
			// a failed iteration's and the ones not run are made here.
			for ; err != nil && i <= loop.iterations; i++ {
				for range loop.sharedPuts {
					done.Put(err)
				}
			}
		}
	}
	for _, r := range e.owned {
		err = errors.Join(err, h.Destroy(r))
	}
	results.Put(callResult{acc: acc, err: errors.Join(err, h.Destroy(s))})
	return nil
}
