package kesco

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/sched/graph"
	"github.com/gpusched/gpusched/workloads"
)

const intro = `# KeSCo: whole-graph stream assignment of multi-task programs

Reproduction of KeSCo (Lin et al., "KeSCo: Compile-time kernel scheduling for
multi-task programs", ICCD 2023; HuntKTm, TACO 2025; the KeSCo section of
docs/REFERENCES.md) with gpusched's sched/graph on the GrCUDA benchmarks of
workloads/kesco (VEC, BS, ML, HITS, IMG, DL, M1, M2; real CUDA kernels in
workloads/kernels/kesco.cu, launched with 16 blocks of 256 threads) and KeSCo's
multi-task mixes (16 or 32 tasks from the large set M1, M2, BS, IMG and the small
set VEC, ML, DL at 1:1, 2:1, 3:1 and 5:1; each task one step with its own buffers).

Schedulers (all in sched/graph unless noted; "+graph" = the same plan captured
once into one multi-stream CUDA graph, fork/join through events, launched per run):

- serial: sched's baseline, one stream in program order; serial+graph: the same captured.
- taskflow: BFS levels of the transitive reduction, node i of a level on stream i mod 4,
  events only across streams.
- nimble: minimum path cover of the transitive reduction (Hopcroft-Karp), one stream
  per path, an event after every node.
- grsched: the GrSched-like runtime: sched/acs's ACS-SW window scheduler with an
  unbounded window (8 scheduler threads, one stream each, one kernel in flight each).
- grcuda: GrCUDA's stream policy: the DAG discovered kernel by kernel with an unbounded
  window, a child reuses its first parent's stream, others go to free streams (pool of 16).
- kesco: KeSCo's distributor (round-robin sources, single parent's stream, several
  parents: the parent with the fewest unscheduled successors; 8 streams capped at the
  width) and sync pruning (one wait per foreign stream, none if already implied).
  kesco-no-prune waits on every cross-stream edge; kesco-strict applies the paper's
  rules literally (a fork's children serialize on the parent's stream; a join takes
  the first of tied parents). The default refines them: a node takes a parent's
  stream only if no other node of its level took it (else the next unused stream),
  and ties go to the deepest parent. kesco-width+graph: every stream up to the
  width, captured (in a graph, streams only order branches).
- mp-serial / mp-kesco: KeSCo's multi-process mode: one host thread per task
  (sharing one context), each issuing its task on one stream or scheduled by KeSCo.

Speedup = serial's median makespan / the row's median makespan, same workload and
device. Averages are geometric means. Every GPU row's outputs are compared with the
serial schedule's and with the CPU reference by the runner; every simulator row
reports the simulator's race check.

One section per result file and device follows (the simulator configs the results
name; the GPU section appears once the GPU run's JSON is passed to report).

Regenerate:

    go run ./cmd/gpusched paper kesco run docs/results/kesco-sim.json -o results/kesco-sim   # the configs its rows ran (kesco-sim.yaml: today's)
    go run -tags cuda ./cmd/gpusched paper kesco run configs/experiments/kesco-gpu.yaml -o results/kesco-gpu   # on a GPU
    go run ./cmd/gpusched paper kesco report -o docs/results/kesco.md docs/results/kesco-sim.json docs/results/kesco-gpu.json

`

// report writes KeSCo's page: the targets, each file's devices, and the
// sync pruning of KeSCo's plans for the first file's workloads.
func report(w io.Writer, in *experiments.ReportInput) error {
	var b bytes.Buffer
	b.WriteString(intro)
	for i, r := range in.Sets {
		for _, dev := range experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Device }) {
			writeDevice(&b, in.Files[i], r, dev)
		}
	}
	if err := writePruning(&b, in.Sets[0], in.Files[0]); err != nil {
		return err
	}
	experiments.WriteTableLinks(&b, in)
	_, err := w.Write(b.Bytes())
	return err
}

// table indexes one device's rows by workload and scheduler entry.
type table struct {
	rows      map[[2]string]*experiments.Row
	workloads []string
	family    map[string]string
}

func index(r *experiments.Results, dev string) *table {
	t := &table{rows: map[[2]string]*experiments.Row{}, family: map[string]string{}}
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Device != dev {
			continue
		}
		if _, ok := t.family[row.Workload]; !ok {
			t.workloads = append(t.workloads, row.Workload)
			t.family[row.Workload] = row.Family
		}
		t.rows[[2]string{row.Workload, row.Scheduler}] = row
	}
	return t
}

// speedup is the row's speedup over serial, or NaN.
func (t *table) speedup(wl, s string) float64 {
	row := t.rows[[2]string{wl, s}]
	if row == nil || row.Speedup == nil || len(row.Errors) > 0 {
		return math.NaN()
	}
	return *row.Speedup
}

// geomean of f over the workloads of family fam ("" for all); NaN if any
// is missing.
func (t *table) geomean(fam string, f func(wl string) float64) float64 {
	sum, n := 0.0, 0
	for _, wl := range t.workloads {
		if fam != "" && t.family[wl] != fam {
			continue
		}
		v := f(wl)
		if math.IsNaN(v) || v <= 0 {
			return math.NaN()
		}
		sum += math.Log(v)
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(sum / float64(n))
}

func ratio(t *table, a, b string) func(string) float64 {
	return func(wl string) float64 { return t.speedup(wl, a) / t.speedup(wl, b) }
}

func fx(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2fx", v)
}

func writeDevice(b *bytes.Buffer, file string, r *experiments.Results, dev string) {
	t := index(r, dev)
	name := dev
	for _, row := range r.Rows {
		if row.Device == dev && row.DeviceName != "" {
			name = fmt.Sprintf("%s (%s)", dev, row.DeviceName)
			break
		}
	}
	fmt.Fprintf(b, "## %s: %s\n\n", file, name)

	b.WriteString("### Targets\n\nGeometric means; mixes = the eight multi-task mixes, benchmarks = the eight GrCUDA programs.\n\n")
	b.WriteString("| comparison | target | mixes | benchmarks | all |\n|---|---|---|---|---|\n")
	tgt := func(label, target string, f func(string) float64) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", label, target, fx(t.geomean("kesco-mix", f)), fx(t.geomean("kesco", f)), fx(t.geomean("", f)))
	}
	sp := func(s string) func(string) float64 { return func(wl string) float64 { return t.speedup(wl, s) } }
	tgt("kesco over serial", "1.28x", sp("kesco"))
	tgt("kesco+graph over serial", "1.28x", sp("kesco+graph"))
	tgt("kesco over taskflow", "1.16x", ratio(t, "kesco", "taskflow"))
	tgt("kesco+graph over taskflow+graph", "1.16x", ratio(t, "kesco+graph", "taskflow+graph"))
	tgt("kesco over grsched", "1.31x", ratio(t, "kesco", "grsched"))
	tgt("kesco+graph over grsched", "1.31x", ratio(t, "kesco+graph", "grsched"))
	tgt("kesco over grcuda", "", ratio(t, "kesco", "grcuda"))
	tgt("kesco over nimble", "", ratio(t, "kesco", "nimble"))
	tgt("kesco+graph over nimble+graph", "", ratio(t, "kesco+graph", "nimble+graph"))
	tgt("kesco-width+graph over nimble+graph", "", ratio(t, "kesco-width+graph", "nimble+graph"))
	tgt("mp-kesco over mp-serial", "1.22x", ratio(t, "mp-kesco", "mp-serial"))
	for _, wl := range []string{"M1", "M2"} {
		fmt.Fprintf(b, "| %s: kesco with streams = width over serial | 3x | | %s (plain), %s (+graph) | |\n", wl,
			fx(t.speedup(wl, "kesco-width")), fx(t.speedup(wl, "kesco+graph")))
	}
	b.WriteString("\n")

	cols := []string{"serial+graph", "taskflow", "taskflow+graph", "nimble", "nimble+graph", "grsched", "grcuda", "kesco", "kesco+graph", "kesco-no-prune", "kesco-strict"}
	writeSpeedups(b, t, "Speedup over serial", cols)
	writeSpeedups(b, t, "Stream-count sweeps (speedup over serial; taskflow = 4 streams, kesco = 8 capped at the width, kesco-width = the width)",
		[]string{"taskflow-s1", "taskflow-s2", "taskflow", "taskflow-s8", "kesco-s1", "kesco-s2", "kesco-s4", "kesco", "kesco-width", "kesco-width+graph"})
	var mixes []string
	for _, wl := range t.workloads {
		if t.family[wl] == "kesco-mix" {
			mixes = append(mixes, wl)
		}
	}
	if len(mixes) > 0 {
		b.WriteString("### Multi-process mode (mixes; speedup over serial)\n\n| workload | mp-serial | mp-kesco | kesco (one thread) | mp-kesco / mp-serial |\n|---|---|---|---|---|\n")
		for _, wl := range mixes {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", wl, fx(t.speedup(wl, "mp-serial")), fx(t.speedup(wl, "mp-kesco")),
				fx(t.speedup(wl, "kesco")), fx(t.speedup(wl, "mp-kesco")/t.speedup(wl, "mp-serial")))
		}
		b.WriteString("\n")
	}
	var bad []string
	for _, row := range r.Rows {
		if row.Device != dev {
			continue
		}
		if len(row.Errors) > 0 {
			bad = append(bad, fmt.Sprintf("- %s / %s: %s", row.Workload, row.Scheduler, strings.Join(row.Errors, "; ")))
		} else if row.Races != nil && *row.Races > 0 {
			bad = append(bad, fmt.Sprintf("- %s / %s: %d races", row.Workload, row.Scheduler, *row.Races))
		}
	}
	if len(bad) == 0 {
		fmt.Fprintf(b, "All %d rows on %s completed without errors or races; outputs: %s.\n\n", countRows(r, dev), dev, outputsSummary(r, dev))
	} else {
		fmt.Fprintf(b, "### Failed rows\n\n%s\n\n", strings.Join(bad, "\n"))
	}
}

func countRows(r *experiments.Results, dev string) int {
	n := 0
	for _, row := range r.Rows {
		if row.Device == dev {
			n++
		}
	}
	return n
}

// outputsSummary counts the rows by how their outputs were checked.
func outputsSummary(r *experiments.Results, dev string) string {
	count := map[string]int{}
	for _, row := range r.Rows {
		if row.Device == dev {
			count[row.Outputs]++
		}
	}
	var keys []string
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d rows %q", count[k], k))
	}
	return strings.Join(parts, ", ")
}

func writeSpeedups(b *bytes.Buffer, t *table, title string, cols []string) {
	fmt.Fprintf(b, "### %s\n\n| workload |", title)
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, wl := range t.workloads {
		fmt.Fprintf(b, "| %s |", wl)
		for _, c := range cols {
			fmt.Fprintf(b, " %s |", fx(t.speedup(wl, c)))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "| geomean |")
	for _, c := range cols {
		c := c
		fmt.Fprintf(b, " %s |", fx(t.geomean("", func(wl string) float64 { return t.speedup(wl, c) })))
	}
	b.WriteString("\n\n")
}

// writePruning recomputes KeSCo's plans for the experiment's workloads
// (plans depend only on the program, not on the device) and reports the
// synchronization they need with and without pruning.
func writePruning(b *bytes.Buffer, r *experiments.Results, file string) error {
	dev, err := sim.NewNamed("h100")
	if err != nil {
		return err
	}
	b.WriteString("## KeSCo's sync pruning\n\nKeSCo's plan (8 streams, capped at the width) for each workload of `" + file +
		"`: the data-flow graph's edges, the edges between operations on different streams, the event waits issued after pruning and how many pruning removed, and Taskflow's and Nimble's waits for comparison (both synchronize the transitive reduction).\n\n")
	b.WriteString("| workload | ops | DFG edges | width | streams | cross-stream edges | kesco waits | removed | taskflow waits | nimble waits (streams) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for i, w := range r.Resolved.Workloads {
		label := w.Name
		p, err := r.Resolved.BuildWorkload(i)
		if err != nil {
			return err
		}
		var line string
		err = dev.Run(func(h device.Host) (err error) {
			in, err := workloads.Bind(h, p)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, in.Release(h)) }()
			d, err := graph.FromInstance(in, 0, in.N())
			if err != nil {
				return err
			}
			width, err := d.Width()
			if err != nil {
				return err
			}
			ks, err := graph.BuildPlan(d, graph.Options{Policy: graph.PolicyKeSCo})
			if err != nil {
				return err
			}
			tf, err := graph.BuildPlan(d, graph.Options{Policy: graph.PolicyTaskflow})
			if err != nil {
				return err
			}
			nb, err := graph.BuildPlan(d, graph.Options{Policy: graph.PolicyNimble})
			if err != nil {
				return err
			}
			line = fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d (%d) |\n", label, in.N(), d.Edges(), width, ks.Streams,
				ks.CrossEdges, ks.NumWaits(), ks.WaitsRemoved, tf.NumWaits(), nb.NumWaits(), nb.Streams)
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		b.WriteString(line)
	}
	b.WriteString("\n")
	return nil
}
