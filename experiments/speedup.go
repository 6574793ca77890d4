package experiments

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/gpusched/gpusched/internal/stats"
)

// Estimate is a speedup over the baseline with its 95% confidence
// interval; Lo and Hi are NaN where no interval can be given.
type Estimate struct {
	Value, Lo, Hi float64
	// N is how many pairs (or, averaged over seeds, how many seeds) it
	// rests on.
	N int
	// Method says how it was estimated: MethodInterleaved,
	// MethodPaired, MethodMedians or MethodSeeds.
	Method string
}

// The ways an Estimate is made.
const (
	// The row's PairedSpeedup: repetitions measured in interleaved rounds
	// with the baseline's, the median of the per-round ratios with its
	// sign-test interval.
	MethodInterleaved = "interleaved rounds"
	// Repetition i against the baseline's repetition i, measured back to
	// back: the median of the ratios, with the sign-test interval from 6
	// pairs on (fewer give none, unless every ratio is the same, as on
	// the simulator: then the interval is that value).
	MethodPaired = "paired by repetition"
	// The baseline's median makespan over the row's: when the repetitions
	// cannot be paired (their counts differ).
	MethodMedians = "ratio of medians"
	// The mean over seeds of each seed's estimate, with Student's t
	// interval over the seeds.
	MethodSeeds = "mean over seeds"
)

// Speedups estimates every measured row's speedup over its group's
// baseline, keyed by row index; rows without a baseline, with errors or
// without measurements have none. The baseline's own is 1.
func (r *Results) Speedups() map[int]Estimate {
	base := map[int]*Row{}
	for i := range r.Rows {
		if row := &r.Rows[i]; row.Baseline && len(row.Errors) == 0 && len(row.MakespansNS) > 0 {
			base[row.Group] = row
		}
	}
	out := map[int]Estimate{}
	for i := range r.Rows {
		row := &r.Rows[i]
		b, ok := base[row.Group]
		if !ok || len(row.Errors) > 0 || len(row.MakespansNS) == 0 {
			continue
		}
		out[row.Index] = rowSpeedup(b, row)
	}
	return out
}

func rowSpeedup(base, row *Row) Estimate {
	if p := row.PairedSpeedup; p != nil && p.N > 0 {
		return Estimate{Value: p.Median, Lo: p.Lo, Hi: p.Hi, N: p.N, Method: MethodInterleaved}
	}
	n := len(row.MakespansNS)
	if n == len(base.MakespansNS) {
		ratios := make([]float64, n)
		for k := range ratios {
			if row.MakespansNS[k] <= 0 {
				return Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
			}
			ratios[k] = float64(base.MakespansNS[k]) / float64(row.MakespansNS[k])
		}
		sort.Float64s(ratios)
		e := Estimate{Value: round(stats.MedianSorted(ratios), 4), Lo: math.NaN(), Hi: math.NaN(), N: n, Method: MethodPaired}
		if p, ok := PairedSpeedup(base.MakespansNS, row.MakespansNS); ok {
			e.Lo, e.Hi = round(p.Lo, 4), round(p.Hi, 4)
		} else if ratios[0] == ratios[n-1] {
			e.Lo, e.Hi = e.Value, e.Value
		}
		return e
	}
	e := Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: n, Method: MethodMedians}
	if row.Speedup != nil {
		e.Value = *row.Speedup
	}
	return e
}

// MeanOverSeeds averages estimates of one quantity made with different
// seeds: their mean with Student's t 95% interval over the seeds. One
// estimate is returned as it is.
func MeanOverSeeds(es []Estimate) Estimate {
	var vals []float64
	for _, e := range es {
		if !math.IsNaN(e.Value) {
			vals = append(vals, e.Value)
		}
	}
	switch len(vals) {
	case 0:
		return Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	case 1:
		if len(es) == 1 {
			return es[0]
		}
	}
	mean, std := stat.MeanStdDev(vals, nil)
	e := Estimate{Value: round(mean, 4), Lo: math.NaN(), Hi: math.NaN(), N: len(vals), Method: MethodSeeds}
	if len(vals) > 1 {
		if std == 0 {
			e.Lo, e.Hi = e.Value, e.Value
		} else {
			t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(vals) - 1)}.Quantile(0.975)
			half := t * std / math.Sqrt(float64(len(vals)))
			e.Lo, e.Hi = round(mean-half, 4), round(mean+half, 4)
		}
	}
	return e
}
