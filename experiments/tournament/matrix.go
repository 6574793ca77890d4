package tournament

import (
	"math"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/experiments"
)

// paperStrategy reports whether a row is one of the five papers' own
// strategies as the paper configures it, which the portfolio's target is
// to beat on a third of the workloads: KeSCo's streams (not captured into
// a graph, a combination), AutoGraph, ACS-SW's window dispatch, ACS-HW,
// cuSync's tile synchronization, and SET as the paper runs it (one graph
// per worker; the ring and batched variants are gpusched's refinements).
func paperStrategy(r *experiments.Row) bool {
	p := r.SchedulerParams
	switch r.Kind {
	case "kesco":
		return p["graph"] != "true" && p["per_step"] != "true"
	case "autograph", "acs-hw", "tilesync":
		return true
	case "acs-sw":
		return p["dispatch"] == "window" && p["window"] != "0"
	case "set":
		return p["ring"] == "0" && p["jobs_per_launch"] == "1" && p["copies"] == "graph" && p["threaded"] != "true"
	}
	return false
}

// matrix is one results set on one device: rows workloads, columns
// schedulers, in the experiment's order.
type matrix struct {
	device string // as the experiment names it
	name   string // as the device reports itself
	run    string // the results file's name, which tells runs of one device apart
	gpu    bool
	rows   []string
	cols   []string
	kinds  []string
	cell   [][]*experiments.Row // nil: no such row
}

// matrices splits a results set by device.
func matrices(r *experiments.Results) []*matrix {
	var out []*matrix
	byDev := map[string]*matrix{}
	for i := range r.Rows {
		row := &r.Rows[i]
		m := byDev[row.Device]
		if m == nil {
			m = &matrix{device: row.Device, name: row.DeviceName, gpu: experiments.IsCUDA(row.Device)}
			byDev[row.Device] = m
			out = append(out, m)
		}
		ri, ci := m.index(&m.rows, row.Workload), m.index(&m.cols, row.Scheduler)
		if ci == len(m.kinds) {
			m.kinds = append(m.kinds, row.Kind)
		}
		for len(m.cell) <= ri {
			m.cell = append(m.cell, nil)
		}
		for len(m.cell[ri]) <= ci {
			m.cell[ri] = append(m.cell[ri], nil)
		}
		m.cell[ri][ci] = row
	}
	for _, m := range out {
		for i := range m.cell {
			for len(m.cell[i]) < len(m.cols) {
				m.cell[i] = append(m.cell[i], nil)
			}
		}
	}
	return out
}

func (m *matrix) index(list *[]string, name string) int {
	for i, n := range *list {
		if n == name {
			return i
		}
	}
	*list = append(*list, name)
	return len(*list) - 1
}

// ran reports whether a row measured something.
func ran(r *experiments.Row) bool {
	return r != nil && len(r.Errors) == 0 && len(r.NotApplicable) == 0 && r.Makespan != nil && r.Makespan.N > 0
}

// speedup is a row's speedup over the baseline: the paired median on a
// GPU (round by round), else the ratio of medians; NaN if it did not run.
func speedup(r *experiments.Row) float64 {
	switch {
	case !ran(r):
		return math.NaN()
	case r.PairedSpeedup != nil:
		return r.PairedSpeedup.Median
	case r.Speedup != nil:
		return *r.Speedup
	}
	return math.NaN()
}

func isPortfolio(kind string) bool { return kind == "portfolio" }

// best is the column of row i with the shortest median makespan among the
// columns keep accepts (-1 if none ran).
func (m *matrix) best(i int, keep func(j int) bool) int {
	b := -1
	for j, r := range m.cell[i] {
		if !ran(r) || !keep(j) {
			continue
		}
		if b < 0 || r.Makespan.Median < m.cell[i][b].Makespan.Median {
			b = j
		}
	}
	return b
}

// winner is row i's fastest scheduler, a portfolio only where it is
// shown faster than the best other (faster: beyond its interval or the
// simulator's tie), not where it runs the same schedule a hair sooner.
func (m *matrix) winner(i int) int {
	w, o := m.best(i, func(int) bool { return true }), m.bestOther(i)
	if w < 0 || o < 0 || w == o {
		return w
	}
	rw, ro := m.cell[i][w], m.cell[i][o]
	if faster(ro.Makespan.Median/rw.Makespan.Median, pairRatio(ro, rw)) {
		return w
	}
	return o
}

// bestOther is row i's fastest scheduler that is not a portfolio.
func (m *matrix) bestOther(i int) int {
	return m.best(i, func(j int) bool { return !isPortfolio(m.kinds[j]) })
}

// portfolios are the portfolio columns.
func (m *matrix) portfolios() []int {
	var out []int
	for j, k := range m.kinds {
		if isPortfolio(k) {
			out = append(out, j)
		}
	}
	return out
}

// panel is the matrix as a heatmap panel.
func (m *matrix) panel(title string) panel {
	p := panel{title: title, rows: m.rows, cols: m.cols}
	for i := range m.rows {
		row := make([]float64, len(m.cols))
		for j := range m.cols {
			row[j] = speedup(m.cell[i][j])
		}
		p.speedup = append(p.speedup, row)
		p.winner = append(p.winner, m.winner(i))
	}
	return p
}

// deviceTitle names a matrix's device and run for headings.
func (m *matrix) deviceTitle() string {
	if m.gpu {
		return "GPU: " + m.name + ", " + m.run
	}
	return "simulator: " + m.device + " (" + m.name + "), " + m.run
}

// picked is the schedule a portfolio row picked ("" if none).
func picked(r *experiments.Row) string {
	if r == nil {
		return ""
	}
	var names []string
	for k := range r.SchedulerStats {
		if n, ok := strings.CutPrefix(k, "picked:"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
