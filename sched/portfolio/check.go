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
// first finalist, unchecked, and measured 0).
func (p *Portfolio) check(h device.Host, in *workloads.Instance, cands []candidate, finals []int) (pick int, s sched.Scheduler, measured time.Duration, err error) {
	pick = -1
	for _, f := range finals {
		fs, err := cands[f].build()
		if err != nil {
			return p.drop(h, s, err)
		}
		if err := prepare(h, in, fs); err != nil {
			return p.drop(h, s, errors.Join(fmt.Errorf("portfolio: %s: %w", cands[f].name, err), cleanup(h, fs)))
		}
		if p.opt.Check == 0 {
			return f, fs, 0, nil
		}
		t, err := timeRuns(h, in, fs, p.opt.Check)
		if err != nil {
			return p.drop(h, s, errors.Join(fmt.Errorf("portfolio: checking %s: %w", cands[f].name, err), cleanup(h, fs)))
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
	return pick, s, measured, nil
}

// drop releases the schedule kept so far after a failure.
func (p *Portfolio) drop(h device.Host, kept sched.Scheduler, err error) (int, sched.Scheduler, time.Duration, error) {
	if kept != nil {
		err = errors.Join(err, cleanup(h, kept))
	}
	return -1, nil, 0, err
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
