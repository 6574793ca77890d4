package fidelity

import (
	"math"
	"slices"

	"github.com/gpusched/gpusched/internal/stats"
)

// DefaultModeGap is the jump between neighbouring sorted repetitions that
// splits a row into two modes: 1.5, a 50% jump, far beyond the 1-10% by
// which a row's repetitions usually differ. Plain SET's repetitions on an
// H200 (issue #18) jump 1.7-2.3x between their modes (sobel set-3:
// 4,383 4,603 4,869 | 11,117 11,277 µs).
const DefaultModeGap = 1.5

// minModeReps is how many repetitions a mode holds at least. A lone
// repetition far from the others is an outlier, not a mode the row runs
// in: of the 746 committed GPU rows (docs/results, 2026-11) whose sorted
// repetitions jump 1.5x or more, 625 have a single repetition on one side
// of the jump, 598 of them one slow run (a hiccup), where 121 have two or
// more on each side. A lone repetition at either end never holds the
// median, and as a "mode" it would let the nearest-mode error excuse the
// simulator by one stray run.
const minModeReps = 2

// Where a row's median lies against its modes (Row.MedianMode).
const (
	ModeFast    = "fast"
	ModeSlow    = "slow"
	ModeBetween = "between"
)

// Modes splits the row's GPU repetitions into a fast and a slow mode
// (each sorted, ascending), or reports ok false when they are not
// bimodal. The rule, deterministic: sort the repetitions and find the
// largest ratio between neighbours (the lowest of equal ones); the row is
// bimodal when that ratio is at least gap and leaves at least two
// repetitions on each side (so a row needs four or more), its fast mode
// the repetitions below the jump and its slow mode those above. Rows with
// a repetition that is not a positive finite number, and every row when
// gap is not above 1, are not split.
//
// Why: plain SET's repetitions are often bimodal within one process
// (issue #18), and the median of such a row lands in whichever mode has
// the majority, so the simulator's error on it measures mostly which mode
// won (Summary's bimodal figures).
func (r *Row) Modes(gap float64) (fast, slow []float64, ok bool) {
	if len(r.GPU) < 2*minModeReps || !(gap > 1) {
		return nil, nil, false
	}
	xs := slices.Clone(r.GPU)
	slices.Sort(xs)
	if !(xs[0] > 0) || math.IsInf(xs[len(xs)-1], 0) { // NaN sorts first
		return nil, nil, false
	}
	cut, jump := 0, 0.0
	for i := 1; i < len(xs); i++ {
		if q := xs[i] / xs[i-1]; q > jump {
			cut, jump = i, q
		}
	}
	if jump < gap || cut < minModeReps || len(xs)-cut < minModeReps {
		return nil, nil, false
	}
	return xs[:cut:cut], xs[cut:], true
}

// MedianMode is the mode the row's median falls in when its repetitions
// split at gap (Modes): ModeSlow at or above the slow mode's smallest
// repetition, ModeFast at or below the fast mode's largest, ModeBetween
// in the jump (an even count split in halves, whose median is the mean
// of the two middle repetitions); "" when the row is not bimodal.
func (r *Row) MedianMode(gap float64) string {
	fast, slow, ok := r.Modes(gap)
	if !ok {
		return ""
	}
	switch m := r.GPUMedian(); {
	case m >= slow[0]:
		return ModeSlow
	case m <= fast[len(fast)-1]:
		return ModeFast
	}
	return ModeBetween
}

// modes fills the bimodal rows' figures.
func (s *Summary) modes(rows []Row, gap float64) {
	var atMedian, atMode []float64
	for i := range rows {
		r := &rows[i]
		fast, slow, ok := r.Modes(gap)
		if !ok {
			continue
		}
		s.BimodalRows++
		if r.MedianMode(gap) == ModeSlow {
			s.BimodalMedianSlow++
		}
		e := r.Err()
		if math.IsNaN(e) {
			continue
		}
		ef := math.Abs(pctErr(r.Sim, stats.MedianSorted(fast)))
		es := math.Abs(pctErr(r.Sim, stats.MedianSorted(slow)))
		if ef <= es {
			s.BimodalSimFast++
		}
		atMedian, atMode = append(atMedian, e), append(atMode, min(ef, es))
	}
	s.BimodalMAPE, s.BimodalModeMAPE = Pct(meanAbs(atMedian)), Pct(meanAbs(atMode))
}
