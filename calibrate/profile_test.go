package calibrate

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
	"github.com/gpusched/gpusched/workloads"
)

// profileProgram is a program of two kernels at several sizes: a
// flop-bound one (test.fk) and a memory-bound one (test.bk), with grids
// below, at and above the H100's 132 SMs, and per-block work that differs
// with the grid.
func profileProgram(name string, grids []int, scale float64) *workloads.Program {
	fk := &device.Kernel{Module: "test", Name: "fk", Regs: 32}
	bk := &device.Kernel{Module: "test", Name: "bk", Regs: 32}
	p := &workloads.Program{Name: name, Buffers: []workloads.BufferSpec{{Name: "a", Bytes: 1 << 20}}}
	var ops []workloads.Op
	for i, g := range grids {
		f := scale * float64(1+i)
		ops = append(ops,
			workloads.Op{Name: "f", Kind: workloads.OpKernel, Kernel: fk, Grid: device.D1(g), Block: device.D1(128),
				Args: []workloads.ArgSpec{workloads.BufArg(0, device.ReadWrite)}, Work: device.Work{Flops: 2e5 * f, Bytes: 1e3 * f}},
			workloads.Op{Name: "b", Kind: workloads.OpKernel, Kernel: bk, Grid: device.D1(g), Block: device.D1(128),
				Args: []workloads.ArgSpec{workloads.BufArg(0, device.ReadWrite)}, Work: device.Work{Flops: 1e3 * f, Bytes: 2e5 * f}})
	}
	p.Steps = []workloads.Step{{Ops: ops}}
	return p
}

// Profiling the simulator and loading the result gives back the
// simulator's own times: every point, re-measured on a simulator that
// times the kernels from the profile (from their measured points), within
// 0.1% of what the Work estimate gave; and sizes never measured (from the
// fitted models), within 10%.
func TestProfilingTheSimulatorGivesBackItsTimes(t *testing.T) {
	profilesBack(t, 0)
}

// With a block distributor, the profile measures it and the shortest
// block apart. (The simulator's Work estimate then times memory-bound
// blocks by the residency when each pass places them, which staggered
// starts make uneven: its own times are not what a profile can give back
// point by point, so this checks the overheads.)
func TestProfilingMeasuresTheBlockDistributor(t *testing.T) {
	cfg := loadConfig(t, "h100-datasheet")
	cfg.FrontEnd.BlockDispatchNs = 0.6
	dev := mustSim(t, cfg)
	prof, _, err := ProfileKernels(dev, []*workloads.Program{profileProgram("measured", []int{64}, 1)}, ProfileOptions{Samples: 2})
	require.NoError(t, err)
	assert.InDelta(t, 0.6, prof.BlockDispatchNs, 0.01)
	assert.InDelta(t, cfg.FrontEnd.MinBlockNs, prof.MinBlockNs, 132*0.6)
	assert.InDelta(t, cfg.FrontEnd.BackToBackNs, prof.BackToBackNs, 132*0.6)
}

func profilesBack(t *testing.T, dispatch float64) {
	cfg := loadConfig(t, "h100-datasheet")
	cfg.FrontEnd.BlockDispatchNs = dispatch
	plain := mustSim(t, cfg)
	measured := []*workloads.Program{profileProgram("measured", []int{64, 132, 200, 264, 1056}, 1)}
	opt := ProfileOptions{Samples: 2}
	prof, sum, err := ProfileKernels(plain, measured, opt)
	require.NoError(t, err)
	assert.Equal(t, 10, sum.Distinct)
	assert.InDelta(t, cfg.FrontEnd.MinBlockNs, prof.MinBlockNs, 0.02*cfg.FrontEnd.MinBlockNs+132*dispatch)
	assert.InDelta(t, dispatch, prof.BlockDispatchNs, 0.02)
	assert.InDelta(t, cfg.FrontEnd.BackToBackNs, prof.BackToBackNs, 0.02*cfg.FrontEnd.BackToBackNs+132*dispatch)
	require.Len(t, prof.Kernels, 2)
	assert.Equal(t, "test.bk", prof.Kernels[0].Kernel)
	for _, k := range prof.Kernels {
		assert.GreaterOrEqual(t, len(k.Model.CoResidency), 3, "%s: swept over occupancies", k.Kernel)
		assert.Less(t, k.Fit.MaxPct, 3.0, "%s: fit error", k.Kernel)
	}
	profiled, err := sim.New(cfg, sim.WithProfile(prof))
	require.NoError(t, err)
	same := func(progs []*workloads.Program, tol float64, fromPoints bool) {
		want, _, err := ProfileKernels(plain, progs, opt)
		require.NoError(t, err)
		got, _, err := ProfileKernels(profiled, progs, opt)
		require.NoError(t, err)
		require.Equal(t, len(want.Kernels), len(got.Kernels))
		for i, k := range want.Kernels {
			require.Equal(t, len(k.Points), len(got.Kernels[i].Points))
			for j, pt := range k.Points {
				g := got.Kernels[i].Points[j]
				assert.InDelta(t, 0, math.Abs(g.Median()/pt.Median()-1), tol,
					"%s grid %d, %d per SM: %.0f ns from the profile, %.0f from the Work estimate", k.Kernel, pt.Grid, pt.PerSM, g.Median(), pt.Median())
			}
		}
		st := profiled.Stats()
		if fromPoints {
			assert.Positive(t, st.MeasuredLaunches)
			assert.Zero(t, st.ProfiledLaunches, "every launch measured is timed from its point")
		} else {
			assert.Positive(t, st.ProfiledLaunches)
			assert.Zero(t, st.MeasuredLaunches)
		}
	}
	same(measured, 0.001, true)
	same([]*workloads.Program{profileProgram("unmeasured", []int{100, 200, 800}, 2.5)}, 0.10, false)

	// The simulator's kernels run at its peak rates: the fitted achieved
	// fractions come out near 1.
	f := newFitted(cfg)
	f.fitFractions(prof)
	assert.InDelta(t, 1, f.Config.SM.FlopsFraction, 0.12)
	assert.InDelta(t, 1, f.Config.SM.BandwidthFraction, 0.12)
	assert.Contains(t, f.Comments["sm.achieved_flops_fraction"], "over the 2 profiled kernels")
}

func TestForcedOccupancies(t *testing.T) {
	assert.Equal(t, []int{1, 2, 3}, forcedOccupancies(4, 6))
	assert.Equal(t, []int{1, 2, 4, 6, 10, 15}, forcedOccupancies(16, 6))
	assert.Empty(t, forcedOccupancies(1, 6))
}

// A kernel timed by Cycles, measured over a narrow span of them, costs a
// cycle the clock period when the clock is known (the constant takes the
// rest of each block), so that longer blocks are not charged the fixed
// part of short ones; a wide span keeps the fitted cost per cycle.
func TestCyclesCostTheClockPeriodWhenTheirSpanIsNarrow(t *testing.T) {
	// One block per SM (one wave at its own occupancy): the duration is
	// the lone time, here 500 ns + cycles x perCycle.
	fitted := func(clock int64, perCycle float64, cycles ...float64) sim.BlockModel {
		k := sim.KernelProfile{Kernel: "test.ck", Regs: 16}
		for _, c := range cycles {
			k.Points = append(k.Points, sim.ProfilePoint{Grid: 132, Threads: 128, PerSM: 16, Cycles: c, Launches: 1,
				Ns: []float64{500 + c*perCycle}})
		}
		p := &sim.Profile{Device: "test", SMs: 132, ClockHz: clock, Kernels: []sim.KernelProfile{k}}
		require.NoError(t, FitProfile(p))
		return p.Kernels[0].Model
	}
	long := device.Work{Cycles: 10000}

	// 1,000 and 1,050 cycles at 2 GHz: cycles alone fit within 2 points
	// of percent (c = sum(x/y) / sum((x/y)^2) = 0.9878 ns a cycle), which
	// extrapolates to 9,878 ns at 10,000 cycles.
	m := fitted(0, 0.5, 1000, 1050)
	assert.Zero(t, m.Ns)
	assert.InDelta(t, 9878, m.Lone(&long, false), 1)

	m = fitted(2e9, 0.5, 1000, 1050)
	assert.InDelta(t, 0.5, m.NsPerCycle, 1e-9)
	assert.InDelta(t, 500, m.Ns, 0.5)
	assert.InDelta(t, 5500, m.Lone(&long, false), 1)

	// 1,000 to 4,000 cycles at 0.8 ns each: the points fit the cost per
	// cycle themselves, whatever the clock.
	m = fitted(2e9, 0.8, 1000, 4000)
	assert.InDelta(t, 0.8, m.NsPerCycle, 1e-3)
	assert.InDelta(t, 500, m.Ns, 1)
}

// Optional sizes whose programs would pass the bind budget are left out
// and counted as skipped (they used to vanish from the summary).
func TestBindBudgetDropsCountAsSkipped(t *testing.T) {
	dev, err := sim.NewNamed("h100-datasheet")
	require.NoError(t, err)
	// Each kernel's middle size is in "small" (measured); its other two
	// sizes only in "other", which a 1-byte bind budget leaves out.
	progs := []*workloads.Program{profileProgram("small", []int{64}, 1), profileProgram("other", []int{32, 96}, 1)}
	_, sum, err := ProfileKernels(dev, progs, ProfileOptions{Samples: 1, BindBytes: 1})
	require.NoError(t, err)
	assert.Equal(t, 4, sum.BindSkipped, "two sizes of each of the two kernels")
	assert.Equal(t, 4, sum.Skipped)
	assert.Equal(t, 2, sum.Points, "the middle sizes")

	pl := &planner{bytes: []int64{100, 200}, chosen: map[int]bool{}, bindBytes: 150, byProg: map[int][]task{}}
	a, b := &site{at: []opRef{{0, 0}}}, &site{at: []opRef{{1, 0}}}
	pl.add(task{s: a})                 // mandatory: binds program 0
	pl.add(task{s: b, optional: true}) // program 1 would pass the budget
	pl.add(task{s: a, optional: true}) // program 0 is bound already
	assert.Equal(t, 1, pl.dropped)
	assert.Len(t, pl.byProg[0], 2)
	assert.Empty(t, pl.byProg[1])
}

// MergeProfiles adds a later profile's points: a new point is added, one
// of the same launch and occupancy replaces the earlier, a new kernel
// comes whole; base's overheads stay; other devices are refused.
func TestMergeProfiles(t *testing.T) {
	pt := func(grid int, cycles, ns float64) sim.ProfilePoint {
		return sim.ProfilePoint{Grid: grid, Threads: 128, PerSM: 16, Cycles: cycles, Launches: 1, Ns: []float64{ns}}
	}
	base := &sim.Profile{Device: "GPU", SMs: 132, Source: "one", BackToBackNs: 2000, Kernels: []sim.KernelProfile{
		{Kernel: "m.a", Regs: 16, Points: []sim.ProfilePoint{pt(132, 1000, 3000), pt(264, 1000, 4000)}}}}
	add := &sim.Profile{Device: "GPU", SMs: 132, Source: "two", BackToBackNs: 1500, Kernels: []sim.KernelProfile{
		{Kernel: "m.a", Regs: 16, Points: []sim.ProfilePoint{pt(132, 1000, 3100), pt(132, 8000, 9000)}},
		{Kernel: "m.b", Regs: 32, Points: []sim.ProfilePoint{pt(132, 10, 2500)}}}}
	got, err := MergeProfiles(base, add)
	require.NoError(t, err)
	require.Len(t, got.Kernels, 2)
	assert.Equal(t, []sim.ProfilePoint{pt(132, 1000, 3100), pt(264, 1000, 4000), pt(132, 8000, 9000)}, got.Kernels[0].Points)
	assert.Equal(t, "m.b", got.Kernels[1].Kernel)
	assert.Equal(t, 2000.0, got.BackToBackNs, "base's overheads")
	assert.Contains(t, got.Source, "two")
	assert.Len(t, base.Kernels[0].Points, 2, "base is not changed")

	add.Kernels[0].Regs = 20
	_, err = MergeProfiles(base, add)
	assert.ErrorContains(t, err, "not the same build")
	add.SMs = 114
	_, err = MergeProfiles(base, add)
	assert.ErrorContains(t, err, "cannot merge a profile of GPU (114 SMs)")
}

// A 1x7 and a 7x1 convolution (the same kernel, grid and Work, other
// kernel-size arguments) are two launches to the profiler, measured as
// two points with their scalars (and one of a grid of the same blocks
// in another shape, the same point); a simulator given the profile times each
// from its own point. The points are set to what an H100 measured
// (mixed6e's 1x7 and 7x1 layers, 119.6 and 321.4 us), and re-profiling on
// that simulator gives each back; without its scalars a point times both.
func TestProfilerMeasuresEachScalarSignature(t *testing.T) {
	cfg := loadConfig(t, "h100-datasheet")
	plain := mustSim(t, cfg)
	conv := &device.Kernel{Module: "test", Name: "conv", Regs: 32}
	op := func(kh, kw int32) workloads.Op {
		return workloads.Op{Name: "c", Kind: workloads.OpKernel, Kernel: conv, Grid: device.D1(132), Block: device.D1(128),
			Args: []workloads.ArgSpec{workloads.BufArg(0, device.ReadWrite), workloads.Scalar32(kh), workloads.Scalar32(kw)},
			Work: device.Work{Flops: 1e6, Bytes: 1e4}}
	}
	// The third launch is the first's with its 132 blocks as 66x2: a point
	// records blocks, not their shape, so it is the same launch.
	same := op(1, 7)
	same.Grid = device.Dim3{X: 66, Y: 2, Z: 1}
	progs := []*workloads.Program{{Name: "mixed6e", Buffers: []workloads.BufferSpec{{Name: "a", Bytes: 1 << 20}},
		Steps: []workloads.Step{{Ops: []workloads.Op{op(1, 7), op(7, 1), same}}}}}
	opt := ProfileOptions{Samples: 1}
	prof, sum, err := ProfileKernels(plain, progs, opt)
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Distinct)
	out, err := prof.Marshal()
	require.NoError(t, err)
	_, err = sim.ParseProfile(out, "profile.yaml")
	require.NoError(t, err, "no launch measured twice")
	require.Len(t, prof.Kernels, 1)
	pts := prof.Kernels[0].Points
	require.Len(t, pts, 2)
	slices.SortFunc(pts, func(a, b sim.ProfilePoint) int { return strings.Compare(a.Scalars, b.Scalars) })
	assert.Equal(t, []string{"4:1 4:7", "4:7 4:1"}, []string{pts[0].Scalars, pts[1].Scalars})
	assert.Equal(t, pts[0].Median(), pts[1].Median(), "the simulator's Work estimate cannot tell them apart")

	b2b := prof.BackToBackNs
	pts[0].Ns, pts[1].Ns = []float64{b2b + 119600}, []float64{b2b + 321400}
	// remeasured profiles progs on a simulator with prof's kernel given
	// points (a new profile each time: a device indexes a profile's
	// points once) and returns each launch's median, by scalars.
	remeasured := func(points ...sim.ProfilePoint) map[string]float64 {
		p := *prof
		p.Kernels = []sim.KernelProfile{prof.Kernels[0]}
		p.Kernels[0].Points = points
		profiled, err := sim.New(cfg, sim.WithProfile(&p))
		require.NoError(t, err)
		got, _, err := ProfileKernels(profiled, progs, opt)
		require.NoError(t, err)
		out := map[string]float64{}
		for _, pt := range got.Kernels[0].Points {
			out[pt.Scalars] = pt.Median()
		}
		return out
	}
	got := remeasured(pts...)
	assert.InDelta(t, 1, got["4:1 4:7"]/(b2b+119600), 0.001, "1x7")
	assert.InDelta(t, 1, got["4:7 4:1"]/(b2b+321400), 0.001, "7x1")

	// An old profile's point, without scalars, matches both.
	old := pts[1]
	old.Scalars = ""
	got = remeasured(old)
	assert.InDelta(t, 1, got["4:1 4:7"]/(b2b+321400), 0.001, "1x7 from the point without scalars")
	assert.InDelta(t, 1, got["4:7 4:1"]/(b2b+321400), 0.001, "7x1 from the point without scalars")
}

// Merged points with scalars: the first replaces base's point of the
// same shape without scalars (it measured one of them), the next is
// added, and one with the same scalars replaces the earlier.
func TestMergeProfilesKeepsScalars(t *testing.T) {
	pt := func(scalars string, ns float64) sim.ProfilePoint {
		return sim.ProfilePoint{Grid: 132, Threads: 128, PerSM: 16, Flops: 1e6, Launches: 1, Ns: []float64{ns}, Scalars: scalars}
	}
	profile := func(pts ...sim.ProfilePoint) *sim.Profile {
		return &sim.Profile{Device: "GPU", SMs: 132, Kernels: []sim.KernelProfile{{Kernel: "nn.conv", Regs: 16, Points: pts}}}
	}
	got, err := MergeProfiles(profile(pt("", 3000)), profile(pt("4:1 4:7", 3100), pt("4:7 4:1", 3200)))
	require.NoError(t, err)
	assert.Equal(t, []sim.ProfilePoint{pt("4:1 4:7", 3100), pt("4:7 4:1", 3200)}, got.Kernels[0].Points)
	got, err = MergeProfiles(got, profile(pt("4:7 4:1", 3300)))
	require.NoError(t, err)
	assert.Equal(t, []sim.ProfilePoint{pt("4:1 4:7", 3100), pt("4:7 4:1", 3300)}, got.Kernels[0].Points)
}

// A direct convolution whose time per flop depends on its window's
// orientation (a 1x7 costs 1 ns a flop, a 7x1 3 ns; the Work is the same)
// defeats any model of Work alone; the neighbor rule finds the same
// orientation at the nearest input channels. One block per SM, so each
// point's duration is its lone time.
func TestNeighborsCorrectWhatWorkCannotTell(t *testing.T) {
	k := sim.KernelProfile{Kernel: "test.conv", Regs: 16}
	for _, cin := range []int32{4, 8, 16, 32, 64, 128, 256} {
		for _, win := range [][2]int32{{1, 7}, {7, 1}} {
			flops := 1000 * 7 * float64(cin)
			perFlop := 1.0
			if win[0] == 7 {
				perFlop = 3
			}
			sig := sim.ScalarSignature([]device.Arg{device.I32(cin), device.I32(win[0]), device.I32(win[1])})
			k.Points = append(k.Points, sim.ProfilePoint{Grid: 132, Threads: 128, PerSM: 16, Flops: flops, Launches: 1,
				Ns: []float64{flops * perFlop}, Scalars: sig})
		}
	}
	p := &sim.Profile{Device: "test", SMs: 132, Kernels: []sim.KernelProfile{k}}
	require.NoError(t, FitProfile(p))
	m := p.Kernels[0].Model
	require.Positive(t, m.Neighbors)
	assert.Greater(t, p.Kernels[0].Fit.MedianPct, 30.0, "Work alone cannot tell the windows apart")

	cvs := CrossValidate(p, 7)
	require.Len(t, cvs, 1)
	assert.Equal(t, 14, cvs[0].Shapes)
	assert.Greater(t, cvs[0].Model.Median, 30.0)
	assert.Less(t, cvs[0].Fallback.Median, 3.0)
	// Not every point: with 128 and 256 channels of the 1x7 left out, the
	// 256 one lies as far from the 64 (two doublings, in its channels and
	// again in its Work) as from its own size's 7x1, and takes their mean.
	assert.Less(t, cvs[0].Fallback.Mean, cvs[0].Model.Mean/4)
	assert.Greater(t, cvs[0].Fallback.Max, 50.0)

	// Two shapes are too few to choose a rule on.
	p.Kernels[0].Points = p.Kernels[0].Points[:2]
	require.NoError(t, FitProfile(p))
	assert.Zero(t, p.Kernels[0].Model.Neighbors)
}

// A host that enqueues a launch slower than the gate kernel hides (here
// 30 us a launch against the gate's 8 us) lets the GPU run dry, so that a
// sample times the host: the check takes it again behind a longer gate and
// the point gives the kernels' own time, which a fast host measures;
// without it (NoGateCheck) the point is most of the host's 30 us a launch.
func TestProfileSamplesTheHostStarvedTakesThemAgain(t *testing.T) {
	pointNs := func(launchNs float64, opt ProfileOptions) (float64, ProfileSummary) {
		cfg := loadConfig(t, "h100-datasheet")
		cfg.Host.LaunchNs = launchNs
		dev := mustSim(t, cfg)
		prof, sum, err := ProfileKernels(dev, []*workloads.Program{profileProgram("starved", []int{64}, 1)}, opt)
		require.NoError(t, err)
		for _, k := range prof.Kernels {
			if k.Kernel == "test.fk" {
				require.NotEmpty(t, k.Points)
				return stats.Median(k.Points[0].Ns), *sum
			}
		}
		require.Fail(t, "no point of test.fk")
		return 0, *sum
	}
	fast, fastSum := pointNs(4000, ProfileOptions{Samples: 3})
	assert.Zero(t, fastSum.Retaken, "a host faster than the gate takes no sample again")
	starved, sum := pointNs(30000, ProfileOptions{Samples: 3})
	assert.Positive(t, sum.Retaken)
	assert.InDelta(t, fast, starved, 0.02*fast, "the point once the gate outlasts the host")
	kept, keptSum := pointNs(30000, ProfileOptions{Samples: 3, NoGateCheck: true})
	assert.Zero(t, keptSum.Retaken)
	assert.Greater(t, kept, 4*fast, "without the check the point is about the host's launch interval, not the kernel's %.0f ns", fast)
}

// The rule's feature scales follow what the ratio follows. Two features,
// a size and a window kind: windows 0 at sizes 0, 2, ..., 14 (log ratio
// 0) and windows 1 at sizes 1, 3, ..., 15 (log ratio ln 2). Unscaled,
// every launch's nearest (d^2 = 1 + 1) are of the other kind, its own
// kind's two sizes away (d^2 = 4), so no setting predicts well. Halving
// the size's scale puts its own kind nearer (d^2 = 1 against 1.25), so
// the fit keeps the size below 1 and the window at 1 or more, and a
// launch's nearest is then of its own kind: at k = 1 and R = 8 a window-1
// launch is off by ln 2 x (1/64) / (1/1.01 + 1/64) < 0.011, a window-0
// launch by 0, so the mean error stays below 0.006.
func TestNeighborScalesFollowWhatTheRatioFollows(t *testing.T) {
	var ns []sim.Neighbor
	for s := 0; s < 16; s++ {
		win := float64(s % 2)
		ns = append(ns, sim.Neighbor{Features: []float64{float64(s), win}, LogRatio: win * math.Ln2, Shape: strconv.Itoa(s)})
	}
	lists := func(scales []float64) []sim.NearList {
		out := make([]sim.NearList, len(ns))
		for i := range ns {
			out[i] = sim.Nearest(ns, ns[i].Features, 8, ns[i].Shape, scales)
		}
		return out
	}
	unscaled, _, _ := bestNeighborSetting(ns, lists(nil))
	assert.Greater(t, unscaled, 0.1)
	scales := fitNeighborScales(ns)
	require.Len(t, scales, 2)
	assert.Less(t, scales[0], 1.0)
	assert.GreaterOrEqual(t, scales[1], 1.0)
	e, _, _ := bestNeighborSetting(ns, lists(scales))
	assert.Less(t, e, 0.006)
	for i := range ns {
		l := sim.Nearest(ns, ns[i].Features, 1, ns[i].Shape, scales)
		assert.InDelta(t, ns[i].LogRatio, l[0].LogRatio, 1e-12, "launch %d's nearest is of its kind", i)
	}
}

// A sweep whose higher occupancy ends with a partial wave: 14 blocks of 8
// warps on 4 SMs. At one block per SM, 4 waves of the lone time T = 1000
// ns: 4000 ns. At two, one full wave (8 blocks, factor f = 1.5) and a
// partial one of 6 blocks, two on its busiest SM: at gpu_share 0 its
// co-residency is 2 blocks, factor f too, so 2 x 1500 = 3000 ns; the fit
// gives f back. At gpu_share 0.5 the partial wave's co-residency is
// 0.5 x 2 + 0.5 x 6/4 = 1.75 blocks, factor 1 + 0.75 x (f - 1), and the
// same 3000 ns says f = (3 - 0.25) / 1.75 = 1.5714. (Taking the partial
// wave at one block's factor gave f = 2 from both.)
func TestCoResidencyOfSweepsWithAPartialWave(t *testing.T) {
	p := &sim.Profile{Device: "test", SMs: 4}
	pts := []sim.ProfilePoint{
		{Grid: 14, Threads: 256, PerSM: 1, Forced: true, Flops: 1, Launches: 1, Ns: []float64{4000}},
		{Grid: 14, Threads: 256, PerSM: 2, Flops: 1, Launches: 1, Ns: []float64{3000}},
	}
	assert.Equal(t, []sim.CoResidencyPoint{{Warps: 8, Factor: 1}, {Warps: 16, Factor: 1.5}}, coresidency(p, pts, 0))
	c := coresidency(p, pts, 0.5)
	require.Len(t, c, 2)
	assert.InDelta(t, 2.75/1.75, c[1].Factor, 1e-12)
	// The fitted model reproduces both points (share 0).
	m := sim.BlockModel{Ns: 1000, CoResidency: coresidency(p, pts, 0)}
	for i := range pts {
		assert.InDelta(t, pts[i].Ns[0], p.KernelNs(&m, &pts[i], 1000), 1e-9)
	}
}

// A cold profile of the simulator gives back its cold term: a device whose
// profile charges test.bk 0.005 ns per byte of a block that missed L2 is
// profiled with --cold-l2 (the eviction copy empties its L2 before each
// cold sample), and the fit finds that term again; test.fk, without one,
// gets none, and points without cold samples fit as before.
func TestColdProfileGivesBackTheColdTerm(t *testing.T) {
	cfg := loadConfig(t, "h100-datasheet")
	plain := mustSim(t, cfg)
	progs := []*workloads.Program{profileProgram("measured", []int{64, 132, 264}, 1)}
	warm, _, err := ProfileKernels(plain, progs, ProfileOptions{Samples: 2})
	require.NoError(t, err)
	require.Len(t, warm.Kernels, 2)
	for _, k := range warm.Kernels {
		assert.Zero(t, k.Model.ColdNsPerByte)
		assert.Zero(t, k.Fit.ColdPoints)
		assert.Empty(t, k.Points[0].ColdNs)
	}
	require.Equal(t, "test.bk", warm.Kernels[0].Kernel)
	warm.Kernels[0].Model.ColdNsPerByte = 0.005
	cold, err := sim.New(cfg, sim.WithProfile(warm))
	require.NoError(t, err)
	got, _, err := ProfileKernels(cold, progs, ProfileOptions{Samples: 2, ColdL2: true})
	require.NoError(t, err)
	require.Len(t, got.Kernels, 2)
	bk, fk := got.Kernels[0], got.Kernels[1]
	assert.Len(t, bk.Points[0].ColdNs, 2)
	assert.Len(t, bk.Points[0].RewarmNs, 2)
	assert.InDelta(t, 0.005, bk.Model.ColdNsPerByte, 0.0002)
	fits := 0 // points of launches within the L2: the others pay no cold term
	for _, pt := range bk.Points {
		if got.ColdShare(float64(pt.Grid)*pt.Bytes) > 0 {
			fits++
		}
	}
	assert.Positive(t, fits)
	assert.Less(t, fits, len(bk.Points), "some launches exceed the L2")
	assert.Equal(t, fits, bk.Fit.ColdPoints)
	assert.Less(t, bk.Fit.ColdMaxPct, 2.0)
	assert.Less(t, fk.Model.ColdNsPerByte, 1e-4, "no cold term on the device: none fitted")
}

// Cold points need the device's L2 size.
func TestColdProfileNeedsTheL2Size(t *testing.T) {
	cfg := loadConfig(t, "h100-datasheet")
	cfg.Info.L2Bytes = 0
	dev := mustSim(t, cfg)
	_, _, err := ProfileKernels(dev, []*workloads.Program{profileProgram("p", []int{64}, 1)}, ProfileOptions{Samples: 1, ColdL2: true})
	assert.ErrorContains(t, err, "cold-L2 points need the device's L2 size")
}
