package calibrate

import (
	"math"
	"slices"

	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
)

// fitCold fits k's cold term (BlockModel.ColdNsPerByte) from its points
// with cold samples (`gpusched profile --cold-l2`): a cold launch's time
// beyond the same single launch warm, median(cold_ns) - median(rewarm_ns),
// spread over its waves (blocks / (per_sm x SMs), rounded up), per byte
// of a block's Work, over the share of it the launch's size pays
// (sim.Profile.ColdShare; points of launches beyond the L2 are left out):
// the median of that ratio over the points, never
// negative. A latency-bound kernel (few blocks, each streaming its bytes)
// pays for every byte that misses L2; one bound by device memory
// bandwidth already pays HBM's rate warm and gets a term near 0. Its fit
// error is the cold launch time it predicts (rewarm + term) against the
// measured one. Without cold points the term and its errors are 0.
func fitCold(p *sim.Profile, k *sim.KernelProfile) {
	k.Model.ColdNsPerByte = 0
	k.Fit.ColdPoints, k.Fit.ColdMedianPct, k.Fit.ColdMaxPct = 0, 0, 0
	var ratios []float64
	var pts []*sim.ProfilePoint
	for i := range k.Points {
		pt := &k.Points[i]
		share := p.ColdShare(float64(pt.Grid) * pt.Bytes)
		if len(pt.ColdNs) == 0 || len(pt.RewarmNs) == 0 || pt.Bytes <= 0 || share <= 0 {
			continue
		}
		extra := stats.Median(pt.ColdNs) - stats.Median(pt.RewarmNs)
		ratios = append(ratios, extra/waves(p, pt)/pt.Bytes/share)
		pts = append(pts, pt)
	}
	if len(pts) == 0 {
		return
	}
	c := max(0, stats.Median(ratios))
	k.Model.ColdNsPerByte = roundSig(c, 4)
	errs := make([]float64, len(pts))
	for i, pt := range pts {
		pred := stats.Median(pt.RewarmNs) + k.Model.ColdNsPerByte*pt.Bytes*waves(p, pt)*p.ColdShare(float64(pt.Grid)*pt.Bytes)
		errs[i] = math.Abs(pred/stats.Median(pt.ColdNs)-1) * 100
	}
	k.Fit.ColdPoints = len(pts)
	k.Fit.ColdMedianPct, k.Fit.ColdMaxPct = round2(stats.Median(errs)), round2(slices.Max(errs))
}

// waves is how many waves of blocks pt's launch runs in.
func waves(p *sim.Profile, pt *sim.ProfilePoint) float64 {
	return math.Ceil(float64(pt.Grid) / float64(max(pt.PerSM*p.SMs, 1)))
}

// roundSig rounds x to n significant digits.
func roundSig(x float64, n int) float64 {
	if x == 0 {
		return 0
	}
	s := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*s) / s
}
