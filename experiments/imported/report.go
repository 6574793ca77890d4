package imported

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/experiments"
)

const intro = `# Imported PyTorch models: replayed on the GPU and the simulator

PyTorch models recorded by scripts/gpu/capture_pytorch.py (random weights,
fp32, inference) and turned into workload files by
` + "`gpusched import kineto TRACE --et ET`" + ` (docs/WORKLOADS.md): every kernel
replayed with its recorded grid, block, occupancy and duration, its data
dependencies recovered from the execution trace, so that the models'
independent branches are free to run side by side. PyTorch's own times come
from the same capture on the same GPU: eager (CUDA events around each
forward pass) and CUDA-graph replay (the forward pass captured once with
torch.cuda.CUDAGraph, events around each replay), medians.

Targets (issue #19): gpusched's replay under serial and serial+graph within
10% of PyTorch's graph replay; the simulator's prediction of the same rows
within 10% of the GPU replay. Then: which multi-stream strategy speeds each
model up, and by how much over PyTorch's own graph replay.

`

const commands = `## Commands

    # capture (GPU call 1): traces, execution traces and PyTorch's own times
    python3 scripts/gpu/capture_pytorch.py
    # import (here; cmd/gpusched's TestCommittedImportsAreCurrent keeps them current)
    gpusched import kineto workloads/kineto/testdata/pytorch/M.trace.json.gz --et workloads/kineto/testdata/pytorch/M.et.json.gz --name M -o configs/workloads/pytorch/M.yaml
    # on the GPU (session 3's call): the replay kernel's probe (overhead_ns, floor_ns), the chain probe,
    # the replays (imported-v2, imported-graph-v2, imported-graph-v2-o0, imported-chain-v2)
    bash scripts/gpu/imported-replay.sh cuda 95
    # the simulator, at the probe's overhead_ns and floor_ns
    gpusched paper imported run configs/experiments/imported-v2-sim.yaml -o results/imported-v2-sim
    gpusched paper imported run configs/experiments/imported-graph-v2-sim.yaml -o results/imported-graph-v2-sim
    gpusched paper imported run configs/experiments/imported-graph-v2-sim-o0.yaml -o results/imported-graph-v2-sim-o0
    gpusched paper imported run configs/experiments/imported-chain-v2-sim.yaml -o results/imported-chain-v2-sim
    gpusched paper imported run configs/experiments/imported-chain-v2-sim-o0.yaml -o results/imported-chain-v2-sim-o0
    # with profiler_ns 818 (the chain probe's): the simulator (made before the GPU ran it, a prediction), then the GPU
    gpusched paper imported run configs/experiments/imported-v2-predict-sim.yaml -o results/imported-v2-predict-sim
    gpusched paper imported run configs/experiments/imported-graph-v2-predict-sim.yaml -o results/imported-graph-v2-predict-sim
    gpusched paper imported run configs/experiments/imported-graph-v2-p818-sim-o0.yaml -o results/imported-graph-v2-p818-sim-o0
    OUT=$OUT bash scripts/gpu/imported-profiler-ns.sh   # on the GPU (session 3's second call): imported-v2-p818, imported-graph-v2-p818
    # the first replay kernel (GPU call 2a: bash scripts/gpu/imported-replay.sh cuda 420 at 882a630) and its simulator rows
    gpusched paper imported run configs/experiments/imported-sim.yaml -o results/imported-sim   # and imported-graph-sim, imported-graph-sim-o0
    # session 4: the replay kernel's cost per buffer range (GPU call 1), the third kernel's predictions, then the GPU (call 2)
    OUT=$OUT bash scripts/gpu/imported-probe.sh
    gpusched paper imported run configs/experiments/imported-v3-sim.yaml -o results/imported-v3-sim   # and imported-graph-v3-sim, imported-graph-v3-sim-o0
    FROM_PROBE=1 OUT=$OUT bash scripts/gpu/imported-v3.sh   # imported-v3, imported-graph-v3, imported-graph-v3-o0 at the probe's values
    # session 5: the fourth kernel's predictions (estimated values), then the GPU (probe, then the models at its values),
    # then the simulator at the probe's values
    gpusched paper imported run configs/experiments/imported-v4-sim.yaml -o results/imported-v4-sim   # and imported-graph-v4-sim, imported-graph-v4-sim-o0
    FROM_PROBE=1 OUT=$OUT bash scripts/gpu/imported-v4.sh   # imported-v4, imported-graph-v4, imported-graph-v4-o0 at the probe's values
    gpusched paper imported run configs/experiments/imported-v4-sim-measured.yaml -o results/imported-v4-sim-measured   # and imported-graph-v4-sim-measured
    # session 6: the fifth kernel's predictions (estimated values), then on one GPU the fourth and fifth kernels
    # one after the other at the same values, then the fifth's set at its probe's values (imported-v5, imported-graph-v5, -o0)
    gpusched paper imported run configs/experiments/imported-v5-sim.yaml -o results/imported-v5-sim   # and imported-graph-v5-sim, imported-graph-v5-sim-o0
    OUT=$OUT bash scripts/gpu/imported-v5ab.sh
    # session 7: the sixth kernel's predictions (the fourth's values), then on one GPU the fourth and sixth kernels
    # one after the other at the same values, then the sixth's set at its probe's values, then the simulator at those
    gpusched paper imported run configs/experiments/imported-v6-sim.yaml -o results/imported-v6-sim   # and imported-graph-v6-sim, imported-graph-v6-sim-o0
    OUT=$OUT bash scripts/gpu/imported-v6ab.sh   # imported-v6, imported-graph-v6, imported-graph-v6-o0
    gpusched paper imported run configs/experiments/imported-v6-sim-measured.yaml -o results/imported-v6-sim-measured   # and imported-graph-v6-sim-measured
    # session 8: on one GPU the sixth and seventh kernels one after the other at the same values, then the seventh's set
    # at its probe's values (no prediction: the simulator's programs are the sixth's), then the simulator at those values
    B=.gpu/import-v7 ROUNDS=3 OUT=$OUT bash scripts/gpu/imported-v7ab.sh   # imported-v7, imported-graph-v7, imported-graph-v7-o0
    gpusched paper imported run configs/experiments/imported-v7-sim-measured.yaml -o results/imported-v7-sim-measured   # and imported-graph-v7-sim-measured
    # session 8's second call: the seventh and eighth kernels the same way, then the simulator at the eighth's values
    B=.gpu/import-v8 ROUNDS=3 OUT=$OUT bash scripts/gpu/imported-v8ab.sh   # imported-v8, imported-graph-v8, imported-graph-v8-o0
    gpusched paper imported run configs/experiments/imported-v8-sim-measured.yaml -o results/imported-v8-sim-measured   # and imported-graph-v8-sim-measured
    # session 9: the eighth and ninth kernels the same way (the ninth reads its descriptor from its parameters), then the
    # simulator at the ninth's values (the replay kernel's profile points measured in the same call with the ninth)
    B=.gpu/import-v9 ROUNDS=3 OUT=$OUT bash scripts/gpu/imported-v9ab.sh   # imported-v9, imported-graph-v9, imported-graph-v9-o0
    gpusched paper imported run configs/experiments/imported-v9-sim-measured.yaml -o results/imported-v9-sim-measured   # and imported-graph-v9-sim-measured
    # this page
    gpusched paper imported report -o docs/results/imported.md --notes docs/results/imported-notes.md docs/results/imported-{gpu,graph-gpu,graph-gpu-o0,sim,graph-sim,graph-sim-o0}.json docs/results/imported*-v2-*.json docs/results/imported*-v3-*.json docs/results/imported*-v4-*.json docs/results/imported*-v5-*.json docs/results/imported*-v6-*.json docs/results/imported*-v7-*.json docs/results/imported-v8-*.json docs/results/imported-graph-v8-*.json docs/results/imported-v9-*.json docs/results/imported-graph-v9-*.json

`

// capture is the capture script's summary; Chains are
// imported-chain-probe.py's chains of spin kernels (a summary of the same
// format, beside it), which only the graph-replay traces' tables show.
type capture struct {
	Env    map[string]any `json:"env"`
	Models []model        `json:"models"`
	Chains []model        `json:"-"`
}

type model struct {
	Model string `json:"model"`
	Batch int    `json:"batch"`
	Tag   string `json:"tag"`
	Eager *stat  `json:"eager"`
	Graph *stat  `json:"graph"`
	Error string `json:"error"`
}

type stat struct {
	Median  float64   `json:"median_us"`
	Min     float64   `json:"min_us"`
	Max     float64   `json:"max_us"`
	N       int       `json:"n"`
	Samples []float64 `json:"samples_us"`
}

// captureFile is the capture summary's name beside the page, chainFile
// the chain probe's (optional).
const (
	captureFile = "raw/imported-capture.json"
	chainFile   = "raw/imported-chain-capture.json"
)

// o0Suffix names the experiments that ran the graph-replay traces with
// overhead_ns 0 (scripts/gpu/imported-replay.sh on the GPU,
// imported-graph-sim-o0.yaml on the simulator): their rows are kept apart.
const o0Suffix = "-o0"

// measuredSuffix names the simulator's experiments run after a GPU run at
// the overhead_ns and floor_ns its probe measured (imported-v4-sim-measured,
// ...): their rows replace the prediction's in the tables that set the
// simulator against the GPU, and the prediction keeps its own section.
const measuredSuffix = "-measured"

func report(w io.Writer, in *experiments.ReportInput) error {
	if held, err := heldoutOnly(in); err != nil || held {
		if err != nil {
			return err
		}
		return heldoutReport(w, in)
	}
	c, err := loadCapture(in.Dir)
	if err != nil {
		return err
	}
	runs := readRuns(in)
	if len(runs) == 0 {
		return fmt.Errorf("imported report: no imported results among %d files", len(in.Files))
	}
	lead := runs[0]
	var b bytes.Buffer
	b.WriteString(intro)
	if len(in.Notes) > 0 {
		b.Write(in.Notes)
		b.WriteString("\n")
	}
	writeEnv(&b, c, runs)
	writeTargets(&b, c, lead, "##")
	writeGraphTraces(&b, c, lead, "##")
	if err := writeFloorSplit(&b, c, lead); err != nil {
		return err
	}
	// A kernel measured with no prediction beforehand (the seventh to the
	// ninth: the simulator's programs were the sixth's) has no prediction
	// section.
	if before := runBefore(runs); lead.run.profiler && before != nil && len(lead.pred) > 0 {
		writePredicted(&b, c, lead, before, predictedIntro(lead, before))
	}
	writeBest(&b, c, lead, "##")
	writeModels(&b, c, lead)
	for _, d := range runs[1:] {
		b.WriteString(earlierIntro(d.run))
		writeTargets(&b, c, d, "###")
		writeGraphTraces(&b, c, d, "###")
		if d.run.version > 1 {
			writeBest(&b, c, d, "###")
		}
	}
	b.WriteString(commands)
	writeRaw(&b, in)
	_, err = w.Write(b.Bytes())
	return err
}

// writeRaw appends every set's own results page, one level down.
func writeRaw(b *bytes.Buffer, in *experiments.ReportInput) {
	for i, r := range in.Sets {
		fmt.Fprintf(b, "## Raw results: %s\n\n", in.Files[i])
		raw := string(experiments.Markdown(r, false))
		raw = strings.ReplaceAll(raw, "\n## ", "\n#### ")
		raw = strings.ReplaceAll(raw, "\n# ", "\n### ")
		b.WriteString(strings.TrimPrefix(raw, "# ") + "\n")
	}
}

// loadCapture reads PyTorch's times beside the page, with the chain
// probe's chains if it ran.
func loadCapture(dir string) (capture, error) {
	c, err := readCapture(filepath.Join(dir, captureFile))
	if err != nil {
		return c, err
	}
	if _, err := os.Stat(filepath.Join(dir, chainFile)); err == nil {
		chains, err := readCapture(filepath.Join(dir, chainFile))
		if err != nil {
			return c, err
		}
		c.Chains = chains.Models
	}
	return c, nil
}

// readRuns is every run of the replay with rows, newest first but for the
// fifth kernel's, which came after the fourth's and was not adopted (slower
// on the models, session 6): the page leads with the first.
func readRuns(in *experiments.ReportInput) []*data {
	var runs []*data
	for _, run := range []replayRun{runNinth, runEighth, runSeventh, runSixth, runFourth, runFifth, runThird, runProfiler, runSecond, runFirst} {
		if d := newData(in, run); !d.empty() {
			runs = append(runs, d)
		}
	}
	return runs
}

func readCapture(path string) (capture, error) {
	var c capture
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// runBefore is the run the leading one replaced: the first of the others
// with an older kernel, or nil.
func runBefore(runs []*data) *data {
	for _, d := range runs[1:] {
		if d.run.version < runs[0].run.version || d.run == runProfiler {
			return d
		}
	}
	return nil
}

// predictedIntro introduces the prediction section of the leading run p,
// whose "before" column is the run before it.
func predictedIntro(p, before *data) string {
	measured := ""
	if p.measured {
		measured = "\"sim at measured\": the simulator's serial+graph made after the GPU run, at the overhead_ns and floor_ns the run's own probe measured " +
			"(the values the GPU's rows ran at), against the GPU's; the tables above use these. "
	}
	switch p.run.version {
	case 6:
		return fmt.Sprintf("## The sixth replay kernel: predicted, then measured\n\n"+
			"The sixth replay kernel (workloads/kernels/replay.cu until 9c28089: the fourth kernel's reads and writes, every block's spin counted from the "+
			"kernel's start instead of its own, so that a replayed kernel does not add its own block dispatch and turnaround between waves "+
			"to recorded durations that hold the original's) with profiler_ns %s as before. \"predicted\": the simulator's serial+graph, "+
			"committed before the GPU ran the sixth kernel, at the fourth's measured overhead_ns and floor_ns (the simulator times every "+
			"block from its own start, so it predicts the sixth as the fourth); \"measured\": the GPU's; \"before\": the GPU's with the "+
			"fourth kernel (%s; the section below). %s"+
			"Each against PyTorch's graph replay, and the simulator against the measurement, against the 10%% target.\n\n",
			orNone(p.profiler), kernelOf(before), measured)
	case 4:
		return fmt.Sprintf("## The fourth replay kernel: predicted, then measured\n\n"+
			"The fourth replay kernel (workloads/kernels/replay.cu until 9c28089: the third kernel's reads and writes, its descriptor's loads issued first and "+
			"each range's pointer read from the launch's parameters where it needs it, instead of a copy of all 24 in local memory first) "+
			"with profiler_ns %s as before. \"predicted\": the simulator's serial+graph, committed before the GPU ran the models, at the "+
			"overhead_ns and floor_ns its experiment files give (estimates; the notes say how they were made); \"measured\": the GPU's; "+
			"\"before\": the GPU's with the third kernel (%s; the section below). %s"+
			"Each against PyTorch's graph replay, and the simulator against the measurement, against the 10%% target.\n\n",
			orNone(p.profiler), kernelOf(before), measured)
	}
	if p.run.version == 3 {
		return fmt.Sprintf("## The third replay kernel: predicted, then measured\n\n"+
			"The third replay kernel (workloads/kernels/replay.cu: the second kernel's reads, then every written range written at once "+
			"after the spin, where the second wrote them one after another) with profiler_ns %s as before. "+
			"\"predicted\": the simulator's serial+graph, committed before the GPU ran the models, at the overhead_ns and floor_ns its experiment files give "+
			"(the notes say where they come from); \"measured\": the GPU's; \"before\": the GPU's with the second kernel (%s; the section below). "+
			"Each against PyTorch's graph replay, and the prediction against the measurement, against the 10%% target.\n\n",
			orNone(p.profiler), kernelOf(before))
	}
	return fmt.Sprintf("## profiler_ns: predicted, then measured\n\n"+
		"profiler_ns (%s) is not fitted to these models: it is what the profiler records beyond a kernel's work, "+
		"a sleep kernel of known length (torch.cuda._sleep, scripts/gpu/imported-chain-probe.py) recorded on the same GPU less that length, "+
		"taken off every recorded kernel duration before the replay spins for it (docs/WORKLOADS.md). "+
		"\"predicted\": the simulator's serial+graph with it; \"measured\": the GPU's; \"before\": the GPU's without it (the section below). "+
		"Each against PyTorch's graph replay, and the prediction against the measurement, against the 10%% target.\n\n", p.profiler)
}

// earlierIntro introduces the rows of a run that a later one replaced.
func earlierIntro(run replayRun) string {
	switch {
	case run == runEighth:
		return eighthKernelIntro
	case run == runSeventh:
		return seventhKernelIntro
	case run == runSixth:
		return sixthKernelIntro
	case run == runFourth:
		return fourthKernelIntro
	case run == runFifth:
		return fifthKernelIntro
	case run == runThird:
		return thirdKernelIntro
	case run == runProfiler:
		return profilerIntro
	case run.version == 2:
		return secondKernelIntro
	}
	return firstKernelIntro
}

// eighthKernelIntro introduces the eighth replay kernel's rows, which the
// ninth's replaced.
const eighthKernelIntro = `## Earlier: the eighth replay kernel (session 8's second call)

The eighth replay kernel (replay_v8 in workloads/kernels/replay.cu: the
seventh with its lead's range pointers loaded after the descriptor's
head, one per range, the whole descriptor read from replay.desc) at the
overhead_ns and floor_ns its own probe measured, with profiler_ns, and
the simulator's rows at those values.

`

// seventhKernelIntro introduces the seventh replay kernel's rows, which
// the eighth's replaced.
const seventhKernelIntro = `## Earlier: the seventh replay kernel (session 8's first call)

The seventh replay kernel (replay_v7 in workloads/kernels/replay.cu until
9c28089: only a block's first warp watching the global timer, its lead's
24 range pointers loaded with the descriptor's head) at the overhead_ns
and floor_ns its own probe measured, with profiler_ns, and the simulator's
rows at those values.

`

// sixthKernelIntro introduces the sixth replay kernel's rows, which the
// seventh's replaced.
const sixthKernelIntro = `## Earlier: the sixth replay kernel (session 7)

The sixth replay kernel (replay_v6 in workloads/kernels/replay.cu until
9c28089: every block's spin counted from the kernel's start, every warp
of every block watching the global timer) at the overhead_ns and
floor_ns its own probe measured, with profiler_ns, and the simulator's
rows at those values.

`

// fourthKernelIntro introduces the fourth replay kernel's rows, which the
// sixth's replaced.
const fourthKernelIntro = `## Earlier: the fourth replay kernel (session 5)

The fourth replay kernel (replay_v4 in workloads/kernels/replay.cu until
9c28089: every block spins its wave's share of the recorded duration
from its own start) at the overhead_ns and floor_ns its own probe
measured, with profiler_ns, and the simulator's rows at those values.

`

// fifthKernelIntro introduces the fifth replay kernel's rows: a candidate
// the fourth was kept over.
const fifthKernelIntro = `## Not adopted: the fifth replay kernel (session 6)

The fifth replay kernel (replay_v5, in workloads/kernels/replay.cu from
22ea7f6 to b49d165, where a sixth candidate took its place: the
fourth kernel's reads, spin and writes with nothing in local memory, where
the fourth reloads its range's pointer and count from local memory after
its spin) at the overhead_ns and floor_ns its own probe measured in the
same GPU call, with profiler_ns, and the simulator's rows at estimated
values (a prediction: committed before that call at 605767a, simulated
again on the same values once the session's kernel profiles were
refitted). On the same H100, one after
the other at the same values, it replayed the models slower than the
fourth (the notes), so the fourth stays the replay kernel.

`

// thirdKernelIntro introduces the third replay kernel's rows, which the
// fourth's replaced.
const thirdKernelIntro = `## Earlier: the third replay kernel (session 4's second call)

The third replay kernel (replay_v3, in workloads/kernels/replay.cu until
session 6: the second kernel's reads, every written range written at once
after the spin; its range pointers copied from the launch's parameters to
local memory before it loads its own range's descriptor) at the
overhead_ns and floor_ns its own probe measured, with profiler_ns, and the
simulator's rows committed before that GPU run (at estimated values: a
prediction).

`

// profilerIntro introduces the second replay kernel's rows with
// profiler_ns, which the third kernel's replaced.
const profilerIntro = `## Earlier: the second replay kernel with profiler_ns (session 3's second call)

The second replay kernel (replay_v2 in workloads/kernels/replay.cu: the
ranges' modes and lengths read from a descriptor buffer before its loads,
written range by range after the spin) at its overhead_ns and floor_ns, with
profiler_ns taken off the recorded durations, and the simulator's rows at
those settings (committed before that GPU run: a prediction).

`

// secondKernelIntro introduces the second replay kernel's rows without
// profiler_ns: the recorded durations as the profiler recorded them.
const secondKernelIntro = `## Earlier: the second replay kernel, the recorded durations as recorded (session 3's first call)

The same replay kernel, overhead_ns and floor_ns, with nothing taken off the
recorded kernel durations (no profiler_ns), and the simulator's rows at
those settings.

`

// firstKernelIntro introduces the rows of the first replay kernel, which
// the second replaced.
const firstKernelIntro = `## Superseded: the first replay kernel (GPU call 2a)

The same models replayed with the first version of the replay kernel
(replay_v1 in workloads/kernels/replay.cu: a ticket per block, the first
block to start hashing its reads one byte at a time and handing the hash to
the last block to start, all of it unhidden by the spin for short kernels),
its overhead_ns measured on long kernels only and no floor, and the
simulator's rows at those settings.

`

// writeEnv is the setup: the capture, then the leading run (runs[0]) and
// the earlier runs the page shows below it.
func writeEnv(b *bytes.Buffer, c capture, runs []*data) {
	b.WriteString("## Setup\n\n| | |\n|---|---|\n")
	dev, _ := c.Env["device"].(map[string]any)
	fmt.Fprintf(b, "| capture | %v, torch %v, CUDA %v, cuDNN %v, torchvision %v, transformers %v, %v |\n",
		dev["name"], c.Env["torch"], c.Env["cuda"], c.Env["cudnn"], c.Env["torchvision"], c.Env["transformers"], c.Env["date_utc"])
	d := runs[0]
	fmt.Fprintf(b, "| replay on the GPU | %s |\n| simulator | %s |\n", orNone(d.gpuName), orNone(d.simName))
	fmt.Fprintf(b, "| replay kernel | %s |\n", kernelOf(d))
	if d.run.profiler {
		fmt.Fprintf(b, "| profiler_ns | %s, taken off every recorded kernel duration on the GPU's replay and the simulator's alike: "+
			"what the profiler records beyond a kernel's work, a known sleep kernel's recorded duration less its length on the same GPU "+
			"(scripts/gpu/imported-chain-probe.py; docs/WORKLOADS.md) |\n", d.profiler)
	}
	for _, e := range runs[1:] {
		fmt.Fprintf(b, "| earlier (sections below) | %s on %s, simulator %s |\n", kernelOf(e), orNone(e.gpuName), orNone(e.simName))
	}
	b.WriteString("| runs | docs/results/gpu-runs.md (the capture, GPU call 1a; the first replay kernel, call 2a; the second, session 3's calls; the third, session 4's; the fourth, session 5's; the fifth, session 6's; the sixth, session 7's; the seventh and eighth, session 8's; the ninth, session 9's), " +
		"raw output under docs/results/raw |\n\n")
}

// kernelOf says which replay kernel a run used, at which settings.
func kernelOf(d *data) string {
	if d.run.version == 1 {
		return fmt.Sprintf("the first version; overhead_ns %s (workloads/file's TestGPUReplay on the same GPU)", orNone(d.overhead))
	}
	profiler := "no profiler_ns"
	if d.run.profiler {
		profiler = "profiler_ns " + orNone(d.profiler)
	}
	return fmt.Sprintf("the %s version; overhead_ns %s, floor_ns %s (workloads/file's TestGPUReplayProbe on the same GPU), %s",
		[]string{"", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"}[d.run.version], orNone(d.overhead), orNone(d.floor), profiler)
}

func orNone(s string) string {
	if s == "" {
		return "(no results yet)"
	}
	return s
}
