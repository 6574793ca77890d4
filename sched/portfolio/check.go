package portfolio

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// check times the finalists on h as the runner times a row, and returns
// the one with the fastest median, prepared afresh (with Check 0, the first
// finalist that prepares, unchecked, and measured 0). In each of Check
// rounds every finalist in turn, the first one rotating, is built,
// prepared, run once untimed (sched.Warm), timed once and released: a
// finalist's timed run never follows its own earlier runs, as a row's does
// not (several timed runs back to back in one Prepare kept host threads and
// caches warm that the runner's run finds cold, and favoured the
// schedules that gain most from that). A finalist that fails on the device
// is passed over (failed counts them); check fails only if every finalist
// does. The returned candidate is the pick as it is to be built again; for
// a search (frozen), the schedule its fastest round found.
func (p *Portfolio) check(h device.Host, in *workloads.Instance, cands []candidate, finals []int) (pick int, chosen candidate, s sched.Scheduler, measured time.Duration, failed int, err error) {
	var errs []error
	everyFailed := func() error {
		return fmt.Errorf("portfolio: every finalist failed on the device: %w", errors.Join(errs...))
	}
	if p.opt.Check == 0 {
		for _, f := range finals {
			fs, err := prepared(h, in, cands[f])
			if err == nil {
				return f, keep(cands[f], fs), fs, 0, failed, nil
			}
			failed++
			errs = append(errs, err)
		}
		return -1, candidate{}, nil, 0, failed, everyFailed()
	}
	times := make([][]time.Duration, len(finals))
	fastest := make([]candidate, len(finals)) // each finalist as its fastest round ran it
	dead := make([]bool, len(finals))
	for round := 0; round < p.opt.Check; round++ {
		for n := range finals {
			k := (round + n) % len(finals)
			if dead[k] {
				continue
			}
			t, ran, err := timeFresh(h, in, cands[finals[k]])
			if err != nil {
				dead[k], failed = true, failed+1
				errs = append(errs, err)
				continue
			}
			if len(times[k]) == 0 || t < slices.Min(times[k]) {
				fastest[k] = ran
			}
			times[k] = append(times[k], t)
		}
	}
	best := -1
	for k := range finals {
		if !dead[k] && (best < 0 || stats.UpperMedian(times[k]) < stats.UpperMedian(times[best])) {
			best = k
		}
	}
	if best < 0 {
		return -1, candidate{}, nil, 0, failed, everyFailed()
	}
	if s, err = prepared(h, in, fastest[best]); err != nil {
		return -1, candidate{}, nil, 0, failed, err
	}
	return finals[best], fastest[best], s, stats.UpperMedian(times[best]), failed, nil
}

// frozen is a schedule that searches on the device in Prepare (AutoGraph,
// IOS) and can give the schedule its last search found, to run without
// searching again.
type frozen interface {
	Frozen() sched.Scheduler
}

// keep is c as s, prepared from it, ran: for a search, a candidate that
// builds the schedule s found (frozen is then set), else c itself. A
// search's outcome on a device varies with the timings it measured; the
// portfolio runs the outcome it saw, not a new search every Prepare.
func keep(c candidate, s sched.Scheduler) candidate {
	f, ok := s.(frozen)
	if !ok || f.Frozen() == nil {
		return c
	}
	c.frozen = true
	c.build = func() (sched.Scheduler, error) { return f.Frozen(), nil }
	return c
}

// prepared builds c and prepares it on h; on a failure it releases c.
func prepared(h device.Host, in *workloads.Instance, c candidate) (sched.Scheduler, error) {
	s, err := c.build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	if err := prepare(h, in, s); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", c.name, err), cleanup(h, s))
	}
	return s, nil
}

// timeFresh prepares c, runs it once untimed, times one run between
// synchronizations, releases it and restores in's inputs. ran is c as it
// ran (keep).
func timeFresh(h device.Host, in *workloads.Instance, c candidate) (t time.Duration, ran candidate, err error) {
	s, err := prepared(h, in, c)
	if err != nil {
		return 0, c, err
	}
	t, err = timeRuns(h, in, s, 1)
	if err != nil {
		err = fmt.Errorf("checking %s: %w", c.name, err)
	}
	return t, keep(c, s), errors.Join(err, cleanup(h, s))
}

// timeRuns runs s once untimed and then n times between synchronizations,
// as the runner times a run, restores in's inputs, and returns the median.
func timeRuns(h device.Host, in *workloads.Instance, s sched.Scheduler, n int) (time.Duration, error) {
	if err := sched.Warm(h, s, in); err != nil {
		return 0, err
	}
	times := make([]time.Duration, n)
	for r := range times {
		if err := h.Synchronize(); err != nil {
			return 0, err
		}
		t0 := h.Now()
		if err := s.Run(h, in); err != nil {
			return 0, err
		}
		if err := h.Synchronize(); err != nil {
			return 0, err
		}
		times[r] = h.Now() - t0
	}
	return stats.UpperMedian(times), in.Reset(h)
}
