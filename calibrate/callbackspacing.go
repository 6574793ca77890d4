package calibrate

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// The gaps (us) between two host callbacks on one stream that "host
// callbacks spaced" sweeps: whether the driver's callback thread, having
// just run a callback, takes the next one without the wake-up a callback
// after a long idle pays (front_end.callback_wake_ns). SET's workers
// return through callbacks a few tens of microseconds apart; calibrate's
// other callback probes space them 60 us or more. Below 200 us, so that
// the main thread waiting in Get does not park.
var callbackGaps = []int{2, 5, 10, 20, 30, 45, 60, 90, 150}

const callbackPairs = 10 // callback pairs per gap and round

// callbackSpacing measures, per gap g, the second of two host callbacks
// on one stream separated by a spin kernel of g: Host.Now at the Get that
// receives the second callback's Put less at the one receiving the
// first's, less g. The first waits behind a 60 us kernel so that both
// are queued before it runs. It reports, and sets no field, how long the
// callback thread stays awake after a callback (0: one regime, every idle
// callback thread wakes, as the simulator's front_end.callback_wake_ns
// has it): on an H100 3.5 us, so no field models it (calibration-h100.md,
// session 15).
func (c *calibrator) callbackSpacing(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	q := h.NewQueue("spaced callbacks")
	put := func() { q.Put(struct{}{}) }
	lead := c.spinLaunch(us(60), t.done)
	byGap := make([][]float64, len(callbackGaps))
	if err := c.warmRounds(func(measured bool) error {
		for i, gap := range callbackGaps {
			spin := c.spinLaunch(us(gap), t.done)
			var each []float64
			for x := 0; x < callbackPairs; x++ {
				for _, issue := range []func() error{
					func() error { return h.Launch(t.s, lead) },
					func() error { return h.HostFunc(t.s, put) },
					func() error { return h.Launch(t.s, spin) },
					func() error { return h.HostFunc(t.s, put) },
				} {
					if err := issue(); err != nil {
						return err
					}
				}
				if _, ok := h.Get(q); !ok {
					return errors.New("spaced callback queue closed")
				}
				t0 := h.Now()
				if _, ok := h.Get(q); !ok {
					return errors.New("spaced callback queue closed")
				}
				each = append(each, ns(h.Now()-t0-us(gap)))
			}
			if measured {
				byGap[i] = append(byGap[i], stats.Median(each))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	method := "Host.Now between the Gets receiving two host functions' Puts on one stream, a spin kernel of the gap between them, less the gap"
	for i, gap := range callbackGaps {
		c.record(fmt.Sprintf("spaced callbacks, second after a %d us gap", gap), "", "ns", method, byGap[i])
	}
	// The callback thread's idle starts when its callback ends.
	after, extra := regimeSteps(callbackGaps, byGap, true)
	c.record("spaced callbacks: idle before the callback thread sleeps", "", "ns",
		"per round, midway between the last gap whose second callback costs under a quarter of the rise (the longest gap's less the shortest's) above the shortest's and the first over (0: one regime)", after)
	c.record("spaced callbacks: extra cost once asleep", "", "ns",
		"per round, the median second callback after the gaps from the step on less the shortest gap's (0: a rise under 2 us, one regime); compare front_end.callback_wake_ns", extra)
	return h.StreamSynchronize(t.s)
}
