package experiments

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpusched/gpusched/experiments/figures"
)

// Plot is one figure file.
type Plot struct {
	File string
	Data []byte
}

// Chart is one figure of a result set: its file name without extension,
// the workload it is about, a one-line description for the report, and
// the chart.
type Chart struct {
	Name, Workload, Alt string
	Chart               figures.Chart
}

// Charts are the figures of r: for every workload, every scheduler's
// speedup over the baseline (bars with 95% intervals, by device and sweep
// point, seeds averaged; mean makespans where there is no baseline); for
// every workload and swept parameter other than the seed, the speedup
// against that parameter (lines, seeds averaged); for every (workload,
// device, point) the SM utilization of every scheduler over its timed
// run.
func Charts(r *Results) []Chart {
	est := r.Speedups()
	var out []Chart
	for _, wl := range Distinct(r.Rows, func(row *Row) string { return row.Workload }) {
		out = append(out, Chart{Name: "speedup-" + sanitize(wl), Workload: wl,
			Alt: "speedup of each scheduler on " + wl, Chart: barChart(r, wl, est)})
		for _, p := range r.Sweep {
			if p.Name == "seed" || len(p.Values) < 2 {
				continue
			}
			out = append(out, Chart{Name: "sweep-" + sanitize(wl) + "-" + sanitize(shortParam(p.Name)), Workload: wl,
				Alt: "speedup against " + p.Name + " on " + wl, Chart: sweepChart(r, wl, p, est)})
		}
	}
	for _, p := range utilPlots(r) {
		out = append(out, Chart{Name: p.file, Workload: p.workload, Alt: "SM utilization over time: " + p.title, Chart: utilChart(p)})
	}
	uniqueChartNames(out)
	return out
}

// uniqueChartNames gives charts whose names coincide after sanitizing
// (workloads "Small" and "small", two non-Latin names) a hash of what
// they show, so that no chart's files overwrite another's.
func uniqueChartNames(charts []Chart) {
	count := map[string]int{}
	for _, c := range charts {
		count[c.Name]++
	}
	for i := range charts {
		if c := &charts[i]; count[c.Name] > 1 {
			c.Name += "-" + hash8(c.Alt)
		}
	}
}

// Plots renders Charts(r) in each of formats (svg, pdf).
func Plots(r *Results, formats []string) ([]Plot, error) {
	var out []Plot
	for _, c := range Charts(r) {
		for _, f := range formats {
			data, err := figures.Render(c.Chart, f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			out = append(out, Plot{File: c.Name + "." + f, Data: data})
		}
	}
	return out, nil
}

// shortParam is a swept parameter's name without its section and entry
// for workloads (workloads.dag.width: width) and without its section for
// schedulers (schedulers.rr.k: rr.k).
func shortParam(name string) string {
	parts := strings.SplitN(name, ".", 3)
	switch {
	case len(parts) == 3 && parts[0] == "workloads":
		return parts[2]
	case len(parts) == 3 && parts[0] == "schedulers":
		return parts[1] + "." + parts[2]
	}
	return name
}

// pointLabel is a sweep point without the seed and without the parameter
// skip, in short names.
func pointLabel(pt []Assignment, skip string) string {
	var parts []string
	for _, a := range pt {
		if a.Name != "seed" && a.Name != skip {
			parts = append(parts, shortParam(a.Name)+"="+a.Value)
		}
	}
	return strings.Join(parts, " ")
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// cell collects the estimates of one scheduler in one group over seeds.
type cell struct {
	ests   []Estimate
	failed bool
}

// schedulersOf lists the non-baseline schedulers of a workload, in order.
func schedulersOf(r *Results, wl string) []string {
	var rows []Row
	for _, row := range r.Rows {
		if row.Workload == wl && (!row.Baseline || r.Baseline == "") {
			rows = append(rows, row)
		}
	}
	return Distinct(rows, func(row *Row) string { return row.Scheduler })
}

func barChart(r *Results, wl string, est map[int]Estimate) *figures.BarChart {
	if r.Baseline == "" {
		return makespanChart(r, wl)
	}
	series := schedulersOf(r, wl)
	var groups []string
	cells := map[string]map[string]*cell{}
	methods := map[string]bool{}
	for _, row := range r.Rows {
		if row.Workload != wl || row.Baseline {
			continue
		}
		g := joinNonEmpty(row.Device, pointLabel(row.Point, ""))
		if cells[g] == nil {
			cells[g] = map[string]*cell{}
			groups = append(groups, g)
		}
		c := cells[g][row.Scheduler]
		if c == nil {
			c = &cell{}
			cells[g][row.Scheduler] = c
		}
		if e, ok := est[row.Index]; ok && !math.IsNaN(e.Value) {
			c.ests = append(c.ests, e)
			methods[e.Method] = true
		} else {
			c.failed = true
		}
	}
	chart := &figures.BarChart{Title: wl + ": speedup over " + r.Baseline, ValueLabel: "speedup over " + r.Baseline + " (x)",
		Reference: 1, Series: series}
	for _, g := range groups {
		bg := figures.BarGroup{Label: g}
		for _, s := range series {
			c := cells[g][s]
			if c == nil {
				continue
			}
			bg.Bars = append(bg.Bars, cellBar(s, c))
		}
		chart.Groups = append(chart.Groups, bg)
	}
	chart.Note = estimateNote(methods, hasSeeds(r))
	return chart
}

func cellBar(series string, c *cell) figures.Bar {
	if len(c.ests) == 0 {
		why := "n/a"
		if c.failed {
			why = "error"
		}
		return figures.Bar{Series: series, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Missing: why}
	}
	e := MeanOverSeeds(c.ests)
	return figures.Bar{Series: series, Value: e.Value, Lo: e.Lo, Hi: e.Hi}
}

func hasSeeds(r *Results) bool {
	for _, p := range r.Sweep {
		if p.Name == "seed" && len(p.Values) > 1 {
			return true
		}
	}
	return false
}

// estimateNote is the caption that says how the values and whiskers were
// estimated.
func estimateNote(methods map[string]bool, seeds bool) string {
	var parts []string
	if methods[MethodInterleaved] {
		parts = append(parts, "interleaved GPU rounds: median of the per-round speedups")
	}
	if methods[MethodPaired] {
		parts = append(parts, "repetition i against the baseline's repetition i: median of the ratios")
	}
	if methods[MethodMedians] {
		parts = append(parts, "unpaired rows: ratio of median makespans, no interval")
	}
	s := "Speedup = baseline makespan / scheduler makespan; " + strings.Join(parts, "; ") +
		". Whiskers: 95% confidence interval of that median (sign test; none below 6 pairs unless all ratios agree)."
	if seeds {
		s += " Over seeds: the mean of the seeds' speedups, whiskers Student's t 95% interval over seeds."
	}
	return s
}

// makespanChart is the mean makespan of every scheduler with its 95%
// interval, for results without a baseline.
func makespanChart(r *Results, wl string) *figures.BarChart {
	series := schedulersOf(r, wl)
	chart := &figures.BarChart{Title: wl + ": makespan (no baseline to compare with)", ValueLabel: "makespan, mean (µs)", Series: series,
		Note: "Bars: mean makespan over the measured repetitions; whiskers: Student's t 95% confidence interval of the mean."}
	idx := map[string]int{}
	for _, row := range r.Rows {
		if row.Workload != wl {
			continue
		}
		g := joinNonEmpty(row.Device, pointLabel(row.Point, ""))
		if _, ok := idx[g]; !ok {
			idx[g] = len(chart.Groups)
			chart.Groups = append(chart.Groups, figures.BarGroup{Label: g})
		}
		b := figures.Bar{Series: row.Scheduler, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Missing: "error"}
		if s := row.Makespan; s != nil && s.N > 0 && len(row.Errors) == 0 {
			b = figures.Bar{Series: row.Scheduler, Value: s.Mean, Lo: s.CI95Lo, Hi: s.CI95Hi}
		}
		grp := &chart.Groups[idx[g]]
		grp.Bars = append(grp.Bars, b)
	}
	return chart
}
