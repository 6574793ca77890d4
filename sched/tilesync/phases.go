package tilesync

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// phaseTimer is Options.Phases: timing events on the device that say when
// each operation of a run ended, measured from an event recorded on the
// producer's stream before the run's first operation. With a pair
// synchronized, the producer's end is recorded on its stream and the
// consumer's on the consumer's; in stream order both on the one stream.
// Why: a speedup is one number; where the overlapped schedule gains or
// loses against stream order (the producer's tail finishing later beside
// consumer tiles, the last consumer tiles running alone) shows in when the
// producer and the consumer end. The events cost a few microseconds of
// host calls per run and nothing the kernels see.
type phaseTimer struct {
	start  device.Event
	marks  []device.Event // in the order a run records them
	labels []string
	next   int               // the mark the current run records next
	runs   [][]time.Duration // per measured run: each mark's end after start
}

// begin records the start event on st, before the run issues anything.
func (p *phaseTimer) begin(h device.Host, st device.Stream) error {
	p.next = 0
	if p.start == nil {
		var err error
		if p.start, err = h.NewEvent(device.EventOptions{}); err != nil {
			return err
		}
	}
	return h.Record(p.start, st)
}

// mark records the end of the operation named label on st.
func (p *phaseTimer) mark(h device.Host, st device.Stream, label string) error {
	if p.next == len(p.marks) {
		ev, err := h.NewEvent(device.EventOptions{})
		if err != nil {
			return err
		}
		p.marks = append(p.marks, ev)
	}
	if p.next == len(p.labels) {
		p.labels = append(p.labels, label)
	}
	p.next++
	return h.Record(p.marks[p.next-1], st)
}

// end reads the run's marks once both streams are synchronized.
func (p *phaseTimer) end(h device.Host) error {
	run := make([]time.Duration, p.next)
	for i := range run {
		d, err := h.Elapsed(p.start, p.marks[i])
		if err != nil {
			return fmt.Errorf("tilesync: phase %s: %w", p.labels[i], err)
		}
		run[i] = d
	}
	p.runs = append(p.runs, run)
	return nil
}

// stats is the median over runs of each mark's end, in microseconds, keyed
// "end_us NN label" (NN the mark's place in a run).
func (p *phaseTimer) stats() map[string]float64 {
	if len(p.runs) == 0 {
		return nil
	}
	out := map[string]float64{}
	for i, label := range p.labels {
		var v []time.Duration
		for _, r := range p.runs {
			if i < len(r) {
				v = append(v, r[i])
			}
		}
		out[fmt.Sprintf("end_us %02d %s", i, label)] = float64(stats.UpperMedian(v).Nanoseconds()) / 1e3
	}
	return out
}

// destroy releases the events; the runs measured so far stay for stats.
func (p *phaseTimer) destroy(h device.Host) []error {
	var errs []error
	for _, ev := range append(p.marks, p.start) {
		if ev != nil {
			if err := h.Destroy(ev); err != nil {
				errs = append(errs, err)
			}
		}
	}
	p.marks, p.start = nil, nil
	return errs
}
