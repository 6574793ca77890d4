package acs

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/gpusched/gpusched/experiments"
)

// paperSW and paperHW are ACS-SW and ACS-HW as the paper configures them,
// by the schedulers' own names: ACS-HW's one host thread checks and submits
// every kernel.
const (
	paperSW = "acs-sw(N=32,K=4,sync)"
	paperHW = "acs-hw(M=64)"
)

// Targets from docs/REFERENCES.md (ACS).
const (
	targetSWOverSerial = 1.87 // ACS-SW on real hardware, deep RL
	targetSWAverage    = 1.56 // average over the three workload families
)

// report writes ACS's page: the targets, each file's tables and sweeps,
// the commands and every row.
const intro = `# ACS: out-of-order kernel scheduling for input-dependent graphs

Reproduction of ACS (Durvasula et al., arXiv 2401.12377, published as ACE at
PACT 2024; docs/REFERENCES.md) with gpusched's sched/acs on the
rl-physics workload (workloads/rl: a batched rigid-body step in the spirit of
Brax's environments, whose contact kernels the host picks every step, so the
kernel graph changes every step).

Schedulers (configs/experiments/acs-*.yaml):

- **serial**: every kernel in program order on one stream (the baseline).
- **graph-per-step**: each step captured round-robin over 8 streams with
  events into a CUDA graph, instantiated and launched, every step.
- **acs-sw**: ACS-SW as the paper: window of 32, RAW/WAR/WAW range checks
  (their CPU cost charged on the simulator from the paper's measurements),
  4 scheduler threads each owning a stream with one kernel in flight,
  completion by stream synchronize. Variants beyond the paper:
  **-event** (record + synchronize an event), **-callback**
  (cuLaunchHostFunc posts the completion; threads never block),
  **-inflight4** (up to 4 kernels per stream when the unfinished upstream
  kernels are all on that stream), **-waits** (a kernel whose upstream
  kernels have all been launched goes out at once behind event waits on
  them), **-k8** (8 threads), **-batch4** (up to 4 kernels, a ready one and
  its chain of dependents first, captured into a graph and launched
  together), **-cached** (those graphs reused by kernel sequence, their
  nodes updated), **-shared** (no window thread: the K scheduler threads
  share the window under a lock; the thread that learns of a completion
  retires it and takes its own next kernel, with no handoff between host
  threads), **-graph** (dispatch graph: one host thread and one stream;
  every kernel of the window whose upstream kernels have been launched
  goes out in one graph of independent kernel nodes, instantiated once per
  width and updated node by node, so stream order between graphs enforces
  every dependency and the GPU runs each graph's kernels concurrently;
  **-graph-N8** with a window of 8, **-graph-N1** every kernel alone in a
  one-node graph: serial through graph launches, the ablation that
  separates the launch path from the concurrency; **-graph-kernels** graphs
  keyed by their kernels, captured inside the run; **-graph-L4** the same
  batches with their kernels on 4 parallel branches of consecutive nodes
  instead of one each, since a graph launch costs the host per branch).
- **acs-hw**: ACS-HW, the simulator's hardware dependency queue (N = 32 slots,
  the host's stale list of M = 64, insertion N cycles, completion N-1
  cycles), one host thread checking and submitting every kernel;
  unsupported on a GPU. **acs-hw-checkers2**: two more host threads compute
  the upstream lists ahead (the list of the last M is fixed by program
  order) and the submitting thread only submits, still in program order.
- Sweeps: **acs-sw-N8/16/64** (window; acs-sw is N = 32) and
  **acs-sw-K1/2/8** (threads; acs-sw is K = 4).

`

// report writes ACS's page: the paper's targets met or missed, the notes,
// each file's tables and sweeps, the commands, and links to every row.
func report(w io.Writer, in *experiments.ReportInput) error {
	sets, files := in.Sets, in.Files
	var b bytes.Buffer
	b.WriteString(intro)
	writeTargets(&b, sets)
	if len(in.Notes) > 0 {
		b.Write(in.Notes)
		b.WriteString("\n")
	}
	for i, r := range sets {
		writeSet(&b, r, files[i])
	}
	b.WriteString("## Commands\n\n```\n")
	for i, r := range sets {
		if !hasCUDA(r) { // the simulator configs its rows ran, as the file records them
			fmt.Fprintf(&b, "gpusched paper acs run %s -o results/%s\n", files[i], r.Experiment)
			continue
		}
		fmt.Fprintf(&b, "gpusched (built with -tags cuda) paper acs run configs/experiments/%s -o results/%s\n", r.Source, r.Experiment)
	}
	fmt.Fprintf(&b, "gpusched paper acs report -o docs/results/acs.md --notes docs/results/acs-notes.md %s\n```\n\n", strings.Join(files, " "))
	experiments.WriteTableLinks(&b, in)
	_, err := w.Write(b.Bytes())
	return err
}

func hasCUDA(r *experiments.Results) bool {
	for _, row := range r.Rows {
		if strings.EqualFold(row.Device, "cuda") {
			return true
		}
	}
	return false
}

func speedup(row *experiments.Row) (float64, bool) {
	if row.Speedup == nil || len(row.Errors) > 0 {
		return 0, false
	}
	return *row.Speedup, true
}

// find returns the row of (device, workload, scheduler entry).
func find(r *experiments.Results, device, workload, entry string) *experiments.Row {
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Device == device && row.Workload == workload && row.Scheduler == entry {
			return row
		}
	}
	return nil
}

// familyStats are one device's speedups in one workload family.
type familyStats struct {
	paper, best []float64 // ACS-SW as the paper; the best ACS-SW variant; per workload
	// paperRows and bestRows are the rows behind paper and best.
	paperRows, bestRows []*experiments.Row
	// hw[i][j]: ACS-HW (i = 0 as the paper, 1 its best variant) over
	// ACS-SW (j = 0 as the paper, 1 its best variant), per workload with
	// both measured; wins counts the workloads where ACS-HW is faster.
	hw   [2][2][]float64
	wins [2][2]int
}

// collect gathers, per device and family (in order of appearance), the
// speedups the targets are judged on.
func collect(r *experiments.Results) (devices []string, families map[string][]string, stats map[[2]string]*familyStats) {
	devices = experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Device })
	families = map[string][]string{}
	stats = map[[2]string]*familyStats{}
	for _, dev := range devices {
		for _, fam := range experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Family }) {
			families[dev] = append(families[dev], fam)
			st := &familyStats{}
			stats[[2]string{dev, fam}] = st
			for _, wl := range experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Workload }) {
				st.add(workloadSpeedups(r, dev, fam, wl))
			}
		}
	}
	return devices, families, stats
}

// speedupsOf are one workload's ACS speedups over serial: [0] as the paper
// configures ACS, [1] the best variant, with the ACS-SW rows behind them.
type speedupsOf struct {
	sw, hw            [2]float64
	paperRow, bestRow *experiments.Row
	seen              bool
}

func workloadSpeedups(r *experiments.Results, dev, fam, wl string) speedupsOf {
	var w speedupsOf
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Device != dev || row.Workload != wl || row.Family != fam {
			continue
		}
		w.seen = true
		s, ok := speedup(row)
		if !ok {
			continue
		}
		switch row.Kind {
		case "acs-sw":
			if s > w.sw[1] {
				w.sw[1], w.bestRow = s, row
			}
			if row.SchedulerDesc == paperSW {
				w.sw[0], w.paperRow = s, row
			}
		case "acs-hw":
			w.hw[1] = max(w.hw[1], s)
			if row.SchedulerDesc == paperHW {
				w.hw[0] = s
			}
		}
	}
	return w
}

// add counts one workload into its family's statistics.
func (st *familyStats) add(w speedupsOf) {
	if w.paperRow != nil {
		st.paper = append(st.paper, w.sw[0])
		st.paperRows = append(st.paperRows, w.paperRow)
	}
	if !w.seen || w.sw[1] == 0 {
		return
	}
	st.best = append(st.best, w.sw[1])
	st.bestRows = append(st.bestRows, w.bestRow)
	for i := range w.hw {
		for j := range w.sw {
			if w.hw[i] == 0 || w.sw[j] == 0 {
				continue
			}
			st.hw[i][j] = append(st.hw[i][j], w.hw[i]/w.sw[j])
			if w.hw[i] > w.sw[j] {
				st.wins[i][j]++
			}
		}
	}
}

// topRow is the row with the largest speedup.
func topRow(rows []*experiments.Row) *experiments.Row {
	var top *experiments.Row
	for _, r := range rows {
		s, ok := speedup(r)
		if !ok {
			continue
		}
		if top == nil {
			top = r
		} else if t, _ := speedup(top); s > t {
			top = r
		}
	}
	return top
}

func fmtSpeedup(s float64) string { return fmt.Sprintf("%.2fx", s) }

// pairedNote is a row's paired speedup and interval where its repetitions
// were interleaved with the baseline's (GPU rows), else nothing.
func pairedNote(r *experiments.Row) string {
	if r.PairedSpeedup == nil {
		return ""
	}
	return fmt.Sprintf("; paired %s", r.PairedSpeedup)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func writeSet(b *bytes.Buffer, r *experiments.Results, file string) {
	fmt.Fprintf(b, "## %s\n\n", r.Experiment)
	if r.Description != "" {
		fmt.Fprintf(b, "%s\n\n", strings.TrimSpace(r.Description))
	}
	fmt.Fprintf(b, "From `%s` (experiment file `%s`, seed %d, %d measured repetitions per row). Cells: speedup over serial (median makespan in microseconds).\n\n",
		file, r.Source, r.Seed, r.Repetitions)
	entries := experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Scheduler })
	for _, dev := range experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Device }) {
		name := dev
		for _, row := range r.Rows {
			if row.Device == dev && row.DeviceName != "" {
				name = fmt.Sprintf("%s (%s)", dev, row.DeviceName)
				break
			}
		}
		for _, fam := range experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Family }) {
			var workloads []string
			for _, wl := range experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Workload }) {
				for _, row := range r.Rows {
					if row.Workload == wl && row.Family == fam && row.Device == dev {
						workloads = append(workloads, wl)
						break
					}
				}
			}
			if len(workloads) == 0 {
				continue
			}
			fmt.Fprintf(b, "### %s on %s\n\n", fam, name)
			writeTableHead(b, "scheduler", workloads)
			for _, e := range entries {
				if isSweep(e) {
					continue
				}
				writeLine(b, r, dev, e, e, workloads)
			}
			b.WriteString("\n")
			writeSweep(b, r, dev, "Window sweep (K = 4)", []string{"acs-sw-N8", "acs-sw-N16", "acs-sw", "acs-sw-N64"}, []string{"N = 8", "N = 16", "N = 32", "N = 64"}, workloads)
			writeSweep(b, r, dev, "Thread sweep (N = 32)", []string{"acs-sw-K1", "acs-sw-K2", "acs-sw", "acs-sw-K8"}, []string{"K = 1", "K = 2", "K = 4", "K = 8"}, workloads)
		}
	}
}

func isSweep(entry string) bool {
	for _, s := range []string{"acs-sw-N", "acs-sw-K"} {
		if strings.HasPrefix(entry, s) && len(entry) > len(s) && entry[len(s)] >= '0' && entry[len(s)] <= '9' {
			return true
		}
	}
	return false
}

func writeLine(b *bytes.Buffer, r *experiments.Results, dev, entry, label string, workloads []string) {
	fmt.Fprintf(b, "| %s |", label)
	var xs []float64
	for _, wl := range workloads {
		row := find(r, dev, wl, entry)
		switch {
		case row == nil:
			b.WriteString(" - |")
		case len(row.Errors) > 0:
			b.WriteString(" error |")
		default:
			s, ok := speedup(row)
			ms := "-"
			if row.Makespan != nil {
				ms = fmt.Sprintf("%.0f", row.Makespan.Median)
			}
			if ok {
				xs = append(xs, s)
				fmt.Fprintf(b, " %.2fx (%s) |", s, ms)
			} else {
				fmt.Fprintf(b, " - (%s) |", ms)
			}
		}
	}
	if len(xs) > 0 {
		fmt.Fprintf(b, " %.2fx |\n", stat.GeometricMean(xs, nil))
	} else {
		b.WriteString(" - |\n")
	}
}

// writeTableHead is the head of a table of speedups: the first column's
// title (first, blank for none), a column a workload and the geomean.
func writeTableHead(b *bytes.Buffer, first string, workloads []string) {
	head := "| |"
	if first != "" {
		head = "| " + first + " |"
	}
	b.WriteString(head)
	for _, wl := range workloads {
		fmt.Fprintf(b, " %s |", wl)
	}
	b.WriteString(" geomean |\n|---|")
	for range workloads {
		b.WriteString("--:|")
	}
	b.WriteString("--:|\n")
}

func writeSweep(b *bytes.Buffer, r *experiments.Results, dev, title string, entries, labels []string, workloads []string) {
	present := 0
	for _, e := range entries {
		for _, wl := range workloads {
			if find(r, dev, wl, e) != nil {
				present++
				break
			}
		}
	}
	if present < 2 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n", title)
	writeTableHead(b, "", workloads)
	for i, e := range entries {
		writeLine(b, r, dev, e, labels[i], workloads)
	}
	b.WriteString("\n")
}
