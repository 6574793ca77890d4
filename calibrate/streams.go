package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Stream counts of the stream measurements.
var (
	concurrencyStreams = []int{1, 2, 4, 8, 16, 32}
	busyStreams        = []int{1, 8, 32, 128}
)

const (
	concurrencyKernels = 64
	concurrencyD       = 10 * time.Microsecond
	busyD              = 3 * time.Millisecond
)

// streamSet is a timed stream (the origin) and side streams, with an
// event to fork them from the origin and one per side stream to join
// them back.
type streamSet struct {
	t     *timedStream
	side  []device.Stream
	fork  device.Event
	joins []device.Event
}

func newStreamSet(h device.Host, n int) (*streamSet, error) {
	ss := &streamSet{}
	var err error
	if ss.t, err = newTimedStream(h); err != nil {
		return nil, err
	}
	if ss.fork, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
		return nil, err
	}
	for i := 1; i < n; i++ {
		st, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, err
		}
		ev, err := h.NewEvent(device.EventOptions{DisableTiming: true})
		if err != nil {
			return nil, err
		}
		ss.side, ss.joins = append(ss.side, st), append(ss.joins, ev)
	}
	return ss, nil
}

// newEvents makes n events without timing, for records and waits between
// streams.
func newEvents(h device.Host, n int) ([]device.Event, error) {
	return newEventsWith(h, n, device.EventOptions{DisableTiming: true})
}

// newEventsWith makes n events with opt.
func newEventsWith(h device.Host, n int, opt device.EventOptions) ([]device.Event, error) {
	evs := make([]device.Event, n)
	for i := range evs {
		var err error
		if evs[i], err = h.NewEvent(opt); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// newStreamsAndEvents is the set-up most probes share: a stream set of n
// streams and events untimed events for the records and waits between them.
func newStreamsAndEvents(h device.Host, n, events int) (*streamSet, []device.Event, error) {
	ss, err := newStreamSet(h, n)
	if err != nil {
		return nil, nil, err
	}
	evs, err := newEvents(h, events)
	if err != nil {
		return nil, nil, err
	}
	return ss, evs, nil
}

// stream is stream i of the set (0: the origin).
func (ss *streamSet) stream(i int) device.Stream {
	if i == 0 {
		return ss.t.s
	}
	return ss.side[i-1]
}

// gatedRounds is gatedFanOut's elapsed time per round (warmRounds: after
// a warm-up round).
func (c *calibrator) gatedRounds(h device.Host, ss *streamSet, n, calls int, issue func() error) ([]float64, error) {
	var out []float64
	if err := c.warmRounds(func(measured bool) error {
		y, err := c.gatedFanOut(h, ss, n, calls, issue)
		if err != nil {
			return err
		}
		if measured {
			out = append(out, y)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// gatedFanOut is the elapsed time of what issue enqueues on the first n
// streams, all held behind a gate kernel on the origin (long enough for
// the host to enqueue calls commands) and joined back before the end
// event.
func (c *calibrator) gatedFanOut(h device.Host, ss *streamSet, n, calls int, issue func() error) (float64, error) {
	gate := c.spinLaunch(time.Duration(gateBaseNs+gatePerLaunch*float64(calls)), ss.t.done)
	if err := h.Launch(ss.t.s, gate); err != nil {
		return 0, err
	}
	if err := h.Record(ss.fork, ss.t.s); err != nil {
		return 0, err
	}
	for i := 1; i < n; i++ {
		if err := h.Wait(ss.stream(i), ss.fork); err != nil {
			return 0, err
		}
	}
	return ss.t.elapsed(h, func() error {
		if err := issue(); err != nil {
			return err
		}
		for i := 1; i < n; i++ {
			if err := h.Record(ss.joins[i-1], ss.stream(i)); err != nil {
				return err
			}
			if err := h.Wait(ss.t.s, ss.joins[i-1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// streamConcurrency issues 64 one-block 10 us spin kernels over s
// streams, all released at once, in two orders: round-robin (kernel j on
// stream j mod s, as a round-robin scheduler issues) and stream by stream
// (each stream's chain in turn). How many run at the same time tells the
// hardware queues and their false dependencies: stream by stream, a
// stream that shares a queue with an earlier one waits for that one's
// whole chain.
func (c *calibrator) streamConcurrency(h device.Host) error {
	maxS := concurrencyStreams[len(concurrencyStreams)-1]
	ss, err := newStreamSet(h, maxS)
	if err != nil {
		return err
	}
	spin := c.spinLaunch(concurrencyD, ss.t.done)
	orders := []struct {
		name   string
		stream func(j, s int) int
	}{
		{"round-robin", func(j, s int) int { return j % s }},
		{"stream by stream", func(j, s int) int { return j * s / concurrencyKernels }},
	}
	for _, o := range orders {
		for _, s := range concurrencyStreams {
			ys, err := c.gatedRounds(h, ss, s, concurrencyKernels+2*s, func() error {
				for j := 0; j < concurrencyKernels; j++ {
					if err := h.Launch(ss.stream(o.stream(j, s)), spin); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			conc := pick(ys, func(y float64) float64 { return float64(concurrencyKernels) * ns(concurrencyD) / y })
			c.record(concurrencyName(s, o.name), "", "kernels",
				fmt.Sprintf("64 one-block 10 us spin kernels over %d streams, issued %s, released at once: 64 x 10 us / Elapsed", s, o.name), conc)
		}
	}
	return nil
}

// concurrencyName names a stream concurrency measurement.
func concurrencyName(streams int, order string) string {
	return fmt.Sprintf("concurrency of %d streams, %s", streams, order)
}

// busyStreamCosts times records, waits and launches spread over s
// streams that each have work pending: what the host pays per call when
// many streams are in use.
func (c *calibrator) busyStreamCosts(h device.Host) error {
	maxS := busyStreams[len(busyStreams)-1]
	ss, evs, err := newStreamsAndEvents(h, maxS, 16)
	if err != nil {
		return err
	}
	gate := c.spinLaunch(busyD, ss.t.done)
	empty := c.emptyLaunch(1)
	costs := map[int][][]float64{} // per stream count, per call kind, per round
	for _, s := range busyStreams {
		// Every stream waits behind one gate kernel, so all s have work
		// pending for the whole batch without filling the hardware queues.
		occupy := func() error {
			if err := h.Launch(ss.stream(0), gate); err != nil {
				return err
			}
			if err := h.Record(ss.fork, ss.stream(0)); err != nil {
				return err
			}
			for i := 1; i < s; i++ {
				if err := h.Wait(ss.stream(i), ss.fork); err != nil {
					return err
				}
			}
			return nil
		}
		calls := []struct {
			what string
			call func(i int) error
		}{
			{"event record", func(i int) error { return h.Record(evs[i%len(evs)], ss.stream(i%s)) }},
			{"stream wait", func(i int) error { return h.Wait(ss.stream((i+1)%s), evs[i%len(evs)]) }},
			{"launch", func(i int) error { return h.Launch(ss.stream(i%s), empty) }},
		}
		for _, cl := range calls {
			r, err := c.perCall(h, batch, occupy, cl.call, h.Synchronize)
			if err != nil {
				return err
			}
			c.record(fmt.Sprintf("%s cost, %d busy streams", cl.what, s), "", "ns",
				fmt.Sprintf("Host.Now around 100 calls spread over %d streams, each waiting behind a 3 ms kernel", s), r)
			costs[s] = append(costs[s], r)
		}
	}
	c.record("host cost per other busy stream", "host.busy_stream_ns", "ns",
		"per round, the least-squares slope of the record, wait and launch costs over the other busy streams (0 to 127), averaged over the three",
		busySlopes(costs))
	return nil
}

// busySlopes is, per round, the mean over call kinds of the slope
// (through the one-stream cost) of cost against the other busy streams.
func busySlopes(costs map[int][][]float64) []float64 {
	one := costs[busyStreams[0]]
	slopes := make([]float64, len(one[0]))
	for r := range slopes {
		for kind := range one {
			var num, den float64
			for _, s := range busyStreams[1:] {
				dn := float64(s - busyStreams[0])
				num += (costs[s][kind][r] - one[kind][r]) * dn
				den += dn * dn
			}
			slopes[r] += num / den / float64(len(one))
		}
	}
	return slopes
}
