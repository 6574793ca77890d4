package calibrate

import (
	"fmt"
	"math"
)

// MixedFitWeights are the weights of a younger kernel's warps
// (sim.younger_kernel_weight) that FitYoungerWeight tries by default.
var MixedFitWeights = []float64{0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1}

// MixedFit is one weight's error against a measured probe: the root mean
// square of log(simulated / measured) slowdown, in percent, over
// Slowdowns slowdowns.
type MixedFit struct {
	Weight    float64 `json:"weight"`
	RMSPct    float64 `json:"rms_pct"`
	Slowdowns int     `json:"slowdowns"`
}

// mixedFitted reports whether a pair's slowdown of side (0: a, 1: b)
// enters the fit: the pair co-ran (no shadow or spinner stamp shows an SM
// without both, and together took less than the two alone), and the
// kernel is one whose own time is its blocks' (not the spinner's
// wall-clock spin, not the elementwise and reduction kernels of a few
// microseconds, which are mostly launch and dispatch).
func mixedFitted(p *MixedPair, side int) bool {
	class := [2]string{p.A, p.B}[side]
	if class == mixedClass || class == "elementwise" || class == "reduction" || p.Overlap < 0 {
		return false
	}
	r := p.Residency
	return r.Source == "none" || r.BothSMs == r.SMs
}

// MixedError is the error of sim's slowdowns against gpu's (a probe of
// the same kernels at the same shapes): root mean square of
// log(sim / gpu) over the pairs and sides mixedFitted takes, in percent.
func MixedError(gpu, sim *MixedReport) (rmsPct float64, n int, err error) {
	simPairs := map[[2]string]*MixedPair{}
	for i := range sim.Pairs {
		p := &sim.Pairs[i]
		simPairs[[2]string{p.A, p.B}] = p
	}
	sum := 0.0
	for i := range gpu.Pairs {
		g := &gpu.Pairs[i]
		s := simPairs[[2]string{g.A, g.B}]
		if s == nil {
			return 0, 0, fmt.Errorf("calibrate: the simulated probe has no pair %s beside %s", g.A, g.B)
		}
		for side := 0; side < 2; side++ {
			if !mixedFitted(g, side) || g.Slowdown[side] <= 0 || s.Slowdown[side] <= 0 {
				continue
			}
			e := math.Log(s.Slowdown[side] / g.Slowdown[side])
			sum += e * e
			n++
		}
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("calibrate: no pair of the measured probe co-ran")
	}
	return 100 * math.Sqrt(sum/float64(n)), n, nil
}

// FitYoungerWeight picks, of weights, the weight of a younger kernel's
// warps whose simulated probe (probe(w): the same kernels and shapes on a
// simulator with sm.younger_kernel_weight w and the rate model) is
// closest to gpu's (MixedError); fits is every weight's error.
func FitYoungerWeight(gpu *MixedReport, weights []float64, probe func(w float64) (*MixedReport, error)) (best float64, fits []MixedFit, err error) {
	bestErr := math.Inf(1)
	for _, w := range weights {
		sim, err := probe(w)
		if err != nil {
			return 0, nil, err
		}
		e, n, err := MixedError(gpu, sim)
		if err != nil {
			return 0, nil, err
		}
		fits = append(fits, MixedFit{Weight: w, RMSPct: e, Slowdowns: n})
		if e < bestErr {
			best, bestErr = w, e
		}
	}
	return best, fits, nil
}
