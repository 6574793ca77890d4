package experiments

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/gpusched/gpusched/internal/stats"
)

// Summary describes repeated measurements of one quantity.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	// Std is the sample standard deviation (n-1 in the denominator); 0 for
	// one sample.
	Std float64 `json:"std"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// CI95Lo and CI95Hi bound the 95% confidence interval of the mean,
	// mean ± t(0.975, n-1)·std/√n (Student's t). With one sample the
	// interval is the sample itself.
	CI95Lo float64 `json:"ci95_lo"`
	CI95Hi float64 `json:"ci95_hi"`
}

// Summarize computes a Summary of xs (which it does not modify). An empty
// slice gives the zero Summary.
func Summarize(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	mean, std := stat.MeanStdDev(s, nil)
	if n == 1 {
		std = 0 // gonum gives NaN for one sample
	}
	out := Summary{N: n, Median: stats.MedianSorted(s), Mean: mean, Std: std, Min: s[0], Max: s[n-1], CI95Lo: mean, CI95Hi: mean}
	if n > 1 && std > 0 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
		half := t * std / math.Sqrt(float64(n))
		out.CI95Lo, out.CI95Hi = mean-half, mean+half
	}
	return out
}

// MakespanSummary summarizes makespans in nanoseconds as results record
// them: in microseconds, rounded to the nanosecond.
func MakespanSummary(ns []int64) Summary {
	us := make([]float64, len(ns))
	for i, v := range ns {
		us[i] = float64(v) / 1e3
	}
	s := Summarize(us)
	return Summary{N: s.N, Median: round(s.Median, 3), Mean: round(s.Mean, 3), Std: round(s.Std, 3),
		Min: round(s.Min, 3), Max: round(s.Max, 3), CI95Lo: round(s.CI95Lo, 3), CI95Hi: round(s.CI95Hi, 3)}
}

// MAPE is the mean absolute percentage error of predicted against actual
// values, in percent, over the pairs whose actual value is non-zero, and
// how many pairs that was.
func MAPE(predicted, actual []float64) (mape float64, n int) {
	var errs []float64
	for i := range actual {
		if i >= len(predicted) || actual[i] == 0 || math.IsNaN(predicted[i]) || math.IsNaN(actual[i]) {
			continue
		}
		errs = append(errs, math.Abs(predicted[i]-actual[i])/math.Abs(actual[i])*100)
	}
	if len(errs) == 0 {
		return math.NaN(), 0
	}
	return stat.Mean(errs, nil), len(errs)
}

// Paired is a speedup estimated from interleaved runs: round i of the
// baseline and round i of a scheduler ran next to each other, so their
// ratio cancels drift that a ratio of two medians taken minutes apart
// would keep. Median is the median of the per-round ratios (baseline /
// scheduler); [Lo, Hi] is the distribution-free 95% confidence interval of
// that median from order statistics (the binomial sign-test interval), so
// no shape of the noise is assumed. N is the number of pairs.
type Paired struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Lo     float64 `json:"ci95_lo"`
	Hi     float64 `json:"ci95_hi"`
}

// PairedSpeedup pairs base and s round by round. It reports false when the
// runs cannot be paired (different counts, or fewer than 6 runs: below that
// the 95% interval is the whole range and says nothing).
func PairedSpeedup(base, s []int64) (Paired, bool) {
	n := len(base)
	if n != len(s) || n < 6 {
		return Paired{}, false
	}
	r := make([]float64, n)
	for i := range r {
		if s[i] <= 0 {
			return Paired{}, false
		}
		r[i] = float64(base[i]) / float64(s[i])
	}
	sort.Float64s(r)
	k, _ := stats.SignTestRank(n)
	return Paired{N: n, Median: stats.MedianSorted(r), Lo: r[k-1], Hi: r[n-k]}, true
}

// String is the median with its interval, or the median alone when the
// interval is unknown (N = 0: a ratio of medians, not paired).
func (p Paired) String() string {
	if p.N == 0 {
		return fmt.Sprintf("%.3fx", p.Median)
	}
	return fmt.Sprintf("%.3fx [%.3f-%.3f]", p.Median, p.Lo, p.Hi)
}
