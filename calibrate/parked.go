package calibrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// The idle times (us) the parked hand-off measurement sweeps: a waiting
// thread spins a while (device/cuda's Queue.Get 200 us, the driver in a
// synchronize its own time), then parks, and a wake-up costs more. The
// points around 200 us place the Get's spin window to 10 us.
var (
	parkedIdles   = []int{20, 100, 150, 180, 195, 205, 220, 300, 1000}
	callbackIdles = []int{20, 50, 80, 110, 140, 170, 200, 300, 1000}
	syncIdles     = []int{20, 100, 300, 1000, 3000, 10000}
)

func us(n int) time.Duration { return time.Duration(n) * time.Microsecond }

const (
	parkedExchanges = 20 // hand-offs per idle time and round
	// parkedMinExtra is the smallest parked extra cost taken as a second
	// regime: below it the sweep is one regime within its noise.
	parkedMinExtra = 2000.0 // ns
)

// hold keeps the calling host thread busy for d: on the simulator Spend
// advances its clock; on a GPU, where Spend is free, it polls the clock.
func hold(h device.Host, d time.Duration) {
	if d <= 0 {
		return
	}
	end := h.Now() + d
	h.Spend(d)
	for h.Now() < end { // polling: the thread must not sleep
		continue
	}
}

// parkedHandoffs measures what a wake-up costs a host thread that has
// waited longer than its spin, against one that has not: a Queue Put from
// another host thread, a host callback's Put, and the return of a stream
// and an event synchronize, each after idle times from 20 us to 1 ms or
// more. It sets host.park_after_ns and host.parked_wake_ns (Queue Gets
// after a thread's Put), host.parked_callback_wake_ns (after a callback's)
// and host.sync_park_after_ns and host.sync_parked_wake_ns
// (synchronizes); the event synchronize is reported, as a check. Every figure is a difference of Host.Now readings
// in this run, so it needs no earlier measurement (calibrate --only).
func (c *calibrator) parkedHandoffs(h device.Host) error {
	byIdle, meanByIdle, err := c.queueAfterIdle(h, parkedIdles, parkedExchanges)
	if err != nil {
		return err
	}
	c.recordRegimes("queue hand-off", "host.park_after_ns", "host.parked_wake_ns", parkedIdles, byIdle,
		"Host.Now of the Put (carried in the value) to the Get's return, the waiting thread idle in Get for the time given")
	// The mean beside the median: a wake-up that is sometimes fast and
	// sometimes slow costs a run its mean.
	c.recordRegimes("queue hand-off (mean)", "", "", parkedIdles, meanByIdle,
		"as the queue hand-off, the mean of the round's hand-offs instead of the median")
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	ev, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	if err != nil {
		return err
	}
	cb, cbMean, err := c.callbackAfterIdle(h, t, callbackIdles, parkedExchanges)
	if err != nil {
		return err
	}
	c.recordRegimes("callback hand-off", "", "host.parked_callback_wake_ns", callbackIdles, cb,
		"Host.Now from launching a spin kernel of the time given and a host function that Puts, to the Get's return, less that time")
	c.recordRegimes("callback hand-off (mean)", "", "", callbackIdles, cbMean,
		"as the callback hand-off, the mean of the round's instead of the median")
	ss, es, err := c.syncAfterIdle(h, t, ev)
	if err != nil {
		return err
	}
	c.recordRegimes("stream synchronize return", "host.sync_park_after_ns", "host.sync_parked_wake_ns", syncIdles, ss,
		"Host.Now around launching a spin kernel of the time given and StreamSynchronize, less that time")
	c.recordRegimes("event synchronize return", "", "", syncIdles, es,
		"Host.Now around launching a spin kernel of the time given, recording an event and EventSynchronize, less that time")
	return h.Destroy(ev)
}

// queueAfterIdle: a partner thread Gets from one queue; the main thread
// holds for the idle time after the partner's previous Get returned, then
// Puts its clock. The partner's hand-off is its clock after the Get less
// the Put's. Per round and idle time, the median and the mean of n.
func (c *calibrator) queueAfterIdle(h device.Host, idles []int, n int) (med, mean [][]float64, err error) {
	ping, pong := h.NewQueue("parked ping"), h.NewQueue("parked pong")
	h.Go("calibrate parked", func(h device.Host) error {
		for {
			v, ok := h.Get(ping)
			if !ok {
				return nil
			}
			got := h.Now()
			pong.Put([2]time.Duration{got, got - v.(time.Duration)})
		}
	})
	defer ping.Close()
	med, mean = make([][]float64, len(idles)), make([][]float64, len(idles))
	if err := c.warmRounds(func(measured bool) error {
		for i, idle := range idles {
			hand := make([]float64, 0, n)
			since := h.Now()
			for x := 0; x < n+1; x++ {
				hold(h, since+us(idle)-h.Now())
				ping.Put(h.Now())
				v, ok := h.Get(pong)
				if !ok {
					return errors.New("parked pong queue closed")
				}
				m := v.([2]time.Duration)
				since = m[0]
				if x > 0 { // the first follows an idle time of another length
					hand = append(hand, ns(m[1]))
				}
			}
			if measured {
				med[i], mean[i] = append(med[i], stats.Median(hand)), append(mean[i], meanOf(hand))
			}
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return med, mean, nil
}

func meanOf(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// callbackAfterIdle: a spin kernel of the idle time, then a host function
// that Puts to a queue the main thread waits on in Get; n of each per
// round and idle time.
func (c *calibrator) callbackAfterIdle(h device.Host, t *timedStream, idles []int, n int) (med, mean [][]float64, err error) {
	q := h.NewQueue("parked callback")
	put := func() { q.Put(struct{}{}) }
	med, mean = make([][]float64, len(idles)), make([][]float64, len(idles))
	if err := c.warmRounds(func(measured bool) error {
		for i, idle := range idles {
			d := us(idle)
			spin := c.spinLaunch(d, t.done)
			var each []float64
			for x := 0; x < n; x++ {
				took, err := kernelThenCallback(h, t.s, spin, q, put)
				if err != nil {
					return err
				}
				each = append(each, ns(took-d))
			}
			if measured {
				med[i], mean[i] = append(med[i], stats.Median(each)), append(mean[i], meanOf(each))
			}
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return med, mean, h.StreamSynchronize(t.s)
}

// syncAfterIdle: a spin kernel of the idle time, then StreamSynchronize;
// and the same with an event recorded behind it and EventSynchronize.
func (c *calibrator) syncAfterIdle(h device.Host, t *timedStream, ev device.Event) (stream, event [][]float64, err error) {
	stream, event = make([][]float64, len(syncIdles)), make([][]float64, len(syncIdles))
	if err := c.warmRounds(func(measured bool) error {
		for i, idle := range syncIdles {
			d := us(idle)
			spin := c.spinLaunch(d, t.done)
			t0 := h.Now()
			if err := h.Launch(t.s, spin); err != nil {
				return err
			}
			if err := h.StreamSynchronize(t.s); err != nil {
				return err
			}
			t1 := h.Now()
			if err := h.Launch(t.s, spin); err != nil {
				return err
			}
			if err := h.Record(ev, t.s); err != nil {
				return err
			}
			if err := h.EventSynchronize(ev); err != nil {
				return err
			}
			if measured {
				stream[i] = append(stream[i], ns(t1-t0-d))
				event[i] = append(event[i], ns(h.Now()-t1-d))
			}
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return stream, event, nil
}

// recordRegimes records the cost after each idle time (reported) and the
// two-regime fit of every round (regimeFit) as the fields given ("": not
// recorded).
func (c *calibrator) recordRegimes(what, afterField, wakeField string, idles []int, byIdle [][]float64, method string) {
	for i, idle := range idles {
		c.record(fmt.Sprintf("%s after %d us idle", what, idle), "", "ns", method, byIdle[i])
	}
	for _, m := range regimeMeasurements(what, afterField, wakeField, idles, byIdle) {
		c.record(m.Name, m.Field, m.Unit, m.Method, m.Rounds)
	}
}

// regimeMeasurements are the fitted measurements of what's sweep over idles
// (byIdle[i] the rounds after idles[i]) that set afterField and wakeField
// (those not "").
func regimeMeasurements(what, afterField, wakeField string, idles []int, byIdle [][]float64) []Measurement {
	after, extra := regimeSteps(idles, byIdle, false)
	var out []Measurement
	if afterField != "" {
		out = append(out, measurement(what+": idle before a waiting thread parks", afterField, "ns",
			"per round, midway between the last idle time whose "+what+" costs under a quarter of the rise (the longest idle's less the shortest's) above the shortest's and the first over, plus the shortest's cost (0: one regime)", after))
	}
	if wakeField != "" {
		out = append(out, measurement(what+": extra cost once parked", wakeField, "ns",
			"per round, the median "+what+" after the idle times from the step on less the shortest idle's (0: a rise under 2 us, one regime)", extra))
	}
	return out
}

// regimeSteps is twoRegimes over each round of a sweep (byIdle[i][r]:
// round r after idles[i]): the rounds' steps and extras. With ownIdle the
// idle is a hold of the measuring thread's own, not a wait for a value,
// so a step is not counted to the value's arrival: the shortest idle's
// cost that twoRegimes adds is taken off again.
func regimeSteps(idles []int, byIdle [][]float64, ownIdle bool) (after, extra []float64) {
	for r := range byIdle[0] {
		costs := make([]float64, len(idles))
		for i := range idles {
			costs[i] = byIdle[i][r]
		}
		a, e := twoRegimes(idles, costs)
		if ownIdle && a > 0 {
			a -= costs[0]
		}
		after, extra = append(after, a), append(extra, e)
	}
	return after, extra
}

// twoRegimes fits costs (ns) over idles (us, ascending) as a step: the
// wait (ns) where it starts and the extra past it; 0, 0 without a step.
// The step starts at the first idle time that costs a quarter of the
// whole rise (the longest idle's less the shortest's) more than the
// shortest: a quarter, not a half, because the cost keeps growing past
// the step (a thread parked longer sleeps deeper). The wait is midway
// between that idle time and the one before, plus the shortest idle's
// cost, since the simulator counts a wait to the value's arrival
// (device/sim's parkedExtra); the extra is the median cost from the step
// on less the shortest idle's.
func twoRegimes(idles []int, costs []float64) (after, extra float64) {
	rise := costs[len(costs)-1] - costs[0]
	if rise < parkedMinExtra {
		return 0, 0
	}
	for i := 1; i < len(costs); i++ {
		if costs[i] > costs[0]+rise/4 {
			return 1e3*float64(idles[i-1]+idles[i])/2 + costs[0], stats.Median(costs[i:]) - costs[0]
		}
	}
	return 0, 0 // unreachable: the last point is over
}
