package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// loadRuns is a base profile of a memory-bound kernel (0.01 ns per byte:
// 100 bytes per ns a block; measured at 16 blocks of 1 MB) and a run of it at 8, 32 and 64 blocks of
// the same 16 MB whose times follow sm.load_bandwidth b (bytes per
// second) exactly, with a compute-bound kernel beside (no bytes term: its
// launches scale per block whatever b).
func loadRuns(b float64) (*sim.Profile, *sim.Profile) {
	point := func(grid int, bytes, ns float64) sim.ProfilePoint {
		return sim.ProfilePoint{Grid: grid, Threads: 256, PerSM: 8, Bytes: bytes, Flops: bytes, Launches: 1, Ns: []float64{ns + 1000}}
	}
	mem := sim.BlockModel{NsPerByte: 0.01}
	comp := sim.BlockModel{NsPerFlop: 0.5}
	base := &sim.Profile{Device: "GPU", SMs: 132, BackToBackNs: 1000, Kernels: []sim.KernelProfile{
		{Kernel: "test.mem", Model: mem, Points: []sim.ProfilePoint{point(16, 1e6, 1e4)}},
		{Kernel: "test.comp", Model: comp, Points: []sim.ProfilePoint{point(16, 1e6, 5e5)}},
	}}
	ref := 16 * 1e6 / 1e4 // the 16-block point's demand, bytes per ns
	run := &sim.Profile{Device: "GPU", SMs: 132, BackToBackNs: 1000, Kernels: []sim.KernelProfile{{Kernel: "test.mem"}, {Kernel: "test.comp"}}}
	for _, g := range []int{8, 32, 64} {
		bytes := 16e6 / float64(g)
		demand := float64(g) * 100 // each block 100 bytes per ns alone
		run.Kernels[0].Points = append(run.Kernels[0].Points, point(g, bytes, 0.01*bytes*sim.LoadStretch(1, demand, sim.LoadRef(demand, ref, ref), b/1e9)))
		run.Kernels[1].Points = append(run.Kernels[1].Points, point(g, bytes, bytes/2))
	}
	return base, run
}

func TestFitLoadBandwidthRecoversItsBandwidth(t *testing.T) {
	base, run := loadRuns(4e12)
	groups, err := LoadGroups(base, []*sim.Profile{run}, []string{"run.yaml"})
	require.NoError(t, err)
	require.Len(t, groups, 2)
	assert.Equal(t, []int{8, 32, 64}, groups[0].Grids)
	assert.InDelta(t, 1.0, groups[0].Share, 1e-12)
	assert.Zero(t, groups[1].Share, "no bytes term")
	best, fits := FitLoadBandwidth(groups)
	assert.InDelta(t, 4e12, best.Bandwidth, 0.05*4e12, "the nearest candidate")
	assert.Less(t, best.RMSPct, 0.5)
	assert.Equal(t, 6, best.Launches)
	require.Equal(t, 0.0, fits[0].Bandwidth)
	assert.Greater(t, fits[0].RMSPct, 5.0, "off, the 64-block launch runs per-block scaling's time")
}

func TestLoadGroupsNeedBlockCounts(t *testing.T) {
	base, run := loadRuns(4e12)
	for i := range run.Kernels {
		run.Kernels[i].Points = run.Kernels[i].Points[:1]
	}
	_, err := LoadGroups(base, []*sim.Profile{run}, []string{"run.yaml"})
	require.ErrorContains(t, err, "two or more block counts")
	other := *run
	other.SMs = 108
	_, err = LoadGroups(base, []*sim.Profile{&other}, []string{"a100.yaml"})
	require.ErrorContains(t, err, "a100.yaml is of GPU (108 SMs)")
}
