package autograph

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/sched/graph"
	"github.com/gpusched/gpusched/workloads"
)

const intro = `# AutoGraph: searched multi-stream schedules of static inference graphs

Reproduction of AutoGraph (Zhao et al., AAAI 2023; the AutoGraph section of
docs/REFERENCES.md) with gpusched's sched/graph on the batch-1 inference graphs of
workloads/dnn (real kernels of workloads/kernels/nn.cu: convolutions, GEMMs,
pooling, elementwise, softmax, layer norm), one inference per run.

- autograph: every operation's cost measured on the device (one serial run with a
  timing event between operations, queued behind a spin kernel so the operations run
  back to back; on the simulator, simulated durations); the DAG
  partitioned into segments of at most 12 operations cut where the fewest edges
  cross; per partition a backtracking search over stream assignments (at most 8
  streams, each node tried on every stream in use and one new one, cheapest first)
  ranked by the mixed critical-path cost alpha * CP + total (total = the operations'
  costs plus 0.2 us per cross-stream wait, a graph edge); the 3 best
  schedules, and as seeds the search must beat Nimble's schedule and the one-stream
  schedule, captured as
  multi-stream CUDA graphs, each timed on the device, the fastest kept (the table
  says which). alpha = 2 unless named (autograph-aX). The partitions' search runs
  beam-wise: each partition continues the prefix schedules kept so far (their
  streams' end times and their nodes' finish times), the 4 best survive.
- ios: the same measured costs; per partition a dynamic program over the sets of
  finished operations choosing stages of at most 8 concurrent groups of at most 3
  operations (a chain each), stage cost = longest group + 5 us; a barrier (events)
  between stages; captured into one graph.
- serial+graph: one stream captured into a graph (the baseline); nimble+graph,
  taskflow+graph, kesco+graph: those assignments captured into one graph.

The autograph and ios rows include their measurement and verification runs in the
device's kernel count (they happen in Prepare, outside the timed region).

One section per result file and device follows: the simulator (configs h100 and
a100), the first GPU run (autograph-gpu.json, timed before every scheduler was
timed on its second run after Prepare: see autograph-notes.md) and the rerun on
equal terms (autograph-rerun-gpu.json: every scheduler timed on its second run
after Prepare, sched.Warm). Where a file's rows ran interleaved, ratios carry the
paired 95% interval of the per-round ratio in brackets.

Regenerate:

    go run ./cmd/gpusched paper autograph run configs/experiments/autograph-sim.yaml -o results/autograph-sim
    go run -tags cuda ./cmd/gpusched paper autograph run configs/experiments/autograph-gpu.yaml -o results/autograph-gpu   # on a GPU
    bash scripts/gpu/autograph-rerun.sh   # on a GPU: configs/experiments/autograph-rerun-gpu.yaml
    go run ./cmd/gpusched paper autograph report -o docs/results/autograph.md docs/results/autograph-sim.json docs/results/autograph-gpu.json docs/results/autograph-rerun-gpu.json

`

// report writes AutoGraph's page: each file's devices, the search times
// for the first file's workloads, and every row.
func report(w io.Writer, in *experiments.ReportInput) error {
	var b bytes.Buffer
	b.WriteString(intro)
	for i, r := range in.Sets {
		for _, dev := range experiments.Distinct(r.Rows, func(row *experiments.Row) string { return row.Device }) {
			writeDevice(&b, in.Files[i], r, dev)
		}
	}
	if err := writeSearchTimes(&b, in.Sets[0], in.Files[0]); err != nil {
		return err
	}
	experiments.WriteTableLinks(&b, in)
	_, err := w.Write(b.Bytes())
	return err
}

func fx(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2fx", v)
}

var (
	baselines = []string{"nimble+graph", "ios", "taskflow+graph"}
	alphas    = []string{"autograph-a0.5", "autograph-a1", "autograph", "autograph-a4", "autograph-a8"}
)

func writeDevice(b *bytes.Buffer, file string, r *experiments.Results, dev string) {
	t := deviceTable(r, dev)
	fmt.Fprintf(b, "## %s: %s\n\n### Targets\n\nAutoGraph over the best of Nimble, IOS and Taskflow (all as graphs): target at least 1.26x on one model, never below 1.00x.\n\n", file, t.name)
	b.WriteString("| model | best baseline | its speedup over serial+graph | autograph (alpha 2) | autograph / best | schedule autograph kept | best alpha of the sweep | its ratio / best |\n|---|---|---|---|---|---|---|---|\n")
	var v verdict
	for _, wl := range t.wls {
		bestName, best := t.bestOf(wl, baselines)
		ag := t.get(wl, "autograph")
		aName, aBest := t.bestOf(wl, alphas)
		ch := t.chosen[wl]
		if ch == "" {
			ch = "—"
		}
		ratio := t.ratio(wl, "autograph", bestName)
		v.add(ag/best, ratio)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", wl, bestName, t.cell(wl, bestName), t.cell(wl, "autograph"), fxPaired(ag/best, ratio), ch, aName, fx(aBest/best))
	}
	b.WriteString("\n")
	v.write(b)
	t.write(b, "Speedup over serial+graph", []string{"nimble+graph", "taskflow+graph", "ios", "kesco+graph", "autograph"})
	if t.swept() {
		t.write(b, "Alpha sweep (speedup over serial+graph; autograph = alpha 2)", alphas)
	}
	writeFailed(b, r, dev)
}

// speedups is one device's speedups by model and scheduler, with the
// schedule AutoGraph kept for each model.
type speedups struct {
	name   string
	wls    []string
	sp     map[[2]string]float64
	chosen map[string]string
	// runs are the makespans of interleaved rows, repetition i of every
	// row of a group in round i, for paired ratios.
	runs   map[[2]string][]int64
	paired map[[2]string]*experiments.Paired
}

func deviceTable(r *experiments.Results, dev string) *speedups {
	t := &speedups{name: dev, sp: map[[2]string]float64{}, chosen: map[string]string{},
		runs: map[[2]string][]int64{}, paired: map[[2]string]*experiments.Paired{}}
	for _, row := range r.Rows {
		if row.Device != dev {
			continue
		}
		if row.DeviceName != "" {
			t.name = fmt.Sprintf("%s (%s)", dev, row.DeviceName)
		}
		if len(t.wls) == 0 || t.wls[len(t.wls)-1] != row.Workload {
			t.wls = append(t.wls, row.Workload)
		}
		v := math.NaN()
		if row.Speedup != nil && len(row.Errors) == 0 {
			v = *row.Speedup
		}
		key := [2]string{row.Workload, row.Scheduler}
		t.sp[key] = v
		if row.Interleaved && len(row.Errors) == 0 {
			t.runs[key] = row.MakespansNS
			t.paired[key] = row.PairedSpeedup
		}
		if row.Scheduler == "autograph" && row.SchedulerStats != nil {
			t.chosen[row.Workload] = chosenSchedule(row.SchedulerStats)
		}
	}
	return t
}

// chosenSchedule says which candidate AutoGraph kept, from its counters.
func chosenSchedule(st map[string]float64) string {
	var s string
	switch st["chosen_seed"] {
	case 1:
		s = "Nimble seed"
	case 2:
		s = "one-stream seed"
	default:
		s = fmt.Sprintf("search #%d", int(st["chosen_rank"])+1)
	}
	return s + fmt.Sprintf(" (%d streams, %d waits; %d search states)", int(st["streams"]), int(st["waits"]), int(st["states"]))
}

// swept: the file ran AutoGraph at an alpha other than the default.
func (t *speedups) swept() bool {
	for _, wl := range t.wls {
		for _, a := range alphas {
			if a != "autograph" && !math.IsNaN(t.get(wl, a)) {
				return true
			}
		}
	}
	return false
}

// cell is s's speedup over the baseline on wl, with its paired interval
// where the row has one.
func (t *speedups) cell(wl, s string) string {
	return fxPaired(t.get(wl, s), t.paired[[2]string{wl, s}])
}

// ratio pairs s against other on wl round by round (other's makespan over
// s's): nil unless both rows ran interleaved.
func (t *speedups) ratio(wl, s, other string) *experiments.Paired {
	p, ok := experiments.PairedSpeedup(t.runs[[2]string{wl, other}], t.runs[[2]string{wl, s}])
	if !ok {
		return nil
	}
	return &p
}

func fxPaired(v float64, p *experiments.Paired) string {
	if p == nil || math.IsNaN(v) {
		return fx(v)
	}
	return fmt.Sprintf("%s [%.3f-%.3f]", fx(v), p.Lo, p.Hi)
}

// verdict counts the models by AutoGraph's ratio to the best baseline:
// the target's 1.26x, and where paired intervals exist, which side of
// 1.00x the interval lies.
type verdict struct {
	models, target, pairedN, above, below int
	lo, hi                                float64
}

func (v *verdict) add(r float64, p *experiments.Paired) {
	if math.IsNaN(r) {
		return
	}
	if v.models == 0 || r < v.lo {
		v.lo = r
	}
	if v.models == 0 || r > v.hi {
		v.hi = r
	}
	v.models++
	if r >= 1.26 {
		v.target++
	}
	if p != nil {
		v.pairedN++
		if p.Lo > 1 {
			v.above++
		}
		if p.Hi < 1 {
			v.below++
		}
	}
}

func (v *verdict) write(b *bytes.Buffer) {
	if v.models == 0 {
		return
	}
	fmt.Fprintf(b, "AutoGraph / best baseline: %.3fx to %.3fx over %d models; at least 1.26x on %d.", v.lo, v.hi, v.models, v.target)
	if v.pairedN > 0 {
		fmt.Fprintf(b, " Paired 95%% interval of the ratio entirely above 1.00x on %d of %d models, entirely below on %d (the others: not told apart).", v.above, v.pairedN, v.below)
	}
	b.WriteString("\n\n")
}

func (t *speedups) get(wl, s string) float64 {
	if v, ok := t.sp[[2]string{wl, s}]; ok {
		return v
	}
	return math.NaN()
}

// bestOf is the scheduler of names with the highest speedup on wl.
func (t *speedups) bestOf(wl string, names []string) (string, float64) {
	bestName, best := "—", math.NaN()
	for _, s := range names {
		if v := t.get(wl, s); !math.IsNaN(v) && (math.IsNaN(best) || v > best) {
			bestName, best = s, v
		}
	}
	return bestName, best
}

func (t *speedups) write(b *bytes.Buffer, title string, cols []string) {
	fmt.Fprintf(b, "### %s\n\n| model |", title)
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, wl := range t.wls {
		fmt.Fprintf(b, "| %s |", wl)
		for _, c := range cols {
			fmt.Fprintf(b, " %s |", t.cell(wl, c))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func writeFailed(b *bytes.Buffer, r *experiments.Results, dev string) {
	var bad []string
	for _, row := range r.Rows {
		if row.Device == dev && (len(row.Errors) > 0 || (row.Races != nil && *row.Races > 0)) {
			bad = append(bad, fmt.Sprintf("- %s / %s: %v races %v", row.Workload, row.Scheduler, row.Errors, row.Races))
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(b, "### Failed rows\n\n%s\n\n", strings.Join(bad, "\n"))
	} else {
		b.WriteString("Every row completed without errors or races.\n\n")
	}
}

// writeSearchTimes reruns the search for every workload of the experiment
// and every alpha of the sweep on the simulated H100 (costs measured there)
// and reports its size and wall-clock time on this machine.
func writeSearchTimes(b *bytes.Buffer, r *experiments.Results, file string) error {
	dev, err := sim.NewNamed("h100")
	if err != nil {
		return err
	}
	b.WriteString("## Search times\n\nAutoGraph's search (partitioning, per-partition backtracking, DP; not the measurement or verification runs) and IOS's stage DP for each model of `" +
		file + "`, with per-operation costs measured on the simulated H100; wall-clock time of this machine's run of `report` (it varies with the machine and its load).\n\n")
	b.WriteString("| model | ops | partitions | alpha | states explored | search ms | est. cost (us) | streams | waits | IOS stages | IOS ms |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, w := range r.Resolved.Workloads {
		label := w.Name
		p, err := r.Resolved.BuildWorkload(i)
		if err != nil {
			return err
		}
		err = dev.Run(func(h device.Host) (err error) {
			in, err := workloads.Bind(h, p)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, in.Release(h)) }()
			cost, err := graph.MeasureCosts(h, in)
			if err != nil {
				return err
			}
			d, err := graph.FromInstance(in, 0, in.N())
			if err != nil {
				return err
			}
			t0 := time.Now()
			stages, err := graph.IOSStages(d, cost, graph.DefaultIOSOptions())
			if err != nil {
				return err
			}
			iosMS := float64(time.Since(t0).Microseconds()) / 1000
			for _, alpha := range []float64{0.5, 1, 2, 4, 8} {
				o := graph.DefaultSearchOptions()
				o.Alpha = alpha
				res, err := graph.Search(d, cost, o)
				if err != nil {
					return err
				}
				fmt.Fprintf(b, "| %s | %d | %d | %g | %d | %.1f | %.1f | %d | %d | %d | %.1f |\n", label, in.N(), res.Partitions, alpha, res.States,
					float64(res.Elapsed.Microseconds())/1000, res.Estimates[0]/1000, res.Plans[0].Streams, res.Plans[0].NumWaits(), len(stages), iosMS)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
	}
	b.WriteString("\n")
	return nil
}
