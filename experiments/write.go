package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Write writes r into dir in the given formats (md, csv, json, svg, pdf)
// and returns the files written, in a fixed order.
func Write(dir string, r *Results, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var order []string
	add := func(name string, data []byte) {
		files[name] = data
		order = append(order, name)
	}
	var figFormats []string
	for _, f := range formats {
		switch f {
		case "json":
			b, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				return nil, err
			}
			add("results.json", append(b, '\n'))
		case "csv":
			b, err := CSV(r)
			if err != nil {
				return nil, err
			}
			add("results.csv", b)
			if b, err = RepetitionsCSV(r); err != nil {
				return nil, err
			}
			add("results-reps.csv", b)
		case "md":
			add("results.md", Markdown(r, contains(formats, "svg")))
		case "svg", "pdf":
			figFormats = append(figFormats, f)
		default:
			return nil, fmt.Errorf("unknown output format %q (known: %s)", f, strings.Join(allFormats, ", "))
		}
	}
	if len(figFormats) > 0 {
		plots, err := Plots(r, figFormats)
		if err != nil {
			return nil, err
		}
		for _, p := range plots {
			add(p.File, p.Data)
		}
	}
	var paths []string
	for _, name := range order {
		p := filepath.Join(dir, name)
		if err := WriteFile(p, files[name]); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// Markdown is a report: what ran, one table per workload, errors and races
// spelled out, and the plots.
func Markdown(r *Results, withPlots bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", r.Experiment)
	if r.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(r.Description))
	}
	fmt.Fprintf(&b, "Experiment file `%s`, seed %d, %d measured repetitions per row", r.Source, r.Seed, r.Repetitions)
	if r.Baseline != "" {
		fmt.Fprintf(&b, ", speedups against `%s`", r.Baseline)
	}
	b.WriteString(".")
	if len(r.Sweep) > 0 {
		b.WriteString(" Sweep:")
		for _, p := range r.Sweep {
			fmt.Fprintf(&b, " `%s` = %s;", p.Name, strings.Join(p.Values, ", "))
		}
	}
	b.WriteString(" Makespans are in microseconds: median [min-max] and the 95% confidence interval of the mean.\n\n")

	for _, wl := range distinct(r.Rows, func(row *Row) string { return row.Workload }) {
		fmt.Fprintf(&b, "## %s\n\n", wl)
		b.WriteString("|")
		for _, p := range r.Sweep {
			fmt.Fprintf(&b, " %s |", p.Name)
		}
		b.WriteString(" scheduler | device | makespan median [min-max] | 95% CI | speedup | SM util | kernels | races | outputs |\n|")
		for range r.Sweep {
			b.WriteString("---|")
		}
		b.WriteString("---|---|--:|--:|--:|--:|--:|--:|---|\n")
		for i := range r.Rows {
			row := &r.Rows[i]
			if row.Workload != wl {
				continue
			}
			b.WriteString("|")
			for _, a := range row.Point {
				fmt.Fprintf(&b, " %s |", a.Value)
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
			fmt.Fprintf(&b, " %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(name), row.Device, fmtMakespan(row.Makespan), ci,
				speedup, fmtPct(row.SMUtil), fmtInt(row.Kernels), fmtRaces(row.Races), out)
		}
		b.WriteString("\n")
		var stats []string
		for i := range r.Rows {
			row := &r.Rows[i]
			if row.Workload != wl || len(row.SchedulerStats) == 0 {
				continue
			}
			var kv []string
			for _, k := range sortedKeys(row.SchedulerStats) {
				kv = append(kv, fmt.Sprintf("%s=%s", k, ff(row.SchedulerStats[k])))
			}
			stats = append(stats, fmt.Sprintf("- %s: %s", rowLabel(row), strings.Join(kv, ", ")))
		}
		if len(stats) > 0 {
			b.WriteString("Scheduler counters (last measured repetition):\n\n" + strings.Join(stats, "\n") + "\n\n")
		}
		if withPlots {
			for _, c := range Charts(r) {
				if c.Workload == wl {
					fmt.Fprintf(&b, "![%s](%s.svg)\n\n", c.Alt, c.Name)
				}
			}
		}
	}
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
	return b.Bytes()
}

func rowLabel(row *Row) string {
	s := fmt.Sprintf("%s / %s / %s", row.Workload, row.Scheduler, row.Device)
	if len(row.Point) > 0 {
		s += " at " + pointString(row.Point)
	}
	return s
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// distinct lists key(row) over rows, first-seen order.
func distinct(rows []Row, key func(*Row) string) []string {
	seen := map[string]bool{}
	var out []string
	for i := range rows {
		k := key(&rows[i])
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
