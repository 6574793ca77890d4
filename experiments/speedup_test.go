package experiments

import (
	"bytes"
	"encoding/csv"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments/figures"
)

func TestRowSpeedupMethods(t *testing.T) {
	base := &Row{MakespansNS: []int64{100, 110, 120, 100, 105, 130}}
	// Six pairs: ratios 2, 2.2, 2.4, 1, 1.05, 1.3; sorted 1, 1.05, 1.3, 2,
	// 2.2, 2.4; median (1.3+2)/2; with 6 pairs the sign-test interval is
	// the smallest and largest ratio.
	row := &Row{MakespansNS: []int64{50, 50, 50, 100, 100, 100}}
	e := rowSpeedup(base, row)
	assert.Equal(t, MethodPaired, e.Method)
	assert.Equal(t, 6, e.N)
	assert.InDelta(t, 1.65, e.Value, 1e-9)
	assert.InDelta(t, 1.0, e.Lo, 1e-9)
	assert.InDelta(t, 2.4, e.Hi, 1e-9)

	// Three pairs that disagree: no interval; three that agree (the
	// simulator): an interval of zero width.
	e = rowSpeedup(&Row{MakespansNS: []int64{100, 100, 100}}, &Row{MakespansNS: []int64{50, 40, 100}})
	assert.InDelta(t, 2.0, e.Value, 1e-9)
	assert.True(t, math.IsNaN(e.Lo) && math.IsNaN(e.Hi))
	e = rowSpeedup(&Row{MakespansNS: []int64{100, 100, 100}}, &Row{MakespansNS: []int64{40, 40, 40}})
	assert.Equal(t, Estimate{Value: 2.5, Lo: 2.5, Hi: 2.5, N: 3, Method: MethodPaired}, e)

	// Interleaved rows carry their estimate; unpaired counts fall back to
	// the ratio of medians.
	row.PairedSpeedup = &Paired{N: 6, Median: 1.5, Lo: 1.2, Hi: 1.9}
	assert.Equal(t, Estimate{Value: 1.5, Lo: 1.2, Hi: 1.9, N: 6, Method: MethodInterleaved}, rowSpeedup(base, row))
	s := 1.25
	e = rowSpeedup(base, &Row{MakespansNS: []int64{80}, Speedup: &s})
	assert.Equal(t, MethodMedians, e.Method)
	assert.Equal(t, 1.25, e.Value)
	assert.True(t, math.IsNaN(e.Lo))
}

func TestMeanOverSeeds(t *testing.T) {
	// Mean 2, sample std 1 over 3 seeds: half-width t(0.975, 2)/sqrt(3) =
	// 4.302653/1.732051 = 2.484138.
	e := MeanOverSeeds([]Estimate{{Value: 1}, {Value: 2}, {Value: 3}})
	assert.Equal(t, MethodSeeds, e.Method)
	assert.InDelta(t, 2, e.Value, 1e-12)
	assert.InDelta(t, 2-2.4841, e.Lo, 1e-4)
	assert.InDelta(t, 2+2.4841, e.Hi, 1e-4)
	one := Estimate{Value: 1.5, Lo: 1.4, Hi: 1.6, N: 6, Method: MethodInterleaved}
	assert.Equal(t, one, MeanOverSeeds([]Estimate{one}), "one seed: its own estimate")
}

func TestRepetitionsCSV(t *testing.T) {
	r := handResults()
	r.Rows[1].SchedulerStats = map[string]float64{"waits": 3}
	r.Rows[1].SchedulerParams = map[string]string{"k": "2"}
	r.Rows[0].WorkloadParams = map[string]string{"width": "8"}
	data, err := RepetitionsCSV(r)
	require.NoError(t, err)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	// Five rows of two repetitions and the failed row's single line.
	require.Len(t, recs, 1+5*2+1)
	head := recs[0]
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, c := range []string{"workload.width", "scheduler.k", "stat.waits", "repetition", "makespan_ns", "baseline_makespan_ns", "speedup"} {
		require.Contains(t, col, c)
	}
	rr2 := recs[3] // row 1 (a / rr2), repetition 0
	assert.Equal(t, "rr2", rr2[col["scheduler"]])
	assert.Equal(t, "0", rr2[col["repetition"]])
	assert.Equal(t, "50000", rr2[col["makespan_ns"]])
	assert.Equal(t, "100000", rr2[col["baseline_makespan_ns"]])
	assert.Equal(t, "2", rr2[col["speedup"]])
	assert.Equal(t, "3", rr2[col["stat.waits"]])
	assert.Equal(t, "2", rr2[col["scheduler.k"]])
	failed := recs[11]
	assert.Equal(t, "", failed[col["repetition"]])
	assert.Contains(t, failed[col["errors"]], "deadlock")

	sum, err := CSV(r)
	require.NoError(t, err)
	recs, err = csv.NewReader(bytes.NewReader(sum)).ReadAll()
	require.NoError(t, err)
	col = map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	assert.Equal(t, "2", recs[2][col["speedup_paired"]])
	assert.Equal(t, "2", recs[2][col["speedup_ci95_lo"]])
	assert.Equal(t, MethodPaired, recs[2][col["speedup_method"]])
	assert.Equal(t, "50000 50000", recs[2][col["makespans_ns"]])
	assert.Equal(t, "3", recs[2][col["stat.waits"]])
}

func TestSweepChartAveragesSeeds(t *testing.T) {
	r := &Results{Experiment: "s", Baseline: "serial", Repetitions: 1,
		Sweep: []SweepParam{{Name: "workloads.dag.width", Values: []string{"2", "4"}}, {Name: "seed", Values: []string{"1", "2"}}}}
	speed := map[[2]string]int64{{"2", "1"}: 50, {"2", "2"}: 40, {"4", "1"}: 33, {"4", "2"}: 33}
	group := 0
	for _, w := range []string{"2", "4"} {
		for _, seed := range []string{"1", "2"} {
			pt := []Assignment{{Name: "workloads.dag.width", Value: w}, {Name: "seed", Value: seed}}
			r.Rows = append(r.Rows,
				Row{Index: len(r.Rows), Group: group, Point: pt, Workload: "dag", Scheduler: "serial", Baseline: true, Device: "h100", MakespansNS: []int64{100}},
				Row{Index: len(r.Rows) + 1, Group: group, Point: pt, Workload: "dag", Scheduler: "rr", Device: "h100", MakespansNS: []int64{speed[[2]string{w, seed}]}})
			group++
		}
	}
	var sweep *figures.LineChart
	var names []string
	for _, c := range Charts(r) {
		names = append(names, c.Name)
		if c.Name == "sweep-dag-width" {
			sweep = c.Chart.(*figures.LineChart)
		}
	}
	assert.Equal(t, []string{"speedup-dag", "sweep-dag-width"}, names, "no line chart against the seed")
	require.NotNil(t, sweep)
	assert.Equal(t, []string{"2", "4"}, sweep.XCategories)
	require.Len(t, sweep.Panels, 1)
	assert.Equal(t, "h100", sweep.Panels[0].Title)
	pts := sweep.Panels[0].Lines[0].Points
	require.Len(t, pts, 2)
	// width 2: seeds give 2 and 2.5, mean 2.25, t interval 2.25 ± 12.706*0.25/... ;
	// width 4: both 3.0303, an interval of zero width.
	assert.InDelta(t, 2.25, pts[0].Y, 1e-9)
	assert.InDelta(t, 2.25-12.7062*0.353553/math.Sqrt2, pts[0].Lo, 1e-3)
	assert.InDelta(t, 3.0303, pts[1].Y, 1e-9)
	assert.Equal(t, pts[1].Y, pts[1].Lo)

	bars := Charts(r)[0].Chart.(*figures.BarChart)
	assert.Equal(t, []string{"h100 width=2", "h100 width=4"}, []string{bars.Groups[0].Label, bars.Groups[1].Label},
		"bars group by point without the seed")
	assert.InDelta(t, 2.25, bars.Groups[0].Bars[0].Value, 1e-9)
}
