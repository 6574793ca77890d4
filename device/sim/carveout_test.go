package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// hopperCarveout is H100's shared-memory capacities per SM, KiB.
var hopperCarveout = []int{0, 8, 16, 32, 64, 100, 132, 164, 196, 228}

// ownLaunch is one block of test.own of 128 threads, regs registers a
// thread, shared bytes of dynamic shared memory and flops (its model:
// 1000 ns + 1 ns a flop).
func ownLaunch(regs, shared int, flops float64) *device.Launch {
	return &device.Launch{Kernel: &device.Kernel{Module: "test", Name: "own", Regs: regs}, Grid: device.D1(1), Block: device.D1(128),
		SharedMem: shared, Work: device.Work{Flops: flops}}
}

// With Hopper's carve-out steps, the kernel that lands first on an idle
// SM sets its shared memory: an older block of 32 registers a thread
// without shared memory (1 KiB reserve, occupancy 16 by threads: 16 KiB)
// leaves no room for a younger one of 20000 bytes, which waits for the SM
// to empty and then runs alone; an older one of 255 registers (occupancy
// 2 by registers) with 20000 bytes (2 x 21024 bytes: the 64 KiB step)
// leaves 64 KiB - 21024 = 44512 bytes: a younger one of 20000 bytes
// co-runs, one of 50000 waits. Without the carve-out all co-run. The
// older: 21000 ns alone; the younger: 1000 ns alone.
func TestSharedCarveoutKeepsALaterKernelOffSMsItDoesNotFit(t *testing.T) {
	for _, tc := range []struct {
		olderRegs, olderShared, youngerShared int
		coRuns                                bool
	}{{32, 0, 20000, false}, {255, 20000, 20000, true}, {255, 20000, 50000, false}, {32, 0, 0, true}} {
		run := func(carve []int) (older, younger time.Duration) {
			d := rateDevice(t, oneSMProfile, 1, 0, 0)
			d.cfg.SM.SharedCarveoutKB = carve
			r := olderThenYounger(t, d, ownLaunch(tc.olderRegs, tc.olderShared, 20000), ownLaunch(32, tc.youngerShared, 0))
			return r.older, r.youngerEnd
		}
		offOlder, offYounger := run(nil)
		onOlder, onYounger := run(hopperCarveout)
		require.Less(t, offYounger, offOlder, "%+v: without the carve-out the younger ends inside the older", tc)
		assert.Equal(t, offOlder, onOlder, "%+v: the older is placed first either way", tc)
		if tc.coRuns {
			assert.Equal(t, offYounger, onYounger, "%+v", tc)
			continue
		}
		assert.Equal(t, onOlder+1000*time.Nanosecond, onYounger, "%+v: the younger starts as the older ends and runs 1000 ns alone", tc)
	}
}

// A carve-out step must be ascending and within the SM's shared memory.
func TestSharedCarveoutStepsAreChecked(t *testing.T) {
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.SM.SharedCarveoutKB = []int{0, 8, 8}
	assert.ErrorContains(t, cfg.check(), "sm.shared_carveout_kb")
	cfg.SM.SharedCarveoutKB = []int{0, 300}
	assert.ErrorContains(t, cfg.check(), "above info.shared_per_sm")
	cfg.SM.SharedCarveoutKB = hopperCarveout
	assert.NoError(t, cfg.check())
}
