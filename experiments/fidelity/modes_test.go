package fidelity

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModesSplitsPlainSET: sobel set-3 on an H200 (issue #18), two runs
// near 11.2 ms among three near 4.6 ms, is bimodal; its median is in the
// fast mode.
func TestModesSplitsPlainSET(t *testing.T) {
	r := Row{GPU: []float64{11117, 4603, 4869, 4383, 11277}}
	fast, slow, ok := r.Modes(DefaultModeGap)
	require.True(t, ok)
	assert.Equal(t, []float64{4383, 4603, 4869}, fast)
	assert.Equal(t, []float64{11117, 11277}, slow)
	assert.Equal(t, 4869.0, r.GPUMedian())
	assert.Equal(t, ModeFast, r.MedianMode(DefaultModeGap))
	assert.Equal(t, []float64{11117, 4603, 4869, 4383, 11277}, r.GPU, "the row's repetitions stay as they are")
	// The jump is 11117/4869 = 2.28: a larger gap leaves the row whole.
	_, _, ok = r.Modes(2.3)
	assert.False(t, ok)
	assert.Empty(t, r.MedianMode(2.3))
}

func TestModesLeavesOtherRowsWhole(t *testing.T) {
	for name, gpu := range map[string][]float64{
		"a usual spread":                {100, 104, 99, 101, 102},
		"two repetitions":               {4603, 11117},
		"three: one would be alone":     {100, 100, 300},
		"a lone slow run is an outlier": {100, 101, 99, 102, 300},
		"a lone fast run too":           {30, 100, 101, 99, 102},
		"a repetition not measured":     {100, 100, math.NaN(), 300, 300},
		"a zero":                        {0, 0, 100, 100},
		"none":                          nil,
	} {
		r := Row{GPU: gpu}
		_, _, ok := r.Modes(DefaultModeGap)
		assert.False(t, ok, name)
		assert.Empty(t, r.MedianMode(DefaultModeGap), name)
	}
	r := Row{GPU: []float64{100, 100, 300, 300}}
	_, _, ok := r.Modes(DefaultModeGap)
	assert.True(t, ok, "four repetitions, two in each mode")
	for _, gap := range []float64{0, 1, -2, math.NaN()} {
		_, _, ok = r.Modes(gap)
		assert.False(t, ok, "gap %v splits nothing", gap)
	}
}

func TestModesAtTheGap(t *testing.T) {
	r := Row{GPU: []float64{150, 100, 150, 100}}
	fast, slow, ok := r.Modes(1.5)
	require.True(t, ok, "a jump of exactly the gap splits")
	assert.Equal(t, []float64{100, 100}, fast)
	assert.Equal(t, []float64{150, 150}, slow)
	r.GPU[0] = 149.9
	_, _, ok = r.Modes(1.5)
	assert.False(t, ok, "149.9 / 100 < 1.5")
	// Equal jumps: the lowest splits.
	r = Row{GPU: []float64{400, 200, 100, 400, 200, 100}}
	fast, slow, ok = r.Modes(1.5)
	require.True(t, ok)
	assert.Equal(t, []float64{100, 100}, fast)
	assert.Equal(t, []float64{200, 200, 400, 400}, slow)
}

// handModeRows are the rows TestSummarizeModes works out by hand.
func handModeRows() []Row {
	return []Row{
		// A: fast {98, 100, 102} (median 100), slow {200, 210} (205);
		// median 102, fast. Sim 180: +76.47% against the median, +80%
		// against the fast mode, -12.20% against the slow: nearer slow.
		{Group: "A", Scheduler: "set-3", GPU: []float64{100, 102, 98, 200, 210}, Sim: 180},
		// B: fast {190, 200} (195), slow {400, 410, 420} (410); median
		// 400, slow. Sim 210: -47.5% against the median, +7.69% against
		// the fast mode, -48.78% against the slow: nearer fast.
		{Group: "B", Scheduler: "set-3", GPU: []float64{400, 200, 410, 190, 420}, Sim: 210},
		// C: fast {100, 100}, slow {300, 300}; median 200, between the
		// modes. Sim 300: +50% against the median, 0 against the slow.
		{Group: "C", Scheduler: "set-2", GPU: []float64{100, 100, 300, 300}, Sim: 300},
		// D: one mode; E: one slow run, an outlier. Neither is bimodal.
		{Group: "D", Scheduler: "ring", GPU: []float64{100, 104, 99, 101, 102}, Sim: 50},
		{Group: "E", Scheduler: "ring", GPU: []float64{100, 101, 99, 102, 300}, Sim: 50},
		// F: bimodal (median 30, slow) with no simulated makespan: counted,
		// in no error.
		{Group: "F", Scheduler: "set-5", GPU: []float64{10, 10, 30, 30, 30}},
	}
}

func TestSummarizeModes(t *testing.T) {
	s := Summarize(handModeRows(), DefaultOptions())
	assert.Equal(t, 4, s.BimodalRows, "A, B, C and F")
	assert.Equal(t, 2, s.BimodalMedianSlow, "B and F; C's median is between the modes")
	assert.Equal(t, 1, s.BimodalSimFast, "B; A and C are nearer the slow mode, F has no simulated makespan")
	// Against the median: (78/102 + 47.5% + 50%) / 3 = 57.99%; against
	// the nearer mode: (25/205 + 15/195 + 0) / 3 = 6.63%.
	assert.InDelta(t, (78.0/102*100+47.5+50)/3, float64(s.BimodalMAPE), 1e-9)
	assert.InDelta(t, (25.0/205*100+15.0/195*100)/3, float64(s.BimodalModeMAPE), 1e-9)
	assert.Equal(t, 6, s.Rows)

	// A gap of 2.5 splits only C and F (3x); none of them has its
	// simulated makespan nearer the fast mode.
	opt := DefaultOptions()
	opt.ModeGap = 2.5
	s = Summarize(handModeRows(), opt)
	assert.Equal(t, 2, s.BimodalRows)
	assert.Equal(t, 1, s.BimodalMedianSlow)
	assert.Equal(t, 0, s.BimodalSimFast)
	assert.InDelta(t, 50, float64(s.BimodalMAPE), 1e-9)
	assert.InDelta(t, 0, float64(s.BimodalModeMAPE), 1e-9)

	// Options without a gap split nothing; the figures are null in JSON.
	s = Summarize(handModeRows(), Options{Separation: 0.05, Tie: 0.01})
	assert.Zero(t, s.BimodalRows)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, 0.0, m["bimodal_rows"])
	assert.Equal(t, 0.0, m["bimodal_median_slow_rows"])
	assert.Equal(t, 0.0, m["bimodal_sim_nearer_fast_rows"])
	assert.Contains(t, m, "bimodal_mape_pct")
	assert.Nil(t, m["bimodal_mape_pct"])
	assert.Nil(t, m["bimodal_nearest_mode_mape_pct"])
	assert.NotNil(t, m["makespan_mape_pct"], "the other figures are as before")
}
