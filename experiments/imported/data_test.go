package imported

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/workloads/file"
)

func row(ns ...int64) *experiments.Row {
	s := experiments.MakespanSummary(ns)
	return &experiments.Row{MakespansNS: ns, Makespan: &s}
}

// set is an experiment of one row: m-b1.graph under the baseline on the
// simulated h100, its makespan ns.
func set(name string, ns int64, params map[string]string) *experiments.Results {
	r := row(ns)
	r.Workload, r.Scheduler, r.Device, r.WorkloadParams = "m-b1.graph", baseline, "h100", params
	return &experiments.Results{Experiment: name, Rows: []experiments.Row{*r}}
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

// The runs are read apart: the second replay kernel's sets (named -v2)
// from the first's, and within the second those whose rows took
// profiler_ns off the recorded durations from those that did not, whatever
// their names, so that the page can lead with the newest run.
func TestNewDataKeepsRunsApart(t *testing.T) {
	p818 := map[string]string{"overhead_ns": "416", "profiler_ns": "818"}
	gpu := set("imported-graph-v2-p818", 550, p818)
	gpu.Rows[0].Device = experiments.CUDADevice
	in := &experiments.ReportInput{Sets: []*experiments.Results{set("imported-graph-sim", 1000, nil), set("imported-graph-v2-sim", 800, nil),
		set("imported-graph-v2-sim-o0", 700, nil), set("imported-graph-v2-predict-sim", 600, p818), gpu}}
	v2, v1, p := newData(in, runSecond), newData(in, runFirst), newData(in, runProfiler)
	m, ok := v2.sim.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.8, m, 1e-9)
	m, ok = v2.sim0.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.7, m, 1e-9, "the v2 run at overhead_ns 0")
	assert.Empty(t, v2.gpu)
	m, ok = v1.sim.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 1.0, m, 1e-9)
	assert.Empty(t, v1.sim0)
	m, ok = p.sim.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.6, m, 1e-9, "the simulator's rows with profiler_ns")
	m, ok = p.gpu.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.55, m, 1e-9, "the GPU's rows with profiler_ns")
	assert.Equal(t, "818", p.profiler)
	assert.Empty(t, v2.profiler)
	runs := readRuns(in)
	require.Len(t, runs, 3)
	assert.Equal(t, []replayRun{runProfiler, runSecond, runFirst}, []replayRun{runs[0].run, runs[1].run, runs[2].run}, "newest first")
	// The third kernel's sets (named -v3) lead.
	gpu3 := set("imported-graph-v3", 500, p818)
	gpu3.Rows[0].Device = experiments.CUDADevice
	in.Sets = append(in.Sets, set("imported-graph-v3-sim", 510, p818), gpu3)
	runs = readRuns(in)
	require.Len(t, runs, 4)
	assert.Equal(t, runThird, runs[0].run)
	m, ok = runs[0].gpu.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.5, m, 1e-9, "the third kernel's GPU rows")
	assert.Equal(t, runProfiler, runs[1].run, "the second kernel's rows with profiler_ns stay apart from the third's")
	m, ok = runs[1].gpu.median("m-b1.graph", baseline)
	require.True(t, ok)
	assert.InDelta(t, 0.55, m, 1e-9)
	assert.Contains(t, predictedIntro(runs[0], runs[1]), "the second version; overhead_ns 416")
}

// The prediction section counts each column against PyTorch's graph
// replay and the prediction against the measurement, by hand: PyTorch
// 100 µs, before 130 (+30%), predicted 105 (+5%), measured 112 (+12%),
// predicted against measured -6.25%.
func TestWritePredictedCounts(t *testing.T) {
	at := func(ns int64) table {
		r := row(ns)
		return table{{"m-b1", baseline}: r, {"m-b1.graph", baseline}: r}
	}
	p := &data{gpu: at(112000), sim: at(105000), pred: at(105000), profiler: "818"}
	before := &data{gpu: at(130000)}
	c := capture{Models: []model{{Model: "m", Batch: 1, Tag: "m-b1", Graph: &stat{Median: 100}}}}
	var b bytes.Buffer
	writePredicted(&b, c, p, before, predictedIntro(p, before))
	out := b.String()
	assert.Contains(t, out, "profiler_ns (818)")
	assert.Contains(t, out, "| m | 1 | 100.0 | 130.0 | +30.0% **not met** | 105.0 | +5.0% met | 112.0 | +12.0% **not met** | -6.2% met |")
	assert.Contains(t, out, "Eager imports within 10% of PyTorch's graph replay: before 0 of 1, predicted 1 of 1, measured 0 of 1; prediction within 10% of the measurement 1 of 1.")
	assert.Contains(t, out, "Graph-replay traces within 10% of PyTorch's graph replay: before 0 of 1, predicted 1 of 1, measured 0 of 1")
	assert.NotContains(t, out, "sim at measured")
	// The simulator at the measured values (110 µs) beside the prediction:
	// -1.8% against the measurement.
	p.sim, p.measured = at(110000), true
	b.Reset()
	writePredicted(&b, c, p, before, predictedIntro(p, before))
	out = b.String()
	assert.Contains(t, out, "| 105.0 | +5.0% met | 112.0 | +12.0% **not met** | -6.2% met | 110.0 | -1.8% met |")
	assert.Contains(t, out, "prediction within 10% of the measurement 1 of 1; the simulator at the measured values within 10% of the measurement 1 of 1.")
}

// The fourth kernel's sets lead; a simulator set named -measured fills
// the rows set against the GPU's, the prediction's stay as pred.
func TestFourthKernelAndMeasuredSim(t *testing.T) {
	p818 := map[string]string{"profiler_ns": "818"}
	gpu3, gpu4 := set("imported-graph-v3", 500, p818), set("imported-graph-v4", 400, p818)
	gpu3.Rows[0].Device, gpu4.Rows[0].Device = experiments.CUDADevice, experiments.CUDADevice
	in := &experiments.ReportInput{Sets: []*experiments.Results{gpu3, set("imported-graph-v3-sim", 510, p818), gpu4,
		set("imported-graph-v4-sim", 380, p818), set("imported-graph-v4-sim-measured", 390, p818)}}
	runs := readRuns(in)
	require.Len(t, runs, 2)
	assert.Equal(t, runFourth, runs[0].run)
	assert.True(t, runs[0].measured)
	assert.False(t, runs[1].measured)
	for _, c := range []struct {
		t    table
		want float64
	}{{runs[0].gpu, 0.4}, {runs[0].sim, 0.39}, {runs[0].pred, 0.38}, {runs[1].sim, 0.51}, {runs[1].pred, 0.51}} {
		m, ok := c.t.median("m-b1.graph", baseline)
		require.True(t, ok)
		assert.InDelta(t, c.want, m, 1e-9)
	}
	assert.Contains(t, predictedIntro(runs[0], runs[1]), "the third version; overhead_ns")
	assert.Contains(t, predictedIntro(runs[0], runs[1]), "\"sim at measured\"")
}

// The fourth kernel's sets lead the fifth's (not adopted), which come
// next; the prediction's "before" is the third's.
func TestFifthKernelFollowsFourth(t *testing.T) {
	p818 := map[string]string{"profiler_ns": "818"}
	gpu3, gpu4, gpu5 := set("imported-graph-v3", 500, p818), set("imported-graph-v4", 400, p818), set("imported-graph-v5", 420, p818)
	gpu3.Rows[0].Device, gpu4.Rows[0].Device, gpu5.Rows[0].Device = experiments.CUDADevice, experiments.CUDADevice, experiments.CUDADevice
	in := &experiments.ReportInput{Sets: []*experiments.Results{gpu3, gpu5, set("imported-graph-v5-sim", 385, p818), gpu4}}
	runs := readRuns(in)
	require.Len(t, runs, 3)
	assert.Equal(t, []replayRun{runFourth, runFifth, runThird}, []replayRun{runs[0].run, runs[1].run, runs[2].run})
	assert.Same(t, runs[2], runBefore(runs))
	assert.Equal(t, fifthKernelIntro, earlierIntro(runs[1].run))
	assert.Contains(t, kernelOf(runs[1]), "the fifth version")
}

// The floor's cost by hand: blocks of 200 ns (1 wave) and 500 ns (2
// waves) under a 1,000 ns floor cost 800 + 2 x 500 ns = 1.8 µs, a 2,000 ns
// block nothing; with a rest of 9 µs against PyTorch's 100 µs, the
// replay meets 10% while the floor costs at most 1 µs: up to a floor of
// 733 ns (533 + 2 x 233 = 999 ns; 734 costs 1,002).
func TestFloorCost(t *testing.T) {
	blocks := []file.ReplayBlock{{NS: 200, Waves: 1}, {NS: 500, Waves: 2}, {NS: 2000, Waves: 1}}
	us, below := floorCost(blocks, 1000)
	assert.InDelta(t, 1.8, us, 1e-9)
	assert.Equal(t, 2, below)
	assert.Equal(t, 733, floorFor(blocks, 9, 100, 1000))
	assert.Equal(t, -1, floorFor(blocks, 10.5, 100, 1000), "the rest alone misses 10%")
	assert.Equal(t, 1000, floorFor(blocks, 0, 100, 1000), "met at the floor itself")
}

// The sixth kernel's sets lead; the fourth's, which it replaced, are its
// prediction's "before" and the first earlier section.
func TestSixthKernelLeads(t *testing.T) {
	p818 := map[string]string{"profiler_ns": "818"}
	gpu4, gpu5, gpu6 := set("imported-graph-v4", 400, p818), set("imported-graph-v5", 420, p818), set("imported-graph-v6", 380, p818)
	gpu4.Rows[0].Device, gpu5.Rows[0].Device, gpu6.Rows[0].Device = experiments.CUDADevice, experiments.CUDADevice, experiments.CUDADevice
	in := &experiments.ReportInput{Sets: []*experiments.Results{gpu4, gpu5, gpu6, set("imported-graph-v6-sim", 385, p818)}}
	runs := readRuns(in)
	require.Len(t, runs, 3)
	assert.Equal(t, []replayRun{runSixth, runFourth, runFifth}, []replayRun{runs[0].run, runs[1].run, runs[2].run})
	assert.Same(t, runs[1], runBefore(runs))
	assert.Equal(t, fourthKernelIntro, earlierIntro(runs[1].run))
	assert.Contains(t, kernelOf(runs[0]), "the sixth version")
	assert.Contains(t, predictedIntro(runs[0], runs[1]), "the fourth version; overhead_ns")
}
