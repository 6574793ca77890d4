package experiments

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/experiments/fidelity"
	"github.com/gpusched/gpusched/internal/stats"
)

// GPUModes are a row's GPU repetitions split into a fast and a slow mode
// (fidelity.Row.Modes): plain SET's repetitions often fall in two modes
// within one process (issue #18), and the row's median is then whichever
// mode won it.
type GPUModes struct {
	Fast     float64 `json:"fast_median_us"` // the fast mode's median
	FastReps int     `json:"fast_repetitions"`
	Slow     float64 `json:"slow_median_us"`
	SlowReps int     `json:"slow_repetitions"`
	// Median is the mode the row's median is in: fast, slow, or between
	// (an even count split in halves).
	Median string `json:"median_in"`
}

// String is the modes as the rows table shows them.
func (m *GPUModes) String() string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf("fast %s (%d reps) / slow %s (%d reps), median %s", fmtUS(m.Fast), m.FastReps, fmtUS(m.Slow), m.SlowReps, m.Median)
}

// gpuModes are r's modes at gap, nil when it is not bimodal.
func gpuModes(r *fidelity.Row, gap float64) *GPUModes {
	fast, slow, ok := r.Modes(gap)
	if !ok {
		return nil
	}
	return &GPUModes{Fast: stats.MedianSorted(fast), FastReps: len(fast), Slow: stats.MedianSorted(slow), SlowReps: len(slow),
		Median: r.MedianMode(gap)}
}

// setModes fills every row's GPU modes.
func (v *Validation) setModes() {
	for i := range v.Rows {
		r := &v.Rows[i]
		r.GPUModes = gpuModes(&r.fid, v.Options.ModeGap)
	}
}

// modesLine says how many rows are bimodal and what that does to the
// error: "" when none is.
func modesLine(s fidelity.Summary, gap float64) string {
	if s.BimodalRows == 0 {
		return ""
	}
	return fmt.Sprintf("bimodal rows: %d of %d (GPU repetitions in two modes, a %gx+ jump with 2+ on each side; issue #18); "+
		"median in the slow mode on %d, sim nearer the fast mode on %d; MAPE on them %s against the median, %s against the nearer mode's\n",
		s.BimodalRows, s.Rows, gap, s.BimodalMedianSlow, s.BimodalSimFast, s.BimodalMAPE, s.BimodalModeMAPE)
}

// modesCSV are a row's cells under gpu_fast_mode_us, gpu_slow_mode_us and
// gpu_median_mode.
func modesCSV(m *GPUModes) []string {
	if m == nil {
		return []string{"", "", ""}
	}
	return []string{csvNum(m.Fast), csvNum(m.Slow), m.Median}
}

// pageModes is the table of bimodal rows per paper, GPU and timed run.
func (v *Validation) pageModes(b *strings.Builder) {
	b.WriteString("## Bimodal GPU repetitions\n\n")
	fmt.Fprintf(b, "Rows whose GPU repetitions fall in a fast and a slow mode (sorted, they jump %gx or more between neighbours, with two or more "+
		"repetitions on each side), as plain SET's often do within one process (issue #18): their median is whichever mode won it, so "+
		"their error is partly which mode that was. Beside the makespan MAPE against the median on those rows, the MAPE against the "+
		"median of the mode nearer the simulator's makespan.\n\n", v.Options.ModeGap)
	key := func(r *ValidatedRow) string {
		return paperOf(r.Experiment) + "\x00" + r.GPUDevice + "\x00" + v.timedRun(r)
	}
	rows := [][]string{{"paper", "GPU", "GPU run timed", "rows", "bimodal rows", "median in slow mode", "sim nearer fast mode",
		"MAPE against median", "against nearer mode"}}
	cells := func(s fidelity.Summary) []string {
		return []string{strconv.Itoa(s.Rows), strconv.Itoa(s.BimodalRows), strconv.Itoa(s.BimodalMedianSlow), strconv.Itoa(s.BimodalSimFast),
			s.BimodalMAPE.String(), s.BimodalModeMAPE.String()}
	}
	for _, g := range v.distinct(key) {
		s := v.summarize(func(r *ValidatedRow) bool { return key(r) == g })
		if s.BimodalRows == 0 {
			continue
		}
		f := strings.Split(g, "\x00")
		rows = append(rows, append([]string{f[0], shortGPU(f[1]), f[2]}, cells(s)...))
	}
	if len(rows) == 1 {
		b.WriteString("No row is bimodal.\n\n")
		return
	}
	rows = append(rows, append([]string{"all", "", ""}, cells(v.summarize(func(*ValidatedRow) bool { return true }))...))
	writeMarkdownTable(b, rows)
	b.WriteString("\n")
}
