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
	"github.com/gpusched/gpusched/workloads/jobs"
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
	// Interleaved is set where the repetitions ran in rounds with the
	// other schedulers of the workload (a GPU; see runInterleaved), not
	// one after another; files written before it existed read as false.
	Interleaved bool `json:"interleaved,omitempty"`
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
	// A unit of work is one simulator row (each has its own deterministic
	// simulator, so they run in parallel), or on a GPU every row of one
	// workload, measured together in interleaved rounds (runGroup).
	var tasks []task
	var units [][]int
	for _, d := range e.Devices {
		for _, w := range e.Workloads {
			var group []int
			for _, s := range e.Schedulers {
				if experiments.IsCUDA(d) {
					group = append(group, len(tasks))
				} else {
					units = append(units, []int{len(tasks)})
				}
				tasks = append(tasks, task{e, d, w, s})
			}
			if len(group) > 0 {
				units = append(units, group)
			}
		}
	}
	rows := make([]Row, len(tasks))
	// Simulator rows in parallel; GPU rows one workload at a time on one
	// device, after them.
	experiments.RunTasks(len(units), workers, func(u int) string { return tasks[units[u][0]].device }, func(u int, dev device.Device, err error) {
		idx := units[u]
		switch {
		case err != nil:
			for _, i := range idx {
				rows[i] = tasks[i].failed(err)
			}
		case experiments.IsCUDA(tasks[idx[0]].device):
			ts := make([]task, len(idx))
			for k, i := range idx {
				ts[k] = tasks[i]
			}
			for k, r := range runGroup(ts, dev) {
				rows[idx[k]] = r
			}
		default:
			rows[idx[0]] = tasks[idx[0]].run(dev)
		}
		for _, i := range idx {
			fmt.Fprintf(os.Stderr, "%s\n", rows[i].line())
		}
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

func (t *task) buildWorkload() (*jobs.Workload, error) {
	return experiments.PipelineWorkload(t.workload.Family, paramsNode(&t.workload.Params), t.exp.Seed)
}

// run measures one row: warm-up repetitions, then the measured ones, each
// on a freshly bound program with a fresh scheduler.
func (t *task) run(dev device.Device) Row {
	w, err := t.buildWorkload()
	if err != nil {
		return t.failed(err)
	}
	r := t.newRowRun(dev, w)
	obs, _ := dev.(device.Observer)
	for rep := 0; rep < r.warmup+t.exp.Repetitions; rep++ {
		if !r.repetition(dev, rep, obs) {
			break
		}
	}
	return r.finish()
}

// runGroup measures every row of tasks, which share one device and one
// workload. On a device that reports races (the simulator) each row runs
// alone, as run does: races are reported per device, and a simulator is
// deterministic, so the order cannot matter. Otherwise (a GPU) the rows are
// measured interleaved (runInterleaved).
func runGroup(tasks []task, dev device.Device) []Row {
	rows := make([]Row, len(tasks))
	if _, ok := dev.(device.Observer); ok {
		for i := range tasks {
			rows[i] = tasks[i].run(dev)
		}
		return rows
	}
	return runInterleaved(tasks, dev)
}

// runInterleaved measures the rows of tasks (one device, one workload) in
// rounds: round r runs one repetition of every scheduler, each still a
// fresh scheduler on a freshly bound program, prepared, timed, checked and
// cleaned up as run does, in an order that rotates by one per round, so
// that none always runs first or after the same neighbour and drift over
// the run (clocks, temperature, the host's other load) falls on every
// scheduler alike. The first rounds are the warm-up repetitions. A row that
// fails is dropped from the later rounds; the others go on.
func runInterleaved(tasks []task, dev device.Device) []Row {
	rows := make([]Row, len(tasks))
	w, err := tasks[0].buildWorkload()
	if err != nil {
		for i := range tasks {
			rows[i] = tasks[i].failed(err)
		}
		return rows
	}
	runs := make([]*rowRun, len(tasks))
	rounds := 0
	for i := range tasks {
		runs[i] = tasks[i].newRowRun(dev, w)
		runs[i].row.Interleaved = true
		rounds = max(rounds, runs[i].warmup+tasks[i].exp.Repetitions)
	}
	obs, _ := dev.(device.Observer)
	for round := 0; round < rounds; round++ {
		for k := range runs {
			r := runs[(round+k)%len(runs)]
			if r.done || round >= r.warmup+r.t.exp.Repetitions {
				continue
			}
			if !r.repetition(dev, round, obs) {
				r.done = true
			}
		}
	}
	for i, r := range runs {
		rows[i] = r.finish()
	}
	return rows
}

// rowRun is a row being measured, one repetition at a time.
type rowRun struct {
	t        *task
	w        *jobs.Workload
	row      Row
	computes bool
	warmup   int
	reps     []measured
	done     bool // failed: row holds the error alone
}

type measured struct {
	ns      int64
	metrics map[string]float64
}

func (t *task) newRowRun(dev device.Device, w *jobs.Workload) *rowRun {
	r := &rowRun{t: t, w: w, row: t.row(), computes: experiments.IsCUDA(t.device)}
	r.row.DeviceName = dev.Info().Name
	r.row.Jobs, r.row.Unit, r.row.UnitsPerJob = w.Jobs, w.Unit, w.UnitsPerJob
	r.row.Outputs = "not checked (the simulator moves no data)"
	if r.computes {
		r.row.Outputs = "every job equal to its CPU reference"
		r.warmup = 1
	}
	if t.exp.Warmup != nil {
		r.warmup = *t.exp.Warmup
	}
	return r
}

// repetition runs repetition rep of the row on dev: a fresh scheduler, the
// program bound afresh, Prepare, on a device that computes the output host
// buffers poisoned (poisonOutputs), the timed Run, the outputs checked,
// Cleanup. It returns false if the row failed (r.row then holds only the
// error).
func (r *rowRun) repetition(dev device.Device, rep int, obs device.Observer) bool {
	t, w, row := r.t, r.w, &r.row
	s, err := experiments.NewScheduler(t.sched.Kind, paramsNode(&t.sched.Params))
	if err != nil {
		r.row, r.done = t.failed(err), true
		return false
	}
	row.Desc = s.Name()
	ms, ok := s.(metricser)
	if !ok {
		r.row, r.done = t.failed(fmt.Errorf("scheduler %s reports no Metrics()", s.Name())), true
		return false
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
		if err := sched.Warm(h, s, inst); err != nil {
			return err
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		if r.computes {
			poisonOutputs(inst)
		}
		t0 := h.Now()
		if err := s.Run(h, inst); err != nil {
			return err
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		ns = (h.Now() - t0).Nanoseconds()
		if r.computes {
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
		r.row, r.done = t.failed(fmt.Errorf("repetition %d: %w", rep, err)), true
		return false
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
	if rep >= r.warmup {
		row.MakespansNS = append(row.MakespansNS, ns)
		r.reps = append(r.reps, measured{ns, ms.Metrics()})
	}
	return true
}

// finish is the measured row: its Metrics are those of the repetition with
// the median makespan.
func (r *rowRun) finish() Row {
	if r.done {
		return r.row
	}
	if len(r.reps) > 0 {
		reps := append([]measured(nil), r.reps...)
		sort.SliceStable(reps, func(i, j int) bool { return reps[i].ns < reps[j].ns })
		r.row.Metrics = reps[len(reps)/2].metrics
	}
	return r.row
}

// poisonOutputs fills every output host buffer of inst with 0xFF bytes (a
// NaN in every float32, -1 in every int32), after Prepare and before the
// timed Run, so that the check after Run passes only on outputs this Run
// wrote: not on a previous repetition's (host buffers are allocated afresh
// per binding, but pinned memory may come back with old contents) nor on
// those a scheduler's Prepare computed (SET's warm: true launches its
// execs, and so its captured jobs, before Run). The device must be idle.
func poisonOutputs(inst *workloads.Instance) {
	for i, hs := range inst.Prog.Host {
		if hs.Output {
			data := inst.Host[i].Data
			for k := range data {
				data[k] = 0xFF
			}
		}
	}
}

// paramsNode is a spec's parameters, or nil when it has none.
func paramsNode(n *yaml.Node) *yaml.Node {
	if n == nil || n.Kind == 0 {
		return nil
	}
	return n
}
