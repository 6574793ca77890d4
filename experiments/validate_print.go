package experiments

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/experiments/fidelity"
)

// summaryHeader are the columns of a summary table, after the names.
var summaryHeader = []string{"rows", "MAPE", "median err", "max err", "bias", "sim faster",
	"speedup err med", "max", "pairs >5%", "same", "tied", "reversed", "best agrees", "regret med", "max",
	"GPU spread med", "max", "rerun MAPE"}

// summaryCells formats a summary as the cells of summaryHeader.
func summaryCells(s fidelity.Summary) []string {
	return []string{strconv.Itoa(s.Rows), s.MakespanMAPE.String(), s.MedianErr.String(), s.MaxErr.String(),
		signed(s.Bias), strconv.Itoa(s.SimFaster), s.SpeedupMedianErr.String(), s.SpeedupMaxErr.String(),
		strconv.Itoa(s.Pairs), share(s.Same, s.Pairs), share(s.Tied, s.Pairs), share(s.Reversed, s.Pairs),
		fmt.Sprintf("%d/%d", s.BestAgree, s.Groups), s.RegretMedian.String(), s.RegretMax.String(),
		s.SpreadMedian.String(), s.SpreadMax.String(), rerun(s)}
}

func signed(p fidelity.Pct) string {
	if !p.Valid() {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", float64(p))
}

// share is "n (p%)" of a total.
func share(n, total int) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%.0f%%)", n, float64(n)/float64(total)*100)
}

func rerun(s fidelity.Summary) string {
	if s.RerunRows == 0 {
		return "-"
	}
	return fmt.Sprintf("%s (%d)", s.RerunMAPE, s.RerunRows)
}

// summaryTable is one line per experiment's workload, per experiment, and
// the total.
func (v *Validation) summaryTable() [][]string {
	rows := [][]string{append([]string{"experiment", "workload"}, summaryHeader...)}
	for _, e := range v.Experiments {
		for _, w := range e.Workloads {
			rows = append(rows, append([]string{e.Name, w.Name}, summaryCells(w.Summary)...))
		}
		rows = append(rows, append([]string{e.Name, "(all)"}, summaryCells(e.Summary)...))
	}
	return append(rows, append([]string{"total", ""}, summaryCells(v.Total)...))
}

// Print writes the summary table (per workload, per experiment, in total),
// then what was simulated on which config and any rows left out.
func (v *Validation) Print(w io.Writer) error {
	if err := printAligned(w, v.summaryTable()); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(modesLine(v.Total, v.Options.ModeGap))
	for _, s := range v.Sources {
		fmt.Fprintf(&b, "%s (%s, %s): %d rows on %s", s.GPU, s.Experiment, s.ExperimentFile, s.Rows, strings.Join(s.Sim, ", "))
		if s.Excluded > 0 {
			fmt.Fprintf(&b, "; %d left out", s.Excluded)
		}
		b.WriteString("\n")
		if t := s.KernelTiming; t != nil {
			fmt.Fprintf(&b, "  simulated kernel launches timed from %s\n", t)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	shown := 0
	for i := range v.Rows {
		if r := &v.Rows[i]; r.Excluded && shown < 20 {
			fmt.Fprintf(&b, "  left out: %s / %s: %s\n", r.Experiment, r.Label(), strings.Join(r.Problems, "; "))
			shown++
		}
	}
	if n := v.excluded(); n > shown {
		fmt.Fprintf(&b, "  ... and %d more rows left out (see the rows in JSON or CSV)\n", n-shown)
	}
	fmt.Fprintf(&b, "errors are (sim - GPU) / GPU; pairs: scheduler pairs more than %.0f%% apart on the GPU, tied within %.0f%% on the simulator; "+
		"regret: the GPU makespan of the simulator's pick over the GPU's best; GPU spread: range of a row's repetitions over their median\n",
		v.Options.Separation*100, v.Options.Tie*100)
	_, err := io.WriteString(w, b.String())
	return err
}

func (v *Validation) excluded() int {
	n := 0
	for _, s := range v.Sources {
		n += s.Excluded
	}
	return n
}

// PrintRows writes the per-row table.
func (v *Validation) PrintRows(w io.Writer) error {
	return printAligned(w, v.rowsTable(""))
}

// rowsTable is the per-row table; problems heads the last column.
func (v *Validation) rowsTable(problems string) [][]string {
	rows := [][]string{{"experiment", "row", "GPU µs", "sim µs", "error", "GPU spread", "GPU modes µs", "GPU speedup", "sim speedup", "error", problems}}
	for i := range v.Rows {
		r := &v.Rows[i]
		rows = append(rows, []string{r.Experiment, r.Label(), fmtUS(r.GPUMakespan), fmtUS(r.SimMakespan), fmtErr(r.MakespanErr),
			fmtPercent(r.GPUSpread), r.GPUModes.String(), fmtSpeedup(r.GPUSpeedup), fmtSpeedup(r.SimSpeedup), fmtErr(r.SpeedupErr),
			strings.Join(r.Problems, "; ")})
	}
	return rows
}

// Markdown is the validation as a report: the summary table, the sources
// and every row.
func (v *Validation) Markdown() []byte {
	var b strings.Builder
	b.WriteString("# Simulator validation\n\n")
	for _, s := range v.Sources {
		fmt.Fprintf(&b, "- %s (experiment %s, %s): %d rows, simulated on %s; %d left out\n",
			s.GPU, s.Experiment, s.ExperimentFile, s.Rows, strings.Join(s.Sim, ", "), s.Excluded)
	}
	b.WriteString("\nErrors are (sim - GPU) / GPU.\n\n")
	writeMarkdownTable(&b, v.summaryTable())
	if line := modesLine(v.Total, v.Options.ModeGap); line != "" {
		b.WriteString("\n" + strings.ToUpper(line[:1]) + line[1:])
	}
	b.WriteString("\n## Rows\n\n")
	writeMarkdownTable(&b, v.rowsTable("problems"))
	return []byte(b.String())
}

// writeMarkdownTable writes rows (the first is the header) as a Markdown
// table, the first two columns left-aligned.
func writeMarkdownTable(b *strings.Builder, rows [][]string) {
	for i, r := range rows {
		cells := make([]string, len(r))
		for k, c := range r {
			cells[k] = mdEscape(c)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			align := make([]string, len(r))
			for k := range align {
				align[k] = "--:"
				if k < 2 {
					align[k] = "---"
				}
			}
			fmt.Fprintf(b, "|%s|\n", strings.Join(align, "|"))
		}
	}
}

// JSON is the whole validation, indented.
func (v *Validation) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// RowsCSV is one line per row, for scripts.
func (v *Validation) RowsCSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := []string{"experiment", "point", "workload", "scheduler", "scheduler_desc", "baseline", "gpu_device", "sim_config",
		"gpu_makespan_us", "sim_makespan_us", "makespan_error_pct", "gpu_spread_pct", "gpu_speedup", "sim_speedup", "speedup_error_pct",
		"gpu_rerun_us", "excluded", "problems", "gpu_fast_mode_us", "gpu_slow_mode_us", "gpu_median_mode"}
	if err := w.Write(head); err != nil {
		return nil, err
	}
	for i := range v.Rows {
		r := &v.Rows[i]
		rec := []string{r.Experiment, r.Point, r.Workload, r.Scheduler, r.SchedulerDesc, strconv.FormatBool(r.Baseline), r.GPUDevice, r.SimConfig,
			csvNum(r.GPUMakespan), csvNum(r.SimMakespan), csvPtr(r.MakespanErr), csvPtr(r.GPUSpread), csvPtr(r.GPUSpeedup), csvPtr(r.SimSpeedup),
			csvPtr(r.SpeedupErr), csvPtr(r.Rerun), strconv.FormatBool(r.Excluded), strings.Join(r.Problems, "; ")}
		rec = append(rec, modesCSV(r.GPUModes)...)
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// SummaryCSV is one line per workload, experiment and the total, with the
// columns of the summary table.
func (v *Validation) SummaryCSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(v.summaryTable()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func csvNum(x float64) string {
	if x <= 0 {
		return ""
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

func csvPtr(x *float64) string {
	if x == nil {
		return ""
	}
	return strconv.FormatFloat(*x, 'f', 4, 64)
}

func fmtErr(e *float64) string {
	if e == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *e)
}

// fmtPercent writes a value already in percent.
func fmtPercent(e *float64) string {
	if e == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *e)
}
