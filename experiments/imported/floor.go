package imported

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/workloads/file"
)

// floorCost is what a replay floor of floorNS adds to one replay of the
// blocks, in µs: every block recorded shorter than the floor lasts the
// floor, once per wave; and how many operations have such a block.
func floorCost(blocks []file.ReplayBlock, floorNS float64) (us float64, below int) {
	for _, k := range blocks {
		if float64(k.NS) < floorNS {
			us += float64(k.Waves) * (floorNS - float64(k.NS)) / 1000
			below++
		}
	}
	return us, below
}

// floorFor is the highest floor in ns at which the replay would be within
// 10% of pg (µs), the rest of its excess unchanged, or -1 if none would.
func floorFor(blocks []file.ReplayBlock, rest, pg, floorNS float64) int {
	for f := int(floorNS); f >= 0; f-- {
		if c, _ := floorCost(blocks, float64(f)); rest+c <= 0.1*pg {
			return f
		}
	}
	return -1
}

// writeFloorSplit splits each GPU serial+graph replay's excess over
// PyTorch's graph replay into what its floor costs (blocks recorded
// shorter than the replay kernel's floor_ns, which no spin can shorten)
// and the rest (the replay's cost per kernel beyond its spin and its
// launch in a graph beyond PyTorch's), from the workload files the rows
// name, at the floor_ns and profiler_ns they ran with.
func writeFloorSplit(b *bytes.Buffer, c capture, d *data) error {
	var rows []string
	for _, suffix := range []string{"", ".graph"} {
		for _, m := range c.Models {
			r, ok := d.gpu.row(m.Tag+suffix, baseline)
			g, _ := d.gpu.median(m.Tag+suffix, baseline)
			if !ok || m.Graph == nil {
				continue
			}
			line, err := floorRow(r.WorkloadParams, m.Graph.Median, g)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Workload, err)
			}
			kind := "eager"
			if suffix != "" {
				kind = "graph trace"
			}
			rows = append(rows, fmt.Sprintf("| %s | %d | %s | %s |", m.label(), m.Batch, kind, line))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	b.WriteString("## Where the excess goes: the floor and the rest\n\n" +
		"Each GPU serial+graph replay's excess over PyTorch's graph replay, split with the workload file: \"floor\" is what the " +
		"replay kernel's floor_ns (its time at spin 0, the run's own probe) adds, every block recorded (less profiler_ns) shorter " +
		"than it lasting it, once per wave, which no spin can shorten; \"rest\" is the excess less that: the replay's cost per kernel " +
		"beyond its spin and its launch and completion in a graph beyond PyTorch's. \"at floor 0\" is the replay against PyTorch's " +
		"with the rest only (no floor at all); \"floor for 10%\" the highest floor in ns at which the replay would meet the target, the rest " +
		"unchanged (\"none\": the rest alone misses it). µs a kernel unless said.\n\n")
	b.WriteString("| model | batch | file | operations | below the floor | floor_ns | GPU vs PyTorch graph | floor | rest | at floor 0 | floor for 10% |\n" +
		"|---|---|---|---|---|---|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n\n")
	return nil
}

// floorRow is one model's cells from operations on: its workload file
// (params' path), floor_ns and profiler_ns, PyTorch's graph replay pg and
// the GPU's median g, both µs.
func floorRow(params map[string]string, pg, g float64) (string, error) {
	f, err := file.Load(params["path"])
	if err != nil {
		return "", err
	}
	floorNS, err1 := strconv.ParseFloat(params["floor_ns"], 64)
	profiler, err2 := strconv.ParseInt(orZero(params["profiler_ns"]), 10, 64)
	if err1 != nil || err2 != nil {
		return "", fmt.Errorf("floor_ns %q, profiler_ns %q: not numbers", params["floor_ns"], params["profiler_ns"])
	}
	blocks, err := f.ReplayBlocks(profiler)
	if err != nil {
		return "", err
	}
	n := float64(len(blocks))
	cost, below := floorCost(blocks, floorNS)
	rest := g - pg - cost
	need := "none"
	switch x := floorFor(blocks, rest, pg, floorNS); {
	case x == int(floorNS):
		need = "met at its floor_ns"
	case x >= 0:
		need = fmt.Sprint(x)
	}
	return fmt.Sprintf("%d | %d | %.0f | %+.2f (%s) | %+.2f | %+.2f | %s | %s", len(blocks), below, floorNS,
		(g-pg)/n, pct(g, pg), cost/n, rest/n, pct(pg+rest, pg), need), nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
