package tilesync

import (
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// ConsumerFirst issues a synchronized pair the way that deadlocks spinning
// kernels: the consumer (optionally behind cuSync's wait kernel) on a
// low-priority stream first, then, delay later on the host, the producer
// on a high-priority stream. It is what happens on hardware when the
// consumer's launch reaches the GPU first. Without the wait kernel, a
// consumer with more blocks than the GPU holds takes every SM and spins, the
// producer never places a block, and the run must end in a
// *device.DeadlockError naming the consumer; with it, the consumer is held
// back until the producer has started, and the pair completes. Buffers are
// allocated but not initialized: this is for the simulator.
func ConsumerFirst(h device.Host, info *device.Info, pair *Pair, waitKernel bool, delay time.Duration) error {
	prod, cons := pair.Prod, pair.Cons
	pk, err := prod.Kernel()
	if err != nil {
		return err
	}
	ck, err := cons.Kernel()
	if err != nil {
		return err
	}
	wk, err := tiles.WaitKernel()
	if err != nil {
		return err
	}
	ctr, err := h.Malloc(int64(4 * pair.CounterWords()))
	if err != nil {
		return err
	}
	ps, err := h.NewStream(device.StreamOptions{Priority: info.StreamPriorityHigh})
	if err != nil {
		return err
	}
	cs, err := h.NewStream(device.StreamOptions{Priority: info.StreamPriorityLowest})
	if err != nil {
		return err
	}
	if waitKernel {
		wl := &device.Launch{Kernel: wk, Grid: device.D1(1), Block: device.D1(1), Work: device.Work{Cycles: 1},
			Label: "wait kernel", Sync: &WaitKernelSync{Pair: pair, Counters: ctr, Iter: 1}}
		if err := h.Launch(cs, wl); err != nil {
			return err
		}
	}
	cl := &device.Launch{Kernel: ck, Grid: cons.Grid(), Block: device.D1(tiles.Threads), Work: cons.Work(),
		Label: "consumer " + cons.KernelName(), Sync: &ConsumerSync{Pair: pair, Counters: ctr, Iter: 1}}
	if err := h.Launch(cs, cl); err != nil {
		return err
	}
	h.Spend(delay)
	pl := &device.Launch{Kernel: pk, Grid: prod.Grid(), Block: device.D1(tiles.Threads), Work: prod.Work(),
		Label: "producer " + prod.KernelName(), Sync: &ProducerSync{Pair: pair, Counters: ctr, Flag: waitKernel}}
	if err := h.Launch(ps, pl); err != nil {
		return err
	}
	return h.Synchronize()
}
