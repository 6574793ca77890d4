package main

import (
	"encoding/json"
	"fmt"

	"github.com/gpusched/gpusched/experiments"
)

// The formats before results schema 2, frozen as they were written: the
// generic runner's (gpusched run and experiments/acs, kesco, autograph:
// experiments.Results without the schema 2 fields), experiments/set's and
// experiments/cusync's.

type setResults struct {
	Experiment  string   `json:"experiment"`
	Source      string   `json:"source"`
	Seed        int64    `json:"seed"`
	Repetitions int      `json:"repetitions"`
	Rows        []setRow `json:"rows"`
}

type setRow struct {
	Workload    string             `json:"workload"`
	Family      string             `json:"family"`
	Jobs        int                `json:"jobs"`
	Unit        string             `json:"unit"`
	UnitsPerJob float64            `json:"units_per_job"`
	Scheduler   string             `json:"scheduler"`
	Kind        string             `json:"kind"`
	Desc        string             `json:"desc"`
	Device      string             `json:"device"`
	DeviceName  string             `json:"device_name"`
	MakespansNS []int64            `json:"makespans_ns"`
	Metrics     map[string]float64 `json:"metrics"`
	Races       *int               `json:"races,omitempty"`
	Outputs     string             `json:"outputs"`
	Errors      []string           `json:"errors,omitempty"`
	Interleaved bool               `json:"interleaved,omitempty"`
}

type cusyncResults struct {
	Experiment  string           `json:"experiment"`
	Source      string           `json:"source"`
	Seed        int64            `json:"seed"`
	Repetitions int              `json:"repetitions"`
	Warmup      int              `json:"warmup"`
	Rows        []cusyncRow      `json:"rows"`
	Deadlocks   []cusyncDeadlock `json:"deadlocks,omitempty"`
}

type cusyncRow struct {
	Workload    string             `json:"workload"`
	Family      string             `json:"family"`
	Program     string             `json:"program"`
	Scheduler   string             `json:"scheduler"`
	Desc        string             `json:"desc"`
	Device      string             `json:"device"`
	DeviceName  string             `json:"device_name"`
	Waves       [2]float64         `json:"waves"`
	Choices     []string           `json:"choices,omitempty"`
	MakespansNS []int64            `json:"makespans_ns"`
	Interleaved bool               `json:"interleaved,omitempty"`
	Stats       map[string]float64 `json:"stats,omitempty"`
	Races       *int               `json:"races,omitempty"`
	Outputs     string             `json:"outputs"`
	OutputsSHA  string             `json:"outputs_sha256,omitempty"`
	Errors      []string           `json:"errors,omitempty"`
}

type cusyncDeadlock struct {
	Device     string `json:"device"`
	Pair       string `json:"pair"`
	WaitKernel bool   `json:"wait_kernel"`
	Result     string `json:"result"`
}

// legacy is a decoded file of any earlier format, as rows of schema 2
// without their matrix positions.
type legacy struct {
	format      string // "generic", "set" or "cusync"
	experiment  string
	description string
	source      string
	seed        int64
	repetitions int
	rows        []experiments.Row
	probes      []experiments.Probe
}

// decodeLegacy tells the format apart by its rows' fields and decodes it
// strictly.
func decodeLegacy(data []byte) (*legacy, error) {
	var shape struct {
		SchemaVersion *int              `json:"schema_version"`
		TotalRows     *int              `json:"total_rows"`
		Rows          []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(data, &shape); err != nil {
		return nil, err
	}
	if shape.SchemaVersion != nil {
		return nil, fmt.Errorf("already schema %d", *shape.SchemaVersion)
	}
	var probe map[string]json.RawMessage
	if len(shape.Rows) > 0 {
		if err := json.Unmarshal(shape.Rows[0], &probe); err != nil {
			return nil, err
		}
	}
	switch {
	case shape.TotalRows != nil:
		return decodeGeneric(data)
	case probe["units_per_job"] != nil:
		return decodeSet(data)
	case probe["waves"] != nil:
		return decodeCusync(data)
	}
	return nil, fmt.Errorf("not a results file of any earlier gpusched format")
}

func decodeGeneric(data []byte) (*legacy, error) {
	var r experiments.Results
	if err := strictJSON(data, &r); err != nil {
		return nil, err
	}
	for i := range r.Rows {
		r.Rows[i].Utilization = nil
	}
	return &legacy{format: "generic", experiment: r.Experiment, description: r.Description, source: r.Source,
		seed: r.Seed, repetitions: r.Repetitions, rows: r.Rows}, nil
}

func decodeSet(data []byte) (*legacy, error) {
	var r setResults
	if err := strictJSON(data, &r); err != nil {
		return nil, err
	}
	l := &legacy{format: "set", experiment: r.Experiment, source: r.Source, seed: r.Seed, repetitions: r.Repetitions}
	for _, o := range r.Rows {
		l.rows = append(l.rows, experiments.Row{Workload: o.Workload, Family: o.Family, Scheduler: o.Scheduler, Kind: o.Kind,
			SchedulerDesc: o.Desc, Device: o.Device, DeviceName: o.DeviceName, MakespansNS: o.MakespansNS,
			Interleaved: o.Interleaved, Throughput: &experiments.Throughput{Jobs: o.Jobs, Unit: o.Unit, UnitsPerJob: o.UnitsPerJob},
			SchedulerStats: o.Metrics, Races: o.Races, Outputs: o.Outputs, Errors: o.Errors})
	}
	return l, nil
}

func decodeCusync(data []byte) (*legacy, error) {
	var r cusyncResults
	if err := strictJSON(data, &r); err != nil {
		return nil, err
	}
	l := &legacy{format: "cusync", experiment: r.Experiment, source: r.Source, seed: r.Seed, repetitions: r.Repetitions}
	for _, o := range r.Rows {
		row := experiments.Row{Workload: o.Workload, Family: o.Family, Program: o.Program, Scheduler: o.Scheduler,
			SchedulerDesc: o.Desc, Device: o.Device, DeviceName: o.DeviceName, MakespansNS: o.MakespansNS,
			Interleaved: o.Interleaved, SchedulerStats: o.Stats, Choices: o.Choices, Races: o.Races,
			Outputs: o.Outputs, OutputsSHA256: o.OutputsSHA, Errors: o.Errors}
		if o.Waves != [2]float64{} {
			row.Facts = map[string]float64{"producer_waves": o.Waves[0], "consumer_waves": o.Waves[1]}
		}
		l.rows = append(l.rows, row)
	}
	for _, d := range r.Deadlocks {
		l.probes = append(l.probes, experiments.Probe{Name: d.Pair, Device: d.Device,
			Params: map[string]string{"wait_kernel": fmt.Sprint(d.WaitKernel)}, Result: d.Result})
	}
	return l, nil
}
