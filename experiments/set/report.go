package set

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/stats"
)

// report writes SET's page: what ran, the notes, and for each results
// file and device the headline tables and every row.
func report(w io.Writer, in *experiments.ReportInput) error {
	var b bytes.Buffer
	b.WriteString(`# SET: pipelines of many jobs

Reproduction of SET (Li, Huang and Ogras, "stream-event-triggered CUDA-graph
pipelines", arXiv 2606.05495; the SET section of docs/REFERENCES.md) with gpusched's
sched/pipeline on the jobs workloads of workloads/jobs (Sobel, SSSP, BP, GEMM,
KNN, Hotspot). Each job copies its input in from pinned host memory, runs its
kernels and copies its result out into its own slot of a pinned host buffer.

Schedulers: synchronous (one stream, sync per job), graph-per-job (capture,
instantiate, launch, sync per job), batching(b) (b jobs over b streams, one
device sync per batch), queue(b) (b streams, each with a job queue and a host
thread that syncs per job) and set(b) (b workers with a per-worker graph updated
per job, private buffers, a free-worker pool fed by completion callbacks, work
stealing). SET+ rows (set with depth, threaded or coalesce), SET-ring rows
(set with ring: per-worker graph execs prepared only once their previous
launch is complete), SET-chain rows (set with jobs: several jobs per graph
launch, chained in each exec), SET-kgraph rows (copies=stream: kernel-only
graphs, the copies on the stream) and SET-batch rows (copies=batched: a chunk
of consecutive jobs per graph launch with one coalesced copy in and out, the
jobs' kernels in parallel branches, one per job unless branches says fewer) are
gpusched's refinements of SET; see sched/pipeline's package documentation.

Metrics (from each scheduler's Metrics()): throughput = jobs / T_measured, in
jobs/s and in the workload's unit; scheduling share = t_schedule / T_measured,
where t_schedule is host time inside scheduling calls (launches, copies, graph
capture/instantiate/update/launch, callback enqueues, measured with the host
thread's clock around each call; blocking synchronization is t_wait, not
t_schedule); for queue(b), with b host threads, t_schedule / (T_measured x b).
T_measured is the median over repetitions, from the synchronized start to the
synchronized end of the scheduler's Run.

Targets (paper, on a GPU): set >= 1.44x queue and >= 1.15x batching on
average, with a lower scheduling share than both.

Regenerate:

    go run ./cmd/gpusched paper set run docs/results/set-sim.json -o results/set-sim   # the configs its rows ran (set-sim.yaml: today's)
    go run ./cmd/gpusched paper set run docs/results/set-gaps-sim.json -o results/set-gaps-sim   # the configs its rows ran (set-gaps-sim.yaml: today's)
    go run -tags cuda ./cmd/gpusched paper set run configs/experiments/set-gpu.yaml -o results/set-gpu   # on a GPU
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v2.json -o results/set-gpu-v2   # on a GPU: SET-ring
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v3.json -o results/set-gpu-v3   # on a GPU: SET-chain
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v4.json -o results/set-gpu-v4   # on a GPU: SET-kgraph
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v5.json -o results/set-gpu-v5   # on a GPU: SET-batch
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v6.json -o results/set-gpu-v6   # on a GPU: SET-batch, warmed, interleaved
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v7.json -o results/set-gpu-v7   # on a GPU: SET-batch, one dispatcher
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v8.json -o results/set-gpu-v8   # on a GPU: SET-batch, coalesced callbacks
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v9.json -o results/set-gpu-v9   # on a GPU: SET-batch, fewer branches per chunk
    go run -tags cuda ./cmd/gpusched paper set run docs/results/set-gpu-v10.json -o results/set-gpu-v10   # on a GPU: the same again, with 2 branches
    go run ./cmd/gpusched paper set run docs/results/set-branches-sim.json -o results/set-branches-sim   # set-gpu-v10's schedulers on the simulator
    # each writes results/NAME/results.json, kept as docs/results/NAME.json; the
    # variants run again from their results files, which record their experiments
    go run ./cmd/gpusched paper set report -o docs/results/set.md --notes docs/results/set-notes.md docs/results/set-sim.json docs/results/set-gaps-sim.json docs/results/set-gpu.json [docs/results/set-gpu-v2.json] ... [docs/results/set-gpu-v10.json] [docs/results/set-branches-sim.json]

`)
	if len(in.Notes) > 0 {
		b.Write(in.Notes)
		b.WriteString("\n")
	}
	for i, r := range in.Sets {
		writeResults(&b, r, in.Files[i], in.Dir)
	}
	experiments.WriteTableLinks(&b, in)
	_, err := w.Write(b.Bytes())
	return err
}

var bParam = regexp.MustCompile(`b=(\d+)`)

// branchesParam finds a SET-batch chunk's branch count in a scheduler name.
var branchesParam = regexp.MustCompile(`branches=(\d+)`)

// workersOf is a scheduler's b (0 for those without one).
func workersOf(desc string) int {
	m := bParam.FindStringSubmatch(desc)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// si formats v with an SI prefix.
func si(v float64) string {
	for _, p := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= p.f {
			return fmt.Sprintf("%.3g %s", v/p.f, p.s)
		}
	}
	return fmt.Sprintf("%.3g ", v)
}

func writeResults(b *bytes.Buffer, r *experiments.Results, file, dir string) {
	rel, err := filepath.Rel(dir, file)
	if err != nil {
		rel = file
	}
	devices := map[string]string{}
	var order []string
	for _, row := range r.Rows {
		if _, ok := devices[row.Device]; !ok {
			order = append(order, row.Device)
		}
		if row.DeviceName != "" || devices[row.Device] == "" {
			devices[row.Device] = row.DeviceName
		}
	}
	for _, dev := range order {
		fmt.Fprintf(b, "## %s on %s (%s)\n\n", r.Experiment, dev, devices[dev])
		interleaved := ""
		for i := range r.Rows {
			if r.Rows[i].Device == dev && r.Rows[i].Interleaved {
				interleaved = " The repetitions ran in interleaved rounds: each round ran one repetition of every scheduler of the workload, in an order that changes from round to round (rotated by one in runs before 2026-11-26, shuffled since)."
				break
			}
		}
		fmt.Fprintf(b, "From `%s` (seed %d, %d measured repetitions); raw results: [%s](%s).%s\n\n", r.Source, r.Seed, r.Repetitions, filepath.Base(file), rel, interleaved)
		c := compare(r, dev)
		if c.timed {
			// Timing events perturb these runs: the model, no speedup tables.
			writeModel(b, r, dev)
			continue
		}
		for _, v := range c.variants {
			c.writeHeadline(b, v)
		}
	}
}

// key is a workload at a number of workers b.
type key struct {
	workload string
	b        int
}

// pair is the schedulers compared at one key: each SET variant (the
// entry's name less its "-b" suffix: "set", "setplus", "setring"; the
// paper's SET is the plain set(b=N) whatever its entry's name), Queue and
// Batching.
type pair struct {
	variants        map[string]*experiments.Row
	queue, batching *experiments.Row
}

// comparison is one device's pairs, its SET variants (the paper's first)
// with their titles, and whether its rows recorded timing events.
type comparison struct {
	pairs    map[key]*pair
	keys     []key
	variants []string
	titles   map[string]string
	timed    bool
}

func compare(r *experiments.Results, dev string) *comparison {
	c := &comparison{pairs: map[key]*pair{}, titles: map[string]string{}}
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Device != dev {
			continue
		}
		if _, ok := row.SchedulerStats["t_ideal_s"]; ok {
			c.timed = true
		}
		k := key{row.Workload, workersOf(row.SchedulerDesc)}
		if c.pairs[k] == nil {
			c.pairs[k] = &pair{variants: map[string]*experiments.Row{}}
			if k.b > 0 {
				c.keys = append(c.keys, k)
			}
		}
		c.add(c.pairs[k], k, row)
	}
	sort.SliceStable(c.variants, func(i, j int) bool { return c.variants[i] == paperSET && c.variants[j] != paperSET })
	return c
}

func (c *comparison) add(p *pair, k key, row *experiments.Row) {
	switch row.Kind {
	case "set":
		v := strings.TrimSuffix(row.Scheduler, fmt.Sprintf("-%d", k.b))
		if isPaperSET(row.SchedulerDesc, k.b) {
			v = paperSET
		}
		if _, seen := c.titles[v]; !seen {
			c.titles[v] = variantTitle(v, row.SchedulerDesc)
			c.variants = append(c.variants, v)
		}
		p.variants[v] = row
	case "queue":
		p.queue = row
	case "batching":
		p.batching = row
	}
}

// isPaperSET: SET as the paper runs it at b workers (warm or not: the
// runner's warm run makes warm only cover execs the jobs never reach).
func isPaperSET(desc string, b int) bool {
	return desc == fmt.Sprintf("set(b=%d)", b) || desc == fmt.Sprintf("set(b=%d,warm)", b)
}

// writeHeadline is a SET variant against Queue and Batching at the same b.
func (c *comparison) writeHeadline(b *bytes.Buffer, v string) {
	fmt.Fprintf(b, "### %s against Queue and Batching (same b)\n\n", c.titles[v])
	b.WriteString("| workload | b | set jobs/s | vs queue | vs batching | share set | share queue | share batching | sched us/job set | queue | batching |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var vsQ, vsB, shS, shQ, shB []float64
	for _, k := range c.keys {
		p := c.pairs[k]
		set := p.variants[v]
		if set == nil || p.queue == nil || p.batching == nil || !ok(set) || !ok(p.queue) || !ok(p.batching) {
			continue
		}
		ts, tq, tb := stats.Median(set.MakespansNS), stats.Median(p.queue.MakespansNS), stats.Median(p.batching.MakespansNS)
		sq, sb := tq/ts, tb/ts
		vsQ, vsB = append(vsQ, sq), append(vsB, sb)
		a, q, bt := set.SchedulerStats["schedule_share"], p.queue.SchedulerStats["schedule_share"], p.batching.SchedulerStats["schedule_share"]
		shS, shQ, shB = append(shS, a), append(shQ, q), append(shB, bt)
		fmt.Fprintf(b, "| %s | %d | %s | %.2fx | %.2fx | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |\n", k.workload, k.b,
			si(float64(set.Throughput.Jobs)/(ts/1e9)), sq, sb, a, q, bt, perJob(set), perJob(p.queue), perJob(p.batching))
	}
	if len(vsQ) > 0 {
		fmt.Fprintf(b, "| **mean** (%d pairs) | | | **%.3fx** | **%.3fx** | **%.3f** | **%.3f** | **%.3f** | | | |\n", len(vsQ), mean(vsQ), mean(vsB), mean(shS), mean(shQ), mean(shB))
		fmt.Fprintf(b, "| geometric mean | | | %.3fx | %.3fx | | | | | | |\n", stat.GeometricMean(vsQ, nil), stat.GeometricMean(vsB, nil))
		fmt.Fprintf(b, "| min .. max | | | %.2f .. %.2fx | %.2f .. %.2fx | | | | | | |\n", floats.Min(vsQ), floats.Max(vsQ), floats.Min(vsB), floats.Max(vsB))
	}
	b.WriteString("\n")
}

// paperSET is the variant name of the paper's SET.
const paperSET = "set"

// variantTitle names a SET variant's headline table: the paper's SET and
// SET+ by their roles, any other by its parameters (its desc with b left
// out).
func variantTitle(v, desc string) string {
	switch v {
	case paperSET:
		return "SET (the paper's: one job in flight per worker)"
	case "setplus":
		return "SET+ (gpusched's refinement: a host thread per worker, several jobs in flight per worker, coalesced callbacks)"
	}
	params := strings.TrimSuffix(bParam.ReplaceAllString(desc, "b"), ")")
	params = strings.TrimPrefix(strings.TrimPrefix(params, "set(b"), ",")
	if strings.Contains(desc, "copies=batched") {
		branches := "the jobs' kernels as parallel branches"
		if m := branchesParam.FindStringSubmatch(desc); m != nil {
			branches = fmt.Sprintf("the jobs' kernels in %s parallel branches of consecutive jobs", m[1])
			if m[1] == "1" {
				branches = "the jobs' kernels in one chain"
			}
		}
		return fmt.Sprintf("SET-batch %s (%s: chunks of consecutive jobs per graph launch, one coalesced copy in and out per chunk, %s; gpusched's refinement)", v, params, branches)
	}
	if strings.Contains(desc, "copies=stream") {
		return fmt.Sprintf("SET-kgraph %s (%s: kernel-only graphs never updated, the job's copies issued on the worker's stream; gpusched's refinement)", v, params)
	}
	if strings.Contains(desc, "jobs=") {
		return fmt.Sprintf("SET-chain %s (%s: several jobs per graph launch, chained in per-worker graph execs prepared only once complete; gpusched's refinement)", v, params)
	}
	if strings.Contains(desc, "ring=") {
		return fmt.Sprintf("SET-ring %s (%s: per-worker graph execs prepared only once complete)", v, params)
	}
	return fmt.Sprintf("SET variant %s (%s)", v, params)
}

// writeModel tabulates SET's overhead model for rows measured with timing
// events: T_measured = T_ideal + intra-batch gaps + inter-batch gaps.
func writeModel(b *bytes.Buffer, r *experiments.Results, dev string) {
	b.WriteString("### Overhead model: T_measured = T_ideal + intra-batch gaps + inter-batch gaps\n\n")
	b.WriteString("T_ideal is the time the device had at least one job in flight (the union of the jobs' spans between a timing event before and after each job); gaps are the rest, inter-batch where the jobs on either side belong to different batches of a batched schedule. These runs record two events per job, so their times are a little longer than the throughput runs'.\n\n")
	b.WriteString("| workload | scheduler | T_measured (ms) | T_ideal | intra-batch gaps | inter-batch gaps | scheduling share |\n|---|---|---:|---:|---:|---:|---:|\n")
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Device != dev || !ok(row) {
			continue
		}
		m := row.SchedulerStats
		if _, has := m["t_ideal_s"]; !has {
			continue
		}
		t := m["makespan_s"]
		pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x/t) }
		fmt.Fprintf(b, "| %s | %s | %.3f | %s | %s | %s | %.3f |\n", row.Workload, row.SchedulerDesc, t*1e3,
			pct(m["t_ideal_s"]), pct(m["gaps_intra_s"]), pct(m["gaps_inter_s"]), m["schedule_share"])
	}
	b.WriteString("\n")
}

// perJob is a row's host scheduling time per job, in microseconds.
func perJob(r *experiments.Row) float64 {
	return r.SchedulerStats["t_schedule_s"] * 1e6 / float64(r.Throughput.Jobs)
}

func ok(r *experiments.Row) bool {
	return len(r.Errors) == 0 && len(r.MakespansNS) > 0 && r.Throughput != nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
