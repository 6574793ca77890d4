package imported

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
)

// Five samples: the sign test's best bounds are the extremes, which hold
// the median with 1 - 2/32 confidence.
func TestMedianBoundsFiveSamples(t *testing.T) {
	lo, hi, conf := medianBounds([]float64{5, 1, 4, 2, 3})
	assert.Equal(t, 1.0, lo)
	assert.Equal(t, 5.0, hi)
	assert.InDelta(t, 0.9375, conf, 1e-12)
}

// A hundred samples: the 40th and 61st smallest (P(X <= 39) = 0.0176 for
// X ~ Binomial(100, 1/2), P(X <= 40) = 0.0284).
func TestMedianBoundsHundredSamples(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i) // 100 down to 1
	}
	lo, hi, conf := medianBounds(xs)
	assert.Equal(t, 40.0, lo)
	assert.Equal(t, 61.0, hi)
	assert.InDelta(t, 1-2*0.0176, conf, 1e-3)
}

func row(ns ...int64) *experiments.Row {
	s := experiments.MakespanSummary(ns)
	return &experiments.Row{MakespansNS: ns, Makespan: &s}
}

// Round i of the base against round i of the row, not medians apart.
func TestPairedIsRoundByRound(t *testing.T) {
	base := row(1000, 2000, 1000, 2000, 1000)
	r := row(500, 1000, 500, 1000, 500) // twice as fast in every round
	p, ok := paired(base, r)
	require.True(t, ok)
	assert.Equal(t, interval{med: 2, lo: 2, hi: 2, conf: 0.9375}, p)

	_, ok = paired(base, row(1000))
	assert.False(t, ok, "different repetition counts cannot pair")
}

func TestOverPyTorchBoundsBothMedians(t *testing.T) {
	g := &stat{Samples: []float64{100, 110, 90, 105, 95}}
	r := row(50000, 40000, 60000, 45000, 55000) // µs 40..60, median 50
	v, ok := overPyTorch(g, r)
	require.True(t, ok)
	assert.InDelta(t, 2.0, v.med, 1e-12)
	assert.InDelta(t, 90.0/60, v.lo, 1e-12)
	assert.InDelta(t, 110.0/40, v.hi, 1e-12)
	assert.InDelta(t, 0.875, v.conf, 1e-12)
}

func TestVerdict(t *testing.T) {
	assert.Equal(t, "+10.0% met", verdict(110, 100))
	assert.Equal(t, "-10.1% **not met**", verdict(89.9, 100))
}

// The second replay kernel's sets (named -v2) and the first's are read
// apart, so that the page can show the first's rows as superseded.
func TestNewDataKeepsKernelVersionsApart(t *testing.T) {
	set := func(name string, ns int64) *experiments.Results {
		r := row(ns)
		r.Workload, r.Scheduler, r.Device = "m-b1.graph", baseline, "h100"
		return &experiments.Results{Experiment: name, Rows: []experiments.Row{*r}}
	}
	in := &experiments.ReportInput{Sets: []*experiments.Results{set("imported-graph-sim", 1000), set("imported-graph-v2-sim", 800),
		set("imported-graph-v2-sim-o0", 700), set("imported-graph-v2-predict-sim", 600)}}
	v2, v1 := newData(in, true), newData(in, false)
	m, ok := v2.sim.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.8, m, 1e-9)
	m, ok = v2.sim0.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.7, m, 1e-9, "the v2 run at overhead_ns 0")
	m, ok = v1.sim.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 1.0, m, 1e-9)
	assert.Empty(t, v1.sim0)
	m, ok = v2.predict.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.6, m, 1e-9, "a prediction is kept apart from the simulator's rows")
	assert.Empty(t, v1.predict)
}
