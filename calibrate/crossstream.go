package calibrate

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// Stream counts and chain lengths of the cross-stream dependency
// measurement.
var (
	crossStreams     = []int{2, 4, 8}
	crossN1, crossN2 = 4, 16
)

// crossStreamWaits times chains of 20 us spin kernels, kernel j on stream
// j mod s, each waiting on an event recorded behind the one before it (as
// a round-robin scheduler orders a chain), against the same chain on one
// stream in the same round. The difference of the slopes over chains of
// 4 and 16 kernels is what a dependency through an event on another
// stream adds to the back-to-back gap: front_end.event_wait_ns, the mean
// over 2, 4 and 8 streams.
func (c *calibrator) crossStreamWaits(h device.Host) error {
	maxS := crossStreams[len(crossStreams)-1]
	ss, evs, err := newStreamsAndEvents(h, maxS, maxS)
	if err != nil {
		return err
	}
	spin := c.spinLaunch(spinD, ss.t.done)
	chainOn := func(s, n int) func() error {
		return func() error { return crossChain(h, ss, evs, spin, s, n) }
	}
	slope := func(s int) (float64, error) {
		y1, err := ss.t.elapsed(h, chainOn(s, crossN1))
		if err != nil {
			return 0, err
		}
		y2, err := ss.t.elapsed(h, chainOn(s, crossN2))
		return (y2 - y1) / float64(crossN2-crossN1), err
	}
	if _, err := ss.t.elapsed(h, chainOn(maxS, crossN1)); err != nil { // warm up
		return err
	}
	gaps := make([][]float64, len(crossStreams))
	var extra []float64
	for r := 0; r < c.rounds; r++ {
		one, err := slope(1)
		if err != nil {
			return err
		}
		var sum float64
		for i, s := range crossStreams {
			y, err := slope(s)
			if err != nil {
				return err
			}
			gaps[i] = append(gaps[i], y-ns(spinD))
			sum += y - one
		}
		extra = append(extra, sum/float64(len(crossStreams)))
	}
	for i, s := range crossStreams {
		c.record(fmt.Sprintf("cross-stream dependency gap, %d streams", s), "", "ns",
			fmt.Sprintf("slope of Elapsed over chains of %d and %d 20 us spin kernels, kernel j on stream j mod %d waiting on an event recorded behind kernel j-1, less 20 us", crossN1, crossN2, s), gaps[i])
	}
	c.record("cross-stream event wait", "front_end.event_wait_ns", "ns",
		"per round, the mean over 2, 4 and 8 streams of the cross-stream chain's slope less the same chain's on one stream (timed in the same round)", extra)
	return nil
}

// crossChain issues n spin kernels, kernel j on stream j mod s of ss, each
// waiting on the event recorded behind kernel j-1 when that ran on
// another stream, and joins the last one back to the timed stream.
func crossChain(h device.Host, ss *streamSet, evs []device.Event, spin *device.Launch, s, n int) error {
	for j := 0; j < n; j++ {
		st := ss.stream(j % s)
		if j > 0 && s > 1 {
			if err := h.Wait(st, evs[(j-1)%s]); err != nil {
				return err
			}
		}
		if err := h.Launch(st, spin); err != nil {
			return err
		}
		if s > 1 {
			if err := h.Record(evs[j%s], st); err != nil {
				return err
			}
		}
	}
	if last := (n - 1) % s; last != 0 {
		return h.Wait(ss.stream(0), evs[last])
	}
	return nil
}

// Chain lengths of the captured cross-stream chains.
const capN1, capN2 = 8, 64

// capturedChains times capturing and instantiating chains of 8 and 64
// spin kernels, on one stream and over 8 streams as crossChain orders
// them (each side stream joined back at the end): per kernel, the slope
// of Host.Now around the capture and around the instantiation (reported:
// what a graph built per step over many streams costs beside the empty
// one-stream chains of host.capture_ns and host.instantiate_per_node_ns),
// and host.capture_event_ns, what each captured record and wait adds.
func (c *calibrator) capturedChains(h device.Host) error {
	const maxS = 8
	ss, evs, err := newStreamsAndEvents(h, maxS, 2*maxS)
	if err != nil {
		return err
	}
	spin := c.spinLaunch(spinD, ss.t.done)
	// timed captures and instantiates one chain: its two host times.
	timed := func(s, n int) (capNs, instNs float64, err error) {
		t0 := h.Now()
		g, err := capture(h, ss.t.s, func() error {
			if err := crossChain(h, ss, evs[:maxS], spin, s, n); err != nil {
				return err
			}
			return joinSides(h, ss, evs[maxS:], s)
		})
		if err != nil {
			return 0, 0, err
		}
		t1 := h.Now()
		x, err := h.Instantiate(g)
		if err != nil {
			return 0, 0, errors.Join(err, h.Destroy(g))
		}
		t2 := h.Now()
		return ns(t1 - t0), ns(t2 - t1), errors.Join(h.Destroy(x), h.Destroy(g))
	}
	captured := map[int][]float64{}
	for _, s := range []int{1, maxS} {
		var capt, inst []float64
		if err := c.warmRounds(func(measured bool) error {
			c1, i1, err := timed(s, capN1)
			if err != nil {
				return err
			}
			c2, i2, err := timed(s, capN2)
			if err != nil {
				return err
			}
			if measured {
				capt = append(capt, (c2-c1)/(capN2-capN1))
				inst = append(inst, (i2-i1)/(capN2-capN1))
			}
			return nil
		}); err != nil {
			return err
		}
		how := fmt.Sprintf("chains of %d and %d 20 us spin kernels, kernel j on stream j mod %d waiting on an event recorded behind kernel j-1", capN1, capN2, s)
		if s == 1 {
			how = fmt.Sprintf("chains of %d and %d 20 us spin kernels on one stream", capN1, capN2)
		}
		c.record(fmt.Sprintf("capture cost per kernel, chain over %d streams", s), "", "ns", "slope of Host.Now around capturing "+how, capt)
		c.record(fmt.Sprintf("instantiate cost per kernel, chain over %d streams", s), "", "ns", "slope of Host.Now around instantiating "+how, inst)
		captured[s] = capt
	}
	// Over 8 streams each kernel adds a captured wait and record.
	event := make([]float64, len(captured[1]))
	for r := range event {
		event[r] = (captured[maxS][r] - captured[1][r]) / 2
	}
	c.record("capture cost per event record or wait", "host.capture_event_ns", "ns",
		"per round, half the capture cost per kernel of the chain over 8 streams less the one-stream chain's", event)
	return nil
}

// joinSides joins side streams 1..s-1 of ss back to the origin, each
// through its own event of evs.
func joinSides(h device.Host, ss *streamSet, evs []device.Event, s int) error {
	for i := 1; i < s; i++ {
		if err := h.Record(evs[i], ss.stream(i)); err != nil {
			return err
		}
		if err := h.Wait(ss.stream(0), evs[i]); err != nil {
			return err
		}
	}
	return nil
}
