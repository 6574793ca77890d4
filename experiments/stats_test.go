package experiments

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one sample: no spread, the interval is the sample", []float64{7}, Summary{N: 1, Median: 7, Mean: 7, Min: 7, Max: 7, CI95Lo: 7, CI95Hi: 7}},
		// 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7, median (4+5)/2.
		// t(0.975, 7) = 2.3646243 (tables); half width 2.3646243 * sqrt(32/7) / sqrt(8) = 1.787488.
		{"even count", []float64{9, 2, 4, 5, 4, 7, 4, 5}, Summary{N: 8, Median: 4.5, Mean: 5, Std: math.Sqrt(32.0 / 7), Min: 2, Max: 9,
			CI95Lo: 5 - 1.787488, CI95Hi: 5 + 1.787488}},
		// 10, 20, 60: mean 30, variance (400+100+900)/2 = 700, median 20.
		// t(0.975, 2) = 4.3026527 (tables); half width 4.3026527 * sqrt(700) / sqrt(3) = 65.724106.
		{"odd count", []float64{60, 10, 20}, Summary{N: 3, Median: 20, Mean: 30, Std: math.Sqrt(700), Min: 10, Max: 60,
			CI95Lo: 30 - 65.724106, CI95Hi: 30 + 65.724106}},
		{"identical samples", []float64{3, 3, 3}, Summary{N: 3, Median: 3, Mean: 3, Min: 3, Max: 3, CI95Lo: 3, CI95Hi: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.in...)
			got := Summarize(tt.in)
			assert.Equal(t, in, tt.in, "Summarize must not reorder its input")
			assert.Equal(t, tt.want.N, got.N)
			for _, f := range []struct {
				name      string
				want, got float64
			}{{"median", tt.want.Median, got.Median}, {"mean", tt.want.Mean, got.Mean}, {"std", tt.want.Std, got.Std},
				{"min", tt.want.Min, got.Min}, {"max", tt.want.Max, got.Max},
				{"ci lo", tt.want.CI95Lo, got.CI95Lo}, {"ci hi", tt.want.CI95Hi, got.CI95Hi}} {
				assert.InDelta(t, f.want, f.got, 1e-5, f.name)
			}
		})
	}
}

func TestMAPE(t *testing.T) {
	// |110-100|/100 = 10%, |45-50|/50 = 10%, |100-80|/80 = 25%: mean 15%.
	m, n := MAPE([]float64{110, 45, 100}, []float64{100, 50, 80})
	require.Equal(t, 3, n)
	assert.InDelta(t, 15.0, m, 1e-12)

	// A zero actual value has no percentage error and is left out.
	m, n = MAPE([]float64{5, 12}, []float64{0, 10})
	require.Equal(t, 1, n)
	assert.InDelta(t, 20.0, m, 1e-12)

	m, n = MAPE(nil, nil)
	assert.Equal(t, 0, n)
	assert.True(t, math.IsNaN(m))
}

func TestRound(t *testing.T) {
	assert.Equal(t, 1.2346, round(1.23456, 4))
	assert.Equal(t, 0.3, round(0.1+0.2, 3))
	assert.Equal(t, -2.5, round(-2.5, 1))
}

func TestPairedSpeedup(t *testing.T) {
	// Ten rounds: the scheduler takes 80 where the baseline took 100,
	// except in two rounds where the baseline drifted to 200 (both
	// schedulers saw the drift: 160). Paired ratios are all 1.25.
	base := []int64{100, 100, 200, 100, 100, 200, 100, 100, 100, 100}
	s := []int64{80, 80, 160, 80, 80, 160, 80, 80, 80, 80}
	p, ok := PairedSpeedup(base, s)
	require.True(t, ok)
	assert.Equal(t, Paired{N: 10, Median: 1.25, Lo: 1.25, Hi: 1.25}, p)

	// Ratios 0.9, 1.0 ... 1.8: median 1.35, interval the 2nd and 9th.
	base = []int64{90, 100, 110, 120, 130, 140, 150, 160, 170, 180}
	s = []int64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	p, ok = PairedSpeedup(base, s)
	require.True(t, ok)
	assert.InDelta(t, 1.35, p.Median, 1e-12)
	assert.InDelta(t, 1.0, p.Lo, 1e-12)
	assert.InDelta(t, 1.7, p.Hi, 1e-12)

	_, ok = PairedSpeedup(base, s[:9])
	assert.False(t, ok, "unequal counts cannot be paired")
	_, ok = PairedSpeedup(base[:5], s[:5])
	assert.False(t, ok, "five pairs give no useful interval")
}
