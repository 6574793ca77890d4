package fidelity

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handRows are four groups whose every metric is worked out by hand in
// TestSummarizeHandRows.
func handRows() []Row {
	return []Row{
		// Group A: the simulator shrinks serial, inflates rr4, and puts
		// rr2 just ahead of rr4 where the GPU has rr4 9 ahead.
		{Group: "A", Scheduler: "serial", Baseline: true, GPU: []float64{100, 104, 96}, Sim: 80, Rerun: 110},
		{Group: "A", Scheduler: "rr2", GPU: []float64{50, 50}, Sim: 60},
		{Group: "A", Scheduler: "rr4", GPU: []float64{40, 42}, Sim: 61},
		{Group: "A", Scheduler: "rr8", GPU: []float64{41.5}, Sim: 30},
		// Group B: a pair 2x apart on the GPU that the simulator ties.
		{Group: "B", Scheduler: "serial", Baseline: true, GPU: []float64{190, 200, 210}, Sim: 100},
		{Group: "B", Scheduler: "x", GPU: []float64{100, 100}, Sim: 100.5, Rerun: 95},
		// Group C: no GPU measurement; counts as a row, in no metric.
		{Group: "C", Scheduler: "serial", Baseline: true, Sim: 7},
		// Group D: no baseline; the simulator picks right.
		{Group: "D", Scheduler: "a", GPU: []float64{9, 10, 11}, Sim: 5},
		{Group: "D", Scheduler: "b", GPU: []float64{20, 22}, Sim: 9},
	}
}

func TestSummarizeHandRows(t *testing.T) {
	s := Summarize(handRows(), DefaultOptions())
	assert.Equal(t, 9, s.Rows)

	// Makespan errors (sim - GPU) / GPU: A -20, +20, +48.78 (61/41), -27.71
	// (30/41.5); B -50, +0.5; D -50, -57.14 (9/21).
	abs := []float64{20, 20, 20.0 / 41 * 100, 11.5 / 41.5 * 100, 50, 0.5, 50, 12.0 / 21 * 100}
	var sum float64
	for _, x := range abs {
		sum += x
	}
	assert.InDelta(t, sum/8, float64(s.MakespanMAPE), 1e-9)
	assert.InDelta(t, (11.5/41.5*100+20.0/41*100)/2, float64(s.MedianErr), 1e-9)
	assert.InDelta(t, 12.0/21*100, float64(s.MaxErr), 1e-9)
	assert.InDelta(t, (-11.5/41.5*100-20)/2, float64(s.Bias), 1e-9)
	assert.Equal(t, 5, s.SimFaster)

	// Speedups: A rr2 (80/60 vs 2), rr4 (80/61 vs 100/41), rr8 (80/30 vs
	// 100/41.5); B x (100/100.5 vs 2). D has no baseline.
	sp := []float64{
		(80.0/60 - 2) / 2 * 100,
		(80.0/61 - 100.0/41) / (100.0 / 41) * 100,
		(80.0/30 - 100.0/41.5) / (100.0 / 41.5) * 100,
		(100.0/100.5 - 2) / 2 * 100,
	}
	assert.Equal(t, 4, s.SpeedupRows)
	assert.InDelta(t, (math.Abs(sp[0])+math.Abs(sp[1]))/2, float64(s.SpeedupMedianErr), 1e-9)
	assert.InDelta(t, math.Abs(sp[3]), float64(s.SpeedupMaxErr), 1e-9)

	// Pairs: A separates 5 of 6 (rr4/rr8 are 0.5 apart), the simulator
	// reverses rr2/rr4; B's pair is tied; D's is the same.
	assert.Equal(t, 7, s.Pairs)
	assert.Equal(t, 5, s.Same)
	assert.Equal(t, 1, s.Tied)
	assert.Equal(t, 1, s.Reversed)

	// Picks: A sim rr8 (GPU 41.5, best rr4 41); B ties serial and x, and
	// the GPU's best x is among them, but so is serial (200, best 100);
	// D agrees.
	assert.Equal(t, 3, s.Groups)
	assert.Equal(t, 2, s.BestAgree)
	assert.InDelta(t, (41.5/41-1)*100, float64(s.RegretMedian), 1e-9)
	assert.InDelta(t, 100, float64(s.RegretMax), 1e-9)

	// Spread over rows with 2+ repetitions: 8, 0, 4.88, 10, 0, 20, 9.52.
	assert.Equal(t, 7, s.SpreadRows)
	assert.InDelta(t, 8, float64(s.SpreadMedian), 1e-9)
	assert.InDelta(t, 20, float64(s.SpreadMax), 1e-9)
	assert.Equal(t, 2, s.RerunRows)
	assert.InDelta(t, 7.5, float64(s.RerunMAPE), 1e-9)
	assert.InDelta(t, 10, float64(s.RerunMax), 1e-9)
}

func TestOrderThresholds(t *testing.T) {
	rows := func(gpuB, simB float64) []Row {
		return []Row{
			{Group: "g", Scheduler: "a", GPU: []float64{100}, Sim: 100},
			{Group: "g", Scheduler: "b", GPU: []float64{gpuB}, Sim: simB},
		}
	}
	opt := DefaultOptions()
	// Exactly 5% apart on the GPU is not clearly separated.
	s := Summarize(rows(105, 200), opt)
	assert.Equal(t, 0, s.Pairs)
	s = Summarize(rows(105.01, 200), opt)
	assert.Equal(t, 1, s.Same)
	// Exactly 1% apart in the simulator is a tie; beyond it, an order.
	s = Summarize(rows(110, 101), opt)
	assert.Equal(t, 1, s.Tied)
	s = Summarize(rows(110, 99), opt)
	assert.Equal(t, 1, s.Reversed)
	// Other thresholds change the verdicts.
	s = Summarize(rows(110, 101), Options{Separation: 0.2, Tie: 0.001})
	assert.Equal(t, 0, s.Pairs)
	s = Summarize(rows(110, 101), Options{Separation: 0.05, Tie: 0.001})
	assert.Equal(t, 1, s.Same)
}

func TestPickTakesTheWorstOfTies(t *testing.T) {
	rows := []Row{
		{Group: "g", Scheduler: "slow-on-gpu", GPU: []float64{150}, Sim: 10},
		{Group: "g", Scheduler: "fast-on-gpu", GPU: []float64{100}, Sim: 10.1},
		{Group: "g", Scheduler: "slowest", GPU: []float64{300}, Sim: 20},
	}
	s := Summarize(rows, DefaultOptions())
	assert.Equal(t, 1, s.BestAgree, "the GPU's best is among the simulator's tied fastest")
	assert.InDelta(t, 50, float64(s.RegretMedian), 1e-9, "the worst of the tied picks")
	// Without the tie the simulator picks slow-on-gpu alone.
	s = Summarize(rows, Options{Separation: 0.05, Tie: 0.001})
	assert.Equal(t, 0, s.BestAgree)
	assert.InDelta(t, 50, float64(s.RegretMax), 1e-9)
	rows[0].Sim = 10.2
	s = Summarize(rows, Options{Separation: 0.05, Tie: 0.001})
	assert.Equal(t, 1, s.BestAgree)
	assert.InDelta(t, 0, float64(s.RegretMax), 1e-9)
}

func TestEmptySummaryIsNull(t *testing.T) {
	s := Summarize(nil, DefaultOptions())
	assert.False(t, s.MakespanMAPE.Valid())
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Nil(t, m["makespan_mape_pct"])
	assert.Equal(t, "-", s.RegretMax.String())

	var back Summary
	require.NoError(t, json.Unmarshal(b, &back))
	assert.False(t, back.SpeedupMaxErr.Valid())
}

func TestPctRoundsInJSON(t *testing.T) {
	b, err := json.Marshal(Pct(12.3456))
	require.NoError(t, err)
	assert.Equal(t, "12.35", string(b))
	assert.Equal(t, "12.3%", Pct(12.3456).String())
}
