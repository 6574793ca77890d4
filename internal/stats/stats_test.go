package stats

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
)

var nan = math.NaN()

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, nan},
		{"one", []float64{7}, 7},
		{"odd, unsorted", []float64{5, 1, 3}, 3},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"even, equal middle", []float64{1, 2, 2, 9}, 2},
		{"negative", []float64{-1, -3, -2}, -2},
		{"a NaN sorts first", []float64{nan, 1, 2}, 1},
		{"two NaNs of three", []float64{nan, 5, nan}, nan},
		{"infinity", []float64{1, math.Inf(1)}, math.Inf(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := append([]float64(nil), c.xs...)
			got := Median(c.xs)
			if math.IsNaN(c.want) {
				assert.True(t, math.IsNaN(got), "got %v", got)
			} else {
				assert.Equal(t, c.want, got)
			}
			assert.Equal(t, len(in), len(c.xs))
			for i := range in {
				assert.True(t, in[i] == c.xs[i] || math.IsNaN(in[i]) && math.IsNaN(c.xs[i]), "xs modified at %d", i)
			}
		})
	}
}

func TestMedianOfIntegers(t *testing.T) {
	assert.Equal(t, 2.0, Median([]int64{3, 1, 2}))
	assert.Equal(t, 2.5, Median([]int64{4, 1, 2, 3}))
	assert.True(t, math.IsNaN(Median([]int64(nil))))
	// Durations are int64 nanoseconds underneath.
	assert.Equal(t, 1500.0, Median([]time.Duration{time.Microsecond, 2 * time.Microsecond}))
	// Makespans in ns are far below 2^53: the sum is exact as float64.
	big := int64(1) << 52
	assert.Equal(t, float64(big)+0.5, Median([]int64{big, big + 1}))
}

func TestMedianSortedDoesNotSort(t *testing.T) {
	assert.Equal(t, 2.5, MedianSorted([]float64{1, 2, 3, 4}))
	// Unsorted input is taken as it stands: the middle elements.
	assert.Equal(t, 9.0, MedianSorted([]float64{1, 9, 2}))
	assert.True(t, math.IsNaN(MedianSorted([]float64{})))
}

func TestMedianOrZero(t *testing.T) {
	assert.Equal(t, 0.0, MedianOrZero([]float64(nil)))
	assert.Equal(t, 0.0, MedianOrZero([]int64{}))
	assert.Equal(t, 2.5, MedianOrZero([]int64{4, 1, 2, 3}))
	assert.Equal(t, 3.0, MedianOrZero([]float64{5, 1, 3}))
}

func TestUpperMedian(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []time.Duration
		want time.Duration
	}{
		{"empty: zero", nil, 0},
		{"one", []time.Duration{4}, 4},
		{"odd", []time.Duration{9, 1, 5}, 5},
		{"even: the upper middle one", []time.Duration{4, 1, 3, 2}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := append([]time.Duration(nil), c.xs...)
			assert.Equal(t, c.want, UpperMedian(c.xs))
			assert.Equal(t, in, c.xs, "xs not modified")
		})
	}
	assert.Equal(t, 2.0, UpperMedian([]float64{2, 1}))
	assert.Equal(t, 1.0, UpperMedian([]float64{nan, 1}), "NaN sorts first")
}

func TestUpperMedianIndex(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []int64
		want int
	}{
		{"empty", nil, -1},
		{"one", []int64{5}, 0},
		{"odd", []int64{30, 10, 20}, 2},
		{"even: the upper middle one", []int64{40, 10, 30, 20}, 2},
		// Sorted stably: 1(0) 5(1) 5(2) 5(3); index 2 is the second 5.
		{"ties in their order", []int64{5, 5, 1, 5}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, UpperMedianIndex(c.xs))
		})
	}
}

func TestSignTestRank(t *testing.T) {
	// Ranks of the 95% sign-test interval of a median, from binomial
	// tables: n = 6: 1 (the whole range); 10: 2; 20: 6; 30: 10; 100: 40
	// (P(X <= 39) = 0.0176, P(X <= 40) = 0.0284).
	for _, c := range []struct {
		n, k int
		tail float64
	}{
		{0, 1, 1}, {1, 1, 0.5}, {2, 1, 0.25}, {5, 1, 1.0 / 32}, {6, 1, 1.0 / 64},
		{10, 2, 11.0 / 1024}, {20, 6, 0.0207}, {30, 10, 0.0214}, {100, 40, 0.0176},
	} {
		k, tail := SignTestRank(c.n)
		assert.Equal(t, c.k, k, "n = %d", c.n)
		assert.InDelta(t, c.tail, tail, 1e-4, "n = %d", c.n)
	}
}

func TestMedianBounds(t *testing.T) {
	// Five samples: the best bounds are the extremes, which hold the
	// median with 1 - 2/32 confidence.
	xs := []float64{5, 1, 4, 2, 3}
	lo, hi, conf := MedianBounds(xs)
	assert.Equal(t, 1.0, lo)
	assert.Equal(t, 5.0, hi)
	assert.InDelta(t, 0.9375, conf, 1e-12)
	assert.Equal(t, []float64{5, 1, 4, 2, 3}, xs, "xs not modified")

	// A hundred samples: the 40th and 61st smallest.
	xs = make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i)
	}
	lo, hi, conf = MedianBounds(xs)
	assert.Equal(t, 40.0, lo)
	assert.Equal(t, 61.0, hi)
	assert.InDelta(t, 1-2*0.0176, conf, 1e-3)

	lo, hi, conf = MedianBounds([]float64{3})
	assert.Equal(t, []float64{3, 3, 0}, []float64{lo, hi, conf}, "one sample bounds nothing")

	lo, hi, conf = MedianBounds(nil)
	assert.True(t, math.IsNaN(lo) && math.IsNaN(hi))
	assert.Zero(t, conf)
}

// TestGonumQuantileIsNotTheMedian is why this package exists beside
// gonum/stat: on an even count its empirical quantile is the lower middle
// value and its interpolated one is neither middle value nor their mean.
func TestGonumQuantileIsNotTheMedian(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	require.Equal(t, 2.5, Median(xs))
	require.Equal(t, 3.0, UpperMedian(xs))
	assert.Equal(t, 2.0, stat.Quantile(0.5, stat.Empirical, xs, nil))
	assert.NotEqual(t, 2.5, stat.Quantile(0.5, stat.LinInterp, xs, nil))
}
