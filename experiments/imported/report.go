package imported

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
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

Targets (issue #19): gpusched's serial+graph replay within 10% of PyTorch's
graph replay; the simulator's prediction within 10% of the GPU replay. Then:
which multi-stream strategy speeds each model up, and by how much over
PyTorch's own graph replay.

`

// capture is the capture script's summary.
type capture struct {
	Env    map[string]any `json:"env"`
	Models []struct {
		Model string `json:"model"`
		Batch int    `json:"batch"`
		Tag   string `json:"tag"`
		Eager *stat  `json:"eager"`
		Graph *stat  `json:"graph"`
		Error string `json:"error"`
	} `json:"models"`
}

type stat struct {
	Median float64 `json:"median_us"`
	Min    float64 `json:"min_us"`
	Max    float64 `json:"max_us"`
	N      int     `json:"n"`
}

// table is every row by (workload, scheduler), for one device.
type table map[[2]string]*experiments.Row

func (t table) median(w, s string) (float64, bool) {
	r := t[[2]string{w, s}]
	if r == nil || r.Makespan == nil || len(r.Errors) > 0 {
		return 0, false
	}
	return r.Makespan.Median, true
}

// captureFile is the capture summary's name beside the page.
const captureFile = "raw/imported-capture.json"

func report(w io.Writer, in *experiments.ReportInput) error {
	var c capture
	capturePath := filepath.Join(in.Dir, captureFile)
	data, err := os.ReadFile(capturePath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%s: %w", capturePath, err)
	}
	gpu, sims := table{}, table{}
	var schedulers []string
	var simName, gpuName string
	for _, r := range in.Sets {
		for i := range r.Rows {
			row := &r.Rows[i]
			if row.Device == experiments.CUDADevice {
				gpu[[2]string{row.Workload, row.Scheduler}], gpuName = row, row.DeviceName
			} else {
				sims[[2]string{row.Workload, row.Scheduler}], simName = row, row.Device
			}
			if !contains(schedulers, row.Scheduler) {
				schedulers = append(schedulers, row.Scheduler)
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(intro)
	if len(in.Notes) > 0 {
		b.Write(in.Notes)
		b.WriteString("\n")
	}
	writeEnv(&b, c, gpuName, simName)
	writeSummary(&b, c, gpu, sims, schedulers)
	writeGraphTraces(&b, c, gpu, sims)
	writeModels(&b, c, gpu, sims, schedulers)
	for i, r := range in.Sets {
		fmt.Fprintf(&b, "## Raw results: %s\n\n", in.Files[i])
		raw := string(experiments.Markdown(r, false))
		raw = strings.ReplaceAll(raw, "\n## ", "\n#### ")
		raw = strings.ReplaceAll(raw, "\n# ", "\n### ")
		b.WriteString(strings.TrimPrefix(raw, "# ") + "\n")
	}
	_, err = w.Write(b.Bytes())
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func writeEnv(b *bytes.Buffer, c capture, gpuName, simName string) {
	b.WriteString("## Setup\n\n| | |\n|---|---|\n")
	dev, _ := c.Env["device"].(map[string]any)
	fmt.Fprintf(b, "| capture | %v, torch %v, CUDA %v, cuDNN %v, torchvision %v, transformers %v, %v |\n",
		dev["name"], c.Env["torch"], c.Env["cuda"], c.Env["cudnn"], c.Env["torchvision"], c.Env["transformers"], c.Env["date_utc"])
	fmt.Fprintf(b, "| replay on the GPU | %s |\n| simulator | %s |\n\n", orNone(gpuName), orNone(simName))
}

func orNone(s string) string {
	if s == "" {
		return "(no results yet)"
	}
	return s
}

// pct is a relative difference, signed.
func pct(a, ref float64) string {
	if ref == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(a-ref)/ref)
}

func us(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// best is the fastest scheduler's name and median, and whether any ran.
func best(t table, w string, schedulers []string) (string, float64, bool) {
	name, v := "", math.Inf(1)
	for _, s := range schedulers {
		if m, ok := t.median(w, s); ok && m < v {
			name, v = s, m
		}
	}
	return name, v, name != ""
}

func writeSummary(b *bytes.Buffer, c capture, gpu, sims table, schedulers []string) {
	b.WriteString("## Summary\n\n")
	b.WriteString("Times in µs (medians). vs PyTorch graph: serial+graph replay against PyTorch's CUDA-graph replay; " +
		"sim vs GPU: the simulator's serial+graph against the GPU's. Best: the fastest schedule on the GPU, and its speedup over PyTorch's graph replay.\n\n")
	b.WriteString("| model | batch | PyTorch eager | PyTorch graph | replay serial | replay serial+graph | vs PyTorch graph | sim serial+graph | sim vs GPU | best on the GPU | speedup over PyTorch graph |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	within, simWithin, n, ns := 0, 0, 0, 0
	for _, m := range c.Models {
		if m.Error != "" || m.Eager == nil {
			fmt.Fprintf(b, "| %s | %d | capture failed: %s |\n", m.Model, m.Batch, m.Error)
			continue
		}
		pg := 0.0
		if m.Graph != nil {
			pg = m.Graph.Median
		}
		ser, okS := gpu.median(m.Tag, "serial")
		sg, okG := gpu.median(m.Tag, "serial+graph")
		simG, okSim := sims.median(m.Tag, "serial+graph")
		vsPT, vsGPU := "-", "-"
		if okG && pg > 0 {
			vsPT, n = pct(sg, pg), n+1
			if math.Abs(sg-pg) <= 0.1*pg {
				within++
			}
		}
		if okSim && okG {
			vsGPU, ns = pct(simG, sg), ns+1
			if math.Abs(simG-sg) <= 0.1*sg {
				simWithin++
			}
		}
		bestName, bestV, okB := best(gpu, m.Tag, schedulers)
		bestCell, speed := "-", "-"
		if okB {
			bestCell = fmt.Sprintf("%s (%.1f)", bestName, bestV)
			if pg > 0 {
				speed = fmt.Sprintf("%.2fx", pg/bestV)
			}
		}
		fmt.Fprintf(b, "| %s | %d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |\n", m.Model, m.Batch, m.Eager.Median,
			us(pg, pg > 0), us(ser, okS), us(sg, okG), vsPT, us(simG, okSim), vsGPU, bestCell, speed)
	}
	fmt.Fprintf(b, "\nserial+graph replay within 10%% of PyTorch's graph replay: %d of %d models; simulator within 10%% of the GPU replay: %d of %d.\n\n", within, n, simWithin, ns)
}

// writeGraphTraces compares the replays of the traces recorded during
// PyTorch's graph replays (workloads "<tag>.graph", ordered by what ran
// after what) with PyTorch's graph replay.
func writeGraphTraces(b *bytes.Buffer, c capture, gpu, sims table) {
	var lines []string
	for _, m := range c.Models {
		w := m.Tag + ".graph"
		sg, okG := gpu.median(w, "serial+graph")
		simG, okSim := sims.median(w, "serial+graph")
		if m.Graph == nil || (!okG && !okSim) {
			continue
		}
		vsPT, vsGPU := "-", "-"
		if okG {
			vsPT = pct(sg, m.Graph.Median)
		}
		if okG && okSim {
			vsGPU = pct(simG, sg)
		}
		lines = append(lines, fmt.Sprintf("| %s | %d | %.1f | %s | %s | %s | %s |", m.Model, m.Batch, m.Graph.Median, us(sg, okG), vsPT, us(simG, okSim), vsGPU))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Replays of the graph-replay traces\n\n")
	b.WriteString("The same models traced while PyTorch replayed its CUDA graph (kernels of one graph launch, ordered by what ran after what; " +
		"their durations are the graph replay's own), replayed under serial+graph.\n\n")
	b.WriteString("| model | batch | PyTorch graph | replay serial+graph | vs PyTorch graph | sim serial+graph | sim vs GPU |\n|---|---|---|---|---|---|---|\n")
	b.WriteString(strings.Join(lines, "\n") + "\n\n")
}

func writeModels(b *bytes.Buffer, c capture, gpu, sims table, schedulers []string) {
	b.WriteString("## Every schedule, per model\n\n")
	b.WriteString("Speedups are over the GPU's serial+graph replay and over PyTorch's graph replay; sim vs GPU is the simulator's error on the row.\n\n")
	for _, m := range c.Models {
		if m.Error != "" || m.Graph == nil {
			continue
		}
		ref, okRef := gpu.median(m.Tag, "serial+graph")
		fmt.Fprintf(b, "### %s, batch %d\n\n", m.Model, m.Batch)
		b.WriteString("| schedule | GPU µs | over serial+graph | over PyTorch graph | sim µs | sim vs GPU | notes |\n|---|---|---|---|---|---|---|\n")
		rows := append([]string(nil), schedulers...)
		sort.SliceStable(rows, func(i, j int) bool {
			a, okA := gpu.median(m.Tag, rows[i])
			c, okC := gpu.median(m.Tag, rows[j])
			return okA && (!okC || a < c)
		})
		for _, s := range rows {
			g, okG := gpu.median(m.Tag, s)
			sm, okS := sims.median(m.Tag, s)
			if !okG && !okS && gpu[[2]string{m.Tag, s}] == nil && sims[[2]string{m.Tag, s}] == nil {
				continue
			}
			over, overPT, err := "-", "-", "-"
			if okG && okRef {
				over = fmt.Sprintf("%.2fx", ref/g)
			}
			if okG {
				overPT = fmt.Sprintf("%.2fx", m.Graph.Median/g)
			}
			if okG && okS {
				err = pct(sm, g)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", s, us(g, okG), over, overPT, us(sm, okS), err, notes(gpu, sims, m.Tag, s))
		}
		b.WriteString("\n")
	}
}

// notes says what went wrong on a row, if anything.
func notes(gpu, sims table, w, s string) string {
	var out []string
	for _, t := range []struct {
		name string
		t    table
	}{{"GPU", gpu}, {"sim", sims}} {
		r := t.t[[2]string{w, s}]
		if r == nil {
			continue
		}
		if len(r.Errors) > 0 {
			out = append(out, t.name+": "+r.Errors[0])
		}
		if r.Races != nil && *r.Races > 0 {
			out = append(out, fmt.Sprintf("%s: %d races", t.name, *r.Races))
		}
	}
	return strings.Join(out, "; ")
}
