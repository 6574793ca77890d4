package experiments

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/gpusched/gpusched/experiments/fidelity"
	"gopkg.in/yaml.v3"
)

// Validation compares the simulator's predictions with a GPU's
// measurements, row by row, over one or more experiments.
type Validation struct {
	Options fidelity.Options `json:"options"`
	Sources []Source         `json:"sources"`
	Rows    []ValidatedRow   `json:"rows"`
	// Total summarizes every row that joined; Experiments, each
	// experiment and, within it, each workload.
	Total       fidelity.Summary `json:"total"`
	Experiments []Section        `json:"experiments"`
}

// Source is one GPU result set and how it was simulated.
type Source struct {
	GPU            string   `json:"gpu"` // results file, or device
	Experiment     string   `json:"experiment"`
	ExperimentFile string   `json:"experiment_file"`
	Sim            []string `json:"sim"` // configs, as "GPU -> config" for files
	Notes          []string `json:"notes,omitempty"`
	// FirstRun: the GPU rows timed the first run after Prepare (files
	// converted from an earlier format), where the simulator times the run
	// after an untimed one; their errors include that difference.
	FirstRun bool `json:"gpu_first_run,omitempty"`
	Rows     int  `json:"rows"`     // GPU rows
	Excluded int  `json:"excluded"` // rows left out of the metrics
	// KernelTiming sums the simulated rows' kernel launches by what timed
	// them (nil: no simulated row says).
	KernelTiming *KernelTiming `json:"kernel_timing,omitempty"`
}

// Section is the summary of an experiment or a workload.
type Section struct {
	Name      string           `json:"name"`
	Summary   fidelity.Summary `json:"summary"`
	Workloads []Section        `json:"workloads,omitempty"`
}

// ValidatedRow is one (point, workload, scheduler) on both devices. Errors
// are (sim - gpu) / gpu in percent; GPUSpread is the GPU repetitions'
// range over their median; Rerun is another GPU run's median of the same
// row, where one was given.
type ValidatedRow struct {
	Experiment    string   `json:"experiment"`
	Point         string   `json:"point,omitempty"`
	Workload      string   `json:"workload"`
	Scheduler     string   `json:"scheduler"`
	SchedulerDesc string   `json:"scheduler_desc"`
	Baseline      bool     `json:"baseline,omitempty"`
	GPUDevice     string   `json:"gpu_device"`
	SimConfig     string   `json:"sim_config"`
	GPUMakespan   float64  `json:"gpu_makespan_us"` // median; 0 when missing
	SimMakespan   float64  `json:"sim_makespan_us"`
	MakespanErr   *float64 `json:"makespan_error_pct"` // nil when either is missing
	GPUSpread     *float64 `json:"gpu_spread_pct"`
	GPUSpeedup    *float64 `json:"gpu_speedup"`
	SimSpeedup    *float64 `json:"sim_speedup"`
	SpeedupErr    *float64 `json:"speedup_error_pct"` // nil for the baseline and missing rows
	Rerun         *float64 `json:"gpu_rerun_us,omitempty"`
	// GPUModes, where the GPU repetitions fall in a fast and a slow mode
	// (at Options.ModeGap), are the two; nil otherwise.
	GPUModes *GPUModes `json:"gpu_modes,omitempty"`
	// Excluded rows are in no metric: Problems says why (a failed row, or
	// one the simulator could not have run as the GPU did).
	Excluded bool     `json:"excluded,omitempty"`
	Problems []string `json:"problems,omitempty"`

	fid      fidelity.Row
	identity string // what must match for another run to be a rerun
	source   int
}

// Label is the row as tables name it.
func (r *ValidatedRow) Label() string {
	s := r.Workload + " / " + r.Scheduler
	if r.Point != "" {
		s += " at " + r.Point
	}
	return s
}

func newValidation(opt fidelity.Options) *Validation { return &Validation{Options: opt} }

// add joins simRes with gpu, row by row. e is the experiment both ran (nil:
// workloads are identified by name only); configOf names the simulator
// config a GPU row is simulated on.
func (v *Validation) add(e *Experiment, simRes, gpu *Results, src Source, configOf func(*Row) string) {
	sims := map[string]*Row{}
	for i := range simRes.Rows {
		s := &simRes.Rows[i]
		sims[joinKey(s, s.Device)] = s
		if s.KernelTiming != nil {
			if src.KernelTiming == nil {
				src.KernelTiming = &KernelTiming{}
			}
			src.KernelTiming.Add(*s.KernelTiming)
		}
	}
	params := workloadParams(e, gpu)
	commit := buildOf(gpu)
	src.Rows = len(gpu.Rows)
	added := map[string]bool{} // "kind name=value" of parameters added since the GPU ran
	for i := range gpu.Rows {
		g := &gpu.Rows[i]
		cfg := configOf(g)
		vr := ValidatedRow{Experiment: gpu.Experiment, Point: pointString(g.Point), Workload: g.Workload, Scheduler: g.Scheduler,
			SchedulerDesc: g.SchedulerDesc, Baseline: g.Baseline, GPUDevice: g.DeviceName, SimConfig: cfg, source: len(v.Sources)}
		vr.fid = fidelity.Row{Group: fmt.Sprintf("%d\x00%s\x00%s\x00%s", len(v.Sources), vr.Point, g.Workload, g.DeviceName),
			Scheduler: g.Scheduler, Baseline: g.Baseline, GPU: gpuMakespans(g)}
		if m := vr.fid.GPUMedian(); m > 0 { // NaN without a measured repetition
			vr.GPUMakespan = m
		}
		vr.GPUSpread = finite(vr.fid.Spread())
		wl, ok := params[vr.Point+"\x00"+g.Workload]
		if len(g.WorkloadParams) > 0 && gpu.Migrated == "" { // every parameter, defaults included
			wl, ok = canonicalMap(g.WorkloadParams), true
		}
		if !ok { // nothing says what the workload is: its name
			wl = "name " + g.Workload
		}
		vr.identity = strings.Join([]string{g.Family, wl, g.Kind, g.SchedulerDesc, vr.Point, g.DeviceName, fmt.Sprint(gpu.Seed), commit}, "\x00")
		s := sims[joinKey(g, cfg)]
		vr.Problems = mismatches(g, s, gpu.Migrated != "")
		if s != nil {
			for _, p := range addedParams(g.SchedulerParams, s.SchedulerParams, gpu.Migrated != "") {
				added[g.Kind+" "+p] = true
			}
			for _, p := range addedParams(g.WorkloadParams, s.WorkloadParams, gpu.Migrated != "") {
				added[g.Family+" "+p] = true
			}
		}
		if s != nil && s.Makespan != nil && s.Makespan.N > 0 {
			vr.SimMakespan = s.Makespan.Median
			vr.fid.Sim = vr.SimMakespan
		}
		if len(vr.Problems) > 0 {
			vr.Excluded = true
			src.Excluded++
		}
		v.Rows = append(v.Rows, vr)
	}
	if len(added) > 0 {
		src.Notes = append(src.Notes, "parameters the GPU rows do not record (added since they ran), simulated as: "+strings.Join(sortedKeys(added), ", "))
	}
	v.Sources = append(v.Sources, src)
}

func joinKey(r *Row, device string) string {
	return pointString(r.Point) + "\x00" + r.Workload + "\x00" + r.Scheduler + "\x00" + device
}

// gpuMakespans are a row's measured repetitions in µs (its median alone
// if the repetitions are not recorded).
func gpuMakespans(r *Row) []float64 {
	if len(r.MakespansNS) > 0 && len(r.Errors) == 0 {
		out := make([]float64, len(r.MakespansNS))
		for i, ns := range r.MakespansNS {
			out[i] = float64(ns) / 1e3
		}
		return out
	}
	if r.Makespan != nil && r.Makespan.N > 0 && len(r.Errors) == 0 {
		return []float64{r.Makespan.Median}
	}
	return nil
}

// mismatches says why a GPU row and its simulated row cannot be compared:
// either failed or is missing, or they are not the same scheduler with the
// same parameters on the same workload with the same parameters. partial:
// the GPU row records only the parameters its file gave (a converted
// file), so only those are compared.
func mismatches(g, s *Row, partial bool) []string {
	var out []string
	for _, e := range g.Errors {
		out = append(out, "gpu: "+e)
	}
	if g.Makespan == nil || g.Makespan.N == 0 {
		out = append(out, "gpu: no measured repetition")
	}
	if s == nil {
		return append(out, "no simulator row (the experiment file has no such workload or scheduler)")
	}
	for _, e := range s.Errors {
		out = append(out, "sim: "+e)
	}
	if g.Family != s.Family {
		out = append(out, fmt.Sprintf("workload family differs: GPU %q, simulator %q", g.Family, s.Family))
	}
	if g.Kind != s.Kind {
		out = append(out, fmt.Sprintf("scheduler kind differs: GPU %q, simulator %q", g.Kind, s.Kind))
	}
	if g.SchedulerDesc != s.SchedulerDesc {
		out = append(out, fmt.Sprintf("scheduler parameters differ: GPU ran %q, the simulator %q", g.SchedulerDesc, s.SchedulerDesc))
	}
	if g.Baseline != s.Baseline {
		out = append(out, "baseline differs between the GPU and the simulator results")
	}
	out = append(out, paramDiffs("workload", g.WorkloadParams, s.WorkloadParams, partial)...)
	return append(out, paramDiffs("scheduler", g.SchedulerParams, s.SchedulerParams, partial)...)
}

// paramDiffs lists the parameters whose values differ between a GPU row
// and its simulated row: every parameter the GPU row records (with
// partial, it records only those its file gave). A parameter only the
// simulated row has was added to the scheduler or workload after the GPU
// ran (the GPU's experiment could not have set it) and is simulated at its
// default: addedParams lists those, for a note, since a default that
// changed what runs shows in the scheduler's description, which must
// match. Rows that record no parameters (older results) are not compared.
func paramDiffs(what string, gpu, sim map[string]string, partial bool) []string {
	if len(gpu) == 0 {
		return nil
	}
	keys := sortedKeys(gpu)
	var diffs []string
	for _, k := range keys {
		g, okG := gpu[k]
		v, okS := sim[k]
		switch {
		case !okG:
			g = "(none)"
		case !okS:
			v = "(none)"
		}
		if g != v || okG != okS {
			diffs = append(diffs, fmt.Sprintf("%s=%s on the GPU, %s on the simulator", k, g, v))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return []string{what + " parameters differ: " + strings.Join(diffs, ", ")}
}

// addedParams lists, as "name=value", the parameters a simulated row has
// and its GPU row, which records all of its own, does not.
func addedParams(gpu, sim map[string]string, partial bool) []string {
	if len(gpu) == 0 || partial {
		return nil
	}
	var out []string
	for _, k := range sortedKeys(sim) {
		if _, ok := gpu[k]; !ok {
			out = append(out, k+"="+sim[k])
		}
	}
	return out
}

// workloadParams maps (point, workload) to its parameters as canonical
// JSON, from the experiment's entries at each of gpu's sweep points.
func workloadParams(e *Experiment, gpu *Results) map[string]string {
	out := map[string]string{}
	if e == nil {
		return out
	}
	pts, err := sweepPoints(gpu.Sweep)
	if err != nil {
		return out
	}
	for _, pt := range pts {
		x := e
		if len(pt) > 0 {
			if x, err = e.variant(pt); err != nil {
				continue
			}
		}
		for i := range x.Workloads {
			out[pointString(pt)+"\x00"+x.Workloads[i].Name] = canonical(&x.Workloads[i].Params)
		}
	}
	return out
}

// canonical is a YAML node's value as JSON with sorted keys.
func canonical(n *yaml.Node) string {
	if n == nil || n.Kind == 0 {
		return "{}"
	}
	var x any
	if err := n.Decode(&x); err != nil {
		return "?"
	}
	b, err := json.Marshal(x)
	if err != nil {
		return "?"
	}
	return string(b)
}

// buildOf is the commit of the gpusched that measured r, where its
// provenance records one (and one only): a rerun must be of the same code.
func buildOf(r *Results) string {
	c := ""
	for _, p := range r.Provenance {
		if p.Commit == "" || (c != "" && p.Commit != c) {
			return ""
		}
		c = p.Commit
	}
	return c
}

// canonicalMap is a parameters map as JSON with sorted keys.
func canonicalMap(m map[string]string) string {
	b, err := json.Marshal(m)
	if err != nil {
		return "?"
	}
	return string(b)
}

// finish fills reruns, speedups and the summaries.
func (v *Validation) finish() {
	v.reruns()
	v.setModes()
	for i := range v.Rows {
		r := &v.Rows[i]
		r.MakespanErr = finite(r.fid.Err())
	}
	v.speedups()
	all := v.included(func(*ValidatedRow) bool { return true })
	v.Total = fidelity.Summarize(all, v.Options)
	v.Experiments = nil
	for _, name := range v.distinct(func(r *ValidatedRow) string { return r.Experiment }) {
		sec := Section{Name: name, Summary: fidelity.Summarize(v.included(func(r *ValidatedRow) bool { return r.Experiment == name }), v.Options)}
		inExp := func(r *ValidatedRow) bool { return r.Experiment == name }
		for _, w := range v.distinctWhere(inExp, func(r *ValidatedRow) string { return r.Workload }) {
			rows := v.included(func(r *ValidatedRow) bool { return r.Experiment == name && r.Workload == w })
			sec.Workloads = append(sec.Workloads, Section{Name: w, Summary: fidelity.Summarize(rows, v.Options)})
		}
		v.Experiments = append(v.Experiments, sec)
	}
}

// reruns pairs each row with the same row measured by another source.
func (v *Validation) reruns() {
	by := map[string][]int{}
	for i := range v.Rows {
		by[v.Rows[i].identity] = append(by[v.Rows[i].identity], i)
	}
	for i := range v.Rows {
		r := &v.Rows[i]
		if r.Excluded {
			continue
		}
		for _, j := range by[r.identity] {
			o := &v.Rows[j]
			if o.source != r.source && !o.Excluded && o.GPUMakespan > 0 {
				m := o.GPUMakespan
				r.Rerun, r.fid.Rerun = &m, m
				break
			}
		}
	}
}

// speedups fills each row's GPU and simulated speedup over its group's
// baseline, and the error between them.
func (v *Validation) speedups() {
	base := map[string]*ValidatedRow{}
	for i := range v.Rows {
		if r := &v.Rows[i]; r.Baseline && !r.Excluded {
			base[r.fid.Group] = r
		}
	}
	for i := range v.Rows {
		r := &v.Rows[i]
		b := base[r.fid.Group]
		if b == nil || r.Excluded {
			continue
		}
		if r.GPUMakespan > 0 && b.GPUMakespan > 0 {
			r.GPUSpeedup = finite(round(b.GPUMakespan/r.GPUMakespan, 4))
		}
		if r.SimMakespan > 0 && b.SimMakespan > 0 {
			r.SimSpeedup = finite(round(b.SimMakespan/r.SimMakespan, 4))
		}
		if !r.Baseline && r.GPUSpeedup != nil && r.SimSpeedup != nil {
			r.SpeedupErr = finite((*r.SimSpeedup - *r.GPUSpeedup) / *r.GPUSpeedup * 100)
		}
	}
}

func (v *Validation) included(keep func(*ValidatedRow) bool) []fidelity.Row {
	var out []fidelity.Row
	for i := range v.Rows {
		if r := &v.Rows[i]; !r.Excluded && keep(r) {
			out = append(out, r.fid)
		}
	}
	return out
}

func (v *Validation) distinct(key func(*ValidatedRow) string) []string {
	return v.distinctWhere(func(*ValidatedRow) bool { return true }, key)
}

func (v *Validation) distinctWhere(keep func(*ValidatedRow) bool, key func(*ValidatedRow) string) []string {
	seen := map[string]bool{}
	var out []string
	for i := range v.Rows {
		if r := &v.Rows[i]; keep(r) && !seen[key(r)] {
			seen[key(r)] = true
			out = append(out, key(r))
		}
	}
	return out
}

// finite is x, or nil for NaN and infinities.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
