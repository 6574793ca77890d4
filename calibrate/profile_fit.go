package calibrate

import (
	"fmt"
	"math"
	"sort"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
)

// FitProfile fits every kernel's block model to its points (replacing
// models already there) and the profile's default warp slope. The fit,
// for one kernel:
//
//  1. Each point's kernel duration is its median per-launch time less the
//     profile's back-to-back gap. A lone launch on S SMs holding k blocks
//     per SM runs in waves: G/(kS) full ones of k blocks per SM, then one
//     of ceil(rest/S); every block of a wave lasts the lone time T times
//     the co-residency factor at its SM's warps, and the kernel ends with
//     its last wave, as the simulator schedules it.
//  2. The co-residency curve comes from the forced-occupancy sweeps: at
//     one block per SM every wave is T, which gives T; each higher k then
//     gives its factor, the earlier ones known. Of several launches'
//     sweeps, the one with the longest blocks gives the curve (the
//     shortest block's floor hides co-residency in short blocks); the
//     others add only warps it did not reach. A wave's co-residency is its
//     busiest SM's warps and the GPU's mean warps per SM, weighted by the
//     model's gpu_share, which is chosen (0 to 1 in tenths) for the
//     smallest mean error over the kernel's points, the grids that leave
//     SMs unevenly loaded telling the two apart.
//  3. T against Work is fitted by non-negative least squares on relative
//     error, over each point's T (its duration over the sum of its waves'
//     factors), with the fewest of the terms (a constant, Cycles, Flops,
//     Bytes) that fit within 2 points of percent of the best, a Work term
//     in place of a constant that it ties (workOverConstant); with a single
//     Work size, T is proportional to Flops when the launch does more than
//     10 flops per byte, else to Bytes (else Cycles, else constant). A
//     model of Cycles alone whose points span less than twice their
//     fewest Cycles, on a profile whose clock is known, costs a cycle the
//     clock period and fits the constant (clockCycles).
//  4. A launch whose bytes (blocks x Bytes) exceed the effective L2 pays
//     ns_per_byte_beyond_l2 more per byte; with the device's L2 known, the
//     effective L2 is fitted (fitL2).
//  5. The neighbor rule that corrects the model for launches without a
//     point (sim.NeighborLogRatio) is chosen per kernel (fitNeighbors), and
//     the fallback's error on shapes left out recorded (CrossValidate).
//
// The fit error is each point's predicted per-launch time against its
// median sample.
func FitProfile(p *sim.Profile) error {
	var slopes []float64
	for i := range p.Kernels {
		k := &p.Kernels[i]
		if len(k.Points) == 0 {
			return fmt.Errorf("profile: kernel %s has no points", k.Kernel)
		}
		slopes = append(slopes, curveSlopes(coresidency(p, k.Points, 0))...)
	}
	p.DefaultWarpSlope = 0
	if len(slopes) > 0 {
		p.DefaultWarpSlope = math.Round(max(0, stats.Median(slopes))*1e5) / 1e5
	}
	fitL2(p)
	for i := range p.Kernels {
		k := &p.Kernels[i]
		fitNeighbors(p, k)
		fitCold(p, k)
		if cv, ok := crossValidateKernel(p, k, cvFolds); ok {
			k.Fit.CVMedianPct, k.Fit.CVMaxPct = round2(cv.Fallback.Median), round2(cv.Fallback.Max)
		}
	}
	return nil
}

// cvFolds is the folds of the cross-validated fit errors.
const cvFolds = 10

// fitL2 fits every kernel, and with the device's L2 size known, the
// effective L2 (how many of a launch's bytes the L2 holds before they
// come from device memory) among eighths of it up to one and a half L2s:
// the one with the smallest mean error over the kernels' points.
func fitL2(p *sim.Profile) {
	fitAll := func() float64 {
		e, n := 0.0, 0
		for i := range p.Kernels {
			k := &p.Kernels[i]
			fitKernel(p, k)
			for j := range k.Points {
				e += math.Abs(predict(p, &k.Model, &k.Points[j])/k.Points[j].Median() - 1)
				n++
			}
		}
		return e / float64(max(n, 1))
	}
	p.EffectiveL2Bytes = 0
	if p.L2Bytes <= 0 {
		fitAll()
		return
	}
	best, bestErr := int64(0), fitAll()
	for eighths := int64(1); eighths <= 12; eighths++ {
		p.EffectiveL2Bytes = p.L2Bytes * eighths / 8
		if e := fitAll(); e < bestErr-1e-4 {
			best, bestErr = p.EffectiveL2Bytes, e
		}
	}
	p.EffectiveL2Bytes = best
	fitAll()
}

// fitKernel fits k's model at every gpu_share from 0 to 1 in tenths and
// keeps the one with the smallest mean error (the smaller share within
// 0.1 points of percent).
func fitKernel(p *sim.Profile, k *sim.KernelProfile) {
	var best sim.BlockModel
	bestErr := math.Inf(1)
	for i := 0; i <= 10; i++ {
		m := sim.BlockModel{GPUShare: float64(i) / 10}
		m.CoResidency = coresidency(p, k.Points, m.GPUShare)
		fitBase(p, k.Points, &m)
		e := 0.0
		for j := range k.Points {
			e += math.Abs(predict(p, &m, &k.Points[j])/k.Points[j].Median()-1) * 100
		}
		if e /= float64(len(k.Points)); e < bestErr-0.1 {
			best, bestErr = m, e
		}
	}
	k.Model = rounded(best)
	k.Fit = fitError(p, k)
}

// rounded keeps 4 significant digits of a model's figures (the fit is
// not better than that), so profiles read well.
func rounded(m sim.BlockModel) sim.BlockModel {
	sig := sig4
	m.Ns, m.NsPerCycle, m.NsPerFlop, m.NsPerByte = sig(m.Ns), sig(m.NsPerCycle), sig(m.NsPerFlop), sig(m.NsPerByte)
	m.NsPerByteBeyondL2 = sig(m.NsPerByteBeyondL2)
	for i := range m.CoResidency {
		m.CoResidency[i].Factor = sig(m.CoResidency[i].Factor)
	}
	return m
}

// sweepKey groups the points of one launch measured at several
// occupancies.
type sweepKey struct {
	grid, threads        int
	cycles, flops, bytes float64
	scalars              string
}

// coresidency derives the co-residency curve from the kernel's sweeps,
// under a gpu share.
func coresidency(p *sim.Profile, pts []sim.ProfilePoint, share float64) []sim.CoResidencyPoint {
	groups := map[sweepKey][]*sim.ProfilePoint{}
	var keys []sweepKey
	for i := range pts {
		pt := &pts[i]
		key := sweepKey{pt.Grid, pt.Threads, pt.Cycles, pt.Flops, pt.Bytes, pt.Scalars}
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], pt)
	}
	// The sweep of the longest blocks first: the shortest block's floor
	// hides co-residency in short ones, which fill in only warps the
	// longer ones did not reach.
	sort.SliceStable(keys, func(i, j int) bool { return loneOf(p, groups[keys[i]]) > loneOf(p, groups[keys[j]]) })
	factors := map[int]float64{}
	for _, key := range keys {
		for w, f := range sweepCurve(p, groups[key], share) {
			if _, ok := factors[w]; !ok {
				factors[w] = f
			}
		}
	}
	var curve []sim.CoResidencyPoint
	for w, f := range factors {
		curve = append(curve, sim.CoResidencyPoint{Warps: w, Factor: max(f, 0.05)})
	}
	sort.Slice(curve, func(i, j int) bool { return curve[i].Warps < curve[j].Warps })
	if len(curve) < 2 {
		return nil
	}
	return curve
}

// sweepCurve solves one launch's sweep for the factor at each occupancy,
// in warps; empty without a one-block-per-SM point or a second occupancy.
func sweepCurve(p *sim.Profile, pts []*sim.ProfilePoint, share float64) map[int]float64 {
	byK := map[int]*sim.ProfilePoint{}
	var ks []int
	for _, pt := range pts {
		if byK[pt.PerSM] == nil {
			ks = append(ks, pt.PerSM)
		}
		byK[pt.PerSM] = pt
	}
	sort.Ints(ks)
	one := byK[1]
	if one == nil || len(ks) < 2 || one.Grid <= p.SMs {
		return nil
	}
	wb := sim.PointWarps(one.Threads)
	lone := p.LoneNs(&sim.BlockModel{}, one)
	known := map[int]float64{1: 1} // factor by blocks per SM
	for _, k := range ks[1:] {
		ws := sim.Waves(one.Grid, k, p.SMs)
		if len(ws) == 0 || ws[0].Blocks != k {
			continue // a single partial wave: k never reached
		}
		rest := (p.DurationNs(byK[k]) - float64(ws[len(ws)-1].Total)*p.BlockDispatchNs) / lone
		eff := 0.0
		if len(ws) == 2 {
			eff = ws[1].Effective(share, p.SMs)
		}
		known[k] = solveFullWave(known, k, rest, ws[0].Count, len(ws) == 2, eff)
	}
	out := map[int]float64{}
	for k, f := range known {
		out[k*wb] = f
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// solveFullWave is the factor f at k blocks per SM of a launch whose
// waves (count full ones of k, then perhaps a partial one of co-residency
// eff, Effective) last rest lone block times: rest = count x f + the
// partial wave's factor. A partial wave's co-residency beyond the
// largest known occupancy lo below k lies between lo and k, so its
// factor is interpolated between known[lo] and f itself, as the
// simulator's curve will: with t = (eff - lo) / (k - lo), rest = count x
// f + (1 - t) known[lo] + t f. (Taking the partial wave at known[lo], a
// flat extrapolation, charges the full waves with its co-residency:
// tiles_gemm_128x128's sweep of 480 blocks gave 1.77 at 2 blocks per SM
// where its own points say about 1.4.)
func solveFullWave(known map[int]float64, k int, rest float64, count int, partial bool, eff float64) float64 {
	if !partial {
		return rest / float64(count)
	}
	lo := 0
	for b := range known {
		if b < k && b > lo {
			lo = b
		}
	}
	if eff <= float64(lo) {
		return (rest - interpolate(known, eff)) / float64(count)
	}
	t := min((eff-float64(lo))/float64(k-lo), 1)
	return (rest - (1-t)*known[lo]) / (float64(count) + t)
}

// loneOf is a sweep's lone block time: its one-block-per-SM point's
// duration per wave (0 without one).
func loneOf(p *sim.Profile, pts []*sim.ProfilePoint) float64 {
	for _, pt := range pts {
		if pt.PerSM == 1 {
			return p.LoneNs(&sim.BlockModel{}, pt)
		}
	}
	return 0
}

// interpolate is the factor at b blocks per SM from the known ones,
// linear between them and flat beyond.
func interpolate(known map[int]float64, b float64) float64 {
	lo, hi := 0, 0
	for k := range known {
		if float64(k) <= b && k > lo {
			lo = k
		}
		if float64(k) >= b && (hi == 0 || k < hi) {
			hi = k
		}
	}
	switch {
	case lo == 0:
		return known[hi]
	case hi == 0, hi == lo:
		return known[lo]
	}
	t := (b - float64(lo)) / float64(hi-lo)
	return known[lo] + t*(known[hi]-known[lo])
}

// curveSlopes is each curve point's growth per warp beyond the first.
func curveSlopes(c []sim.CoResidencyPoint) []float64 {
	var out []float64
	for _, pt := range c[min(1, len(c)):] {
		out = append(out, (pt.Factor/c[0].Factor-1)/float64(pt.Warps-c[0].Warps))
	}
	return out
}

// predict is a point's per-launch time under the model.
func predict(p *sim.Profile, m *sim.BlockModel, pt *sim.ProfilePoint) float64 {
	lone := m.Lone(&device.Work{Cycles: pt.Cycles, Flops: pt.Flops, Bytes: pt.Bytes}, beyondL2(p, pt))
	return p.BackToBackNs + p.KernelNs(m, pt, lone)
}

// fitError compares every point's prediction with its median.
func fitError(p *sim.Profile, k *sim.KernelProfile) sim.FitError {
	var errs, spreads []float64
	worst := 0.0
	for i := range k.Points {
		pt := &k.Points[i]
		e := math.Abs(predict(p, &k.Model, pt)/pt.Median()-1) * 100
		errs = append(errs, e)
		worst = max(worst, e)
		spreads = append(spreads, pt.Spread()*100)
	}
	return sim.FitError{Points: len(k.Points), MedianPct: round2(stats.Median(errs)), MaxPct: round2(worst), SpreadPct: round2(stats.Median(spreads))}
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
