// Package stats holds the order statistics that gpusched's packages share:
// medians of repeated measurements and the sign-test bounds of a median.
// It imports nothing of gpusched, so that every package, device/sim
// included, may use it.
//
// Two medians, on purpose:
//
//   - Median is the conventional one: the middle value, or the mean of the
//     two middle values of an even count (summaries, errors, speedups).
//   - UpperMedian is a sample: the upper of the two middle values (where a
//     value must have been measured: the repetition whose counters a row
//     reports, a time a scheduler is compared by).
//
// gonum/stat has neither: stat.Quantile(0.5, stat.Empirical, ...) is the
// lower middle value of an even count, and stat.LinInterp interpolates
// between order statistics at (i+1)/n (TestGonumQuantileIsNotTheMedian).
//
// NaN sorts before every number (slices.Sort's order), so NaNs in a sample
// pull its median down by their count rather than making it NaN.
package stats

import (
	"cmp"
	"math"
	"slices"
)

// Real is a number whose median is a float64: float64, int64 and the types
// built on them (time.Duration).
type Real interface{ ~float64 | ~int64 }

// Median is the median of xs: the middle value, or the mean of the two
// middle values of an even count; NaN for none. xs is not modified. Two
// int64 middle values are added as float64s: exactly, below 2^53.
func Median[E Real](xs []E) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return MedianSorted(s)
}

// MedianSorted is Median of sorted (ascending), without sorting it again.
func MedianSorted[E Real](sorted []E) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return float64(sorted[n/2])
	}
	return (float64(sorted[n/2-1]) + float64(sorted[n/2])) / 2
}

// MedianOrZero is Median, but 0 for none: for reports and models where no
// sample means nothing measured and the figure shows as 0.
func MedianOrZero[E Real](xs []E) float64 {
	if len(xs) == 0 {
		return 0
	}
	return Median(xs)
}

// UpperMedian is the upper median of xs: the element at index n/2 of xs
// sorted (the middle one of an odd count, the upper middle one of an even
// count), always one of the samples; the zero value for none. xs is not
// modified.
func UpperMedian[S ~[]E, E cmp.Ordered](xs S) E {
	if len(xs) == 0 {
		var zero E
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// UpperMedianIndex is the index in xs of its upper median, equal values
// taken in their order in xs (a stable sort); -1 for none.
func UpperMedianIndex[S ~[]E, E cmp.Ordered](xs S) int {
	if len(xs) == 0 {
		return -1
	}
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	return order[len(order)/2]
}

// SignTestRank is the rank k of the distribution-free 95% confidence
// interval of the median of n samples (the binomial sign test): the
// largest k with P(X < k) <= 0.025 for X ~ Binomial(n, 1/2), at least 1,
// so that the k-th smallest and the k-th largest sample bound the median
// with confidence 1 - 2*tail, tail = P(X < k). Below n = 6 no k meets
// 0.025 and k is 1: the extremes, at what confidence they give (5 samples:
// 93.75%). n < 1 gives 1 and tail 1.
func SignTestRank(n int) (k int, tail float64) {
	// P(X <= j) accumulated term by term in logs (the terms' factorials
	// overflow float64 quickly).
	k, tail = 1, 1
	cdf := 0.0
	for j := 0; j < n; j++ {
		lp := lgammaInt(n+1) - lgammaInt(j+1) - lgammaInt(n-j+1) - float64(n)*math.Ln2
		cdf += math.Exp(lp)
		// cdf is now P(X <= j) = P(X < j+1).
		if j == 0 {
			tail = cdf
		}
		if cdf > 0.025 {
			break
		}
		k, tail = j+1, cdf
	}
	return k, tail
}

func lgammaInt(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// MedianBounds are the order statistics that bound the median of xs by
// the sign test (SignTestRank): the k-th smallest and k-th largest, and
// their joint confidence. NaN, NaN, 0 for no samples. xs is not modified.
func MedianBounds(xs []float64) (lo, hi, conf float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k, tail := SignTestRank(n)
	return s[k-1], s[n-k], 1 - 2*tail
}
