package cusync

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/stats"
)

// baseline is the scheduler entry every speedup is measured against.
const baseline = "stream-sync"

// Targets from docs/REFERENCES.md (cuSync, on a GPU).
const (
	targetGPT3 = 1.19 // best policy over stream sync, GPT-3's MLP at its best T
	targetConv = 1.16 // conv pairs, up to
)

const intro = `# cuSync: tile-level synchronization of dependent kernels

Reproduction of cuSync (Jangda et al., "A Framework for Fine-Grained
Synchronization of Dependent GPU Kernels", CGO 2024, arXiv 2305.13450;
docs/REFERENCES.md) with gpusched's sched/tilesync on the
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
Targets (GPU): best policy >= %.2fx over stream sync on the GPT-3 MLP at its
best T and never below 1.0x; conv pairs up to >= %.2fx; the deadlock
reproduced on the simulator.

Regenerate:

    go run ./cmd/gpusched paper cusync run configs/experiments/cusync-sim.yaml -o results/cusync-sim
    go run -tags cuda ./cmd/gpusched paper cusync run configs/experiments/cusync-gpu.yaml -o results/cusync-gpu   # on a GPU
    # each writes results/NAME/results.json, kept as docs/results/NAME.json
    go run ./cmd/gpusched paper cusync report -o docs/results/cusync.md --notes docs/results/cusync-notes.md docs/results/cusync-sim.json docs/results/cusync-gpu.json

`

// report writes cuSync's page from results files of its runs: the
// summary, the targets, a table per model, the deadlock, auto's fallbacks,
// the notes, and links to every row.
func report(w io.Writer, in *experiments.ReportInput) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, intro, targetGPT3, targetConv)
	x := index(in.Sets)
	writeInputs(&b, in)
	x.writeDevices(&b)
	x.writeSummary(&b)
	x.writeTargets(&b, in.Sets)
	for _, g := range x.groups() {
		x.writeGroup(&b, g)
	}
	writeDeadlocks(&b, in.Sets)
	x.writeFallbacks(&b)
	if len(in.Notes) > 0 {
		b.Write(in.Notes)
		b.WriteString("\n")
	}
	experiments.WriteTableLinks(&b, in)
	_, err := w.Write(b.Bytes())
	return err
}

func writeInputs(b *bytes.Buffer, in *experiments.ReportInput) {
	b.WriteString("Inputs: ")
	for i, r := range in.Sets {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s (experiment %s, %d measured runs per row)", in.Files[i], r.Experiment, r.Repetitions)
	}
	b.WriteString(".\n\n")
}

// rowKey names the rows of one workload on one device.
type rowKey struct{ workload, device string }

// rowIndex is the rows of every file by workload and device (a later
// file's row replaces an earlier one's), with the workloads, devices and
// schedulers in first-seen order.
type rowIndex struct {
	rows                       map[rowKey]map[string]experiments.Row
	workloads, devices, scheds []string
	family                     map[string]string
	waves                      map[rowKey][2]float64
}

func index(sets []*experiments.Results) *rowIndex {
	x := &rowIndex{rows: map[rowKey]map[string]experiments.Row{}, family: map[string]string{}, waves: map[rowKey][2]float64{}}
	seen := map[string]bool{}
	add := func(list *[]string, kind, s string) {
		if !seen[kind+s] {
			seen[kind+s] = true
			*list = append(*list, s)
		}
	}
	for _, r := range sets {
		for _, row := range r.Rows {
			k := rowKey{row.Workload, row.Device}
			if x.rows[k] == nil {
				x.rows[k] = map[string]experiments.Row{}
			}
			x.rows[k][row.Scheduler] = row
			add(&x.workloads, "w", row.Workload)
			add(&x.devices, "d", row.Device)
			add(&x.scheds, "s", row.Scheduler)
			x.family[row.Workload] = groupOf(row)
			x.waves[k] = [2]float64{row.Facts["producer_waves"], row.Facts["consumer_waves"]}
		}
	}
	return x
}

// groups are the models, in first-seen order.
func (x *rowIndex) groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range x.workloads {
		if g := x.family[w]; !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// writeDevices says what each device column is: a simulator config, or
// the GPU the rows ran on (as it reported itself).
func (x *rowIndex) writeDevices(b *bytes.Buffer) {
	b.WriteString("Devices:")
	for i, d := range x.devices {
		name := ""
		for _, w := range x.workloads {
			for _, s := range x.scheds {
				if row, ok := x.rows[rowKey{w, d}][s]; ok && name == "" {
					name = row.DeviceName
				}
			}
		}
		kind := "the simulator's " + d + " config"
		if experiments.IsCUDA(d) {
			kind = "a real GPU"
		}
		sep := ","
		if i == len(x.devices)-1 {
			sep = "."
		}
		fmt.Fprintf(b, " `%s` is %s (%s)%s", d, kind, name, sep)
	}
	b.WriteString("\n\n")
}

// speedup is stream-sync's median over s's on one workload and device.
func (x *rowIndex) speedup(k rowKey, s string) (float64, bool) {
	base, ok1 := x.rows[k][baseline]
	row, ok2 := x.rows[k][s]
	if !ok1 || !ok2 || len(base.Errors) > 0 || len(row.Errors) > 0 || len(row.MakespansNS) == 0 {
		return 0, false
	}
	return stats.MedianOrZero(base.MakespansNS) / stats.MedianOrZero(row.MakespansNS), true
}

// groupOf names the table a row belongs to, from its workload label's
// prefix before the first space (labels are chosen in the experiment
// files: "gpt3 T=512", "resnet38 L0 b8" ...).
func groupOf(r experiments.Row) string {
	if i := strings.IndexByte(r.Workload, ' '); i > 0 {
		return r.Workload[:i]
	}
	return r.Family
}

// estimate is a scheduler's speedup over stream-sync on one workload: paired
// round by round where the runs were interleaved, else the ratio of the
// medians (no interval).
func estimate(m map[string]experiments.Row, s string) (experiments.Paired, bool) {
	base, ok1 := m[baseline]
	row, ok2 := m[s]
	if !ok1 || !ok2 || len(base.Errors) > 0 || len(row.Errors) > 0 || len(row.MakespansNS) == 0 || len(base.MakespansNS) == 0 {
		return experiments.Paired{}, false
	}
	if base.Interleaved && row.Interleaved {
		if p, ok := experiments.PairedSpeedup(base.MakespansNS, row.MakespansNS); ok {
			return p, true
		}
	}
	r := stats.MedianOrZero(base.MakespansNS) / stats.MedianOrZero(row.MakespansNS)
	return experiments.Paired{N: 0, Median: r, Lo: math.NaN(), Hi: math.NaN()}, true
}

// best is the best scheduler other than stream-sync on one workload.
func (x *rowIndex) best(k rowKey) (experiments.Paired, string, bool) {
	var bp experiments.Paired
	bs, found := "", false
	for _, s := range x.scheds {
		if s == baseline {
			continue
		}
		if p, ok := estimate(x.rows[k], s); ok && (!found || p.Median > bp.Median) {
			bp, bs, found = p, s, true
		}
	}
	return bp, bs, found
}

func writeDeadlocks(b *bytes.Buffer, sets []*experiments.Results) {
	b.WriteString("## Deadlock without the wait kernel (simulator)\n\n")
	b.WriteString("GPT-3's GEMM2 at T = 1024 (768 tiles of 128x128, two per H100 SM: 264 resident) issued before its producer GEMM1, the producer's launch 50 us later on a higher-priority stream (sched/tilesync.ConsumerFirst).\n\n")
	n := 0
	for _, r := range sets {
		for _, d := range r.Probes {
			n++
			fmt.Fprintf(b, "- %s, wait kernel %s: `%s`\n", d.Device, d.Params["wait_kernel"], d.Result)
		}
	}
	if n == 0 {
		b.WriteString("(no simulator results given)\n")
	}
	b.WriteString("\n")
}

func sortedCopy(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s
}
