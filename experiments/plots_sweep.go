package experiments

import (
	"math"

	"github.com/gpusched/gpusched/experiments/figures"
)

// sweepChart is the speedup of every scheduler of workload wl against the
// swept parameter p: one panel per device and combination of the other
// swept parameters, seeds averaged.
func sweepChart(r *Results, wl string, p SweepParam, est map[int]Estimate) *figures.LineChart {
	series := schedulersOf(r, wl)
	xOf := map[string]int{}
	for i, v := range p.Values {
		xOf[v] = i
	}
	type key struct{ panel, sched string }
	cells := map[key][]*cell{}
	var panels []string
	seen := map[string]bool{}
	methods := map[string]bool{}
	for _, row := range r.Rows {
		if row.Workload != wl || row.Baseline {
			continue
		}
		x, ok := -1, false
		for _, a := range row.Point {
			if a.Name == p.Name {
				x, ok = xOf[a.Value], true
			}
		}
		if !ok {
			continue
		}
		panel := joinNonEmpty(row.Device, pointLabel(row.Point, p.Name))
		if !seen[panel] {
			seen[panel] = true
			panels = append(panels, panel)
		}
		k := key{panel, row.Scheduler}
		if cells[k] == nil {
			cells[k] = make([]*cell, len(p.Values))
		}
		if cells[k][x] == nil {
			cells[k][x] = &cell{}
		}
		if e, ok := est[row.Index]; ok && !math.IsNaN(e.Value) {
			cells[k][x].ests = append(cells[k][x].ests, e)
			methods[e.Method] = true
		}
	}
	chart := &figures.LineChart{Title: wl + ": speedup over " + r.Baseline + " against " + p.Name,
		XLabel: shortParam(p.Name), YLabel: "speedup over " + r.Baseline + " (x)", XCategories: p.Values,
		Reference: 1, Series: series, Note: estimateNote(methods, hasSeeds(r))}
	for _, panel := range panels {
		lp := figures.LinePanel{Title: panel}
		for _, s := range series {
			xs := cells[key{panel, s}]
			if xs == nil {
				continue
			}
			line := figures.Line{Series: s}
			for x, c := range xs {
				pt := figures.Point{X: float64(x), Y: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
				if c != nil && len(c.ests) > 0 {
					e := MeanOverSeeds(c.ests)
					pt.Y, pt.Lo, pt.Hi = e.Value, e.Lo, e.Hi
				}
				line.Points = append(line.Points, pt)
			}
			lp.Lines = append(lp.Lines, line)
		}
		chart.Panels = append(chart.Panels, lp)
	}
	if r.Baseline == "" {
		chart.Title, chart.YLabel, chart.Reference = wl+": no baseline, no speedups", "speedup", 0
	}
	return chart
}

// utilPlot is one utilization chart: the rows of one (workload, device,
// point) that have utilization series.
type utilPlot struct {
	workload, title, file string
	rows                  []*Row
}

func utilPlots(r *Results) []utilPlot {
	var out []utilPlot
	idx := map[string]int{}
	for i := range r.Rows {
		row := &r.Rows[i]
		if len(row.Utilization) == 0 {
			continue
		}
		key := row.Workload + "\x00" + row.Device + "\x00" + pointString(row.Point)
		k, ok := idx[key]
		if !ok {
			name := "util-" + sanitize(row.Workload) + "-" + sanitize(row.Device)
			title := row.Workload + " on " + row.Device
			if len(row.Point) > 0 {
				name += "-" + sanitize(pointString(row.Point))
				title += " at " + pointString(row.Point)
			}
			k = len(out)
			idx[key] = k
			out = append(out, utilPlot{workload: row.Workload, title: title, file: name})
		}
		out[k].rows = append(out[k].rows, row)
	}
	return out
}

// utilChart is each scheduler's SM utilization (occupied warp slots, %)
// over the last measured repetition, as steps over the bins.
func utilChart(p utilPlot) *figures.LineChart {
	chart := &figures.LineChart{Title: "SM utilization (occupied warp slots) over time: " + p.title,
		XLabel: "time from the start of the scheduler's run (µs)", YLabel: "occupied warp slots (%)",
		YFromZero: true, Steps: true,
		Note: "The last measured repetition of each row, in bins of equal width; the legend lists each scheduler's mean over its run."}
	panel := figures.LinePanel{}
	for _, row := range p.rows {
		name := row.Scheduler
		if row.SMUtil != nil {
			name += " (" + fmtPct(row.SMUtil) + ")"
		}
		chart.Series = append(chart.Series, name)
		line := figures.Line{Series: name, End: lastMakespanUS(row)}
		for _, u := range row.Utilization {
			line.Points = append(line.Points, figures.Point{X: u.T, Y: u.Warps * 100, Lo: math.NaN(), Hi: math.NaN()})
		}
		panel.Lines = append(panel.Lines, line)
	}
	chart.Panels = []figures.LinePanel{panel}
	return chart
}

// lastMakespanUS is the makespan of the row's last measured repetition, the
// one its utilization series covers.
func lastMakespanUS(row *Row) float64 {
	if len(row.MakespansNS) == 0 {
		return 0
	}
	return float64(row.MakespansNS[len(row.MakespansNS)-1]) / 1e3
}
