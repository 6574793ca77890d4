package calibrate

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// Other host threads blocked in StreamSynchronize while one thread works
// (ACS-SW's scheduler threads wait this way, one per stream): 0 to 7.
var besideSyncThreads = []int{0, 1, 3, 7}

const (
	besideSyncD        = 2 * time.Millisecond // each waiting thread's kernel
	besideSyncLaunches = 50
	besideSyncPings    = 25
	besideSyncSyncs    = 10
)

// besideSynchronizingThreads measures, with k other host threads each
// looping on a 2 ms kernel and StreamSynchronize on a stream of its own,
// what one thread's launch, a queue ping-pong between two threads and a
// launch + StreamSynchronize of a 20 us kernel cost (all reported): whether
// threads waiting in the driver slow the ones that work, as ACS-SW's
// scheduler threads do one another.
func (c *calibrator) besideSynchronizingThreads(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	ping, pong := startPong(h, "beside ")
	defer ping.Close()
	for _, k := range besideSyncThreads {
		stop, err := c.startSynchronizers(h, k)
		if err != nil {
			return err
		}
		launch, hand, sync, err := c.besideRounds(h, t, ping, pong)
		if err := errors.Join(err, stop()); err != nil {
			return err
		}
		c.record(fmt.Sprintf("launch beside %d synchronizing threads", k), "", "ns",
			"Host.Now around 50 empty-kernel launches, per launch, while the other threads loop on a 2 ms kernel and StreamSynchronize", launch)
		c.record(fmt.Sprintf("queue hand-off beside %d synchronizing threads", k), "", "ns",
			"Host.Now around 25 ping-pong exchanges of two host threads, per hand-off", hand)
		c.record(fmt.Sprintf("launch + synchronize of 20 us beside %d synchronizing threads", k), "", "ns",
			"Host.Now around launching a 20 us spin kernel and StreamSynchronize, less 20 us, median of 10", sync)
	}
	return nil
}

// startSynchronizers starts k host threads that loop on a 2 ms spin
// kernel and StreamSynchronize on streams of their own; stop ends them
// and waits until they have returned.
func (c *calibrator) startSynchronizers(h device.Host, k int) (stop func() error, err error) {
	var quit atomic.Bool
	exited := h.NewQueue("synchronizers exited")
	for i := 0; i < k; i++ {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, err
		}
		done, err := h.Malloc(4)
		if err != nil {
			return nil, err
		}
		spin := c.spinLaunch(besideSyncD, done)
		h.Go(fmt.Sprintf("calibrate synchronizer %d", i), func(w device.Host) error {
			var err error
			for err == nil && !quit.Load() {
				if err = w.Launch(s, spin); err == nil {
					err = w.StreamSynchronize(s)
				}
			}
			exited.Put(err)
			return nil
		})
	}
	return func() error {
		quit.Store(true)
		var errs []error
		for i := 0; i < k; i++ {
			v, ok := h.Get(exited)
			if !ok {
				return errors.New("synchronizers' queue closed")
			}
			if v != nil {
				errs = append(errs, v.(error))
			}
		}
		return errors.Join(errs...)
	}, nil
}

// besideRounds times the three figures of besideSynchronizingThreads, one
// per round after a warm-up round.
func (c *calibrator) besideRounds(h device.Host, t *timedStream, ping, pong device.Queue) (launch, hand, sync []float64, err error) {
	spin := c.spinLaunch(spinD, t.done)
	if err := c.warmRounds(func(measured bool) error {
		t0 := h.Now()
		for i := 0; i < besideSyncLaunches; i++ {
			if err := h.Launch(t.s, c.emptyLaunch(1)); err != nil {
				return err
			}
		}
		l := ns(h.Now()-t0) / besideSyncLaunches
		if err := h.StreamSynchronize(t.s); err != nil {
			return err
		}
		t0 = h.Now()
		for i := 0; i < besideSyncPings; i++ {
			ping.Put(i)
			if _, ok := h.Get(pong); !ok {
				return errors.New("beside pong queue closed")
			}
		}
		p := ns(h.Now()-t0) / (2 * besideSyncPings)
		var each []float64
		for i := 0; i < besideSyncSyncs; i++ {
			t0 = h.Now()
			if err := h.Launch(t.s, spin); err != nil {
				return err
			}
			if err := h.StreamSynchronize(t.s); err != nil {
				return err
			}
			each = append(each, ns(h.Now()-t0-spinD))
		}
		if measured {
			launch, hand, sync = append(launch, l), append(hand, p), append(sync, stats.Median(each))
		}
		return nil
	}); err != nil {
		return nil, nil, nil, err
	}
	return launch, hand, sync, nil
}
