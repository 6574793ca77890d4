package experiments

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gpusched/gpusched/device"
)

// Validation compares the simulator's predictions with a GPU's
// measurements, row by row, for one experiment.
type Validation struct {
	Sim  string         `json:"sim"` // device specs
	GPU  string         `json:"gpu"`
	Rows []ValidatedRow `json:"rows"`
	// MakespanMAPE and SpeedupMAPE are mean absolute percentage errors of
	// the simulator against the GPU over the rows that have both numbers
	// (nil when there are none).
	MakespanMAPE *float64 `json:"makespan_mape_pct"`
	MakespanN    int      `json:"makespan_rows"`
	SpeedupMAPE  *float64 `json:"speedup_mape_pct"`
	SpeedupN     int      `json:"speedup_rows"`
}

// ValidatedRow is one (point, workload, scheduler) on both devices. Errors
// are (sim - gpu) / gpu in percent.
type ValidatedRow struct {
	Label       string   `json:"row"`
	GPUMakespan float64  `json:"gpu_makespan_us"` // median; 0 when missing
	SimMakespan float64  `json:"sim_makespan_us"`
	MakespanErr *float64 `json:"makespan_error_pct"` // nil when either is missing
	GPUSpeedup  *float64 `json:"gpu_speedup"`
	SimSpeedup  *float64 `json:"sim_speedup"`
	SpeedupErr  *float64 `json:"speedup_error_pct"` // nil for the baseline and missing rows
	Problems    []string `json:"problems,omitempty"`
}

// Validate runs e on the simulator config simSpec and on the device gpuSpec
// (normally cuda; any device works, so two simulator configs can be
// compared too) and joins the two result sets.
func Validate(e *Experiment, simSpec, gpuSpec string, opt RunOptions) (*Validation, *Results, *Results, error) {
	on := func(spec string) (*Results, error) {
		v := *e
		v.Devices = []string{spec}
		if err := checkDeviceSpec(spec); err != nil {
			return nil, fmt.Errorf("device %q: %w", spec, err)
		}
		return Run(&v, opt)
	}
	gpu, err := on(gpuSpec)
	if err != nil {
		return nil, nil, nil, err
	}
	simRes, err := on(simSpec)
	if err != nil {
		return nil, nil, nil, err
	}
	return JoinValidation(simRes, gpu, simSpec, gpuSpec), simRes, gpu, nil
}

// JoinValidation joins a simulator's and a GPU's results of the same
// experiment, computing per-row errors and the MAPE summaries.
func JoinValidation(simRes, gpu *Results, simSpec, gpuSpec string) *Validation {
	v := &Validation{Sim: simSpec, GPU: gpuSpec}
	key := func(r *Row) string { return pointString(r.Point) + "\x00" + r.Workload + "\x00" + r.Scheduler }
	bySim := map[string]*Row{}
	for i := range simRes.Rows {
		bySim[key(&simRes.Rows[i])] = &simRes.Rows[i]
	}
	var simM, gpuM, simS, gpuS []float64
	for i := range gpu.Rows {
		g := &gpu.Rows[i]
		label := fmt.Sprintf("%s / %s", g.Workload, g.Scheduler)
		if len(g.Point) > 0 {
			label += " at " + pointString(g.Point)
		}
		vr := ValidatedRow{Label: label, GPUSpeedup: g.Speedup}
		s, ok := bySim[key(g)]
		if !ok {
			vr.Problems = append(vr.Problems, "no simulator row")
			v.Rows = append(v.Rows, vr)
			continue
		}
		vr.SimSpeedup = s.Speedup
		for _, e := range g.Errors {
			vr.Problems = append(vr.Problems, "gpu: "+e)
		}
		for _, e := range s.Errors {
			vr.Problems = append(vr.Problems, "sim: "+e)
		}
		if g.Makespan != nil && g.Makespan.N > 0 && s.Makespan != nil && s.Makespan.N > 0 {
			vr.GPUMakespan, vr.SimMakespan = g.Makespan.Median, s.Makespan.Median
			vr.MakespanErr = pctErr(vr.SimMakespan, vr.GPUMakespan)
			simM, gpuM = append(simM, vr.SimMakespan), append(gpuM, vr.GPUMakespan)
		}
		if g.Speedup != nil && s.Speedup != nil && !g.Baseline {
			vr.SpeedupErr = pctErr(*s.Speedup, *g.Speedup)
			simS, gpuS = append(simS, *s.Speedup), append(gpuS, *g.Speedup)
		}
		v.Rows = append(v.Rows, vr)
	}
	var m float64
	m, v.MakespanN = MAPE(simM, gpuM)
	v.MakespanMAPE = finite(m)
	m, v.SpeedupN = MAPE(simS, gpuS)
	v.SpeedupMAPE = finite(m)
	return v
}

// pctErr is (pred - actual) / actual in percent, nil if actual is 0.
func pctErr(pred, actual float64) *float64 {
	if actual == 0 {
		return nil
	}
	return finite((pred - actual) / actual * 100)
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Print writes the validation table and its summary line.
func (v *Validation) Print(w io.Writer) error {
	rows := [][]string{{"row", "GPU µs", "sim µs", "error", "GPU speedup", "sim speedup", "error", ""}}
	for _, r := range v.Rows {
		rows = append(rows, []string{r.Label, fmtUS(r.GPUMakespan), fmtUS(r.SimMakespan), fmtErr(r.MakespanErr),
			fmtSpeedup(r.GPUSpeedup), fmtSpeedup(r.SimSpeedup), fmtErr(r.SpeedupErr), strings.Join(r.Problems, "; ")})
	}
	if err := printAligned(w, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "summary: simulator %s against %s: makespan MAPE %s over %d rows, speedup MAPE %s over %d rows\n",
		v.Sim, v.GPU, fmtMAPE(v.MakespanMAPE), v.MakespanN, fmtMAPE(v.SpeedupMAPE), v.SpeedupN)
	return err
}

// Markdown is the validation as a report.
func (v *Validation) Markdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Simulator validation: %s against %s\n\n", v.Sim, v.GPU)
	fmt.Fprintf(&b, "Makespan MAPE %s over %d rows; speedup MAPE %s over %d rows. Errors are (sim - GPU) / GPU.\n\n",
		fmtMAPE(v.MakespanMAPE), v.MakespanN, fmtMAPE(v.SpeedupMAPE), v.SpeedupN)
	b.WriteString("| row | GPU µs | sim µs | error | GPU speedup | sim speedup | error | problems |\n|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, r := range v.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(r.Label), fmtUS(r.GPUMakespan), fmtUS(r.SimMakespan), fmtErr(r.MakespanErr),
			fmtSpeedup(r.GPUSpeedup), fmtSpeedup(r.SimSpeedup), fmtErr(r.SpeedupErr), mdEscape(strings.Join(r.Problems, "; ")))
	}
	return []byte(b.String())
}

func fmtErr(e *float64) string {
	if e == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *e)
}

func fmtMAPE(m *float64) string {
	if m == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *m)
}

// PickSimConfig chooses the simulator config that models gpu: a config
// whose device name is the GPU's own, preferring a measured one (written
// by gpusched calibrate, named *measured*); otherwise one with the same SM
// count whose name shares the GPU's model (h100 for "NVIDIA H100 80GB
// HBM3"). why says which rule chose it.
func PickSimConfig(gpu device.Info) (name, why string, err error) {
	type cand struct {
		name string
		info device.Info
	}
	var cands []cand
	for _, n := range SimConfigs() {
		info, err := SimInfo(n)
		if err != nil {
			continue
		}
		cands = append(cands, cand{n, info})
	}
	var exact []cand
	for _, c := range cands {
		if c.info.Name == gpu.Name {
			exact = append(exact, c)
		}
	}
	for _, c := range exact {
		if strings.Contains(c.name, "measured") {
			return c.name, fmt.Sprintf("measured config for %s", gpu.Name), nil
		}
	}
	if len(exact) > 0 {
		return exact[0].name, fmt.Sprintf("config named %s (not measured on this GPU; `gpusched calibrate` makes one)", gpu.Name), nil
	}
	lower := strings.ToLower(gpu.Name)
	for _, c := range cands {
		if c.info.SMs == gpu.SMs && strings.Contains(lower, strings.ToLower(c.name)) {
			return c.name, fmt.Sprintf("config %s has %s's SM count (%d) and model; not measured on it", c.name, gpu.Name, gpu.SMs), nil
		}
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.name
	}
	return "", "", fmt.Errorf("no simulator config models %s (%d SMs); run `gpusched calibrate --device cuda -o my.yaml` or pass --sim (have %s)",
		gpu.Name, gpu.SMs, strings.Join(names, ", "))
}
