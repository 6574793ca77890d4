package rl

import "github.com/gpusched/gpusched/device"

// perThread is what one thread of a kernel costs, for the simulator: a
// fixed part and a part per loop trip (neighbours, gathered entries,
// particles of an environment). Cycles are the latency of one block's
// longest thread: each dependent global-memory round trip is counted at
// about 500 cycles (the load-to-use latency of recent NVIDIA GPUs), and
// arithmetic is negligible next to it at these sizes. Flops and bytes are
// counted from the kernel's loads, stores and arithmetic in rl.cu.
type perThread struct {
	cycles, flops, bytes          float64
	loopCycles, loopFlops, loopBy float64
	trips                         float64
}

func (w perThread) times(trips float64) perThread { w.trips = trips; return w }

func (w perThread) block(threads int) device.Work {
	t := float64(threads)
	return device.Work{
		Cycles: w.cycles + w.loopCycles*w.trips,
		Flops:  t * (w.flops + w.loopFlops*w.trips),
		Bytes:  t * (w.bytes + w.loopBy*w.trips),
	}
}

var (
	// load vel and act, store vel.
	wActuate = perThread{cycles: 1000, flops: 1, bytes: 12}
	// load pos and vel, store pos, prev, vel.
	wIntegrate = perThread{cycles: 1100, flops: 7, bytes: 60}
	// load the pair, then four particles; store a flag.
	wBroad = perThread{cycles: 1600, flops: 24, bytes: 80}
	// six stores.
	wClear = perThread{cycles: 600, bytes: 24}
	// load the list, then the particle and radius; store a record.
	wNarrowPlane = perThread{cycles: 1500, flops: 1, bytes: 48}
	// load the list, the pair, four particles; ~80 flops of closest points.
	wNarrowSeg = perThread{cycles: 2200, flops: 90, bytes: 108}
	// load list, contact, particle, prev, radius, mass; store a delta.
	wSolvePlane = perThread{cycles: 1800, flops: 40, bytes: 84}
	// per gathered entry: contact, pair, four particles and masses.
	wSolveSeg = perThread{cycles: 1500, bytes: 28, loopCycles: 900, loopFlops: 50, loopBy: 120}
	// per rod, one dependent round: indices and rest length (cached), both
	// ends' positions (just stored by this thread: an L2 round trip) and
	// masses, ~25 flops, two stores.
	wRods = perThread{cycles: 800, loopCycles: 450, loopFlops: 25, loopBy: 56}
	// load position and five deltas, store position.
	wApply = perThread{cycles: 1300, flops: 25, bytes: 104}
	// load pos and prev, store vel.
	wVelocity = perThread{cycles: 1100, flops: 9, bytes: 36}
	// per particle of the environment: position and velocity.
	wObserve = perThread{cycles: 1000, bytes: 16, loopCycles: 120, loopFlops: 4, loopBy: 16}
)
