package experiments

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown is a report: what ran, one table per workload with what each
// row's scheduler reported, errors and races spelled out, and the plots.
func Markdown(r *Results, withPlots bool) []byte {
	var b bytes.Buffer
	writeMarkdownHeader(&b, r)
	for _, wl := range Distinct(r.Rows, func(row *Row) string { return row.Workload }) {
		fmt.Fprintf(&b, "## %s\n\n", wl)
		writeWorkloadTable(&b, r, wl)
		writeRowNotes(&b, r, wl)
		if withPlots {
			for _, c := range Charts(r) {
				if c.Workload == wl {
					fmt.Fprintf(&b, "![%s](%s.svg)\n\n", c.Alt, c.Name)
				}
			}
		}
	}
	writeProblems(&b, r)
	return b.Bytes()
}

func writeMarkdownHeader(b *bytes.Buffer, r *Results) {
	fmt.Fprintf(b, "# %s\n\n", r.Experiment)
	if r.Description != "" {
		fmt.Fprintf(b, "%s\n\n", strings.TrimSpace(r.Description))
	}
	fmt.Fprintf(b, "Experiment file `%s`, seed %d, %d measured repetitions per row", r.Source, r.Seed, r.Repetitions)
	if r.Baseline != "" {
		fmt.Fprintf(b, ", speedups against `%s`", r.Baseline)
	}
	b.WriteString(".")
	if len(r.Sweep) > 0 {
		b.WriteString(" Sweep:")
		for _, p := range r.Sweep {
			fmt.Fprintf(b, " `%s` = %s;", p.Name, strings.Join(p.Values, ", "))
		}
	}
	b.WriteString(" Makespans are in microseconds: median [min-max] and the 95% confidence interval of the mean.\n\n")
}

// writeWorkloadTable is one workload's rows; a jobs/s column where its
// rows count jobs.
func writeWorkloadTable(b *bytes.Buffer, r *Results, wl string) {
	jobs := false
	for i := range r.Rows {
		jobs = jobs || (r.Rows[i].Workload == wl && r.Rows[i].Throughput != nil)
	}
	b.WriteString("|")
	for _, p := range r.Sweep {
		fmt.Fprintf(b, " %s |", p.Name)
	}
	b.WriteString(" scheduler | device | makespan median [min-max] | 95% CI | speedup |")
	if jobs {
		b.WriteString(" jobs/s |")
	}
	b.WriteString(" SM util | kernels | races | outputs |\n|")
	for range r.Sweep {
		b.WriteString("---|")
	}
	b.WriteString("---|---|--:|--:|--:|")
	if jobs {
		b.WriteString("--:|")
	}
	b.WriteString("--:|--:|--:|---|\n")
	for i := range r.Rows {
		if row := &r.Rows[i]; row.Workload == wl {
			writeTableRow(b, row, jobs)
		}
	}
	b.WriteString("\n")
}

func writeTableRow(b *bytes.Buffer, row *Row, jobs bool) {
	b.WriteString("|")
	for _, a := range row.Point {
		fmt.Fprintf(b, " %s |", a.Value)
	}
	name := row.Scheduler
	if row.SchedulerDesc != "" && row.SchedulerDesc != row.Scheduler {
		name += " (" + row.SchedulerDesc + ")"
	}
	ci := "-"
	if s := row.Makespan; s != nil && s.N > 0 {
		ci = fmt.Sprintf("%.1f-%.1f", s.CI95Lo, s.CI95Hi)
	}
	out := row.Outputs
	if len(row.Errors) > 0 {
		out = "**error** (below)"
	}
	speedup := fmtSpeedup(row.Speedup)
	if p := row.PairedSpeedup; p != nil && !row.Baseline {
		// Interleaved GPU rows: the paired estimate and its interval.
		speedup += fmt.Sprintf(" (paired %s)", p)
	}
	fmt.Fprintf(b, " %s | %s | %s | %s | %s |", mdEscape(name), row.Device, fmtMakespan(row.Makespan), ci, speedup)
	if jobs {
		fmt.Fprintf(b, " %s |", fmtJobsPerSecond(row))
	}
	fmt.Fprintf(b, " %s | %s | %s | %s |\n", fmtPct(row.SMUtil), fmtInt(row.Kernels), fmtRaces(row.Races), mdEscape(out))
}

// fmtJobsPerSecond is a row's throughput at its median makespan.
func fmtJobsPerSecond(row *Row) string {
	if row.Throughput == nil || row.Makespan == nil || row.Makespan.Median <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(row.Throughput.Jobs)/(row.Makespan.Median/1e6))
}

// writeRowNotes lists what rows report beside their times: the
// scheduler's counters (of the repetition with the median makespan), its
// choices, facts of the workload on the device, the outputs' hash.
func writeRowNotes(b *bytes.Buffer, r *Results, wl string) {
	var notes []string
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Workload != wl {
			continue
		}
		var parts []string
		if len(row.SchedulerStats) > 0 {
			parts = append(parts, "counters "+fmtMap(row.SchedulerStats))
		}
		if len(row.Facts) > 0 {
			parts = append(parts, fmtMap(row.Facts))
		}
		if len(row.Choices) > 0 {
			parts = append(parts, "choices: "+strings.Join(row.Choices, "; "))
		}
		if row.OutputsSHA256 != "" {
			parts = append(parts, "outputs sha256 "+row.OutputsSHA256[:min(12, len(row.OutputsSHA256))])
		}
		if len(parts) > 0 {
			notes = append(notes, fmt.Sprintf("- %s: %s", rowLabel(row), strings.Join(parts, "; ")))
		}
	}
	if len(notes) > 0 {
		b.WriteString("What the rows report (counters of the repetition with the median makespan):\n\n" + strings.Join(notes, "\n") + "\n\n")
	}
}

func fmtMap(m map[string]float64) string {
	var kv []string
	for _, k := range sortedKeys(m) {
		kv = append(kv, fmt.Sprintf("%s=%s", k, ff(m[k])))
	}
	return strings.Join(kv, ", ")
}

// writeProblems spells out every error and race.
func writeProblems(b *bytes.Buffer, r *Results) {
	var problems []string
	for _, row := range r.Rows {
		where := rowLabel(&row)
		for _, e := range row.Errors {
			problems = append(problems, fmt.Sprintf("- %s: %s", where, e))
		}
		if row.Races != nil && *row.Races > 0 {
			problems = append(problems, fmt.Sprintf("- %s: %d races, for example: %s", where, *row.Races, strings.Join(row.RaceExamples, "; ")))
		}
	}
	if len(problems) > 0 {
		b.WriteString("## Errors and races\n\n")
		b.WriteString(strings.Join(problems, "\n"))
		b.WriteString("\n")
	} else {
		b.WriteString("No errors; 0 races on every row that reports races.\n")
	}
}
