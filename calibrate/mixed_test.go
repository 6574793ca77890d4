package calibrate

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/synthetic"
)

// A grid is cut to exactly n blocks without growing in any dimension: 48x4
// to 132 is 44x3 (132 = 44 x 3, 44 <= 48, 3 <= 4); 10x10 has no such cut
// (132's divisors up to 10 leave a y over 10); a 1-D grid of 100 is too
// small, a 3-D one is never cut.
func TestCutGrid(t *testing.T) {
	g, ok := cutGrid(device.D2(48, 4), 132)
	require.True(t, ok)
	assert.Equal(t, device.D2(44, 3), g)
	g, ok = cutGrid(device.D1(4224), 528)
	require.True(t, ok)
	assert.Equal(t, device.D1(528), g)
	_, ok = cutGrid(device.D2(10, 10), 132)
	assert.False(t, ok)
	_, ok = cutGrid(device.D1(100), 132)
	assert.False(t, ok)
	_, ok = cutGrid(device.Dim3{X: 200, Y: 1, Z: 2}, 132)
	assert.False(t, ok)
}

// Blocks per SM are lowered, the larger first, until both fit: on an SM of
// 2048 threads, 2 blocks of 1024 and 4 of 512 (4096 threads) become 1 and 2
// (2048); two blocks of 64 KB of shared memory on a 100 KB SM never fit.
func TestFitTogether(t *testing.T) {
	info := &device.Info{MaxThreadsPerSM: 2048, MaxWarpsPerSM: 64, MaxBlocksPerSM: 32, RegistersPerSM: 65536,
		RegAllocUnit: 256, SharedPerSM: 100 << 10, WarpSize: 32}
	big := &device.Launch{Block: device.D1(1024)}
	small := &device.Launch{Block: device.D1(512)}
	a, b, ok := fitTogether(info, big, small, 2, 4)
	require.True(t, ok)
	assert.Equal(t, [2]int{1, 2}, [2]int{a, b})
	fat := &device.Launch{Block: device.D1(32), SharedMem: 64 << 10}
	_, _, ok = fitTogether(info, fat, fat, 1, 1)
	assert.False(t, ok)
}

func stampBytes(recs ...stampRecord) []byte {
	b := make([]byte, 24*len(recs))
	for i, r := range recs {
		binary.LittleEndian.PutUint64(b[24*i:], r.sm)
		binary.LittleEndian.PutUint64(b[24*i+8:], r.start)
		binary.LittleEndian.PutUint64(b[24*i+16:], r.end)
	}
	return b
}

// A shadow pair's stamps: SM 0 holds a block of each resident together
// (a 0-100, b 50-150), SM 1 one of each one after the other (a ends at
// 100 when b starts), SM 2 only a's second block: of 3 SMs, 1 held both;
// a has 1 block on every SM, b none on SM 2.
func TestShadowResidency(t *testing.T) {
	a, ok := parseStamps(stampBytes(stampRecord{0, 0, 100}, stampRecord{1, 0, 100}, stampRecord{2, 10, 90}), 3)
	require.True(t, ok)
	b, ok := parseStamps(stampBytes(stampRecord{0, 50, 150}, stampRecord{1, 100, 200}), 2)
	require.True(t, ok)
	res := shadowResidency(a, b, 3)
	assert.Equal(t, MixedResidency{Source: "shadow", BothSMs: 1, SMs: 3, MinPerSM: [2]int{1, 0}, MaxPerSM: [2]int{1, 1}}, res)
	_, ok = parseStamps(make([]byte, 48), 2)
	assert.False(t, ok, "no block wrote a stamp (the simulator)")
}

// The spinner's stamps, the other kernel's span 9 us: SM 0's block runs
// from the release (1000) to 11000, covering it; SM 1's starts 3 us late;
// SM 2's ends 4 us after the release; SM 0 holds 2 spinner blocks.
func TestSpinnerResidency(t *testing.T) {
	recs := []stampRecord{{0, 1000, 11000}, {0, 1500, 9000}, {1, 4000, 30000}, {2, 2500, 5000}}
	res := spinnerResidency(recs, 3, 9000, 1)
	assert.Equal(t, MixedResidency{Source: "stamp", BothSMs: 1, SMs: 3, MinPerSM: [2]int{0, 1}, MaxPerSM: [2]int{0, 2}}, res)
}

// On the simulator, with only synthetic DAG nodes (264 blocks of 128
// threads: two per SM, since four would need 528) the probe pairs the node
// beside itself and beside the spinner both ways; each kernel's span
// beside the other over its span alone is its slowdown, together is the
// later of the two, the spinner spins twice its partner's time alone, and
// no stamps come back (the simulator runs no kernel code). The other four
// kinds are noted as missing.
func TestMixedCoResidencyOnSim(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	prog, err := synthetic.Generate(synthetic.Params{Layers: 1, Width: 2, FanIn: 2, MinBlocks: 264, MaxBlocks: 264, Threads: 128, Iters: 64, Steps: 1}, 1)
	require.NoError(t, err)
	rep, err := MixedCoResidency(mustSim(t, cfg), []*workloads.Program{prog}, "test", nil)
	require.NoError(t, err)
	require.Len(t, rep.Kernels, 2)
	assert.Equal(t, "synth", rep.Kernels[0].Class)
	assert.Equal(t, 264, rep.Kernels[0].Grid)
	assert.Len(t, rep.Notes, 4)
	require.Len(t, rep.Pairs, 3)
	var order []string
	for _, p := range rep.Pairs {
		order = append(order, p.A+"+"+p.B)
		require.Len(t, p.Together, 3)
		for r := range p.Together {
			assert.Equal(t, max(p.WithA[r], p.WithB[r]), p.Together[r])
		}
		assert.InDelta(t, stats.Median(p.WithA)/stats.Median(p.AloneA), p.Slowdown[0], 1e-12)
		assert.Equal(t, "none", p.Residency.Source)
	}
	assert.Equal(t, []string{"synth+synth", "synth+spin", "spin+synth"}, order)
	self, spinAfter, spinFirst := rep.Pairs[0], rep.Pairs[1], rep.Pairs[2]
	assert.Equal(t, [2]int{2, 2}, self.PerSM)
	assert.Equal(t, [2]int{2, 4}, spinAfter.PerSM)
	assert.Equal(t, max(mixedSpinMin, 2*spinAfter.AloneA[0]), spinAfter.SpinNs, "measured in the warm-up, the same on the simulator")
	assert.GreaterOrEqual(t, stats.Median(spinAfter.AloneB), spinAfter.SpinNs)
	assert.GreaterOrEqual(t, stats.Median(spinFirst.AloneA), spinFirst.SpinNs)
}

// synth_node's element count follows the cut grid (one element a thread,
// as its Work assumes); the spinner's spin and stamp buffer are its
// arguments and its Work is the spin in SM cycles.
func TestMixedSized(t *testing.T) {
	m := &mixedRun{c: &calibrator{info: device.Info{SMs: 132, ClockHz: 2e9}}}
	k := &device.Kernel{Module: "synthetic", Name: "synth_node"}
	base := device.Launch{Kernel: k, Grid: device.D1(4224), Block: device.D1(128),
		Args: []device.Arg{device.I32(1), device.I32(4224 * 128), device.I32(64)}}
	l, ok := m.sized(&mixedLaunch{k: MixedKernel{Kernel: "synthetic.synth_node"}, base: base}, 4, 0, device.Buffer{})
	require.True(t, ok)
	assert.Equal(t, device.D1(528), l.Grid)
	assert.Equal(t, device.I32(528*128), l.Args[1])
	assert.Equal(t, device.I32(4224*128), base.Args[1], "the program's launch is left as it was")
	spin, ok := m.sized(&mixedLaunch{k: MixedKernel{Class: "spin"}, base: device.Launch{Block: device.D1(128)}}, 2, 30e3, device.Buffer{})
	require.True(t, ok)
	assert.Equal(t, device.D1(264), spin.Grid)
	assert.Equal(t, device.U64(30000), spin.Args[0])
	assert.Equal(t, 60e3, spin.Work.Cycles)
}

// The weight of a younger kernel's warps, fitted back: a simulated probe
// at weight 0.4 (the rate model on) taken as the measurement, the fit
// over 0.2, 0.4 and 1 picks 0.4 with no error, and the others err (the
// older synth_node is slowed less at a lower weight).
func TestFitMixedFitsTheYoungerWeightBack(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	prog, err := synthetic.Generate(synthetic.Params{Layers: 1, Width: 2, FanIn: 2, MinBlocks: 264, MaxBlocks: 264, Threads: 128, Iters: 1024, Steps: 1}, 1)
	require.NoError(t, err)
	probe := func(w float64) (*MixedReport, error) {
		c := *cfg
		c.SM.RetimeThreshold, c.SM.YoungerKernelWeight = 0.001, w
		return MixedCoResidency(mustSim(t, &c), []*workloads.Program{prog}, "test", nil)
	}
	gpu, err := probe(0.4)
	require.NoError(t, err)
	best, fits, err := FitMixed(gpu, []float64{0.2, 0.4, 1}, probe)
	require.NoError(t, err)
	assert.Equal(t, 0.4, best)
	require.Len(t, fits, 3)
	assert.Equal(t, 0.0, fits[1].RMSPct)
	assert.Equal(t, 4, fits[1].Slowdowns, "synth beside synth (both sides) and beside the spinner (either order); not the spinner's own")
	assert.Greater(t, fits[0].RMSPct, 0.5)
	assert.Greater(t, fits[2].RMSPct, 0.5)
}

// The pairs that did not co-run (stamps: no SM held both) enter the
// serial error by their second kernel's slowdown, the others do not: conv
// then gemm measured 1.44x, simulated 1.2x: |log(1.2/1.44)| = 18.2%; a
// pair that co-ran, and one whose second kernel is the spinner, are left
// out.
func TestMixedSerialErrorTakesThePairsThatDidNotCoRun(t *testing.T) {
	apart := MixedResidency{Source: "shadow", BothSMs: 0, SMs: 132}
	both := MixedResidency{Source: "shadow", BothSMs: 132, SMs: 132}
	gpu := &MixedReport{Pairs: []MixedPair{
		{A: "conv", B: "gemm", Slowdown: [2]float64{1.07, 1.44}, Residency: apart},
		{A: "gemm", B: "conv", Slowdown: [2]float64{1.04, 1.34}, Residency: both},
		{A: "gemm", B: mixedClass, Slowdown: [2]float64{1.2, 1}, Residency: apart},
	}}
	sim := &MixedReport{Pairs: []MixedPair{
		{A: "conv", B: "gemm", Slowdown: [2]float64{1, 1.2}},
		{A: "gemm", B: "conv", Slowdown: [2]float64{1, 1}},
		{A: "gemm", B: mixedClass, Slowdown: [2]float64{1, 2}},
	}}
	rms, n, err := MixedSerialError(gpu, sim)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.InDelta(t, 18.23, rms, 0.01)
	_, _, err = MixedSerialError(gpu, &MixedReport{})
	assert.ErrorContains(t, err, "no slowdown of gemm beside conv")
}

// A spinner with shared memory (--spin-shared 70000) joins the probe as
// spin70k: 71024 bytes a block, occupancy 3 by shared memory (1 per SM in
// a pair), paired with the node and the plain spinner both ways (not with
// itself). On the h100 config's carve-out, the plain spinner (no shared
// memory, occupancy 16: 16 KiB) sets its SMs' carve-out, so spin70k after
// it waits for the SMs to empty (overlap near 0), where the plain spinner
// after the node co-runs with it (overlap near 1).
func TestMixedCoResidencySpinnerWithSharedMemory(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	require.NotEmpty(t, cfg.SM.SharedCarveoutKB)
	prog, err := synthetic.Generate(synthetic.Params{Layers: 1, Width: 2, FanIn: 2, MinBlocks: 264, MaxBlocks: 264, Threads: 128, Iters: 64, Steps: 1}, 1)
	require.NoError(t, err)
	rep, err := MixedCoResidency(mustSim(t, cfg), []*workloads.Program{prog}, "test", nil, 70000)
	require.NoError(t, err)
	require.Len(t, rep.Kernels, 3)
	sh := rep.Kernels[2]
	assert.Equal(t, "spin70k", sh.Class)
	assert.Equal(t, 70000, sh.Shared)
	assert.Equal(t, 3, sh.Occupancy)
	var order []string
	for _, p := range rep.Pairs {
		order = append(order, p.A+"+"+p.B)
	}
	assert.Equal(t, []string{"synth+synth", "synth+spin", "synth+spin70k", "spin+synth", "spin+spin70k", "spin70k+synth", "spin70k+spin"}, order)
	assert.Equal(t, [2]int{2, 1}, rep.Pairs[2].PerSM)
	apart, together := rep.Pairs[4], rep.Pairs[1]
	assert.Equal(t, [2]int{4, 1}, apart.PerSM)
	assert.Less(t, apart.Overlap, 0.2, "spin70k starts as the spinner's SMs empty")
	assert.Greater(t, together.Overlap, 0.8, "the plain spinner co-runs with the node")
}

// --spin-shared's spinner classes count as spinners: not in the fit.
func TestSpinnersWithSharedMemoryAreSpinners(t *testing.T) {
	assert.True(t, isSpinner("spin"))
	assert.True(t, isSpinner("spin70k"))
	assert.False(t, isSpinner("synth"))
	assert.False(t, mixedTimed("spin20k"))
}
