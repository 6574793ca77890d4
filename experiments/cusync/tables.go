package cusync

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/stats"
)

// writeSummary gives, per model and device, the best speedup, the worst of
// the per-workload bests and auto's range.
func (x *rowIndex) writeSummary(b *bytes.Buffer) {
	b.WriteString("## Summary\n\n| group | device | best speedup (workload, scheduler) | worst of the per-workload best | auto: min - max |\n|---|---|---|---|---|\n")
	for _, g := range x.groups() {
		for _, d := range x.devices {
			x.writeSummaryLine(b, g, d)
		}
	}
	b.WriteString("\n")
}

func (x *rowIndex) writeSummaryLine(b *bytes.Buffer, g, d string) {
	best, bestW, bestS := 0.0, "", ""
	worstBest, autoMin, autoMax := 0.0, 0.0, 0.0
	n := 0
	for _, w := range x.workloads {
		k := rowKey{w, d}
		if x.family[w] != g || x.rows[k] == nil {
			continue
		}
		wb := 0.0
		for _, s := range x.scheds {
			sp, ok := x.speedup(k, s)
			if s == baseline || !ok {
				continue
			}
			wb = max(wb, sp)
			if sp > best {
				best, bestW, bestS = sp, w, s
			}
			if s == "auto" {
				if autoMin == 0 || sp < autoMin {
					autoMin = sp
				}
				autoMax = max(autoMax, sp)
			}
		}
		if wb > 0 {
			if n == 0 || wb < worstBest {
				worstBest = wb
			}
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(b, "| %s | %s | %.3fx (%s, %s) | %.3fx | %.3fx - %.3fx |\n", g, d, best, bestW, bestS, worstBest, autoMin, autoMax)
	}
}

// writeGroup is one model's table: every workload's waves, stream-sync's
// time and every scheduler's speedup, one column per device in each cell.
func (x *rowIndex) writeGroup(b *bytes.Buffer, g string) {
	fmt.Fprintf(b, "## %s\n\nEach cell: speedup over stream-sync, one column per device (%s). stream-sync: median time in microseconds.\n\n", g, strings.Join(x.devices, " | "))
	b.WriteString("| workload | waves (P + C) | stream-sync (us) |")
	cols := x.columns(g)
	for _, s := range cols {
		fmt.Fprintf(b, " %s |", s)
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, w := range x.workloads {
		if x.family[w] == g {
			x.writeGroupLine(b, w, cols)
		}
	}
	b.WriteString("\n")
}

// columns are the schedulers other than stream-sync with a row in group g.
func (x *rowIndex) columns(g string) []string {
	var cols []string
	for _, s := range x.scheds {
		if s == baseline {
			continue
		}
		found := false
		for _, w := range x.workloads {
			for _, d := range x.devices {
				_, ok := x.rows[rowKey{w, d}][s]
				found = found || (ok && x.family[w] == g)
			}
		}
		if found {
			cols = append(cols, s)
		}
	}
	return cols
}

func (x *rowIndex) writeGroupLine(b *bytes.Buffer, w string, cols []string) {
	var wv, base []string
	for _, d := range x.devices {
		k := rowKey{w, d}
		if x.rows[k] == nil {
			wv, base = append(wv, "-"), append(base, "-")
			continue
		}
		v := x.waves[k]
		wv = append(wv, fmt.Sprintf("%.2f + %.2f", v[0], v[1]))
		if r, ok := x.rows[k][baseline]; ok && len(r.Errors) == 0 {
			base = append(base, fmt.Sprintf("%.1f", stats.MedianOrZero(r.MakespansNS)/1e3))
		} else {
			base = append(base, "error")
		}
	}
	fmt.Fprintf(b, "| %s | %s | %s |", w, strings.Join(wv, " \\| "), strings.Join(base, " \\| "))
	for _, s := range cols {
		var cells []string
		for _, d := range x.devices {
			k := rowKey{w, d}
			if sp, ok := x.speedup(k, s); ok {
				cells = append(cells, fmt.Sprintf("%.3fx", sp))
			} else if r, ok := x.rows[k][s]; ok && len(r.Errors) > 0 {
				cells = append(cells, "error")
			} else {
				cells = append(cells, "-")
			}
		}
		fmt.Fprintf(b, " %s |", strings.Join(cells, " \\| "))
	}
	b.WriteString("\n")
}

// writeFallbacks gives, per device, auto's speedups where the rule fell
// back to stream order and where it synchronized.
func (x *rowIndex) writeFallbacks(b *bytes.Buffer) {
	b.WriteString("## Auto's fallbacks\n\n")
	b.WriteString("The rule (sched/tilesync package comment) runs a pair in stream order, the baseline's own schedule, unless the producer has more than one wave and the idle SM time of its last wave gives an estimated gain of at least min_gain; so auto's fallback rows can differ from stream-sync only by measurement noise. Per device: the fallback rows' speedups, and the synchronized rows' (the raw rows give the rule's estimate for each); paired medians where the runs were interleaved.\n\n")
	for _, d := range x.devices {
		var fb []float64
		var synced []string
		old := false
		for _, w := range x.workloads {
			k := rowKey{w, d}
			row, ok := x.rows[k]["auto"]
			p, ok2 := estimate(x.rows[k], "auto") // paired where interleaved
			if !ok || !ok2 {
				continue
			}
			if len(row.Choices) > 0 && strings.Contains(row.Choices[0], ": stream (") {
				fb = append(fb, p.Median)
			} else {
				synced = append(synced, fmt.Sprintf("%s %.3fx", w, p.Median))
			}
			old = old || !strings.Contains(row.SchedulerDesc, "poll_sleep_ns")
		}
		writeFallbackLine(b, d, sortedCopy(fb), synced, old)
	}
}

func writeFallbackLine(b *bytes.Buffer, d string, fb []float64, synced []string, old bool) {
	if len(fb) == 0 && len(synced) == 0 {
		return
	}
	fmt.Fprintf(b, "- %s: %d fallbacks", d, len(fb))
	if len(fb) > 0 {
		fmt.Fprintf(b, " (%.3fx - %.3fx)", fb[0], fb[len(fb)-1])
	}
	fmt.Fprintf(b, "; synchronized: %s\n", strings.Join(append(synced, "none")[:max(1, len(synced))], ", "))
	if old {
		fmt.Fprintf(b, "- %s: these rows were measured with the kernels and rule before the poll backoff and min_gain (their scheduler descriptions name neither): the rule then synchronized every multi-wave pair and the one-wave pairs too\n", d)
	}
}

// writeTargets gives the GPU targets their verdicts, from the rows of
// every real GPU in the results, and the simulator's deadlock.
func (x *rowIndex) writeTargets(b *bytes.Buffer, sets []*experiments.Results) {
	b.WriteString("## Targets\n\n")
	b.WriteString("Speedups over stream-sync on the GPU. Where the runs were interleaved (every round runs every scheduler once), a cell is the median of the per-round ratios with its distribution-free 95% confidence interval in brackets (sign-test order statistics); otherwise the ratio of the medians. \"Best\" is the best scheduler other than stream-sync on that workload.\n\n")
	b.WriteString("| target | device | measured | verdict |\n|---|---|---|---|\n")
	for _, d := range x.devices {
		if experiments.IsCUDA(d) {
			x.writeGPT3Target(b, d)
			x.writeConvTarget(b, d)
		}
	}
	for _, r := range sets {
		writeDeadlockTarget(b, r)
	}
	b.WriteString("\n")
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

// writeGPT3Target: the best policy at GPT-3's best T, and at every T.
func (x *rowIndex) writeGPT3Target(b *bytes.Buffer, d string) {
	var top experiments.Paired
	topW, topS := "", ""
	var perT []string
	below := 0
	for _, w := range x.workloads {
		if x.family[w] != "gpt3" || x.rows[rowKey{w, d}] == nil {
			continue
		}
		p, s, ok := x.best(rowKey{w, d})
		if !ok {
			continue
		}
		if p.Median > top.Median {
			top, topW, topS = p, w, s
		}
		// Below 1.0x means significantly below: the whole interval
		// under 1, or, without an interval, the ratio itself.
		if (p.N > 0 && p.Hi < 1) || (p.N == 0 && p.Median < 1) {
			below++
			perT = append(perT, fmt.Sprintf("%s %s %s (below)", w, s, p))
		} else {
			perT = append(perT, fmt.Sprintf("%s %s %s", w, s, p))
		}
	}
	if topW != "" {
		fmt.Fprintf(b, "| best policy >= %.2fx over stream sync on GPT-3's MLP at its best T | %s | %v (%s, %s) | %s |\n", targetGPT3, d, top, topW, topS, verdict(top.Median >= targetGPT3))
		fmt.Fprintf(b, "| ... and never below 1.0x (best policy per T) | %s | %s | %s |\n", d, strings.Join(perT, "; "), verdict(below == 0))
	}
}

func (x *rowIndex) writeConvTarget(b *bytes.Buffer, d string) {
	var conv experiments.Paired
	convW, convS := "", ""
	for _, w := range x.workloads {
		if g := x.family[w]; g != "resnet38" && g != "vgg19" {
			continue
		}
		if p, s, ok := x.best(rowKey{w, d}); ok && p.Median > conv.Median {
			conv, convW, convS = p, w, s
		}
	}
	if convW != "" {
		fmt.Fprintf(b, "| conv pairs up to >= %.2fx | %s | %s (%s, %s) | %s |\n", targetConv, d, conv, convW, convS, verdict(conv.Median >= targetConv))
	}
}

func writeDeadlockTarget(b *bytes.Buffer, r *experiments.Results) {
	var without, with string
	for _, dl := range r.Probes {
		if dl.Params["wait_kernel"] == "true" {
			with = dl.Result
		} else {
			without = dl.Result
		}
	}
	if without != "" {
		ok := strings.HasPrefix(without, "deadlock at") && with == "completed"
		fmt.Fprintf(b, "| the deadlock without the wait kernel reproduced on the simulator | %s | without: %s; with: %s | %s |\n", r.Probes[0].Device, firstClause(without), with, verdict(ok))
	}
}

// firstClause is a deadlock message up to its first colon.
func firstClause(s string) string {
	if i := strings.IndexByte(s, ':'); i > 0 {
		return s[:i]
	}
	return s
}
