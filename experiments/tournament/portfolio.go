package tournament

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// verdict is one portfolio column's standing on one workload.
type verdict struct {
	regret      float64 // against the best other scheduler (fraction)
	belowSerial bool    // slower than serial beyond its interval
	beatsPapers bool    // faster than every paper's strategy that ran
	papers      int     // how many paper strategies ran on the workload
}

// judge compares portfolio column j with row i's others.
func (m *matrix) judge(i, j int) (verdict, bool) {
	r := m.cell[i][j]
	best := m.bestOther(i)
	if !ran(r) || best < 0 {
		return verdict{}, false
	}
	v := verdict{regret: regret(r, m.cell[i][best]), beatsPapers: true}
	if p := r.PairedSpeedup; p != nil {
		v.belowSerial = p.Hi < 1
	} else {
		v.belowSerial = speedup(r) < 1
	}
	for _, o := range m.cell[i] {
		if !ran(o) || !paperStrategy(o) {
			continue
		}
		v.papers++
		if o.Makespan.Median <= r.Makespan.Median {
			v.beatsPapers = false
		}
	}
	v.beatsPapers = v.beatsPapers && v.papers > 0
	return v, true
}

// writePortfolio writes, for each portfolio column of m, its pick, regret
// against each workload's best other scheduler, and the targets.
func writePortfolio(b *strings.Builder, m *matrix) {
	for _, j := range m.portfolios() {
		fmt.Fprintf(b, "\n### %s, %s\n\n", m.cols[j], m.deviceTitle())
		b.WriteString("| workload | picked | speedup | best other | its speedup | regret | below serial | faster than every paper's strategy | prepare (ms) |\n")
		b.WriteString("|---|---|--:|---|--:|--:|---|---|--:|\n")
		within, never, beats, rows := 0, 0, 0, 0
		for i, w := range m.rows {
			v, ok := m.judge(i, j)
			if !ok {
				fmt.Fprintf(b, "| %s | %s | - | - | - | - | - | - | - |\n", w, cellText(m.cell[i][j], false))
				continue
			}
			rows++
			if v.regret <= 0.03 {
				within++
			}
			if !v.belowSerial {
				never++
			}
			if v.beatsPapers {
				beats++
			}
			r, best := m.cell[i][j], m.bestOther(i)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %+.1f%% | %s | %s | %.1f |\n", w, picked(r), cellText(r, false),
				m.cols[best], cellText(m.cell[i][best], false), 100*v.regret, yes(v.belowSerial), yes(v.beatsPapers),
				r.SchedulerStats["prepare_us"]/1e3)
		}
		if rows == 0 {
			b.WriteString("\nNo workload ran.\n")
			continue
		}
		fmt.Fprintf(b, "\nTargets on %d workloads: within 3%% of the best other scheduler on %d (%s), never below serial on %d (%s), "+
			"strictly faster than every paper's strategy on %d (%s: at least a third).\n",
			rows, within, met(within == rows), never, met(never == rows), beats, met(3*beats >= rows))
	}
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func met(b bool) string {
	if b {
		return "met"
	}
	return "missed"
}

// writeSensitivity compares the portfolio columns' regrets: the model's
// pick with the device's own config, with the datasheet config, and the
// checked pick.
func writeSensitivity(b *strings.Builder, ms []*matrix, order []int) {
	b.WriteString("\n## The portfolio's selection and the simulator's accuracy\n\n")
	b.WriteString("Regret against each workload's best other scheduler (positive: slower), by portfolio variant.\n\n")
	b.WriteString("| device | variant | workloads | median regret | max regret | within 3% |\n|---|---|--:|--:|--:|--:|\n")
	for _, k := range order {
		m := ms[k]
		for _, j := range m.portfolios() {
			var rs []float64
			within := 0
			for i := range m.rows {
				if v, ok := m.judge(i, j); ok {
					rs = append(rs, v.regret)
					if v.regret <= 0.03 {
						within++
					}
				}
			}
			if len(rs) == 0 {
				fmt.Fprintf(b, "| %s | %s | 0 | - | - | - |\n", m.deviceTitle(), m.cols[j])
				continue
			}
			sort.Float64s(rs)
			fmt.Fprintf(b, "| %s | %s | %d | %+.1f%% | %+.1f%% | %d |\n", m.deviceTitle(), m.cols[j], len(rs),
				100*median(rs), 100*rs[len(rs)-1], within)
		}
	}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
