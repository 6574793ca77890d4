package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/experiments"
)

// fileExperiment is an experiment file as any version of gpusched wrote
// it, decoded without the registry (an old file's parameters need not
// build today).
type fileExperiment struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Seed        int64       `yaml:"seed"`
	Repetitions int         `yaml:"repetitions"`
	Warmup      *int        `yaml:"warmup"`
	Baseline    string      `yaml:"baseline"`
	Workloads   []fileEntry `yaml:"workloads"`
	Schedulers  []fileEntry `yaml:"schedulers"`
	Devices     []string    `yaml:"devices"`
	Outputs     yaml.Node   `yaml:"outputs"`
}

type fileEntry struct {
	Name   string    `yaml:"name"`
	Family string    `yaml:"family"`
	Kind   string    `yaml:"kind"`
	Params yaml.Node `yaml:"params"`
}

// matrix is the resolved experiment with each entry's position.
type matrix struct {
	format                string
	res                   *experiments.Resolved
	workload, sched, dev  map[string]int
	workloadP, schedulerP []json.RawMessage
}

func convert(old *legacy, cfgData []byte, runner, from string) (*experiments.Results, error) {
	var cfg fileExperiment
	dec := yaml.NewDecoder(bytes.NewReader(cfgData))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	if cfg.Name != old.experiment || cfg.Seed != old.seed {
		return nil, fmt.Errorf("%s is experiment %q seed %d, the results %q seed %d", from, cfg.Name, cfg.Seed, old.experiment, old.seed)
	}
	m, err := resolve(&cfg, old, runner)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	r := &experiments.Results{SchemaVersion: experiments.ResultsSchema, Experiment: old.experiment, Description: cfg.Description,
		Source: filepath.Base(old.source), Digest: m.res.Digest(), Resolved: m.res, Seed: old.seed, Repetitions: old.repetitions,
		Baseline: cfg.Baseline, TotalRows: len(m.res.Workloads) * len(m.res.Devices) * len(m.res.Schedulers), Probes: old.probes}
	r.Rows = make([]experiments.Row, r.TotalRows)
	placed := make([]bool, r.TotalRows)
	for _, row := range old.rows {
		i, err := m.place(&row, runner)
		if err != nil {
			return nil, err
		}
		if placed[i] {
			return nil, fmt.Errorf("row %s / %s / %s appears twice", row.Workload, row.Scheduler, row.Device)
		}
		placed[i] = true
		r.Rows[i] = row
	}
	for i, ok := range placed {
		if !ok {
			return nil, fmt.Errorf("the matrix's row %d has no measurement", i)
		}
	}
	if err := derive(r, old.format); err != nil {
		return nil, err
	}
	r.Provenance = []experiments.Provenance{provenanceOf(r)}
	r.Migrated = migrationNote(old, &cfg, from)
	return r, nil
}

// resolve is the file's experiment restricted to the workloads and devices
// the results hold (a split GPU campaign may not have run them all), with
// the repetitions that ran and every scheduler entry named as its rows are.
func resolve(cfg *fileExperiment, old *legacy, runner string) (*matrix, error) {
	m := &matrix{format: old.format, res: &experiments.Resolved{Runner: runner, Name: cfg.Name, Description: cfg.Description, Seed: cfg.Seed,
		Repetitions: old.repetitions, Warmup: cfg.Warmup, Baseline: cfg.Baseline},
		workload: map[string]int{}, sched: map[string]int{}, dev: map[string]int{}}
	present := func(f func(*experiments.Row) string, v string) bool {
		for i := range old.rows {
			if f(&old.rows[i]) == v {
				return true
			}
		}
		return false
	}
	for _, w := range cfg.Workloads {
		if w.Name == "" {
			w.Name = w.Family
		}
		if !present(func(r *experiments.Row) string { return r.Workload }, w.Name) {
			continue
		}
		p, err := experiments.ParamsJSON(&w.Params)
		if err != nil {
			return nil, err
		}
		m.workload[w.Name] = len(m.res.Workloads)
		m.res.Workloads = append(m.res.Workloads, experiments.ResolvedEntry{Name: w.Name, Family: w.Family, Params: p})
		m.workloadP = append(m.workloadP, p)
	}
	for _, d := range cfg.Devices {
		if present(func(r *experiments.Row) string { return r.Device }, d) {
			m.dev[d] = len(m.res.Devices)
			m.res.Devices = append(m.res.Devices, experiments.ResolvedDevice{Spec: d})
		}
	}
	names, err := schedulerNames(cfg, old)
	if err != nil {
		return nil, err
	}
	for i, s := range cfg.Schedulers {
		p, err := experiments.ParamsJSON(&s.Params)
		if err != nil {
			return nil, err
		}
		m.sched[names[i]] = i
		m.res.Schedulers = append(m.res.Schedulers, experiments.ResolvedEntry{Name: names[i], Kind: s.Kind, Params: p})
		m.schedulerP = append(m.schedulerP, p)
	}
	return m, nil
}

// schedulerNames names every scheduler entry: by its name, or where the
// file gave none (the scheduler named itself), by the rows of a group,
// which list the entries in order.
func schedulerNames(cfg *fileExperiment, old *legacy) ([]string, error) {
	var order []string
	seen := map[string]bool{}
	for i := range old.rows {
		r := &old.rows[i]
		k := r.Workload + "\x00" + r.Device
		if len(order) > 0 && !seen[k] {
			break
		}
		seen[k] = true
		order = append(order, r.Scheduler)
	}
	if len(order) != len(cfg.Schedulers) {
		return nil, fmt.Errorf("the first group of rows has %d schedulers, the file %d", len(order), len(cfg.Schedulers))
	}
	names := make([]string, len(cfg.Schedulers))
	for i, s := range cfg.Schedulers {
		names[i] = s.Name
		if names[i] == "" {
			names[i] = order[i]
		}
		if names[i] != order[i] {
			return nil, fmt.Errorf("scheduler entry %d is %q in the file, %q in the rows", i, names[i], order[i])
		}
	}
	return names, nil
}

// place gives a row its position, parameters, kind, baseline flag and
// warm-up, and returns its index.
func (m *matrix) place(row *experiments.Row, runner string) (int, error) {
	wi, ok1 := m.workload[row.Workload]
	si, ok2 := m.sched[row.Scheduler]
	di, ok3 := m.dev[row.Device]
	if !ok1 || !ok2 || !ok3 {
		return 0, fmt.Errorf("row %s / %s / %s is not in the experiment file", row.Workload, row.Scheduler, row.Device)
	}
	kind := m.res.Schedulers[si].Kind
	if row.Kind != "" && row.Kind != kind {
		return 0, fmt.Errorf("row %s / %s: kind %q, the file's %q", row.Workload, row.Scheduler, row.Kind, kind)
	}
	if fam := m.res.Workloads[wi].Family; row.Family != fam {
		return 0, fmt.Errorf("row %s: family %q, the file's %q", row.Workload, row.Family, fam)
	}
	group := wi*len(m.dev) + di
	index := group*len(m.sched) + si
	if m.format == "generic" && (row.Index != index || row.Group != group) && !stitched(row) {
		return 0, fmt.Errorf("row %s / %s / %s: index %d group %d, the file's matrix says %d and %d",
			row.Workload, row.Scheduler, row.Device, row.Index, row.Group, index, group)
	}
	row.Index, row.Group, row.Kind = index, group, kind
	row.WorkloadParams, row.SchedulerParams = scalars(m.workloadP[wi]), scalars(m.schedulerP[si])
	row.Baseline = m.res.Baseline != "" && row.Scheduler == m.res.Baseline
	warm := 0
	switch {
	case m.res.Warmup != nil:
		warm = *m.res.Warmup
	case experiments.IsCUDA(row.Device) && runner == "cusync":
		warm = 3
	case experiments.IsCUDA(row.Device):
		warm = 1
	}
	if m.format == "generic" && row.Warmup != warm {
		return 0, fmt.Errorf("row %s / %s / %s: warm-up %d recorded, %d by the file", row.Workload, row.Scheduler, row.Device, row.Warmup, warm)
	}
	row.Warmup = warm
	return index, nil
}

// stitched: a GPU row of a campaign split by workload, numbered within its
// piece (scripts/gpu/split.py), which the matrix renumbers.
func stitched(row *experiments.Row) bool { return experiments.IsCUDA(row.Device) }

// derive computes what the runner derives from the measurements: each
// row's makespan summary and speedups. For the generic format, which
// recorded them, they must come out as recorded.
func derive(r *experiments.Results, format string) error {
	recorded := make([]experiments.Row, len(r.Rows))
	copy(recorded, r.Rows)
	for i := range r.Rows {
		row := &r.Rows[i]
		if format == "generic" {
			continue // a row that stopped on an error has no summary, whatever it measured
		}
		if len(row.MakespansNS) > 0 {
			s := experiments.MakespanSummary(row.MakespansNS)
			row.Makespan = &s
		}
	}
	r.ComputeSpeedups()
	if format != "generic" {
		return nil
	}
	for i := range r.Rows {
		a, b := &recorded[i], &r.Rows[i]
		if !reflect.DeepEqual(a.Makespan, b.Makespan) || !reflect.DeepEqual(a.Speedup, b.Speedup) || !reflect.DeepEqual(a.PairedSpeedup, b.PairedSpeedup) {
			return fmt.Errorf("row %s / %s / %s: derived numbers differ from those recorded", a.Workload, a.Scheduler, a.Device)
		}
	}
	return nil
}

func provenanceOf(r *experiments.Results) experiments.Provenance {
	p := experiments.Provenance{Gpusched: "devel", Note: "converted from an earlier format; the build that ran was not recorded"}
	for _, row := range r.Rows {
		if experiments.IsCUDA(row.Device) && row.DeviceName != "" {
			p.GPU = &experiments.GPU{Name: row.DeviceName}
			p.Note += "; the GPU's driver and the date are in docs/results/gpu-runs.md"
			break
		}
	}
	return p
}

func migrationNote(old *legacy, cfg *fileExperiment, from string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "converted to results schema %d from the %s format", experiments.ResultsSchema, old.format)
	switch old.format {
	case "set":
		b.WriteString(" (experiments/set; scheduler_stats are the Metrics() of the repetition with the median makespan)")
	case "cusync":
		b.WriteString(" (experiments/cusync; scheduler_stats are the counters after every run of the scheduler, facts the waves, probes the deadlock runs)")
	}
	fmt.Fprintf(&b, "; resolved experiment from %s", from)
	if old.repetitions != cfg.Repetitions {
		fmt.Fprintf(&b, ", with %d repetitions where the file says %d (split GPU campaign)", old.repetitions, cfg.Repetitions)
	}
	if n := len(cfg.Workloads); n != countDistinct(old.rows) {
		fmt.Fprintf(&b, ", %d of its %d workloads (the others did not run)", countDistinct(old.rows), n)
	}
	b.WriteString("; rows' parameters are those the file gave, without the defaults of the day; measurements as recorded")
	return b.String()
}

func countDistinct(rows []experiments.Row) int {
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Workload] = true
	}
	return len(seen)
}

// scalars is parameters as rows record them: each (nested ones joined by
// dots) as a YAML scalar, lists as JSON. A converted row has the
// parameters its file gave, not the defaults of the others: those were the
// registry's of the day.
func scalars(raw json.RawMessage) map[string]string {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	out := map[string]string{}
	flatten(out, "", m)
	return out
}

func flatten(out map[string]string, prefix string, m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case map[string]any:
			flatten(out, prefix+k+".", x)
		case string:
			out[prefix+k] = x
		case []any:
			b, _ := json.Marshal(x)
			out[prefix+k] = string(b)
		default:
			out[prefix+k] = fmt.Sprint(x)
		}
	}
}
