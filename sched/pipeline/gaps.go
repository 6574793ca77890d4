package pipeline

import (
	"fmt"
	"sort"
	"time"

	"github.com/gpusched/gpusched/device"
)

// gapTimer measures SET's overhead model on the GPU's own clock: a timing
// event recorded on a job's stream just before the job and one just after
// it bound the job's time on the device. The union of those intervals is
// the time the device had work (T_ideal here: what the run would take with
// no gaps at all), and the rest of T_measured is gaps: between batches when
// the jobs on either side of an idle span belong to different batches of a
// batched schedule, within batches otherwise (all gaps of the unbatched
// schedulers, SET and Queue, count as intra-batch). The events cost two
// event records per job, so the timer is off unless asked for (gaps: true)
// and the throughput tables come from runs without it.
type gapTimer struct {
	on         bool
	origin     device.Event
	start, end []device.Event
	batch      []int // batch of each job; nil for unbatched schedules
}

func (g *gapTimer) prepare(h device.Host, jobs int) error {
	if !g.on {
		return nil
	}
	var err error
	if g.origin, err = h.NewEvent(device.EventOptions{}); err != nil {
		return err
	}
	g.start, g.end = make([]device.Event, jobs), make([]device.Event, jobs)
	for j := 0; j < jobs; j++ {
		if g.start[j], err = h.NewEvent(device.EventOptions{}); err != nil {
			return err
		}
		if g.end[j], err = h.NewEvent(device.EventOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func (g *gapTimer) destroy(h device.Host) error {
	var first error
	keep := func(e device.Event) {
		if e != nil {
			if err := h.Destroy(e); err != nil && first == nil {
				first = err
			}
		}
	}
	keep(g.origin)
	for j := range g.start {
		keep(g.start[j])
		keep(g.end[j])
	}
	g.origin, g.start, g.end = nil, nil, nil
	return first
}

// begin marks the run's start on s.
func (g *gapTimer) begin(h device.Host, s device.Stream) error {
	if !g.on {
		return nil
	}
	return h.Record(g.origin, s)
}

func (g *gapTimer) jobStart(h device.Host, s device.Stream, j int) error {
	if !g.on {
		return nil
	}
	return h.Record(g.start[j], s)
}

func (g *gapTimer) jobEnd(h device.Host, s device.Stream, j int) error {
	if !g.on {
		return nil
	}
	return h.Record(g.end[j], s)
}

// finish reads the events (every job has completed) and fills m's model
// terms. It runs after m.Makespan is taken.
func (g *gapTimer) finish(h device.Host, m *Metrics) error {
	if !g.on {
		return nil
	}
	spans := make([]span, len(g.start))
	for j := range g.start {
		lo, err := h.Elapsed(g.origin, g.start[j])
		if err != nil {
			return fmt.Errorf("job %d start: %w", j, err)
		}
		hi, err := h.Elapsed(g.origin, g.end[j])
		if err != nil {
			return fmt.Errorf("job %d end: %w", j, err)
		}
		spans[j] = span{lo, hi, j}
	}
	m.Ideal, m.IntraGaps, m.InterGaps = decompose(spans, g.batch, m.Makespan)
	m.Timed = true
	return nil
}

// span is one job's time on the device, from the run's origin.
type span struct {
	lo, hi time.Duration
	job    int
}

// decompose splits [0, makespan) into the union of the job spans (busy)
// and idle time, which is inter-batch where the jobs on either side of it
// belong to different batches (batch nil: no batches) and intra-batch
// otherwise, including the time before the first job and after the last.
func decompose(spans []span, batch []int, makespan time.Duration) (busy, intra, inter time.Duration) {
	if len(spans) == 0 {
		return 0, makespan, 0
	}
	spans = append([]span(nil), spans...)
	sort.Slice(spans, func(a, b int) bool {
		if spans[a].lo != spans[b].lo {
			return spans[a].lo < spans[b].lo
		}
		return spans[a].job < spans[b].job
	})
	curLo, curHi, lastJob := spans[0].lo, spans[0].hi, spans[0].job
	idle := func(from, to time.Duration, before, after int) {
		if to <= from {
			return
		}
		if batch != nil && batch[before] != batch[after] {
			inter += to - from
		} else {
			intra += to - from
		}
	}
	idle(0, spans[0].lo, spans[0].job, spans[0].job)
	for _, s := range spans[1:] {
		if s.lo > curHi {
			busy += curHi - curLo
			idle(curHi, s.lo, lastJob, s.job)
			curLo, curHi = s.lo, s.hi
		}
		if s.hi >= curHi {
			curHi, lastJob = s.hi, s.job
		}
	}
	busy += curHi - curLo
	if tail := makespan - curHi; tail > 0 {
		// After the last job: the host noticing completion.
		intra += tail
	}
	return busy, intra, inter
}
