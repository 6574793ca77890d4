package tilesync

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// Occupancy shaping (Options.BlocksPerSM, Options.ProducerAlone).
//
// In stream order a producer's tail tiles share their SMs with consumer
// tiles; if co-resident tensor-core tiles share an SM's math pipes, a tile
// with its SM alone finishes sooner. The only knob a launch has over where
// its blocks go is its resources, and dynamic shared memory is the one a
// launch sets: padding it keeps other blocks off the SMs a block holds.
// On the GPUs measured so far it loses (a tile alone is not twice as fast
// as beside another, so the producer loses more in its full waves than its
// tail gains; docs/history/tilesync.md), so the rule does not use it; the
// options stay for other kernels and devices.
//
//   - BlocksPerSM n: every tile kernel the scheduler launches asks for
//     enough shared memory that at most n of its blocks fit on an SM
//     (stream order too, so the baseline can be measured at the same cap).
//   - ProducerAlone: a synchronized producer's block asks for enough that
//     no other block, of either kernel, fits beside it; its tail tiles then
//     run at a whole SM's speed while consumer tiles take the other SMs.
//
// The padding is never read by the kernels. The shared-memory carveout is
// the driver's choice per launch, as for any kernel.

// sharedFor returns the dynamic shared memory per block that makes one block
// of l take at least total bytes of an SM's shared memory (static + dynamic
// + the per-block reserve), never less than l already asks for.
func sharedFor(info *device.Info, l *device.Launch, total int) (int, error) {
	static := 0
	if l.Kernel != nil {
		static = l.Kernel.StaticShared
	}
	dyn := max(l.SharedMem, total-static-info.SharedReserved)
	if dyn+static > info.MaxSharedPerBlock {
		return 0, fmt.Errorf("kernel %s would need %d bytes of shared memory per block (%d static + %d dynamic), over %s's %d-byte maximum",
			l.Kernel, dyn+static, static, dyn, info.Name, info.MaxSharedPerBlock)
	}
	return dyn, nil
}

// capBlocks pads l's dynamic shared memory so that at most n of its blocks
// fit on one SM. A launch that already fits no more than n is unchanged.
func capBlocks(info *device.Info, l *device.Launch, n int) error {
	if got, _ := info.Occupancy(l); got <= n {
		return nil
	}
	dyn, err := sharedFor(info, l, info.SharedPerSM/(n+1)+1)
	if err != nil {
		return fmt.Errorf("blocks_per_sm %d: %w", n, err)
	}
	l.SharedMem = dyn
	if got, limiter := info.Occupancy(l); got != n {
		return fmt.Errorf("blocks_per_sm %d: kernel %s holds %d blocks per SM after padding (limited by %s)", n, l.Kernel, got, limiter)
	}
	return nil
}

// isolate pads prod's dynamic shared memory so that no block of prod or cons
// fits on an SM beside a block of prod.
func isolate(info *device.Info, prod, cons *device.Launch) error {
	consShared := info.Resources(cons).Shared
	dyn, err := sharedFor(info, prod, max(info.SharedPerSM-consShared+1, info.SharedPerSM/2+1))
	if err != nil {
		return fmt.Errorf("producer_alone: %w", err)
	}
	prod.SharedMem = dyn
	if !alone(info, prod, cons) {
		return fmt.Errorf("producer_alone: kernel %s still shares an SM after padding its shared memory to %d bytes", prod.Kernel, dyn)
	}
	return nil
}

// alone reports whether an SM holding one block of prod has no room left,
// by any resource, for another block of prod or of cons.
func alone(info *device.Info, prod, cons *device.Launch) bool {
	p := info.Resources(prod)
	for _, other := range []*device.Launch{prod, cons} {
		o := info.Resources(other)
		fits := info.MaxBlocksPerSM >= 2 &&
			p.Threads+o.Threads <= info.MaxThreadsPerSM &&
			p.Warps+o.Warps <= info.MaxWarpsPerSM &&
			p.Registers+o.Registers <= info.RegistersPerSM &&
			p.Shared+o.Shared <= info.SharedPerSM
		if fits {
			return false
		}
	}
	return true
}

// shaping reports whether opt pads any launch.
func (o Options) shaping() bool { return o.BlocksPerSM > 0 || o.ProducerAlone }

// shapePair applies BlocksPerSM to both launches of a synchronized pair,
// then ProducerAlone to the producer.
func (o Options) shapePair(info *device.Info, prod, cons *device.Launch) error {
	if o.BlocksPerSM > 0 {
		for _, l := range []*device.Launch{prod, cons} {
			if err := capBlocks(info, l, o.BlocksPerSM); err != nil {
				return err
			}
		}
	}
	if o.ProducerAlone {
		return isolate(info, prod, cons)
	}
	return nil
}
