package fidelity

import (
	"math"

	"github.com/gpusched/gpusched/internal/stats"
)

// Row is one scheduler on one workload, measured on the GPU and simulated.
type Row struct {
	// Group is the unit in which schedulers compete: rows of one group ran
	// the same workload at the same sweep point on the same device.
	Group     string
	Scheduler string
	// Baseline marks the row speedups in its group are measured against.
	Baseline bool
	// GPU holds the measured repetitions' makespans (any unit, the same
	// as Sim's); their median is the row's GPU makespan.
	GPU []float64
	// Sim is the simulated makespan.
	Sim float64
	// Rerun is another GPU run's median makespan of the same row (0: none).
	Rerun float64
}

// GPUMedian is the median of the row's GPU repetitions (0 if none).
func (r *Row) GPUMedian() float64 { return stats.Median(r.GPU) }

// Err is the row's makespan error (sim - GPU) / GPU in percent (NaN when
// either makespan is missing).
func (r *Row) Err() float64 { return pctErr(r.Sim, r.GPUMedian()) }

// Spread is the range of the GPU repetitions over their median in percent
// (NaN with fewer than two repetitions).
func (r *Row) Spread() float64 {
	if len(r.GPU) < 2 {
		return math.NaN()
	}
	lo, hi := r.GPU[0], r.GPU[0]
	for _, x := range r.GPU {
		lo, hi = min(lo, x), max(hi, x)
	}
	m := r.GPUMedian()
	if m <= 0 {
		return math.NaN()
	}
	return (hi - lo) / m * 100
}

// Options are the thresholds of the order metrics.
type Options struct {
	// Separation: GPU makespans further apart than this fraction of the
	// smaller one make a clearly separated pair (0.05).
	Separation float64
	// Tie: simulated makespans within this fraction of the smaller one
	// are a tie (0.01).
	Tie float64
	// ModeGap: a row whose sorted GPU repetitions jump by at least this
	// ratio between neighbours, with two or more repetitions on each
	// side, is bimodal (Row.Modes; DefaultModeGap). At or below 1 (an
	// Options that leaves it out) no row is split.
	ModeGap float64
}

// DefaultOptions are the thresholds the project reports with.
func DefaultOptions() Options { return Options{Separation: 0.05, Tie: 0.01, ModeGap: DefaultModeGap} }

// Summary is what Summarize reports over a set of rows. Percentages are
// NaN (null in JSON) when no row has the quantity.
type Summary struct {
	Rows int `json:"rows"`
	// Makespan: mean, median and largest absolute error, median signed
	// error, and rows the simulator predicts faster than the GPU.
	MakespanMAPE Pct `json:"makespan_mape_pct"`
	MedianErr    Pct `json:"makespan_median_abs_err_pct"`
	MaxErr       Pct `json:"makespan_max_abs_err_pct"`
	Bias         Pct `json:"makespan_median_err_pct"`
	SimFaster    int `json:"sim_faster_rows"`
	// Speedups over the group's baseline (baseline rows excluded).
	SpeedupRows      int `json:"speedup_rows"`
	SpeedupMedianErr Pct `json:"speedup_median_abs_err_pct"`
	SpeedupMaxErr    Pct `json:"speedup_max_abs_err_pct"`
	// Pairs the GPU separates clearly, and how the simulator orders them.
	Pairs    int `json:"separated_pairs"`
	Same     int `json:"pairs_same"`
	Tied     int `json:"pairs_tied"`
	Reversed int `json:"pairs_reversed"`
	// Groups with at least two rows; in BestAgree of them the GPU's
	// fastest row is among the simulator's fastest (those it ties within
	// Options.Tie); the regret of the simulator's pick on the GPU, the
	// worst of its tied fastest.
	Groups       int `json:"groups"`
	BestAgree    int `json:"best_agree"`
	RegretMedian Pct `json:"regret_median_pct"`
	RegretMax    Pct `json:"regret_max_pct"`
	// The GPU's own spread: per-row range of the repetitions over their
	// median (rows with two or more), and another run's MAPE against
	// this one (rows with a rerun).
	SpreadRows   int `json:"spread_rows"`
	SpreadMedian Pct `json:"spread_median_pct"`
	SpreadMax    Pct `json:"spread_max_pct"`
	RerunRows    int `json:"rerun_rows"`
	RerunMAPE    Pct `json:"rerun_mape_pct"`
	RerunMax     Pct `json:"rerun_max_abs_err_pct"`
	// Bimodal rows (Row.Modes at Options.ModeGap): their GPU repetitions
	// fall in a fast and a slow mode, as plain SET's often do within one
	// process (issue #18), so their median is whichever mode won it. Of
	// them: those whose median is in the slow mode (Row.MedianMode);
	// and, of those with a simulated makespan, those where it is nearer
	// (by absolute percentage error) the fast mode's median than the
	// slow one's (ties: the fast), and the makespan MAPE against the
	// row's median beside the MAPE against the nearer mode's median: the
	// difference is the part of the error that is only which mode the
	// median fell in.
	BimodalRows       int `json:"bimodal_rows"`
	BimodalMedianSlow int `json:"bimodal_median_slow_rows"`
	BimodalSimFast    int `json:"bimodal_sim_nearer_fast_rows"`
	BimodalMAPE       Pct `json:"bimodal_mape_pct"`
	BimodalModeMAPE   Pct `json:"bimodal_nearest_mode_mape_pct"`
}

// Summarize computes the summary of rows. Rows without both makespans
// count in Rows but in no error.
func Summarize(rows []Row, opt Options) Summary {
	s := Summary{Rows: len(rows)}
	s.sizeErrors(rows)
	s.spread(rows)
	s.modes(rows, opt.ModeGap)
	var speedupErrs, regrets []float64
	for _, g := range groups(rows) {
		speedupErrs = append(speedupErrs, speedupErrors(g)...)
		s.order(g, opt)
		if r, ok := regret(g, opt.Tie); ok {
			s.Groups++
			if r.agree {
				s.BestAgree++
			}
			regrets = append(regrets, r.pct)
		}
	}
	s.SpeedupRows = len(speedupErrs)
	s.SpeedupMedianErr, s.SpeedupMaxErr = Pct(medianAbs(speedupErrs)), Pct(maxAbs(speedupErrs))
	s.RegretMedian, s.RegretMax = Pct(stats.Median(regrets)), Pct(maxAbs(regrets))
	return s
}

// sizeErrors fills the makespan errors.
func (s *Summary) sizeErrors(rows []Row) {
	var errs []float64
	for i := range rows {
		e := rows[i].Err()
		if math.IsNaN(e) {
			continue
		}
		errs = append(errs, e)
		if e < 0 {
			s.SimFaster++
		}
	}
	s.MakespanMAPE, s.MedianErr, s.MaxErr = Pct(meanAbs(errs)), Pct(medianAbs(errs)), Pct(maxAbs(errs))
	s.Bias = Pct(stats.Median(errs))
}

// spread fills the GPU's own spread.
func (s *Summary) spread(rows []Row) {
	var spreads, reruns []float64
	for i := range rows {
		if sp := rows[i].Spread(); !math.IsNaN(sp) {
			spreads = append(spreads, sp)
		}
		if rows[i].Rerun > 0 {
			if e := pctErr(rows[i].Rerun, rows[i].GPUMedian()); !math.IsNaN(e) {
				reruns = append(reruns, e)
			}
		}
	}
	s.SpreadRows, s.SpreadMedian, s.SpreadMax = len(spreads), Pct(stats.Median(spreads)), Pct(maxAbs(spreads))
	s.RerunRows, s.RerunMAPE, s.RerunMax = len(reruns), Pct(meanAbs(reruns)), Pct(maxAbs(reruns))
}

// measured is a row of a group with both makespans.
type measured struct {
	name     string
	baseline bool
	gpu, sim float64
}

// groups splits rows by Group, in order of first appearance, keeping only
// rows with both makespans.
func groups(rows []Row) [][]measured {
	index := map[string]int{}
	var out [][]measured
	for i := range rows {
		r := &rows[i]
		g, s := r.GPUMedian(), r.Sim
		if !(g > 0) || !(s > 0) || math.IsInf(g, 0) || math.IsInf(s, 0) {
			continue
		}
		k, ok := index[r.Group]
		if !ok {
			k = len(out)
			index[r.Group] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], measured{r.Scheduler, r.Baseline, g, s})
	}
	return out
}

// speedupErrors are the errors of the simulated speedups over the group's
// baseline (none if the group has no baseline row).
func speedupErrors(g []measured) []float64 {
	var base *measured
	for i := range g {
		if g[i].baseline {
			base = &g[i]
		}
	}
	if base == nil {
		return nil
	}
	var errs []float64
	for i := range g {
		if g[i].baseline {
			continue
		}
		errs = append(errs, pctErr(base.sim/g[i].sim, base.gpu/g[i].gpu))
	}
	return errs
}

// order counts the group's clearly separated pairs by how the simulator
// orders them.
func (s *Summary) order(g []measured, opt Options) {
	for i := range g {
		for j := i + 1; j < len(g); j++ {
			a, b := g[i], g[j]
			if math.Abs(a.gpu-b.gpu) <= opt.Separation*min(a.gpu, b.gpu) {
				continue
			}
			s.Pairs++
			d := a.sim - b.sim
			switch {
			case math.Abs(d) <= opt.Tie*min(a.sim, b.sim):
				s.Tied++
			case (d < 0) == (a.gpu < b.gpu):
				s.Same++
			default:
				s.Reversed++
			}
		}
	}
}

type pick struct {
	agree bool
	pct   float64
}

// regret compares the simulator's pick in a group with the GPU's fastest
// row. The pick is every row the simulator ties (within tie) with its
// fastest, since it gives no reason to prefer one of them: it agrees if
// the GPU's fastest is among them, and its regret is the worst of theirs,
// the GPU makespan over the GPU's best, minus one, in percent.
func regret(g []measured, tie float64) (pick, bool) {
	if len(g) < 2 {
		return pick{}, false
	}
	best, fastest := 0, 0
	for i := range g {
		if g[i].gpu < g[best].gpu {
			best = i
		}
		if g[i].sim < g[fastest].sim {
			fastest = i
		}
	}
	var p pick
	for i := range g {
		if g[i].sim-g[fastest].sim <= tie*g[fastest].sim {
			p.agree = p.agree || i == best
			p.pct = max(p.pct, (g[i].gpu/g[best].gpu-1)*100)
		}
	}
	return p, true
}

// pctErr is (pred - actual) / actual in percent; NaN when either is
// missing (not positive).
func pctErr(pred, actual float64) float64 {
	if !(actual > 0) || !(pred > 0) {
		return math.NaN()
	}
	return (pred - actual) / actual * 100
}

func abs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Abs(x)
	}
	return out
}

func medianAbs(xs []float64) float64 { return stats.Median(abs(xs)) }

func meanAbs(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var t float64
	for _, x := range xs {
		t += math.Abs(x)
	}
	return t / float64(len(xs))
}

func maxAbs(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := 0.0
	for _, x := range xs {
		m = max(m, math.Abs(x))
	}
	return m
}
