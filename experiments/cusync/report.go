package cusync

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/experiments"
)

// report writes cuSync's page from results files of its runs.
func report(w io.Writer, in *experiments.ReportInput) error {
	all := in.Sets
	var b bytes.Buffer
	b.WriteString(`# cuSync: tile-level synchronization of dependent kernels

Reproduction of cuSync (Jangda et al., "A Framework for Fine-Grained
Synchronization of Dependent GPU Kernels", CGO 2024, arXiv 2305.13450; the
cuSync section of REFERENCES.md) with gpusched's sched/tilesync on the
tensor-core kernels of workloads/kernels/tiles.cu (fp16 operands, fp32
accumulation, wmma) and the workloads of workloads/tiles.

- **stream-sync** (baseline): producer then consumer on one stream, the same
  kernels with null synchronization arguments.
- **tilesync(policy=...)**: producer on a high-priority stream, consumer on a
  low-priority one; a finished producer tile posts once (barrier, one
  fence, one increment); where a consumer tile's reduction reaches a
  counter group not yet known complete, its warp 0 polls that group and
  the next 31 (acquire loads, sleeping between polls with backoff up to
  poll_sleep_ns, default 1000) until the counters reach run number x tiles
  per counter. Policies: row (RowSync), tile (TileSync), strided
  (StridedSync, LLaMA's gate|up halves), conv2d (Conv2DTileSync, with the 3x3
  halo), fine (the finest the pair allows), auto (the wave-count rule of the
  sched/tilesync package comment, which also decides the wait kernel and the
  custom tile order).

Speedup = stream-sync median / scheduler median (same workload, same
device). Waves = tiles / (SMs x blocks per SM) of producer + consumer.
Targets (GPU): best policy >= 1.19x over stream sync on the GPT-3 MLP at its
best T and never below 1.0x; conv pairs up to >= 1.16x; the deadlock
reproduced on the simulator.

Regenerate:

    go run ./cmd/gpusched paper cusync run configs/experiments/cusync-sim.yaml -o results/cusync-sim
    go run -tags cuda ./cmd/gpusched paper cusync run configs/experiments/cusync-gpu.yaml -o results/cusync-gpu   # on a GPU
    go run ./cmd/gpusched paper cusync report -o docs/results/cusync.md docs/results/cusync-sim.json docs/results/cusync-gpu.json

Inputs: `)
	for i, r := range all {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (experiment %s, %d measured runs per row)", in.Files[i], r.Experiment, r.Repetitions)
	}
	b.WriteString(".\n\n")

	type key = rowKey
	rows := map[key]map[string]experiments.Row{} // scheduler -> row
	var workloads, devices, scheds []string
	family := map[string]string{}
	waves := map[key][2]float64{}
	seen := map[string]bool{}
	add := func(list *[]string, s string) {
		if !seen[s] {
			seen[s] = true
			*list = append(*list, s)
		}
	}
	for _, r := range all {
		for _, row := range r.Rows {
			k := key{row.Workload, row.Device}
			if rows[k] == nil {
				rows[k] = map[string]experiments.Row{}
			}
			rows[k][row.Scheduler] = row
			add(&workloads, "w:"+row.Workload)
			add(&devices, "d:"+row.Device)
			add(&scheds, "s:"+row.Scheduler)
			family[row.Workload] = groupOf(row)
			waves[k] = [2]float64{row.Facts["producer_waves"], row.Facts["consumer_waves"]}
		}
	}
	strip := func(l []string) []string {
		for i := range l {
			l[i] = l[i][2:]
		}
		return l
	}
	workloads, devices, scheds = strip(workloads), strip(devices), strip(scheds)
	// Say what each device column is: a simulator config, or the GPU the
	// rows ran on (as it reported itself).
	b.WriteString("Devices:")
	for i, d := range devices {
		name := ""
		for k, m := range rows {
			if k.device == d {
				for _, row := range m {
					name = row.DeviceName
					break
				}
				break
			}
		}
		kind := "the simulator's " + d + " config"
		if experiments.IsCUDA(d) {
			kind = "a real GPU"
		}
		sep := ","
		if i == len(devices)-1 {
			sep = "."
		}
		fmt.Fprintf(&b, " `%s` is %s (%s)%s", d, kind, name, sep)
	}
	b.WriteString("\n\n")
	speedup := func(k key, s string) (float64, bool) {
		base, ok1 := rows[k]["stream-sync"]
		row, ok2 := rows[k][s]
		if !ok1 || !ok2 || len(base.Errors) > 0 || len(row.Errors) > 0 || len(row.MakespansNS) == 0 {
			return 0, false
		}
		return medianNS(base.MakespansNS) / medianNS(row.MakespansNS), true
	}

	groups := []string{}
	gseen := map[string]bool{}
	for _, w := range workloads {
		if g := family[w]; !gseen[g] {
			gseen[g] = true
			groups = append(groups, g)
		}
	}
	b.WriteString("## Summary\n\n| group | device | best speedup (workload, scheduler) | worst of the per-workload best | auto: min - max |\n|---|---|---|---|---|\n")
	for _, g := range groups {
		for _, d := range devices {
			best, bestW, bestS := 0.0, "", ""
			worstBest := 0.0
			autoMin, autoMax := 0.0, 0.0
			n := 0
			for _, w := range workloads {
				if family[w] != g {
					continue
				}
				k := key{w, d}
				if rows[k] == nil {
					continue
				}
				wb := 0.0
				for _, s := range scheds {
					if s == "stream-sync" {
						continue
					}
					if sp, ok := speedup(k, s); ok {
						if sp > wb {
							wb = sp
						}
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
				}
				if wb > 0 {
					if n == 0 || wb < worstBest {
						worstBest = wb
					}
					n++
				}
			}
			if n == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %.3fx (%s, %s) | %.3fx | %.3fx - %.3fx |\n", g, d, best, bestW, bestS, worstBest, autoMin, autoMax)
		}
	}
	b.WriteString("\n")

	writeTargets(&b, all, rows, workloads, devices, scheds, family)

	for _, g := range groups {
		fmt.Fprintf(&b, "## %s\n\nEach cell: speedup over stream-sync, one column per device (%s). stream-sync: median time in microseconds.\n\n", g, strings.Join(devices, " | "))
		b.WriteString("| workload | waves (P + C) | stream-sync (us) |")
		var cols []string
		for _, s := range scheds {
			if s == "stream-sync" {
				continue
			}
			any := false
			for _, w := range workloads {
				if family[w] != g {
					continue
				}
				for _, d := range devices {
					if _, ok := rows[key{w, d}][s]; ok {
						any = true
					}
				}
			}
			if any {
				cols = append(cols, s)
				fmt.Fprintf(&b, " %s |", s)
			}
		}
		b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(cols)) + "\n")
		for _, w := range workloads {
			if family[w] != g {
				continue
			}
			var wv, base []string
			for _, d := range devices {
				k := key{w, d}
				if rows[k] == nil {
					wv, base = append(wv, "-"), append(base, "-")
					continue
				}
				x := waves[k]
				wv = append(wv, fmt.Sprintf("%.2f + %.2f", x[0], x[1]))
				if r, ok := rows[k]["stream-sync"]; ok && len(r.Errors) == 0 {
					base = append(base, fmt.Sprintf("%.1f", medianNS(r.MakespansNS)/1e3))
				} else {
					base = append(base, "error")
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s |", w, strings.Join(wv, " \\| "), strings.Join(base, " \\| "))
			for _, s := range cols {
				var cells []string
				for _, d := range devices {
					k := key{w, d}
					if sp, ok := speedup(k, s); ok {
						cells = append(cells, fmt.Sprintf("%.3fx", sp))
					} else if r, ok := rows[k][s]; ok && len(r.Errors) > 0 {
						cells = append(cells, "error")
					} else {
						cells = append(cells, "-")
					}
				}
				fmt.Fprintf(&b, " %s |", strings.Join(cells, " \\| "))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}

	b.WriteString("## Deadlock without the wait kernel (simulator)\n\n")
	b.WriteString("GPT-3's GEMM2 at T = 1024 (768 tiles of 128x128, two per H100 SM: 264 resident) issued before its producer GEMM1, the producer's launch 50 us later on a higher-priority stream (sched/tilesync.ConsumerFirst).\n\n")
	nd := 0
	for _, r := range all {
		for _, d := range r.Probes {
			nd++
			fmt.Fprintf(&b, "- %s, wait kernel %s: `%s`\n", d.Device, d.Params["wait_kernel"], d.Result)
		}
	}
	if nd == 0 {
		b.WriteString("(no simulator results given)\n")
	}
	b.WriteString("\n## Auto's fallbacks\n\n")
	b.WriteString("The rule (sched/tilesync package comment) runs a pair in stream order, the baseline's own schedule, unless the producer has more than one wave and the idle SM time of its last wave gives an estimated gain of at least min_gain; so auto's fallback rows can differ from stream-sync only by measurement noise. Per device: the fallback rows' speedups, and the synchronized rows' (the raw rows give the rule's estimate for each); paired medians where the runs were interleaved.\n\n")
	for _, d := range devices {
		var fb []float64
		var synced []string
		for _, w := range workloads {
			k := key{w, d}
			row, ok := rows[k]["auto"]
			p, ok2 := estimate(rows[k], "auto") // paired where interleaved
			sp := p.Median
			if !ok || !ok2 {
				continue
			}
			if len(row.Choices) > 0 && strings.Contains(row.Choices[0], ": stream (") {
				fb = append(fb, sp)
			} else {
				synced = append(synced, fmt.Sprintf("%s %.3fx", w, sp))
			}
		}
		if len(fb) == 0 && len(synced) == 0 {
			continue
		}
		sort.Float64s(fb)
		fmt.Fprintf(&b, "- %s: %d fallbacks", d, len(fb))
		if len(fb) > 0 {
			fmt.Fprintf(&b, " (%.3fx - %.3fx)", fb[0], fb[len(fb)-1])
		}
		fmt.Fprintf(&b, "; synchronized: %s\n", strings.Join(append(synced, "none")[:max(1, len(synced))], ", "))
		for _, w := range workloads {
			if row, ok := rows[key{w, d}]["auto"]; ok && !strings.Contains(row.SchedulerDesc, "poll_sleep_ns") {
				fmt.Fprintf(&b, "- %s: these rows were measured with the kernels and rule before the poll backoff and min_gain (their scheduler descriptions name neither): the rule then synchronized every multi-wave pair and the one-wave pairs too\n", d)
				break
			}
		}
	}
	b.WriteString(`
## Notes

- The simulator models a consumer block as waiting, before it starts, for
  every producer tile its reduction reads; the kernel waits for each tile
  just before the k-slices it needs. So on the simulator TileSync and
  Conv2DTileSync behave like RowSync, and the wait kernel releases the
  consumer when the producer's first block completes rather than starts.
- Races: the simulator's race checker does not know tile-level
  synchronization, so every synchronized pair (the producer writes what the
  consumer reads while both run, and the counters) is reported as a race;
  stream-sync rows report none. Correctness of the synchronized runs is
  shown on the GPU: every row's outputs are checked against the CPU
  reference and their SHA-256 compared with stream-sync's.
- The simulator's per-block work is the tile's tensor-core flops at an
  estimated 1024 flops per cycle per SM (workloads/tiles.TensorFlopsPerCycle)
  and each operand read once from device memory.
- GPU rows: one NVIDIA H100 80GB HBM3 (driver 580.159.04, CUDA 13.0),
  2026-11-24, batch I1 of docs/results/gpu-runs.md (raw output in
  docs/results/raw/gpu-batch-i1-h100-cusync-acs.tgz): every workload's five
  schedulers measured interleaved, 3 warm-up and 30 measured rounds, each
  round running every scheduler once in rotating order; then each
  scheduler ran once more from NaN-poisoned outputs, which were checked.
  The Targets table pairs round i of a scheduler with round i of
  stream-sync.
- Earlier H100 batches measured each scheduler's runs back to back (10 or
  30 per row) and found GPT-3 T=768 at 1.193x (auto, batch G2), 1.204x
  (row, batch F) and 1.206x / 1.207x / 1.193x (row / fine / auto, batch G4,
  docs/results/cusync-confirm.md); those batches ran on other H100 hosts of
  the same kind. Interleaved, on this host, the same shape gives 1.18x
  with a 95% interval of about +-0.2%: the 1.19x target is met in three of
  those four runs and missed by about 1% in the interleaved one, so it
  sits within the spread between hosts and runs. What is robust in every
  run: the gain at T=768 (1.18x-1.21x), the conv pairs (up to 1.16x-1.20x)
  and, with interleaving, the rule's fallbacks at 1.00x (every interval
  contains 1.0). A later sweep of every T from 512 to 1024 in steps of 64
  (batch M, docs/results/cusync-confirm.md) found no better T: T=768
  1.184x, T=704 1.182x; its fallbacks read 0.997x to 1.002x. Batches Q
  and R tried keeping every other block off the producer's SMs, one block
  per SM, and starting the consumer tiles of the producer's tail rows
  earlier: each was slower than the row order at two blocks per SM. The
  same experiment on an H200 (batch S) gives 1.136x at T=768 and up to
  1.177x on the conv pairs, every fallback's interval containing 1.0.
- Stream sync at GPT-3 T=768 is bimodal on the H100 (batch F: three runs
  near 1325 us, seven near 1380 us); the medians compare the typical runs.
- Where auto falls back it runs the baseline's own schedule (the same
  kernels, in order on one stream), so its ratio is 1.0 up to noise: with
  back-to-back runs the fallback rows read 0.98x to 1.03x; interleaved,
  0.996x to 1.001x, every interval containing 1.0.
- The synchronized kernels still cost 5-14% where there is no tail to fill
  (row and fine on one-wave pairs, and the multi-wave shapes the rule
  leaves to stream order). Our reading, not yet profiled: consumer blocks
  start, load their independent operand and poll while the producer
  streams the same memory.

## Raw rows

| workload | device | scheduler | median (us) | runs (us) | races | outputs | choices / errors |
|---|---|---|---|---|---|---|---|
`)
	for _, r := range all {
		rs := append([]experiments.Row(nil), r.Rows...)
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Device < rs[j].Device })
		for _, row := range rs {
			var runs []string
			for _, ns := range row.MakespansNS {
				runs = append(runs, fmt.Sprintf("%.1f", float64(ns)/1e3))
			}
			races := "-"
			if row.Races != nil {
				races = fmt.Sprint(*row.Races)
			}
			out := row.Outputs
			if row.OutputsSHA256 != "" {
				out += " sha " + row.OutputsSHA256[:12]
			}
			notes := strings.Join(append(append([]string(nil), row.Choices...), row.Errors...), "; ")
			fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %s | %s | %s | %s |\n", row.Workload, row.Device, row.Scheduler,
				medianNS(row.MakespansNS)/1e3, strings.Join(runs, " "), races, out, strings.ReplaceAll(notes, "|", "/"))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// groupOf names the table a row belongs to, from its workload label's
// prefix before the first space or '-T' (labels are chosen in the
// experiment files: "gpt3 T=512", "resnet38 L0 b8" ...).
func groupOf(r experiments.Row) string {
	if i := strings.IndexByte(r.Workload, ' '); i > 0 {
		return r.Workload[:i]
	}
	return r.Family
}

// rowKey names the rows of one workload on one device.
type rowKey struct{ workload, device string }

// estimate is a scheduler's speedup over stream-sync on one workload: paired
// round by round where the runs were interleaved, else the ratio of the
// medians (no interval).
func estimate(m map[string]experiments.Row, s string) (experiments.Paired, bool) {
	base, ok1 := m["stream-sync"]
	row, ok2 := m[s]
	if !ok1 || !ok2 || len(base.Errors) > 0 || len(row.Errors) > 0 || len(row.MakespansNS) == 0 || len(base.MakespansNS) == 0 {
		return experiments.Paired{}, false
	}
	if base.Interleaved && row.Interleaved {
		if p, ok := experiments.PairedSpeedup(base.MakespansNS, row.MakespansNS); ok {
			return p, true
		}
	}
	r := medianNS(base.MakespansNS) / medianNS(row.MakespansNS)
	return experiments.Paired{N: 0, Median: r, Lo: math.NaN(), Hi: math.NaN()}, true
}

// writeTargets gives the GPU targets their verdicts, from the
// rows of every real GPU in the results, and the simulator's deadlock.
func writeTargets(b *bytes.Buffer, all []*experiments.Results, rows map[rowKey]map[string]experiments.Row, workloads, devices, scheds []string, family map[string]string) {
	b.WriteString("## Targets\n\n")
	b.WriteString("Speedups over stream-sync on the GPU. Where the runs were interleaved (every round runs every scheduler once; see the run command's doc), a cell is the median of the per-round ratios with its distribution-free 95% confidence interval in brackets (sign-test order statistics); otherwise the ratio of the medians. \"Best\" is the best scheduler other than stream-sync on that workload.\n\n")
	b.WriteString("| target | device | measured | verdict |\n|---|---|---|---|\n")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	best := func(k rowKey) (experiments.Paired, string, bool) {
		var bp experiments.Paired
		bs, found := "", false
		for _, s := range scheds {
			if s == "stream-sync" {
				continue
			}
			if p, ok := estimate(rows[k], s); ok && (!found || p.Median > bp.Median) {
				bp, bs, found = p, s, true
			}
		}
		return bp, bs, found
	}
	for _, d := range devices {
		if !experiments.IsCUDA(d) {
			continue
		}
		// GPT-3: the best policy at its best T, and at every T.
		var top experiments.Paired
		topW, topS := "", ""
		var perT []string
		below := 0
		for _, w := range workloads {
			if family[w] != "gpt3" || rows[rowKey{w, d}] == nil {
				continue
			}
			p, s, ok := best(rowKey{w, d})
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
			fmt.Fprintf(b, "| best policy >= 1.19x over stream sync on GPT-3's MLP at its best T | %s | %v (%s, %s) | %s |\n", d, top, topW, topS, verdict(top.Median >= 1.19))
			fmt.Fprintf(b, "| ... and never below 1.0x (best policy per T) | %s | %s | %s |\n", d, strings.Join(perT, "; "), verdict(below == 0))
		}
		var conv experiments.Paired
		convW, convS := "", ""
		for _, w := range workloads {
			if g := family[w]; g != "resnet38" && g != "vgg19" {
				continue
			}
			if p, s, ok := best(rowKey{w, d}); ok && p.Median > conv.Median {
				conv, convW, convS = p, w, s
			}
		}
		if convW != "" {
			fmt.Fprintf(b, "| conv pairs up to >= 1.16x | %s | %s (%s, %s) | %s |\n", d, conv, convW, convS, verdict(conv.Median >= 1.16))
		}
	}
	for _, r := range all {
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
	b.WriteString("\n")
}

// firstClause is a deadlock message up to its first colon.
func firstClause(s string) string {
	if i := strings.IndexByte(s, ':'); i > 0 {
		return s[:i]
	}
	return s
}
