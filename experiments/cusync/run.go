package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/tilesync"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// Results is what one run of an experiment file measured: the JSON file
// report reads.
type Results struct {
	Experiment  string     `json:"experiment"`
	Source      string     `json:"source"`
	Seed        int64      `json:"seed"`
	Repetitions int        `json:"repetitions"`
	Warmup      int        `json:"warmup"`
	Rows        []Row      `json:"rows"`
	Deadlocks   []Deadlock `json:"deadlocks,omitempty"`
}

// Row is one scheduler on one workload on one device.
type Row struct {
	Workload   string `json:"workload"`
	Family     string `json:"family"`
	Program    string `json:"program"`
	Scheduler  string `json:"scheduler"` // entry name
	Desc       string `json:"desc"`      // the scheduler's Name()
	Device     string `json:"device"`
	DeviceName string `json:"device_name"`
	// Waves are the producer's and consumer's wave counts on the device.
	Waves [2]float64 `json:"waves"`
	// Choices are the scheduler's per-pair choices and reasons.
	Choices []string `json:"choices,omitempty"`
	// MakespansNS are the measured runs, from the synchronized start of
	// Run to its synchronized end.
	MakespansNS []int64 `json:"makespans_ns"`
	// Interleaved says the runs were measured in rounds with the other
	// schedulers of the workload (runInterleaved): run i of every
	// scheduler belongs to round i, so runs pair with the baseline's.
	Interleaved bool `json:"interleaved,omitempty"`
	// Stats are the scheduler's own counters after its runs (tilesync
	// with phases: when each operation ended, median over the runs).
	Stats      map[string]float64 `json:"stats,omitempty"`
	Races      *int               `json:"races,omitempty"`
	Outputs    string             `json:"outputs"`
	OutputsSHA string             `json:"outputs_sha256,omitempty"`
	Errors     []string           `json:"errors,omitempty"`
}

// Deadlock is the simulator's verdict on a pair issued consumer first.
type Deadlock struct {
	Device     string `json:"device"`
	Pair       string `json:"pair"`
	WaitKernel bool   `json:"wait_kernel"`
	Result     string `json:"result"` // "completed" or the DeadlockError
}

// infoHost hands schedulers the device description (device.InfoHost).
type infoHost struct {
	device.Host
	info device.Info
}

func (h infoHost) DeviceInfo() device.Info { return h.info }

type task struct {
	exp      *experiments.Experiment
	device   string
	workload experiments.WorkloadSpec
}

func paramsNode(n *yaml.Node) *yaml.Node {
	if n == nil || n.Kind == 0 {
		return nil
	}
	return n
}

func runCmd(config, out string, workers int) error {
	e, err := experiments.LoadExperiment(config)
	if err != nil {
		return err
	}
	var tasks []task
	for _, d := range e.Devices {
		for _, w := range e.Workloads {
			tasks = append(tasks, task{e, d, w})
		}
	}
	results := make([][]Row, len(tasks))
	experiments.RunTasks(len(tasks), workers, func(i int) string { return tasks[i].device }, func(i int, dev device.Device, err error) {
		if err != nil {
			results[i] = tasks[i].failed(err)
		} else {
			results[i] = tasks[i].run(dev)
		}
		printRows(results[i])
	})
	res := Results{Experiment: e.Name, Source: config, Seed: e.Seed, Repetitions: e.Repetitions}
	for _, rs := range results {
		res.Rows = append(res.Rows, rs...)
	}
	seen := map[string]bool{}
	for _, d := range e.Devices {
		if experiments.IsCUDA(d) || seen[d] {
			continue
		}
		seen[d] = true
		dl, err := deadlocks(d)
		if err != nil {
			return err
		}
		res.Deadlocks = append(res.Deadlocks, dl...)
	}
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

func printRows(rows []Row) {
	for _, r := range rows {
		if len(r.Errors) > 0 {
			fmt.Fprintf(os.Stderr, "%-34s %-14s %-6s ERROR %s\n", r.Workload, r.Scheduler, r.Device, strings.Join(r.Errors, "; "))
			continue
		}
		fmt.Fprintf(os.Stderr, "%-34s %-14s %-6s %10.1f us  %s\n", r.Workload, r.Scheduler, r.Device, medianNS(r.MakespansNS)/1e3, strings.Join(r.Choices, "; "))
	}
}

func medianNS(v []int64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]int64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}

func (t *task) failed(err error) []Row {
	var rows []Row
	for _, s := range t.exp.Schedulers {
		rows = append(rows, Row{Workload: t.workload.Name, Family: t.workload.Family, Scheduler: s.Name, Device: t.device,
			Errors: []string{err.Error()}})
	}
	return rows
}

// run binds the workload once on dev and measures every scheduler on it.
func (t *task) run(dev device.Device) []Row {
	prog, err := experiments.NewWorkload(t.workload.Family, paramsNode(&t.workload.Params), t.exp.Seed)
	if err != nil {
		return t.failed(err)
	}
	info := dev.Info()
	var waves [2]float64
	if pairs := stagesOf(prog); len(pairs) == 2 {
		for i, s := range pairs {
			waves[i], _ = tilesync.Waves(&info, s)
		}
	}
	computes := experiments.IsCUDA(t.device)
	warmup := 0
	if computes {
		warmup = 3
	}
	if t.exp.Warmup != nil {
		warmup = *t.exp.Warmup
	}
	obs, _ := dev.(device.Observer)
	rows := make([]Row, len(t.exp.Schedulers))
	baseSHA := ""
	newRow := func(si int) Row {
		return Row{Workload: t.workload.Name, Family: t.workload.Family, Program: prog.Name, Scheduler: t.exp.Schedulers[si].Name,
			Device: t.device, DeviceName: info.Name, Waves: waves}
	}
	bound := func(f func(h device.Host, inst *workloads.Instance) error) error {
		return dev.Run(func(h0 device.Host) error {
			h := infoHost{h0, info}
			inst, err := workloads.Bind(h, prog)
			if err != nil {
				return err
			}
			defer inst.Release(h)
			return f(h, inst)
		})
	}
	if obs != nil {
		// A device that reports races reports them per run, so every
		// scheduler gets a run of its own; the simulator is
		// deterministic, so the order of the rows cannot matter.
		for si, spec := range t.exp.Schedulers {
			err := bound(func(h device.Host, inst *workloads.Instance) error {
				rows[si] = newRow(si)
				if err := t.runScheduler(h, inst, prog, spec, &rows[si], warmup, computes, &baseSHA); err != nil {
					rows[si].Errors = append(rows[si].Errors, err.Error())
				}
				return nil
			})
			if err != nil {
				return t.failed(err)
			}
			n := len(obs.Races())
			rows[si].Races = &n
		}
		return rows
	}
	// On a GPU, one binding serves every scheduler, measured interleaved.
	all := make([]int, len(t.exp.Schedulers))
	for i := range all {
		all[i] = i
	}
	err = bound(func(h device.Host, inst *workloads.Instance) error {
		if computes {
			// Every scheduler starts from NaN-poisoned outputs, so a
			// tile it never writes cannot pass on an earlier
			// scheduler's result.
			if err := repoison(h, inst); err != nil {
				return err
			}
		}
		return t.runInterleaved(h, inst, prog, all, rows, newRow, warmup, computes, &baseSHA)
	})
	if err != nil {
		return t.failed(err)
	}
	return rows
}

// repoison uploads the initial contents (NaN poison) of every output buffer again.
func repoison(h device.Host, inst *workloads.Instance) error {
	s, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return err
	}
	defer h.Destroy(s)
	for i, b := range inst.Prog.Buffers {
		if !b.Output || b.Init == nil {
			continue
		}
		m, err := h.AllocHost(b.Bytes, true)
		if err != nil {
			return err
		}
		b.Init(m.Data)
		err = h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: inst.Bufs[i], Host: m, Bytes: b.Bytes, Label: "poison " + b.Name})
		if err == nil {
			err = h.StreamSynchronize(s)
		}
		h.FreeHost(m)
		if err != nil {
			return err
		}
	}
	return nil
}

// runScheduler measures one scheduler on a bound program: warm-up and
// measured runs back to back, then its outputs are checked (see check).
// The simulator uses it; a GPU measures every scheduler interleaved (see
// runInterleaved).
func (t *task) runScheduler(h device.Host, inst *workloads.Instance, prog *workloads.Program, spec experiments.SchedulerSpec, row *Row, warmup int, computes bool, baseSHA *string) error {
	s, err := t.prepare(h, inst, spec, row)
	if err != nil {
		return err
	}
	for rep := 0; rep < warmup+t.exp.Repetitions; rep++ {
		d, err := timedRun(h, inst, s)
		if err != nil {
			s.Cleanup(h)
			return fmt.Errorf("run %d: %w", rep, err)
		}
		if rep >= warmup {
			row.MakespansNS = append(row.MakespansNS, d.Nanoseconds())
		}
	}
	row.Stats = experiments.SchedulerStats(s.Scheduler)
	row.Outputs = "not checked (the simulator moves no data)"
	if computes {
		if err := check(h, inst, prog, row, baseSHA); err != nil {
			s.Cleanup(h)
			return err
		}
	}
	return s.Cleanup(h)
}

// prepared is a scheduler ready to run on a bound program.
type prepared struct {
	sched.Scheduler
	prep sched.Preparer // nil if the scheduler needs no preparation
}

func (p prepared) Cleanup(h device.Host) error {
	if p.prep == nil {
		return nil
	}
	return p.prep.Cleanup(h)
}

// prepare makes spec's scheduler, names row after it and prepares it.
func (t *task) prepare(h device.Host, inst *workloads.Instance, spec experiments.SchedulerSpec, row *Row) (prepared, error) {
	s, err := experiments.NewScheduler(spec.Kind, paramsNode(&spec.Params))
	if err != nil {
		return prepared{}, err
	}
	row.Desc = s.Name()
	if row.Scheduler == "" {
		row.Scheduler = s.Name()
	}
	prep, _ := s.(sched.Preparer)
	if prep != nil {
		if err := prep.Prepare(h, inst); err != nil {
			return prepared{}, fmt.Errorf("prepare: %w", err)
		}
	}
	if err := sched.Warm(h, s, inst); err != nil {
		if prep != nil {
			err = errors.Join(err, prep.Cleanup(h))
		}
		return prepared{}, err
	}
	if ts, ok := s.(*tilesync.Scheduler); ok {
		row.Choices = ts.Choices()
	}
	return prepared{s, prep}, nil
}

// timedRun is one run of s from a synchronized device to its synchronized end.
func timedRun(h device.Host, inst *workloads.Instance, s sched.Scheduler) (time.Duration, error) {
	if err := h.Synchronize(); err != nil {
		return 0, err
	}
	t0 := h.Now()
	if err := s.Run(h, inst); err != nil {
		return 0, err
	}
	if err := h.Synchronize(); err != nil {
		return 0, err
	}
	return h.Now() - t0, nil
}

// runInterleaved measures the schedulers idx on one bound program on a GPU
// in rounds: every scheduler is prepared once, then each round runs every
// scheduler once, the order rotating by one per round so that none always
// runs first or after the same neighbour. Drift over the run (clocks,
// temperature, the host's other load) then falls on every scheduler alike,
// and round r of a scheduler pairs with round r of the baseline
// (PairedSpeedup). Afterwards each scheduler runs once more from
// NaN-poisoned outputs and its outputs are checked (see check).
func (t *task) runInterleaved(h device.Host, inst *workloads.Instance, prog *workloads.Program, idx []int, rows []Row, newRow func(si int) Row, warmup int, computes bool, baseSHA *string) error {
	var ready []int
	scheds := make([]prepared, len(rows))
	defer func() {
		for _, si := range ready {
			scheds[si].Cleanup(h)
		}
	}()
	for _, si := range idx {
		rows[si] = newRow(si)
		s, err := t.prepare(h, inst, t.exp.Schedulers[si], &rows[si])
		if err != nil {
			rows[si].Errors = append(rows[si].Errors, err.Error())
			continue
		}
		scheds[si] = s
		rows[si].Interleaved = true
		ready = append(ready, si)
	}
	failed := map[int]bool{}
	for round := 0; round < warmup+t.exp.Repetitions; round++ {
		for k := range ready {
			si := ready[(round+k)%len(ready)]
			if failed[si] {
				continue
			}
			d, err := timedRun(h, inst, scheds[si])
			if err != nil {
				failed[si] = true
				rows[si].Errors = append(rows[si].Errors, fmt.Sprintf("run %d: %v", round, err))
				continue
			}
			if round >= warmup {
				rows[si].MakespansNS = append(rows[si].MakespansNS, d.Nanoseconds())
			}
		}
	}
	for _, si := range ready {
		rows[si].Stats = experiments.SchedulerStats(scheds[si].Scheduler)
	}
	for _, si := range ready {
		row := &rows[si]
		if !computes {
			row.Outputs = "not checked (the device moves no data)"
			continue
		}
		if failed[si] {
			continue
		}
		if err := repoison(h, inst); err != nil {
			return err
		}
		if _, err := timedRun(h, inst, scheds[si]); err != nil {
			row.Errors = append(row.Errors, fmt.Sprintf("check run: %v", err))
			continue
		}
		if err := check(h, inst, prog, row, baseSHA); err != nil {
			row.Errors = append(row.Errors, err.Error())
		}
	}
	return nil
}

// check reads the outputs of the run just finished and compares them. The
// first scheduler checked (the baseline, stream-sync, listed first) is
// checked against the CPU reference; a later scheduler whose outputs hash
// the same is equal to them bit for bit, and one that differs is checked
// against the CPU reference itself.
func check(h device.Host, inst *workloads.Instance, prog *workloads.Program, row *Row, baseSHA *string) error {
	out, err := inst.Outputs(h)
	if err != nil {
		return fmt.Errorf("read outputs: %w", err)
	}
	sum := sha256.New()
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sum.Write([]byte(n))
		sum.Write(out[n])
	}
	row.OutputsSHA = hex.EncodeToString(sum.Sum(nil))
	switch {
	case *baseSHA != "" && row.OutputsSHA == *baseSHA:
		row.Outputs = "bit-identical to the first scheduler's (checked against the CPU reference)"
	default:
		if err := prog.Check(out); err != nil {
			row.Outputs = "WRONG"
			row.Errors = append(row.Errors, err.Error())
		} else {
			row.Outputs = "equal to the CPU reference"
			if *baseSHA != "" {
				row.Outputs += " (not bit-identical to the first scheduler's)"
			}
		}
		if *baseSHA == "" {
			*baseSHA = row.OutputsSHA
		}
	}
	return nil
}

// stagesOf is the first pair of tile stages of a program.
func stagesOf(p *workloads.Program) []tiles.Stage {
	var out []tiles.Stage
	for _, op := range p.Steps[0].Ops {
		if s, err := tiles.FromOp(&op); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// deadlocks reproduces the spinning-consumer deadlock on simulator dev:
// GPT-3's GEMM2 at T = 1024 (768 tiles > the 264 an H100 holds) issued
// before its producer, without and with the wait kernel.
func deadlocks(dev string) ([]Deadlock, error) {
	m, err := tiles.NewMLP(tiles.MLPParams{Model: "gpt3", Tokens: 1024, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
	if err != nil {
		return nil, err
	}
	pair, err := tilesync.NewPair(tilesync.RowSync, m.GEMM1, m.GEMM2)
	if err != nil {
		return nil, err
	}
	var out []Deadlock
	for _, wait := range []bool{false, true} {
		d, err := experiments.OpenDevice(dev)
		if err != nil {
			return nil, err
		}
		info := d.Info()
		err = d.Run(func(h device.Host) error { return tilesync.ConsumerFirst(h, &info, pair, wait, 50*time.Microsecond) })
		d.Close()
		res := "completed"
		var dl *device.DeadlockError
		switch {
		case errors.As(err, &dl):
			res = dl.Error()
		case err != nil:
			return nil, err
		}
		out = append(out, Deadlock{Device: dev, Pair: "gpt3 T=1024 GEMM1 -> GEMM2 (row), consumer issued first", WaitKernel: wait, Result: res})
	}
	return out, nil
}
