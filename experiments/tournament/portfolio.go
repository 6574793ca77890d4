package tournament

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/stats"
)

// simTie is the relative difference under which two simulator rows tie:
// the same schedule can end a few nanoseconds apart there (where its
// timed region starts), which must not count as faster.
const simTie = 0.001

// verdict is one portfolio column's standing on one workload.
type verdict struct {
	regret float64 // against the best other scheduler (fraction)
	// regretCI is the portfolio's makespan over the best other's, round
	// by round, where both rows ran interleaved (GPU): regret's interval
	// is [Lo-1, Hi-1].
	regretCI    *experiments.Paired
	belowSerial bool // slower than serial beyond its interval
	beatsPapers bool // faster than every paper's strategy that ran
	papers      int  // how many paper strategies ran on the workload
	// closest is the paper strategy nearest the portfolio (-1: none),
	// closestRatio its makespan over the portfolio's, closestCI that ratio
	// round by round where both rows ran interleaved.
	closest      int
	closestRatio float64
	closestCI    *experiments.Paired
}

// pairRatio is a's makespan over b's round by round, nil unless both rows
// ran interleaved with as many rounds.
func pairRatio(a, b *experiments.Row) *experiments.Paired {
	if !a.Interleaved || !b.Interleaved {
		return nil
	}
	p, ok := experiments.PairedSpeedup(a.MakespansNS, b.MakespansNS)
	if !ok {
		return nil
	}
	return &p
}

// faster reports whether ratio (another row's makespan over this one's)
// shows this row faster: the paired interval wholly above 1 on a GPU,
// beyond simTie on the simulator.
func faster(ratio float64, p *experiments.Paired) bool {
	if p != nil {
		return p.Lo > 1
	}
	return ratio > 1+simTie
}

// judge compares portfolio column j with row i's others.
func (m *matrix) judge(i, j int) (verdict, bool) {
	r := m.cell[i][j]
	best := m.bestOther(i)
	if !ran(r) || best < 0 {
		return verdict{}, false
	}
	v := verdict{regret: regret(r, m.cell[i][best]), regretCI: pairRatio(r, m.cell[i][best]), beatsPapers: true, closest: -1}
	if p := r.PairedSpeedup; p != nil {
		v.belowSerial = p.Hi < 1
	} else {
		v.belowSerial = speedup(r) < 1
	}
	for k, o := range m.cell[i] {
		if !ran(o) || !paperStrategy(o) {
			continue
		}
		v.papers++
		ratio, ci := o.Makespan.Median/r.Makespan.Median, pairRatio(o, r)
		if !faster(ratio, ci) {
			v.beatsPapers = false
		}
		if v.closest < 0 || ratio < v.closestRatio {
			v.closest, v.closestRatio, v.closestCI = k, ratio, ci
		}
	}
	v.beatsPapers = v.beatsPapers && v.papers > 0
	return v, true
}

// tally counts a portfolio column's targets over the workloads.
type tally struct {
	rows, within, shownWithin, shownBeyond, never, beats int
}

func (t *tally) add(v verdict) {
	t.rows++
	if v.regret <= 0.03 {
		t.within++
	}
	if v.regretCI != nil && v.regretCI.Hi-1 <= 0.03 {
		t.shownWithin++
	}
	if v.regretCI != nil && v.regretCI.Lo-1 > 0.03 {
		t.shownBeyond++
	}
	if !v.belowSerial {
		t.never++
	}
	if v.beatsPapers {
		t.beats++
	}
}

func (t *tally) write(b *strings.Builder, paired bool) {
	fmt.Fprintf(b, "\nTargets on %d workloads: within 3%% of the best other scheduler (median regret) on %d (%s)", t.rows, t.within, met(t.within == t.rows))
	if paired {
		fmt.Fprintf(b, "; the regret's 95%% interval wholly at or below 3%% on %d, wholly above 3%% on %d", t.shownWithin, t.shownBeyond)
	}
	fmt.Fprintf(b, "; never below serial on %d (%s); strictly faster than every paper's strategy on %d (%s: at least a third).\n",
		t.never, met(t.never == t.rows), t.beats, met(3*t.beats >= t.rows))
}

// writePortfolio writes, for each portfolio column of m, its pick, regret
// against each workload's best other scheduler, and the targets.
func writePortfolio(b *strings.Builder, m *matrix) {
	for _, j := range m.portfolios() {
		fmt.Fprintf(b, "\n### %s, %s\n\n", m.cols[j], m.deviceTitle())
		b.WriteString("| workload | picked | speedup | best other | its speedup | regret | below serial | nearest paper strategy | its makespan / portfolio's | faster than every paper's strategy | prepare (ms) |\n")
		b.WriteString("|---|---|--:|---|--:|--:|---|---|--:|---|--:|\n")
		var t tally
		paired := false
		for i, w := range m.rows {
			v, ok := m.judge(i, j)
			if !ok {
				fmt.Fprintf(b, "| %s | %s | - | - | - | - | - | - | - | - | - |\n", w, cellText(m.cell[i][j], false))
				continue
			}
			t.add(v)
			paired = paired || v.regretCI != nil
			r, best := m.cell[i][j], m.bestOther(i)
			nearest, ratio := "-", "-"
			if v.closest >= 0 {
				nearest, ratio = m.cols[v.closest], ratioText(v.closestRatio, v.closestCI)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f |\n", w, picked(r), cellText(r, false),
				m.cols[best], cellText(m.cell[i][best], false), regretText(v), yes(v.belowSerial), nearest, ratio, yes(v.beatsPapers),
				r.SchedulerStats["prepare_us"]/1e3)
		}
		if t.rows == 0 {
			b.WriteString("\nNo workload ran.\n")
			continue
		}
		t.write(b, paired)
	}
}

// signedPct is f as a signed percentage to one decimal, a value that
// rounds to zero as +0.0% (not -0.0%: a tie, not a loss).
func signedPct(f float64) string {
	if math.Abs(f) < 0.0005 {
		return "+0.0%"
	}
	return fmt.Sprintf("%+.1f%%", 100*f)
}

func regretText(v verdict) string {
	s := signedPct(v.regret)
	if p := v.regretCI; p != nil {
		s += fmt.Sprintf(" [%+.1f, %+.1f]", 100*(p.Lo-1), 100*(p.Hi-1))
	}
	return s
}

func ratioText(r float64, p *experiments.Paired) string {
	s := fmt.Sprintf("%.3f", r)
	if p != nil {
		s += fmt.Sprintf(" [%.3f, %.3f]", p.Lo, p.Hi)
	}
	return s
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
			fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %d |\n", m.deviceTitle(), m.cols[j], len(rs),
				signedPct(stats.MedianSorted(rs)), signedPct(rs[len(rs)-1]), within)
		}
	}
}
