package calibrate

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
)

// "host thread starts" (issue #18, session 21): SET's Queue baseline
// starts its B worker threads and creates their streams in every timed
// run (its Run ends the threads), and on the GPU the run's makespan is
// 300-500 us longer than the span the scheduler itself times from its
// first job to its last (queue rows of every committed GPU file), where
// the simulator's is 20 us longer. This probe runs that set-up and
// tear-down alone, for 1, 2, 4 and 8 threads a round:
//
//	create   NewStreams(n), Host.Now around it
//	spawn    Host.Go of n workers, Host.Now around the calls
//	first    from before the first Go to a worker's first step (Host.Now,
//	         Put on a queue), the earliest and the latest worker
//	work     each worker launches an empty kernel on its stream and
//	         synchronizes it, then Puts done and returns; the parent's
//	         Get of every done
//	destroy  DestroyStreams, Host.Now around it
//	total    the whole, as Queue's timed run pays it
var threadStartCounts = []int{1, 2, 4, 8}

func (c *calibrator) threadStarts(h device.Host) error {
	byN := make([][]tsRound, len(threadStartCounts))
	ready := h.NewQueue("thread starts: ready")
	done := h.NewQueue("thread starts: done")
	if err := c.warmRounds(func(measured bool) error {
		for i, n := range threadStartCounts {
			r, err := c.threadStartRound(h, n, ready, done)
			if err != nil {
				return fmt.Errorf("%d threads: %w", n, err)
			}
			if measured {
				byN[i] = append(byN[i], r)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	parts := []struct {
		name, method string
		f            func(tsRound) float64
	}{
		{"streams created", "Host.Now around NewStreams(n)", func(r tsRound) float64 { return r.create }},
		{"Go calls", "Host.Now around the n Host.Go calls", func(r tsRound) float64 { return r.spawn }},
		{"first worker running", "from before the first Host.Go to the earliest worker's first Host.Now", func(r tsRound) float64 { return r.first }},
		{"last worker running", "from before the first Host.Go to the latest worker's first Host.Now", func(r tsRound) float64 { return r.last }},
		{"workers done", "from before the first Host.Go to the parent's Get of the last worker's done (each worker: an empty kernel launched and synchronized on its stream)", func(r tsRound) float64 { return r.work }},
		{"streams destroyed", "Host.Now around DestroyStreams of the n streams, their work done", func(r tsRound) float64 { return r.destroy }},
		{"total", "Host.Now from before NewStreams to after DestroyStreams", func(r tsRound) float64 { return r.total }},
	}
	for i, n := range threadStartCounts {
		for _, p := range parts {
			c.record(fmt.Sprintf("host thread starts: %d threads: %s", n, p.name), "", "ns", p.method, pick(byN[i], p.f))
		}
	}
	return nil
}

// tsRound is one round of "host thread starts" for one thread count, in
// ns: the parts threadStarts records.
type tsRound struct{ create, spawn, first, last, work, destroy, total float64 }

// threadStartRound runs one set-up, work and tear-down of n worker
// threads (first, last and work timed from before the first Go).
func (c *calibrator) threadStartRound(h device.Host, n int, ready, done device.Queue) (tsRound, error) {
	t0 := h.Now()
	ss, err := sched.NewStreams(h, n)
	if err != nil {
		return tsRound{}, err
	}
	t1 := h.Now()
	for i := 0; i < n; i++ {
		s := ss[i]
		h.Go(fmt.Sprintf("thread starts: worker %d", i), func(h device.Host) error {
			ready.Put(h.Now())
			err := h.Launch(s, c.emptyLaunch(1))
			if err == nil {
				err = h.StreamSynchronize(s)
			}
			done.Put(err)
			return err
		})
	}
	t2 := h.Now()
	starts := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		v, _ := h.Get(ready)
		starts = append(starts, v.(time.Duration))
	}
	var first error
	for i := 0; i < n; i++ {
		v, _ := h.Get(done)
		if err, _ := v.(error); err != nil && first == nil {
			first = err
		}
	}
	t3 := h.Now()
	if err := sched.DestroyStreams(h, ss); err != nil && first == nil {
		first = err
	}
	t4 := h.Now()
	r := tsRound{ns(t1 - t0), ns(t2 - t1), ns(slices.Min(starts) - t1), ns(slices.Max(starts) - t1), ns(t3 - t1), ns(t4 - t3), ns(t4 - t0)}
	return r, first
}
