package experiments

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// RunOptions control a run beyond what the experiment file says.
type RunOptions struct {
	// Sweep varies parameters; every point runs the whole matrix.
	Sweep []SweepParam
	// Shard runs one shard of the matrix (Count 0: all of it).
	Shard Shard
	// Paper, if set, is the paper whose hooks the run uses (gpusched
	// paper NAME run); nil for gpusched run.
	Paper *Paper
	// Workers bounds how many simulator rows run at once (0: GOMAXPROCS).
	// Rows on a GPU always run one at a time, after the simulator rows, so
	// that nothing else competes for the host while they are timed.
	Workers int
	// Table receives the results table, a row at a time as rows complete
	// (in matrix order). Nil: no table.
	Table io.Writer
	// Progress receives a progress bar (for a terminal). Nil: none.
	Progress io.Writer
	// TimelineDir, if set, receives a Chrome trace of the last measured
	// repetition of every row whose device records traces.
	TimelineDir string
	// DropSeries leaves the utilization series out of the rows: the
	// papers' committed results would be megabytes with them.
	DropSeries bool
	// JournalDir, if set, is where each row is saved as it completes
	// (JournalFile), so that an interrupted run loses no finished row;
	// the caller removes the journal (RemoveJournal) once the results are
	// written. Resume keeps the rows a journal there already holds for the
	// same experiment and shard instead of running them again (a GPU
	// group runs again unless every row of it is done, since its rows are
	// measured together).
	JournalDir string
	Resume     bool
	// OnRow, if set, receives every row as it completes (in completion
	// order, one at a time). An error stops nothing; Run returns the
	// first.
	OnRow func(row *Row) error
	// HostProbe, if set, times the host's launch cost on the GPU before
	// the first GPU row and after the last (Provenance.Host); the
	// simulator's rows never run it.
	HostProbe HostProbe

	done map[int]Row // rows kept from the journal, by index
}

// Run runs every row of e (and its sweep) and returns the results, rows in
// matrix order whatever order they completed in. A row that fails records
// its error and the others go on; Run's own error is for failures that
// stop everything (a bad sweep, an unwritable timeline directory) or the
// first error of OnRow.
func Run(e *Experiment, opt RunOptions) (res *Results, err error) {
	jobs, total, err := plan(e, opt.Sweep, opt.Shard)
	if err != nil {
		return nil, err
	}
	runner := ""
	if opt.Paper != nil {
		runner = opt.Paper.Name
	}
	res, err = newResults(e, opt.Sweep, runner, total, jobs)
	if err != nil {
		return nil, err
	}
	if opt.Shard.Count > 1 {
		s := opt.Shard
		res.Shard = &s
	}
	if opt.JournalDir != "" {
		j, done, err := OpenJournal(opt.JournalDir, res, opt.Resume)
		if err != nil {
			return nil, err
		}
		opt.done = done
		onRow := opt.OnRow
		opt.OnRow = func(row *Row) error {
			if onRow != nil {
				if err := onRow(row); err != nil {
					return err
				}
			}
			return j.Add(row)
		}
		defer func() {
			if cerr := j.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	var sink timelineSink
	if opt.TimelineDir != "" {
		if err := os.MkdirAll(opt.TimelineDir, 0o755); err != nil {
			return nil, err
		}
		names := timelineNames(jobs)
		sink = func(row *Row, data []byte) error {
			return WriteFile(filepath.Join(opt.TimelineDir, names[row.Index]), data)
		}
	}
	for _, j := range jobs {
		j.paper = opt.Paper
	}
	rows, host, err := runJobs(jobs, opt, sink)
	res.Rows = rows
	if host != nil {
		res.Provenance[0].Host = host
	}
	res.ComputeSpeedups()
	if opt.Paper != nil {
		if perr := opt.Paper.probe(e, res); perr != nil && err == nil {
			err = perr
		}
	}
	return res, err
}

// runJobs runs the jobs not already done, simulator rows first and in
// parallel, then GPU rows, and collects their rows in matrix order, with
// the GPU host's probe where GPU rows ran and opt has a probe.
func runJobs(jobs []*job, opt RunOptions, sink timelineSink) ([]Row, *Host, error) {
	rows := make([]Row, len(jobs))
	done := make(chan int, len(jobs))
	var simJobs, gpuJobs []int
	for i, j := range jobs {
		if row, ok := opt.done[j.index]; ok && !IsCUDA(j.device) {
			rows[i] = row
			done <- i
			continue
		}
		if IsCUDA(j.device) {
			gpuJobs = append(gpuJobs, i)
		} else {
			simJobs = append(simJobs, i)
		}
	}
	gpuJobs = skipDoneGroups(jobs, gpuJobs, opt.done, rows, done)
	var host *Host
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		runSimJobs(jobs, simJobs, opt.Workers, rows, sink, done)
		// Then GPU rows, one at a time on one opened device.
		if len(gpuJobs) > 0 {
			host = runGPURows(jobs, gpuJobs, rows, sink, done, opt.HostProbe)
		}
	}()
	out := newPrinter(opt, jobs)
	var firstErr error
	for range jobs {
		i := <-done
		if opt.DropSeries {
			rows[i].Utilization = nil
		}
		out.complete(i, rows)
		if opt.OnRow != nil && firstErr == nil {
			if _, resumed := opt.done[jobs[i].index]; !resumed {
				firstErr = opt.OnRow(&rows[i])
			}
		}
	}
	out.finish()
	<-finished // the probe after the last GPU row
	if firstErr == nil {
		firstErr = out.err
	}
	return rows, host, firstErr
}

// skipDoneGroups keeps the GPU groups whose every row is in done (rows of
// an interrupted run) and returns the jobs of the others.
func skipDoneGroups(jobs []*job, idx []int, done map[int]Row, rows []Row, ch chan<- int) []int {
	complete := map[int]bool{}
	for _, i := range idx {
		g := jobs[i].group
		_, ok := done[jobs[i].index]
		if c, seen := complete[g]; !seen || c {
			complete[g] = ok
		}
	}
	var left []int
	for _, i := range idx {
		if complete[jobs[i].group] {
			rows[i] = done[jobs[i].index]
			ch <- i
			continue
		}
		left = append(left, i)
	}
	return left
}

// runSimJobs runs simulator rows in parallel: each row has its own
// simulator, and the simulator is deterministic, so the order rows finish
// in changes nothing in the results.
func runSimJobs(jobs []*job, idx []int, workers int, rows []Row, sink timelineSink, done chan<- int) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// The rows of a group share one program: building it (an RL
	// workload's physics on the host, a model's graph) can cost more CPU
	// than simulating the row.
	groups := map[int]*lazyProgram{}
	for _, i := range idx {
		j := jobs[i]
		if j.shared == nil && groups[j.group] == nil {
			groups[j.group] = &lazyProgram{}
		}
		j.lazy = groups[j.group]
	}
	queue := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers && w < len(idx); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				rows[i] = runSimRow(jobs[i], sink)
				done <- i
			}
		}()
	}
	for _, i := range idx {
		queue <- i
	}
	close(queue)
	wg.Wait()
}

// newResults is the results of e (with sweep, by runner) before any row
// ran: what ran, the digest, and provenance (a GPU's only if a job runs on
// one).
func newResults(e *Experiment, sweep []SweepParam, runner string, total int, jobs []*job) (*Results, error) {
	resolved, err := Resolve(e, sweep, runner)
	if err != nil {
		return nil, err
	}
	gpu := false
	for _, j := range jobs {
		gpu = gpu || IsCUDA(j.device)
	}
	source := e.file
	if e.Source != "" {
		source = filepath.Base(e.Source)
	}
	return &Results{SchemaVersion: ResultsSchema, Experiment: e.Name, Description: e.Description, Source: source,
		Digest: resolved.Digest(), Resolved: resolved, Provenance: []Provenance{provenance(gpu)},
		Seed: e.Seed, Repetitions: e.Repetitions, Baseline: e.Baseline, Sweep: sweep, TotalRows: total}, nil
}

// newRow fills a row's identity from its job.
func (j *job) newRow() Row {
	row := Row{Index: j.index, Group: j.group, Point: j.point, Workload: j.workload.Name, Family: j.workload.Family,
		Scheduler: j.sched.Name, Kind: j.sched.Kind, Baseline: j.sched.Name == j.exp.Baseline && j.exp.Baseline != "",
		Device: j.device}
	var err error
	if row.WorkloadParams, err = ResolvedWorkloadParams(j.workload.Family, paramsNode(&j.workload.Params)); err != nil {
		row.Errors = append(row.Errors, fmt.Sprintf("workload parameters: %v", err))
	}
	if row.SchedulerParams, err = ResolvedSchedulerParams(j.sched.Kind, paramsNode(&j.sched.Params)); err != nil {
		row.Errors = append(row.Errors, fmt.Sprintf("scheduler parameters: %v", err))
	}
	return row
}

// warmup is the row's unmeasured repetitions: the file's, else the
// paper's default on a GPU, else 1 on a GPU (first-launch costs) and 0 on
// the simulator (every run is identical).
func (j *job) warmup() int {
	switch {
	case j.exp.Warmup != nil:
		return *j.exp.Warmup
	case !IsCUDA(j.device):
		return 0
	case j.paper != nil && j.paper.GPUWarmup > 0:
		return j.paper.GPUWarmup
	}
	return 1
}

// built is a job's program and its throughput unit (nil: none).
type built struct {
	prog *workloads.Program
	tp   *Throughput
}

// program builds the row's workload, with its throughput unit where the
// family is one of jobs.
func (j *job) program() (*workloads.Program, *Throughput, error) {
	if j.shared != nil {
		return j.shared.prog, j.shared.tp, nil
	}
	if l := j.lazy; l != nil {
		l.once.Do(func() { l.b.prog, l.b.tp, l.err = j.build() })
		return l.b.prog, l.b.tp, l.err
	}
	return j.build()
}

// build makes the job's program.
func (j *job) build() (*workloads.Program, *Throughput, error) {
	params := paramsNode(&j.workload.Params)
	if isPipelineFamily(j.workload.Family) {
		w, err := PipelineWorkload(j.workload.Family, params, j.exp.Seed)
		if err != nil {
			return nil, nil, fmt.Errorf("workload %s: %w", j.workload.Family, err)
		}
		return w.Program, &Throughput{Jobs: w.Jobs, Unit: w.Unit, UnitsPerJob: w.UnitsPerJob}, nil
	}
	p, err := NewWorkload(j.workload.Family, params, j.exp.Seed)
	return p, nil, err
}

func isPipelineFamily(name string) bool {
	for _, f := range pipelineFamilies {
		if f.name == name {
			return true
		}
	}
	return false
}

func (j *job) scheduler() (sched.Scheduler, error) {
	return NewScheduler(j.sched.Kind, paramsNode(&j.sched.Params))
}

// timelineSink receives a row's timeline (Chrome trace event JSON).
type timelineSink func(row *Row, data []byte) error

func runSimRow(j *job, sink timelineSink) Row {
	dev, err := openSim(j.device, false)
	if err != nil {
		row := j.newRow()
		row.Errors = append(row.Errors, err.Error())
		return row
	}
	row := j.execute(dev, nil, sink)
	if err := dev.Close(); err != nil {
		row.Errors = append(row.Errors, fmt.Sprintf("close %s: %v", j.device, err))
	}
	return row
}

// runGPURows measures GPU rows one at a time on one opened device. The
// rows of one workload (at one sweep point) are measured interleaved: each
// round runs one repetition of every row, in an order shuffled afresh each
// round (roundOrder), so that drift over the run (clocks, temperature, the
// host's other load) falls on every scheduler alike and repetition i of a
// row pairs with repetition i of its baseline (Row.PairedSpeedup). With
// probe, the host's launch cost is timed before the first row and after
// the last (a few ms each) and returned; nil without.
func runGPURows(jobs []*job, idx []int, rows []Row, sink timelineSink, done chan<- int, probe HostProbe) *Host {
	dev, err := OpenCUDA()
	if err != nil {
		for _, i := range idx {
			rows[i] = jobs[i].newRow()
			rows[i].Errors = []string{fmt.Sprintf("open %s: %v", jobs[i].device, err)}
			done <- i
		}
		return nil
	}
	// Rows are reported done as they finish; a failure to close the
	// device after the last can only be reported on stderr's side: the
	// rows were measured and checked.
	defer func() {
		if err := dev.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "gpusched: close %s: %v\n", CUDADevice, err) //nolint:errcheck // best effort on stderr
		}
	}()
	return measureGPURows(dev, jobs, idx, rows, sink, done, probe)
}

// measureGPURows is runGPURows on an opened device.
func measureGPURows(dev device.Device, jobs []*job, idx []int, rows []Row, sink timelineSink, done chan<- int, probe HostProbe) *Host {
	if probe == nil {
		runInterleaved(dev, jobs, idx, rows, sink, done, func(j *job) *reference { return serialReference(dev, j) })
		return nil
	}
	host := probeHost(dev, probe)
	// Rows are passed on as they finish but the last, held back until the
	// probe after it has run, so that nothing else (its table line, its
	// journal entry) runs beside the probe.
	inner, last := make(chan int), make(chan int, 1)
	go func() {
		for n := 1; n <= len(idx); n++ {
			if i := <-inner; n < len(idx) {
				done <- i
			} else {
				last <- i
			}
		}
	}()
	runInterleaved(dev, jobs, idx, rows, sink, inner, func(j *job) *reference { return serialReference(dev, j) })
	i := <-last
	host.finishHostProbe(dev, probe)
	done <- i
	return host
}

// runInterleaved measures rows idx on dev, group by group, as runGPURows
// describes; refOf gives the outputs a group's rows are compared with
// (nil: none).
func runInterleaved(dev device.Device, jobs []*job, idx []int, rows []Row, sink timelineSink, done chan<- int, refOf func(*job) *reference) {
	refs := map[string]*reference{}
	for len(idx) > 0 {
		// The next group: the rows of one workload at one point and
		// device (the matrix puts them next to each other).
		n := 1
		for n < len(idx) && jobs[idx[n]].group == jobs[idx[0]].group {
			n++
		}
		group := idx[:n]
		idx = idx[n:]
		j0 := jobs[group[0]]
		// One program for the group's rows and its reference: a program
		// makes its inputs once (a large model's weights take seconds).
		if prog, tp, err := j0.program(); err == nil {
			for _, i := range group {
				jobs[i].shared = &built{prog, tp}
			}
		}
		rk := pointString(j0.point) + "\x00" + j0.workload.Name
		ref, ok := refs[rk]
		if !ok {
			ref = refOf(j0)
			refs[rk] = ref
		}
		runs := make([]*rowRun, len(group))
		most := 0
		for k, i := range group {
			runs[k] = jobs[i].start(dev, ref, sink)
			most = max(most, runs[k].reps)
		}
		for rep := 0; rep < most; rep++ {
			for _, k := range roundOrder(len(runs), j0.exp.Seed, j0.group, rep) {
				if r := runs[k]; rep < r.reps {
					r.repetition(rep)
				}
			}
		}
		for k, i := range group {
			rows[i] = runs[k].finish()
			rows[i].Interleaved = len(group) > 1
			done <- i
		}
	}
}

// roundOrder is the order in which round round of group group runs its n
// rows: a permutation drawn from the experiment's seed, the group and the
// round, so the same file runs in the same order. Shuffled, not rotated:
// rotating by one keeps every row behind the same row in every round, so
// whatever a row inherits from the one before it (clocks and temperature
// after a heavy schedule, the host's and the device's allocator state, a
// collection it started) would fall on it alike in every round, a bias no
// paired interval shows.
func roundOrder(n int, seed int64, group, round int) []int {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(group)<<32|uint64(round)))
	return rng.Perm(n)
}
