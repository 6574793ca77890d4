package experiments

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
)

// CSV is one line per row: identity, sweep point, makespan statistics (µs),
// the speedup as a ratio of medians and as the paired estimate with its
// 95% interval, what the device observed, every repetition's makespan (ns,
// space-separated), the scheduler's counters (stat.NAME) and every
// workload and scheduler parameter (workload.NAME, scheduler.NAME).
func CSV(r *Results) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	stats, wlp, scp := csvExtras(r)
	head := []string{"index"}
	for _, p := range r.Sweep {
		head = append(head, p.Name)
	}
	head = append(head, "workload", "family", "scheduler", "kind", "scheduler_desc", "device", "device_name",
		"repetitions", "makespan_median_us", "makespan_mean_us", "makespan_std_us", "makespan_min_us", "makespan_max_us",
		"makespan_ci95_lo_us", "makespan_ci95_hi_us", "speedup", "speedup_paired", "speedup_ci95_lo", "speedup_ci95_hi",
		"speedup_n", "speedup_method", "sm_util", "kernels", "races", "outputs", "errors", "makespans_ns")
	head = append(head, prefixed("stat.", stats)...)
	head = append(head, prefixed("workload.", wlp)...)
	head = append(head, prefixed("scheduler.", scp)...)
	if err := w.Write(head); err != nil {
		return nil, err
	}
	est := r.Speedups()
	for _, row := range r.Rows {
		rec := []string{strconv.Itoa(row.Index)}
		rec = append(rec, pointValues(r, &row)...)
		rec = append(rec, row.Workload, row.Family, row.Scheduler, row.Kind, row.SchedulerDesc, row.Device, row.DeviceName)
		if s := row.Makespan; s != nil && s.N > 0 {
			rec = append(rec, strconv.Itoa(s.N), ff(s.Median), ff(s.Mean), ff(s.Std), ff(s.Min), ff(s.Max), ff(s.CI95Lo), ff(s.CI95Hi))
		} else {
			rec = append(rec, "0", "", "", "", "", "", "", "")
		}
		rec = append(rec, optF(row.Speedup))
		if e, ok := est[row.Index]; ok {
			rec = append(rec, nanEmpty(e.Value), nanEmpty(e.Lo), nanEmpty(e.Hi), strconv.Itoa(e.N), e.Method)
		} else {
			rec = append(rec, "", "", "", "", "")
		}
		rec = append(rec, optF(row.SMUtil), optI64(row.Kernels), optInt(row.Races), row.Outputs, strings.Join(row.Errors, "; "),
			joinInts(row.MakespansNS))
		rec = append(rec, statValues(stats, row.SchedulerStats)...)
		rec = append(rec, mapValues(wlp, row.WorkloadParams)...)
		rec = append(rec, mapValues(scp, row.SchedulerParams)...)
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// RepetitionsCSV is tidy data: one line per measured repetition of every
// row, every parameter in its own column (the sweep point's, each workload
// parameter as workload.NAME, each scheduler parameter as scheduler.NAME),
// the repetition's makespan, the baseline's makespan in the same
// repetition and their ratio (the per-repetition speedup), and the row's
// device observations and scheduler counters (stat.NAME), which come from
// its last measured repetition and repeat on each of its lines. A row that
// measured nothing (it failed) has one line with its errors and no
// repetition.
func RepetitionsCSV(r *Results) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	stats, wlp, scp := csvExtras(r)
	head := []string{"experiment", "index", "group"}
	for _, p := range r.Sweep {
		head = append(head, p.Name)
	}
	head = append(head, "workload", "family")
	head = append(head, prefixed("workload.", wlp)...)
	head = append(head, "scheduler", "kind", "scheduler_desc")
	head = append(head, prefixed("scheduler.", scp)...)
	head = append(head, "baseline", "device", "device_name", "warmup", "interleaved", "repetition", "makespan_ns",
		"baseline_makespan_ns", "speedup", "sm_util", "kernels", "races")
	head = append(head, prefixed("stat.", stats)...)
	head = append(head, "outputs", "errors")
	if err := w.Write(head); err != nil {
		return nil, err
	}
	base := map[int]*Row{}
	for i := range r.Rows {
		if r.Rows[i].Baseline {
			base[r.Rows[i].Group] = &r.Rows[i]
		}
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		ident := []string{r.Experiment, strconv.Itoa(row.Index), strconv.Itoa(row.Group)}
		ident = append(ident, pointValues(r, row)...)
		ident = append(ident, row.Workload, row.Family)
		ident = append(ident, mapValues(wlp, row.WorkloadParams)...)
		ident = append(ident, row.Scheduler, row.Kind, row.SchedulerDesc)
		ident = append(ident, mapValues(scp, row.SchedulerParams)...)
		ident = append(ident, strconv.FormatBool(row.Baseline), row.Device, row.DeviceName, strconv.Itoa(row.Warmup),
			strconv.FormatBool(row.Interleaved))
		tail := []string{optF(row.SMUtil), optI64(row.Kernels), optInt(row.Races)}
		tail = append(tail, statValues(stats, row.SchedulerStats)...)
		tail = append(tail, row.Outputs, strings.Join(row.Errors, "; "))
		reps := repetitionCells(row, base[row.Group])
		if len(reps) == 0 {
			reps = [][]string{{"", "", "", ""}}
		}
		for _, rep := range reps {
			rec := append(append(append([]string{}, ident...), rep...), tail...)
			if err := w.Write(rec); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// repetitionCells are (repetition, makespan_ns, baseline_makespan_ns,
// speedup) for each measured repetition of row; the baseline's cells are
// empty where the baseline has no repetition of that number.
func repetitionCells(row, base *Row) [][]string {
	var out [][]string
	for k, ns := range row.MakespansNS {
		cells := []string{strconv.Itoa(k), strconv.FormatInt(ns, 10), "", ""}
		if base != nil && len(base.Errors) == 0 && len(base.MakespansNS) == len(row.MakespansNS) && ns > 0 {
			b := base.MakespansNS[k]
			cells[2] = strconv.FormatInt(b, 10)
			cells[3] = ff(round(float64(b)/float64(ns), 6))
		}
		out = append(out, cells)
	}
	return out
}

// csvExtras are the column names beyond the fixed ones: every counter any
// row reports and every workload and scheduler parameter, sorted.
func csvExtras(r *Results) (stats, wlParams, schedParams []string) {
	st := map[string]string{}
	var wl, sc []map[string]string
	for _, row := range r.Rows {
		for k := range row.SchedulerStats {
			st[k] = ""
		}
		wl = append(wl, row.WorkloadParams)
		sc = append(sc, row.SchedulerParams)
	}
	return sortedParamNames(st), sortedParamNames(wl...), sortedParamNames(sc...)
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// pointValues are a row's sweep values in the order of r.Sweep.
func pointValues(r *Results, row *Row) []string {
	out := make([]string, len(r.Sweep))
	for i, p := range r.Sweep {
		for _, a := range row.Point {
			if a.Name == p.Name {
				out[i] = a.Value
			}
		}
	}
	return out
}

func statValues(names []string, m map[string]float64) []string {
	out := make([]string, len(names))
	for i, n := range names {
		if v, ok := m[n]; ok {
			out[i] = ff(v)
		}
	}
	return out
}

func mapValues(names []string, m map[string]string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}

func joinInts(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, " ")
}

func nanEmpty(f float64) string {
	if math.IsNaN(f) {
		return ""
	}
	return ff(f)
}

func ff(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func optF(f *float64) string {
	if f == nil {
		return ""
	}
	return ff(*f)
}

func optI64(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

func optInt(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}
