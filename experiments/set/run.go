package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Results is what one run of an experiment file measured: the JSON file
// report reads.
type Results struct {
	Experiment  string `json:"experiment"`
	Source      string `json:"source"`
	Seed        int64  `json:"seed"`
	Repetitions int    `json:"repetitions"`
	Rows        []Row  `json:"rows"`
}

// Row is one scheduler on one workload on one device.
type Row struct {
	Workload    string  `json:"workload"`
	Family      string  `json:"family"`
	Jobs        int     `json:"jobs"`
	Unit        string  `json:"unit"`
	UnitsPerJob float64 `json:"units_per_job"`
	Scheduler   string  `json:"scheduler"` // entry name
	Kind        string  `json:"kind"`
	Desc        string  `json:"desc"` // the scheduler's Name()
	Device      string  `json:"device"`
	DeviceName  string  `json:"device_name"`
	// MakespansNS are the measured repetitions' times from the synchronized
	// start of Run to the synchronized end, in nanoseconds.
	MakespansNS []int64 `json:"makespans_ns"`
	// Metrics are the scheduler's Metrics() of the measured repetition
	// with the median makespan.
	Metrics map[string]float64 `json:"metrics"`
	Races   *int               `json:"races,omitempty"`
	Outputs string             `json:"outputs"`
	Errors  []string           `json:"errors,omitempty"`
}

// metricser is a scheduler that reports what it measured in its last Run.
type metricser interface {
	Metrics() map[string]float64
}

type task struct {
	exp      *experiments.Experiment
	device   string
	workload experiments.WorkloadSpec
	sched    experiments.SchedulerSpec
}

func runCmd(config, out string, workers int) error {
	e, err := experiments.LoadExperiment(config)
	if err != nil {
		return err
	}
	var tasks []task
	for _, d := range e.Devices {
		for _, w := range e.Workloads {
			for _, s := range e.Schedulers {
				tasks = append(tasks, task{e, d, w, s})
			}
		}
	}
	rows := make([]Row, len(tasks))
	// Simulator rows in parallel (each has its own deterministic
	// simulator); GPU rows one at a time on one device, after them.
	experiments.RunTasks(len(tasks), workers, func(i int) string { return tasks[i].device }, func(i int, dev device.Device, err error) {
		if err != nil {
			rows[i] = tasks[i].failed(err)
		} else {
			rows[i] = tasks[i].run(dev)
		}
		fmt.Fprintf(os.Stderr, "%s\n", rows[i].line())
	})
	res := Results{Experiment: e.Name, Source: config, Seed: e.Seed, Repetitions: e.Repetitions, Rows: rows}
	data, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if out == "" {
		_, err = os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

func (r *Row) line() string {
	if len(r.Errors) > 0 {
		return fmt.Sprintf("%-28s %-16s %-10s ERROR %s", r.Workload, r.Scheduler, r.Device, strings.Join(r.Errors, "; "))
	}
	return fmt.Sprintf("%-28s %-16s %-10s %10.0f jobs/s  share %.3f", r.Workload, r.Scheduler, r.Device,
		r.Metrics["jobs_per_s"], r.Metrics["schedule_share"])
}

func (t *task) row() Row {
	return Row{Workload: t.workload.Name, Family: t.workload.Family, Scheduler: t.sched.Name, Kind: t.sched.Kind, Device: t.device}
}

func (t *task) failed(err error) Row {
	r := t.row()
	r.Errors = append(r.Errors, err.Error())
	return r
}

// run measures one row: warm-up repetitions, then the measured ones, each
// on a freshly bound program with a fresh scheduler.
func (t *task) run(dev device.Device) Row {
	row := t.row()
	row.DeviceName = dev.Info().Name
	w, err := experiments.PipelineWorkload(t.workload.Family, paramsNode(&t.workload.Params), t.exp.Seed)
	if err != nil {
		return t.failed(err)
	}
	row.Jobs, row.Unit, row.UnitsPerJob = w.Jobs, w.Unit, w.UnitsPerJob
	computes := experiments.IsCUDA(t.device)
	row.Outputs = "not checked (the simulator moves no data)"
	if computes {
		row.Outputs = "every job equal to its CPU reference"
	}
	warmup := 0
	if computes {
		warmup = 1
	}
	if t.exp.Warmup != nil {
		warmup = *t.exp.Warmup
	}
	type measured struct {
		ns      int64
		metrics map[string]float64
	}
	var reps []measured
	obs, _ := dev.(device.Observer)
	for rep := 0; rep < warmup+t.exp.Repetitions; rep++ {
		s, err := experiments.NewScheduler(t.sched.Kind, paramsNode(&t.sched.Params))
		if err != nil {
			return t.failed(err)
		}
		row.Desc = s.Name()
		ms, ok := s.(metricser)
		if !ok {
			return t.failed(fmt.Errorf("scheduler %s reports no Metrics()", s.Name()))
		}
		var ns int64
		var checkErr error
		err = dev.Run(func(h device.Host) error {
			inst, err := workloads.Bind(h, w.Program)
			if err != nil {
				return err
			}
			defer inst.Release(h)
			prep, _ := s.(sched.Preparer)
			if prep != nil {
				if err := prep.Prepare(h, inst); err != nil {
					return fmt.Errorf("prepare: %w", err)
				}
			}
			if err := h.Synchronize(); err != nil {
				return err
			}
			t0 := h.Now()
			if err := s.Run(h, inst); err != nil {
				return err
			}
			if err := h.Synchronize(); err != nil {
				return err
			}
			ns = (h.Now() - t0).Nanoseconds()
			if computes {
				out, err := inst.Outputs(h)
				if err != nil {
					return fmt.Errorf("read outputs: %w", err)
				}
				checkErr = w.Program.Check(out)
			}
			if prep != nil {
				return prep.Cleanup(h)
			}
			return nil
		})
		if err != nil {
			return t.failed(fmt.Errorf("repetition %d: %w", rep, err))
		}
		if checkErr != nil {
			row.Outputs = "WRONG"
			row.Errors = append(row.Errors, fmt.Sprintf("repetition %d: %v", rep, checkErr))
		}
		if obs != nil {
			n := len(obs.Races())
			if row.Races == nil || n > *row.Races {
				row.Races = &n
			}
		}
		if rep >= warmup {
			row.MakespansNS = append(row.MakespansNS, ns)
			reps = append(reps, measured{ns, ms.Metrics()})
		}
	}
	if len(reps) > 0 {
		sort.SliceStable(reps, func(i, j int) bool { return reps[i].ns < reps[j].ns })
		row.Metrics = reps[len(reps)/2].metrics
	}
	return row
}

// paramsNode is a spec's parameters, or nil when it has none.
func paramsNode(n *yaml.Node) *yaml.Node {
	if n == nil || n.Kind == 0 {
		return nil
	}
	return n
}
