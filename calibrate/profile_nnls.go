package calibrate

import (
	"math"

	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
)

// The terms of a block's lone time: a constant, then Cycles, Flops and
// Bytes per block, and the Bytes again of a launch whose bytes exceed the
// L2 cache (the extra cost of device memory). Bytes and that extra form
// the memory term.
const (
	termConst = iota
	termCycles
	termFlops
	termBytes
	termBeyondL2
	nTerms
)

func terms(p *sim.Profile, pt *sim.ProfilePoint) [nTerms]float64 {
	x := [nTerms]float64{1, pt.Cycles, pt.Flops, pt.Bytes, 0}
	if beyondL2(p, pt) {
		x[termBeyondL2] = pt.Bytes
	}
	return x
}

// beyondL2 reports whether a point's launch moves more bytes than the L2
// holds.
func beyondL2(p *sim.Profile, pt *sim.ProfilePoint) bool {
	return p.EffectiveL2Bytes > 0 && float64(pt.Grid)*pt.Bytes > float64(p.EffectiveL2Bytes)
}

// termTime is the time of Work term t (the memory term: Bytes and beyond
// L2 together) under c.
func termTime(c, x [nTerms]float64, t int) float64 {
	if t == termBytes {
		return c[termBytes]*x[termBytes] + c[termBeyondL2]*x[termBeyondL2]
	}
	return c[t] * x[t]
}

// fitBase fits m's lone-block time against Work to the points
// (FitProfile, step 3).
func fitBase(p *sim.Profile, pts []sim.ProfilePoint, m *sim.BlockModel) {
	var xs [][nTerms]float64
	var ys []float64
	distinct := map[[nTerms]float64]bool{}
	for i := range pts {
		pt := &pts[i]
		xs = append(xs, terms(p, pt))
		ys = append(ys, max(p.LoneNs(m, pt), 1e-3))
		distinct[terms(p, pt)] = true
	}
	var c [nTerms]float64
	m.Roofline = false
	if len(distinct) == 1 {
		c = proportional(xs[0], stats.Median(ys))
	} else {
		c = workOverConstant(xs, ys, bestSubset(xs, ys, len(distinct)))
		if r := roofline(xs, ys, len(distinct)); rmsRel(xs, ys, r, true) < rmsRel(xs, ys, c, false)-0.005 {
			c, m.Roofline = r, true
		}
	}
	if !m.Roofline {
		c = clockCycles(p, xs, ys, c)
	}
	m.Ns, m.NsPerCycle, m.NsPerFlop, m.NsPerByte = c[termConst], c[termCycles], c[termFlops], c[termBytes]
	m.NsPerByteBeyondL2 = c[termBeyondL2]
}

// workTieTolerance is how much more root mean square relative error than a
// constant block time a Work term may fit with and still replace it
// (workOverConstant): half a point of percent, a tie.
const workTieTolerance = 0.005

// workOverConstant is c, or, when c times every block the same (a
// constant, with or without the beyond-L2 term) and the points fit the
// Work term that proportional picks (Flops above 10 flops per byte, else
// Bytes, else Cycles) in the constant's place as well, that model. Two
// sizes with the larger beyond the L2 fit both exactly; the constant
// timed a launch of an eighth of the bytes per block (KeSCo's kernels at
// heldout5's scale 0.25 on 32 blocks) as long as the profiled one.
func workOverConstant(xs [][nTerms]float64, ys []float64, c [nTerms]float64) [nTerms]float64 {
	if c[termConst] <= 0 || c[termCycles] != 0 || c[termFlops] != 0 || c[termBytes] != 0 {
		return c
	}
	w := dominant(proportional(xs[0], 1), xs[0])
	if w == termConst {
		return c
	}
	mask := 1 << w
	if c[termBeyondL2] != 0 {
		mask |= 1 << termBeyondL2
	}
	alt, ok := leastSquares(xs, ys, mask)
	if !ok || rmsRel(xs, ys, alt, false) > rmsRel(xs, ys, c, false)+workTieTolerance {
		return c
	}
	return alt
}

// minCycleSpan is the ratio of a kernel's most to fewest Cycles per block
// below which its points cannot tell a cost per cycle from a fixed cost
// per block.
const minCycleSpan = 2

// clockCycles is c, or, when c times blocks by Cycles alone (with or
// without a constant), the profile's clock is known and the points'
// Cycles span less than minCycleSpan, the model whose Cycles cost the
// clock period (a Work cycle is an SM clock cycle) and whose constant is
// the rest: the least-squares fit, on relative error, of each point's
// time less its cycles. Extrapolated from a narrow span, a fitted cost
// per cycle carries the fixed part of the block (loads, block start) into
// every cycle of a longer one: synth_node, fitted at 1,080-1,312 cycles,
// timed its 8,792-cycle blocks at 1.9 times the GPU's.
func clockCycles(p *sim.Profile, xs [][nTerms]float64, ys []float64, c [nTerms]float64) [nTerms]float64 {
	if p.ClockHz <= 0 || c[termCycles] <= 0 || c[termFlops] != 0 || c[termBytes] != 0 || c[termBeyondL2] != 0 {
		return c
	}
	lo, hi := math.Inf(1), 0.0
	for _, x := range xs {
		lo, hi = min(lo, x[termCycles]), max(hi, x[termCycles])
	}
	if lo <= 0 || hi >= minCycleSpan*lo {
		return c
	}
	period := 1e9 / float64(p.ClockHz)
	num, den := 0.0, 0.0
	for i, x := range xs {
		w := 1 / (ys[i] * ys[i])
		num += (ys[i] - period*x[termCycles]) * w
		den += w
	}
	var out [nTerms]float64
	out[termConst], out[termCycles] = max(num/den, 0), period
	return out
}

// roofline fits lone time = constant + the largest Work term: each point
// is assigned the term that dominates it (first by its flops per byte, as
// proportional does), the terms are fitted to their points (bestSubset),
// and the assignment is redone under the new coefficients until it
// settles.
func roofline(xs [][nTerms]float64, ys []float64, maxTerms int) [nTerms]float64 {
	dom := make([]int, len(xs))
	for i, x := range xs {
		dom[i] = dominant(proportional(x, 1), x)
	}
	var c [nTerms]float64
	for iter := 0; iter < 20; iter++ {
		parts := make([][nTerms]float64, len(xs))
		for i, x := range xs {
			parts[i][termConst] = 1
			parts[i][dom[i]] = x[dom[i]]
			if dom[i] == termBytes {
				parts[i][termBeyondL2] = x[termBeyondL2]
			}
		}
		c = bestSubset(parts, ys, maxTerms)
		changed := false
		for i, x := range xs {
			if d := dominant(c, x); d != dom[i] && termTime(c, x, d) > 0 {
				dom[i], changed = d, true
			}
		}
		if !changed {
			break
		}
	}
	return c
}

// dominant is the Work term (cycles, flops or memory) with the largest
// time under c (termConst when none has any).
func dominant(c, x [nTerms]float64) int {
	d, best := termConst, 0.0
	for t := termCycles; t <= termBytes; t++ {
		if v := termTime(c, x, t); v > best {
			d, best = t, v
		}
	}
	return d
}

// proportional makes a single Work size's lone time y proportional to one
// of its terms: Flops above 10 flops per byte, else Bytes, else Cycles,
// else a constant.
func proportional(x [nTerms]float64, y float64) [nTerms]float64 {
	var c [nTerms]float64
	switch {
	case x[termFlops] > 0 && x[termFlops] > 10*x[termBytes]:
		c[termFlops] = y / x[termFlops]
	case x[termBytes] > 0:
		c[termBytes] = y / x[termBytes]
	case x[termCycles] > 0:
		c[termCycles] = y / x[termCycles]
	default:
		c[termConst] = y
	}
	return c
}

// bestSubset is the non-negative least-squares fit (relative error) over
// the smallest subset of terms, at most maxTerms of them, whose error is
// within 2 percentage points of the best subset's.
func bestSubset(xs [][nTerms]float64, ys []float64, maxTerms int) [nTerms]float64 {
	type fit struct {
		c    [nTerms]float64
		err  float64
		size int
	}
	var fits []fit
	for mask := 1; mask < 1<<nTerms; mask++ {
		size := 0
		usable := true
		for t := 0; t < nTerms; t++ {
			if mask&(1<<t) != 0 {
				size++
				if !nonzeroColumn(xs, t) {
					usable = false
				}
			}
		}
		if !usable || size > maxTerms {
			continue
		}
		c, ok := leastSquares(xs, ys, mask)
		if !ok {
			continue
		}
		fits = append(fits, fit{c, rmsRel(xs, ys, c, false), size})
	}
	best := fit{err: math.Inf(1)}
	for _, f := range fits {
		if f.err < best.err {
			best = f
		}
	}
	pick := best
	for _, f := range fits {
		if f.err <= best.err+0.02 && (f.size < pick.size || (f.size == pick.size && f.err < pick.err)) {
			pick = f
		}
	}
	return pick.c
}

func nonzeroColumn(xs [][nTerms]float64, t int) bool {
	for _, x := range xs {
		if x[t] != 0 {
			return true
		}
	}
	return false
}

// rmsRel is the root mean square relative error of c's predictions, the
// Work terms summed or (roofline) their largest taken.
func rmsRel(xs [][nTerms]float64, ys []float64, c [nTerms]float64, roofline bool) float64 {
	s := 0.0
	for i, x := range xs {
		pred := 0.0
		for t := termCycles; t <= termBytes; t++ {
			if roofline {
				pred = max(pred, termTime(c, x, t))
			} else {
				pred += termTime(c, x, t)
			}
		}
		e := (c[termConst]+pred)/ys[i] - 1
		s += e * e
	}
	return math.Sqrt(s / float64(len(xs)))
}

// leastSquares solves min sum (x_i.c / y_i - 1)^2 over the terms in mask
// (columns scaled to 1 for conditioning); ok is false when the system is
// singular or a coefficient comes out negative.
func leastSquares(xs [][nTerms]float64, ys []float64, mask int) ([nTerms]float64, bool) {
	var idx []int
	var scale []float64
	for t := 0; t < nTerms; t++ {
		if mask&(1<<t) == 0 {
			continue
		}
		s := 0.0
		for i, x := range xs {
			s = max(s, math.Abs(x[t]/ys[i]))
		}
		idx, scale = append(idx, t), append(scale, s)
	}
	n := len(idx)
	a := make([][]float64, n) // normal equations, augmented
	for r := range a {
		a[r] = make([]float64, n+1)
	}
	for i, x := range xs {
		row := make([]float64, n)
		for j, t := range idx {
			row[j] = x[t] / ys[i] / scale[j]
		}
		for r := 0; r < n; r++ {
			for q := 0; q < n; q++ {
				a[r][q] += row[r] * row[q]
			}
			a[r][n] += row[r]
		}
	}
	sol, ok := solve(a)
	var c [nTerms]float64
	if !ok {
		return c, false
	}
	for j, t := range idx {
		if sol[j] < 0 {
			return c, false
		}
		c[t] = sol[j] / scale[j]
	}
	return c, true
}

// solve solves an augmented n x (n+1) system by Gaussian elimination with
// partial pivoting; ok is false when it is singular.
func solve(a [][]float64) ([]float64, bool) {
	n := len(a)
	for col := 0; col < n; col++ {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) < 1e-12 {
			return nil, false
		}
		a[col], a[piv] = a[piv], a[col]
		for r := col + 1; r < n; r++ {
			f := a[r][col] / a[col][col]
			for q := col; q <= n; q++ {
				a[r][q] -= f * a[col][q]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := a[r][n]
		for q := r + 1; q < n; q++ {
			s -= a[r][q] * x[q]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}
