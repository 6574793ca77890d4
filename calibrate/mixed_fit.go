package calibrate

import (
	"fmt"
	"math"
)

// MixedFitWeights are the weights of a younger kernel's warps
// (sim.younger_kernel_weight) that FitMixed tries by default.
var MixedFitWeights = []float64{0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1}

// MixedFitExponents are the older kernels' pressure exponents
// (sim.older_pressure_exponent) that FitMixed tries by default.
var MixedFitExponents = []float64{0, 0.25, 0.5, 0.625, 0.75, 0.875, 1, 1.25, 1.5}

// MixedFit is one value's error against a measured probe (a weight or an
// exponent): the root mean square of log(simulated / measured) slowdown,
// in percent, over
// Slowdowns slowdowns of pairs that co-ran; SerialRMSPct the same over
// the Serial second kernels of pairs that did not (MixedSerialError).
type MixedFit struct {
	Value        float64 `json:"value"`
	RMSPct       float64 `json:"rms_pct"`
	Slowdowns    int     `json:"slowdowns"`
	SerialRMSPct float64 `json:"serial_rms_pct"`
	Serial       int     `json:"serial"`
}

// mixedFitted reports whether a pair's slowdown of side (0: a, 1: b)
// enters the fit: the pair co-ran (no shadow or spinner stamp shows an SM
// without both, and together took less than the two alone), and the
// kernel is one whose own time is its blocks' (not the spinner's
// wall-clock spin, not the elementwise and reduction kernels of a few
// microseconds, which are mostly launch and dispatch).
func mixedFitted(p *MixedPair, side int) bool {
	if !mixedTimed([2]string{p.A, p.B}[side]) || p.Overlap < 0 {
		return false
	}
	r := p.Residency
	return r.Source == "none" || r.BothSMs == r.SMs
}

// pairsByName indexes r's pairs by their kernels' names (first, second).
func pairsByName(r *MixedReport) map[[2]string]*MixedPair {
	m := make(map[[2]string]*MixedPair, len(r.Pairs))
	for i := range r.Pairs {
		p := &r.Pairs[i]
		m[[2]string{p.A, p.B}] = p
	}
	return m
}

// MixedError is the error of sim's slowdowns against gpu's (a probe of
// the same kernels at the same shapes): root mean square of
// log(sim / gpu) over the pairs and sides mixedFitted takes, in percent.
func MixedError(gpu, sim *MixedReport) (rmsPct float64, n int, err error) {
	simPairs := pairsByName(sim)
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

// FitMixed picks, of values, the value of one model constant (the weight
// of a younger kernel's warps, or the older kernels' pressure exponent)
// whose simulated probe (probe(v): the same kernels and shapes on a
// simulator with the constant at v and the rate model) is closest to
// gpu's over the pairs that co-ran (MixedError); fits is every value's
// error.
func FitMixed(gpu *MixedReport, values []float64, probe func(v float64) (*MixedReport, error)) (best float64, fits []MixedFit, err error) {
	bestErr := math.Inf(1)
	for _, w := range values {
		sim, err := probe(w)
		if err != nil {
			return 0, nil, err
		}
		e, n, err := MixedError(gpu, sim)
		if err != nil {
			return 0, nil, err
		}
		se, sn, err := MixedSerialError(gpu, sim)
		if err != nil {
			return 0, nil, err
		}
		fits = append(fits, MixedFit{Value: w, RMSPct: e, Slowdowns: n, SerialRMSPct: se, Serial: sn})
		if e < bestErr {
			best, bestErr = w, e
		}
	}
	return best, fits, nil
}

// mixedSerial reports whether a measured pair did NOT co-run (a shadow or
// spinner stamp shows no SM holding both) and its second kernel is one
// whose own time is its blocks': the pairs the shared-memory carve-out
// keeps apart (sim.shared_carveout_kb), which MixedError leaves out.
func mixedSerial(p *MixedPair) bool {
	r := p.Residency
	return r.Source != "none" && r.SMs > 0 && r.BothSMs == 0 && mixedTimed(p.B)
}

// mixedTimed reports whether a class's own time is its blocks' (not the
// spinner's wall-clock spin, not a kernel of a few microseconds).
func mixedTimed(class string) bool {
	return !isSpinner(class) && class != "elementwise" && class != "reduction"
}

// MixedSerialError is the error of sim's slowdowns of the second kernel
// against gpu's over the measured pairs that did not co-run (mixedSerial):
// root mean square of log(sim / gpu), in percent; n is 0 when gpu has no
// such pair.
func MixedSerialError(gpu, sim *MixedReport) (rmsPct float64, n int, err error) {
	simPairs := pairsByName(sim)
	sum := 0.0
	for i := range gpu.Pairs {
		g := &gpu.Pairs[i]
		if !mixedSerial(g) || g.Slowdown[1] <= 0 {
			continue
		}
		s := simPairs[[2]string{g.A, g.B}]
		if s == nil || s.Slowdown[1] <= 0 {
			return 0, 0, fmt.Errorf("calibrate: the simulated probe has no slowdown of %s beside %s", g.B, g.A)
		}
		e := math.Log(s.Slowdown[1] / g.Slowdown[1])
		sum += e * e
		n++
	}
	if n == 0 {
		return 0, 0, nil
	}
	return 100 * math.Sqrt(sum/float64(n)), n, nil
}
