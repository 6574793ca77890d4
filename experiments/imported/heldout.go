package imported

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/experiments"
)

// heldoutCapture is the held-out capture's summary beside the page
// (scripts/gpu/imported-heldout.sh's capture-summary.json).
const heldoutCapture = "raw/imported-heldout-capture.json"

// isHeldout says whether an experiment replayed the held-out models
// (scripts/gpu/imported-heldout.sh names them imported-heldout and
// imported-graph-heldout): models the importer and the replay kernel were
// not developed on, so they get a page of their own.
func isHeldout(experiment string) bool { return strings.Contains(experiment, "-heldout") }

// heldoutOnly says whether every set given is of the held-out models; a
// mix is an error, as the two pages read different captures.
func heldoutOnly(in *experiments.ReportInput) (bool, error) {
	n := 0
	for _, r := range in.Sets {
		if isHeldout(r.Experiment) {
			n++
		}
	}
	if n > 0 && n < len(in.Sets) {
		return false, fmt.Errorf("imported report: %d of %d files are of the held-out models: report them on a page of their own", n, len(in.Sets))
	}
	return n > 0, nil
}

// heldoutReport is the held-out models' page: the same tables as the
// leading run's on the main page, against the held-out capture.
func heldoutReport(w io.Writer, in *experiments.ReportInput) error {
	c, err := readCapture(filepath.Join(in.Dir, heldoutCapture))
	if err != nil {
		return err
	}
	d := newDataOf(in, replayRun{version: 3, profiler: true}, func(*experiments.Results) bool { return true })
	var b bytes.Buffer
	b.WriteString(heldoutIntro)
	if len(in.Notes) > 0 {
		b.Write(in.Notes)
		b.WriteString("\n")
	}
	dev, _ := c.Env["device"].(map[string]any)
	fmt.Fprintf(&b, "## Setup\n\n| | |\n|---|---|\n| capture | %v, torch %v, CUDA %v, torchvision %v, transformers %v, %v |\n",
		dev["name"], c.Env["torch"], c.Env["cuda"], c.Env["torchvision"], c.Env["transformers"], c.Env["date_utc"])
	fmt.Fprintf(&b, "| replay on the GPU | %s |\n| simulator | %s |\n", orNone(d.gpuName), orNone(d.simName))
	fmt.Fprintf(&b, "| replay kernel | eager imports: %s; graph-replay imports: %s (the replay probe's values on the same GPU) |\n\n",
		replaySettings(d, c, ""), replaySettings(d, c, ".graph"))
	writeTargets(&b, c, d, "##")
	writeGraphTraces(&b, c, d, "##")
	writeBest(&b, c, d, "##")
	writeModels(&b, c, d)
	b.WriteString(heldoutCommands)
	writeRaw(&b, in)
	_, err = w.Write(b.Bytes())
	return err
}

const heldoutCommands = `## Commands

    # on the GPU host, one call: the replay probe and the development models (for the probe's values), then this check
    FROM_PROBE=1 OUT=$OUT bash scripts/gpu/imported-v4.sh
    EAGER="416 1119" GRAPH="160 863" B=.gpu/import OUT=$OUT bash scripts/gpu/imported-heldout.sh cuda
    # here: its imports and experiment files committed as they ran (configs/workloads/pytorch-heldout,
    # configs/experiments/imported{,-graph}-heldout-gpu.yaml), then the simulator's rows
    gpusched paper imported run configs/experiments/imported-heldout-sim.yaml -o results/imported-heldout-sim
    gpusched paper imported run configs/experiments/imported-graph-heldout-sim.yaml -o results/imported-graph-heldout-sim
    gpusched paper imported run configs/experiments/imported-graph-heldout-sim-o0.yaml -o results/imported-graph-heldout-sim-o0
    # session 9: the same imports replayed with the eighth replay kernel at its measured values (scripts/gpu/imported-v9ab.sh
    # step 2: imported-heldout-v8-gpu, imported-graph-heldout-v8-gpu), then the simulator's rows at those values
    gpusched paper imported run configs/experiments/imported-heldout-v8-sim.yaml -o results/imported-heldout-v8-sim
    gpusched paper imported run configs/experiments/imported-graph-heldout-v8-sim.yaml -o results/imported-graph-heldout-v8-sim
    gpusched paper imported run configs/experiments/imported-graph-heldout-v8-sim-o0.yaml -o results/imported-graph-heldout-v8-sim-o0
    # session 10: the same imports replayed with the ninth replay kernel (the replay kernel since session 9) at its
    # measured values (B=.gpu/heldout-v9 bash scripts/gpu/imported-heldout-v9.sh), then the simulator's rows at those values
    gpusched paper imported run configs/experiments/imported-heldout-v9-sim.yaml -o results/imported-heldout-v9-sim
    gpusched paper imported run configs/experiments/imported-graph-heldout-v9-sim.yaml -o results/imported-graph-heldout-v9-sim
    gpusched paper imported run configs/experiments/imported-graph-heldout-v9-sim-o0.yaml -o results/imported-graph-heldout-v9-sim-o0
    # this page (the session-10 sets; the eighth kernel's are the -v8 files, the fourth's those without a version)
    gpusched paper imported report -o docs/results/imported-heldout.md --notes docs/results/imported-heldout-notes.md \
        docs/results/imported-heldout-v9-gpu.json docs/results/imported-graph-heldout-v9-gpu.json docs/results/imported-heldout-v9-sim.json \
        docs/results/imported-graph-heldout-v9-sim.json docs/results/imported-graph-heldout-v9-sim-o0.json
`

const heldoutIntro = `# Imported PyTorch models the importer was not developed on

Issue #19's independent check: models that were not in the repository while
the importer, the replay kernel and the simulator's import path were built
and tuned (configs/workloads/pytorch holds the five models they were
developed on), captured, imported and replayed on the GPU in one call by
scripts/gpu/imported-heldout.sh, with the replay kernel's overhead_ns and
floor_ns as the replay probe measured them on the same kind of GPU and
nothing fitted to these models. The simulator's rows are the same
experiments on the h100 config, run afterwards from the committed imports
(configs/workloads/pytorch-heldout). Same targets as docs/results/imported.md:
the GPU's serial+graph within 10% of PyTorch's CUDA-graph replay, the
simulator within 10% of the GPU.

`

// replaySettings is the replay kernel's settings on the GPU's serial+graph
// row of the first captured model's workload with the suffix ("" for the
// eager import, ".graph" for the graph-replay one).
func replaySettings(d *data, c capture, suffix string) string {
	for _, m := range c.Models {
		if r, ok := d.gpu.row(m.Tag+suffix, baseline); ok {
			p := r.WorkloadParams
			return fmt.Sprintf("overhead_ns %s, floor_ns %s, profiler_ns %s", p["overhead_ns"], p["floor_ns"], orNone(p["profiler_ns"]))
		}
	}
	return orNone("")
}
