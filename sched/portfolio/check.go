package portfolio

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// check prepares each finalist on h, runs it once untimed and Check times
// timed, all alike, restoring the program's inputs after each, and returns
// the finalist with the fastest median, still prepared (with Check 0, the
// first finalist, unchecked, and measured 0). A finalist that fails on the
// device is released and passed over (failed counts them); check fails only
// if every finalist does.
func (p *Portfolio) check(h device.Host, in *workloads.Instance, cands []candidate, finals []int) (pick int, s sched.Scheduler, measured time.Duration, failed int, err error) {
	pick = -1
	var errs []error
	for _, f := range finals {
		fs, t, ferr := p.tryFinalist(h, in, cands[f])
		if ferr != nil {
			failed++
			errs = append(errs, ferr)
			continue
		}
		if p.opt.Check == 0 {
			return f, fs, 0, failed, nil
		}
		if pick >= 0 && t >= measured {
			if err := cleanup(h, fs); err != nil {
				return p.drop(h, s, err)
			}
			continue
		}
		if s != nil {
			if err := cleanup(h, s); err != nil {
				return p.drop(h, fs, err)
			}
		}
		pick, s, measured = f, fs, t
	}
	if pick < 0 {
		return -1, nil, 0, failed, fmt.Errorf("portfolio: every finalist failed on the device: %w", errors.Join(errs...))
	}
	return pick, s, measured, failed, nil
}

// tryFinalist prepares c on h and, with Check > 0, times it; on a failure
// it releases c and returns the error.
func (p *Portfolio) tryFinalist(h device.Host, in *workloads.Instance, c candidate) (sched.Scheduler, time.Duration, error) {
	s, err := c.build()
	if err != nil {
		return nil, 0, err
	}
	if err := prepare(h, in, s); err != nil {
		return nil, 0, errors.Join(fmt.Errorf("%s: %w", c.name, err), cleanup(h, s))
	}
	if p.opt.Check == 0 {
		return s, 0, nil
	}
	t, err := timeRuns(h, in, s, p.opt.Check)
	if err != nil {
		return nil, 0, errors.Join(fmt.Errorf("checking %s: %w", c.name, err), cleanup(h, s))
	}
	return s, t, nil
}

// drop releases the schedule kept so far after a failure.
func (p *Portfolio) drop(h device.Host, kept sched.Scheduler, err error) (int, sched.Scheduler, time.Duration, int, error) {
	if kept != nil {
		err = errors.Join(err, cleanup(h, kept))
	}
	return -1, nil, 0, 0, err
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
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	return times[n/2], in.Reset(h)
}
