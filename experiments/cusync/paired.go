package main

import (
	"math"
	"sort"
)

// Paired is a speedup estimated from interleaved runs: round i of the
// baseline and round i of a scheduler ran next to each other, so their
// ratio cancels drift that a ratio of two medians taken minutes apart
// would keep. Median is the median of the per-round ratios (baseline /
// scheduler); [Lo, Hi] is the distribution-free 95% confidence interval of
// that median from order statistics (the binomial sign-test interval), so
// no shape of the noise is assumed. N is the number of pairs.
type Paired struct {
	N              int
	Median, Lo, Hi float64
}

// pairedSpeedup pairs base and s round by round. It reports false when the
// runs cannot be paired (different counts, or fewer than 6 runs: below that
// the 95% interval is the whole range and says nothing).
func pairedSpeedup(base, s []int64) (Paired, bool) {
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
	med := r[n/2]
	if n%2 == 0 {
		med = (r[n/2-1] + r[n/2]) / 2
	}
	k := signTestRank(n)
	return Paired{N: n, Median: med, Lo: r[k-1], Hi: r[n-k]}, true
}

// signTestRank is the largest k such that P(X < k) <= 0.025 for X ~
// Binomial(n, 1/2): the k-th smallest and k-th largest of n samples bound
// their median with at least 95% confidence. It is at least 1.
func signTestRank(n int) int {
	// P(X <= j) accumulated term by term in logs (n is small, but the
	// terms' factorials overflow float64 quickly).
	cdf := 0.0
	k := 1
	for j := 0; j < n; j++ {
		lp := lgammaInt(n+1) - lgammaInt(j+1) - lgammaInt(n-j+1) - float64(n)*math.Ln2
		cdf += math.Exp(lp)
		// cdf is now P(X <= j) = P(X < j+1).
		if cdf > 0.025 {
			break
		}
		k = j + 1
	}
	return max(k, 1)
}

func lgammaInt(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}
