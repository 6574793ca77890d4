package experiments

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
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
	out := Summary{N: n, Median: median(s), Mean: mean, Std: std, Min: s[0], Max: s[n-1], CI95Lo: mean, CI95Hi: mean}
	if n > 1 && std > 0 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
		half := t * std / math.Sqrt(float64(n))
		out.CI95Lo, out.CI95Hi = mean-half, mean+half
	}
	return out
}

// median of sorted s: the middle value, or the mean of the two middle values.
// gonum's stat.Quantile(0.5, stat.Empirical, ...) returns the lower middle
// value for even n, which is not the conventional median.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
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
