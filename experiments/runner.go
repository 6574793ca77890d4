package experiments

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

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
}

// Run runs every row of e (and its sweep) and returns the results, rows in
// matrix order whatever order they completed in. A row that fails records
// its error and the others go on; Run's own error is for failures that
// stop everything (a bad sweep, an unwritable timeline directory).
func Run(e *Experiment, opt RunOptions) (*Results, error) {
	jobs, total, err := plan(e, opt.Sweep, opt.Shard)
	if err != nil {
		return nil, err
	}
	if opt.TimelineDir != "" {
		if err := os.MkdirAll(opt.TimelineDir, 0o755); err != nil {
			return nil, err
		}
	}
	res := &Results{Experiment: e.Name, Description: e.Description, Source: filepath.Base(e.Source),
		Seed: e.Seed, Repetitions: e.Repetitions, Baseline: e.Baseline, Sweep: opt.Sweep, TotalRows: total}
	if opt.Shard.Count > 1 {
		s := opt.Shard
		res.Shard = &s
	}
	var sink timelineSink
	if opt.TimelineDir != "" {
		sink = func(row *Row, data []byte) error {
			return os.WriteFile(filepath.Join(opt.TimelineDir, TimelineFile(row)), data, 0o644)
		}
	}
	rows := make([]Row, len(jobs))
	done := make(chan int, len(jobs))

	var simJobs, gpuJobs []int
	for i, j := range jobs {
		if IsCUDA(j.device) {
			gpuJobs = append(gpuJobs, i)
		} else {
			simJobs = append(simJobs, i)
		}
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	go func() {
		// Simulator rows in parallel: each row has its own simulator, and
		// the simulator is deterministic, so the order rows finish in
		// changes nothing in the results.
		queue := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < workers && w < len(simJobs); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range queue {
					rows[i] = runSimRow(jobs[i], sink)
					done <- i
				}
			}()
		}
		for _, i := range simJobs {
			queue <- i
		}
		close(queue)
		wg.Wait()
		// Then GPU rows, one at a time on one opened device.
		if len(gpuJobs) > 0 {
			runGPURows(jobs, gpuJobs, rows, sink, done)
		}
	}()

	out := newPrinter(opt, jobs)
	for range jobs {
		i := <-done
		out.complete(i, rows)
	}
	out.finish()
	res.Rows = rows
	res.computeSpeedups()
	return res, nil
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

func (j *job) warmup() int {
	if j.exp.Warmup != nil {
		return *j.exp.Warmup
	}
	if IsCUDA(j.device) {
		return 1
	}
	return 0
}

func (j *job) program() (*workloads.Program, error) {
	if j.shared != nil {
		return j.shared, nil
	}
	return NewWorkload(j.workload.Family, paramsNode(&j.workload.Params), j.exp.Seed)
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
	defer dev.Close()
	return j.execute(dev, nil, sink)
}

// reference is the serial schedule's outputs for one workload on a GPU.
type reference struct {
	outputs map[string][]byte
	err     error
}

// runGPURows measures GPU rows one at a time on one opened device. The
// rows of one workload (at one sweep point) are measured interleaved: each
// round runs one repetition of every row, in an order rotating by one per
// round, so that drift over the run (clocks, temperature, the host's other
// load) falls on every scheduler alike and repetition i of a row pairs with
// repetition i of its baseline (Row.PairedSpeedup).
func runGPURows(jobs []*job, idx []int, rows []Row, sink timelineSink, done chan<- int) {
	dev, err := OpenCUDA()
	if err != nil {
		for _, i := range idx {
			rows[i] = jobs[i].newRow()
			rows[i].Errors = []string{fmt.Sprintf("open %s: %v", jobs[i].device, err)}
			done <- i
		}
		return
	}
	defer dev.Close()
	runInterleaved(dev, jobs, idx, rows, sink, done, func(j *job) *reference { return serialReference(dev, j) })
}

// runInterleaved measures rows idx on dev, group by group, as runGPURows
// describes; refOf gives the outputs a group's rows are compared with
// (nil: none).
func runInterleaved(dev device.Device, jobs []*job, idx []int, rows []Row, sink timelineSink, done chan<- int, refOf func(*job) *reference) {
	refs := map[string]*reference{}
	for len(idx) > 0 {
		// The next group: the rows of one workload at one point (the
		// matrix puts them next to each other).
		key := func(i int) string {
			return pointString(jobs[i].point) + "\x00" + jobs[i].workload.Name + "\x00" + jobs[i].device
		}
		n := 1
		for n < len(idx) && key(idx[n]) == key(idx[0]) {
			n++
		}
		group := idx[:n]
		idx = idx[n:]
		j0 := jobs[group[0]]
		// One program for the group's rows and its reference: a program
		// makes its inputs once (a large model's weights take seconds).
		if prog, err := j0.program(); err == nil {
			for _, i := range group {
				jobs[i].shared = prog
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
			for k := range runs {
				r := runs[(rep+k)%len(runs)]
				if rep < r.reps {
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

// serialReference runs the workload once under the serial scheduler and
// keeps its outputs, checked against the program's CPU reference if it has
// one.
func serialReference(dev device.Device, j *job) *reference {
	prog, err := j.program()
	if err != nil {
		return &reference{err: err}
	}
	s, err := NewScheduler("serial", nil)
	if err != nil {
		return &reference{err: fmt.Errorf("no serial scheduler to compare outputs with: %w", err)}
	}
	r, err := runOnce(dev, prog, s, true)
	if err != nil {
		return &reference{err: fmt.Errorf("serial reference run: %w", err)}
	}
	if prog.Check != nil {
		if err := prog.Check(r.outputs); err != nil {
			return &reference{outputs: r.outputs, err: fmt.Errorf("serial reference fails the workload's own check: %w", err)}
		}
	}
	return &reference{outputs: r.outputs}
}

// once is what one repetition measured.
type once struct {
	makespan, t0, t1 time.Duration
	outputs          map[string][]byte
	// kernels0 is the device's kernel count when the timed run began.
	kernels0 int64
}

// runOnce runs prog under s on dev: bind, prepare, the warm run
// (sched.Warm), synchronize, time the scheduler's Run between two
// synchronizations, read the outputs (if wanted), clean up.
func runOnce(dev device.Device, prog *workloads.Program, s sched.Scheduler, outputs bool) (once, error) {
	var r once
	// The simulator counts kernels as they run, so its count before the
	// timed run leaves Prepare's and the warm run's kernels out of the row.
	obs, _ := dev.(device.Observer)
	err := dev.Run(func(h device.Host) error {
		cleaned := false
		inst, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer inst.Release(h)
		prep, _ := s.(sched.Preparer)
		if prep != nil {
			if err := prep.Prepare(h, inst); err != nil {
				return fmt.Errorf("%s: prepare: %w", s.Name(), err)
			}
			defer func() {
				if !cleaned {
					prep.Cleanup(h) // after a failure, which is the error to report
				}
			}()
		}
		if err := sched.Warm(h, s, inst); err != nil {
			return err
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		if obs != nil {
			r.kernels0 = obs.Stats().Kernels
		}
		r.t0 = h.Now()
		if err := s.Run(h, inst); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		r.t1 = h.Now()
		r.makespan = r.t1 - r.t0
		if outputs {
			if r.outputs, err = inst.Outputs(h); err != nil {
				return fmt.Errorf("read outputs: %w", err)
			}
		}
		if prep != nil {
			cleaned = true
			if err := prep.Cleanup(h); err != nil {
				return fmt.Errorf("%s: cleanup: %w", s.Name(), err)
			}
		}
		return nil
	})
	return r, err
}

// execute runs a row's repetitions on dev, back to back. ref is the
// serial schedule's outputs on a device that computes (nil on the
// simulator, which moves no data). sink, if not nil, receives the last
// repetition's timeline.
func (j *job) execute(dev device.Device, ref *reference, sink timelineSink) Row {
	r := j.start(dev, ref, sink)
	for rep := 0; rep < r.reps && !r.stopped; rep++ {
		r.repetition(rep)
	}
	return r.finish()
}

// rowRun is a row being measured, one repetition at a time, so that the
// repetitions of several rows can interleave (runGPURows).
type rowRun struct {
	j         *job
	dev       device.Device
	ref       *reference
	sink      timelineSink
	row       Row
	prog      *workloads.Program
	computes  bool
	obs       device.Observer
	tracer    device.Tracer
	trace     bool
	reps      int
	makespans []float64
	// stopped: a repetition failed (or the row could not start); the row
	// is final as it stands.
	stopped bool
}

func (j *job) start(dev device.Device, ref *reference, sink timelineSink) *rowRun {
	r := &rowRun{j: j, dev: dev, ref: ref, sink: sink, row: j.newRow(), reps: j.warmup() + j.exp.Repetitions}
	r.row.DeviceName = dev.Info().Name
	r.row.Warmup = j.warmup()
	prog, err := j.program()
	if err != nil {
		r.fail("%v", err)
		return r
	}
	r.prog = prog
	if s, err := j.scheduler(); err == nil {
		r.row.SchedulerDesc = s.Name()
	}
	r.computes = ref != nil
	switch {
	case !r.computes:
		r.row.Outputs = "not compared (the simulator moves no data)"
	case ref.err != nil:
		r.row.Outputs = "not compared (no serial reference)"
		r.row.Errors = append(r.row.Errors, ref.err.Error())
	default:
		r.row.Outputs = "equal to serial"
	}
	r.obs, _ = dev.(device.Observer)
	r.tracer, _ = dev.(device.Tracer)
	r.trace = r.tracer != nil && sink != nil
	return r
}

func (r *rowRun) fail(format string, a ...any) {
	r.row.Errors = append(r.row.Errors, fmt.Sprintf(format, a...))
	r.stopped = true
}

// repetition runs repetition rep (warm-up ones are not recorded).
func (r *rowRun) repetition(rep int) {
	if r.stopped {
		return
	}
	row := &r.row
	measured := rep >= row.Warmup
	last := rep == r.reps-1
	if r.trace {
		r.tracer.EnableTrace(last)
	}
	s, err := r.j.scheduler()
	if err != nil {
		r.fail("%v", err)
		return
	}
	o, err := runOnce(r.dev, r.prog, s, r.computes)
	if err != nil {
		r.fail("repetition %d: %v", rep, err)
		return
	}
	if r.computes && r.ref.err == nil {
		// Outputs bit-identical to the serial reference pass the
		// workload's check exactly when the reference did (checked
		// once, in serialReference); only different outputs are
		// checked again, to say how far off they are.
		if msg := compareOutputs(r.ref.outputs, o.outputs); msg != "" {
			row.Outputs = "DIFFERENT from serial"
			row.Errors = append(row.Errors, msg)
			if r.prog.Check != nil {
				if err := r.prog.Check(o.outputs); err != nil {
					row.Errors = append(row.Errors, fmt.Sprintf("workload check: %v", err))
				}
			}
		}
	}
	if !measured {
		return
	}
	if last {
		row.SchedulerStats = SchedulerStats(s)
	}
	row.MakespansNS = append(row.MakespansNS, o.makespan.Nanoseconds())
	r.makespans = append(r.makespans, float64(o.makespan.Nanoseconds())/1e3)
	if r.obs != nil {
		r.j.observe(row, r.obs, o, last)
	}
}

// finish summarizes the measured repetitions (a stopped row stays as it
// stood when it failed) and writes the timeline.
func (r *rowRun) finish() Row {
	if r.stopped {
		return r.row
	}
	row := r.row
	sum := Summarize(r.makespans)
	sum = Summary{N: sum.N, Median: round(sum.Median, 3), Mean: round(sum.Mean, 3), Std: round(sum.Std, 3),
		Min: round(sum.Min, 3), Max: round(sum.Max, 3), CI95Lo: round(sum.CI95Lo, 3), CI95Hi: round(sum.CI95Hi, 3)}
	row.Makespan = &sum
	if r.trace {
		var buf bytes.Buffer
		if err := r.tracer.WriteTrace(&buf); err != nil {
			row.Errors = append(row.Errors, fmt.Sprintf("timeline: %v", err))
		} else if err := r.sink(&row, buf.Bytes()); err != nil {
			row.Errors = append(row.Errors, fmt.Sprintf("timeline: %v", err))
		}
	}
	row.Errors = dedupe(row.Errors)
	return row
}

// observe records what a self-observing device saw in one measured
// repetition: races (the most over repetitions), kernels, and for the last
// repetition the SM utilization over the timed region.
func (j *job) observe(row *Row, obs device.Observer, r once, last bool) {
	st := obs.Stats()
	races := obs.Races()
	if row.Races == nil || len(races) > *row.Races {
		n := len(races)
		row.Races = &n
		row.RaceExamples = nil
		for k := 0; k < len(races) && k < 3; k++ {
			row.RaceExamples = append(row.RaceExamples, formatRace(races[k]))
		}
	}
	if !last {
		return
	}
	k := st.Kernels - r.kernels0
	row.Kernels = &k
	util, series := windowUtilization(st, r.t0, r.t1, utilBins)
	util = round(util, 4)
	row.SMUtil = &util
	row.Utilization = series
}

// SchedulerStats reads the counters a scheduler reports, by either of the
// conventions strategies use (Stats or Metrics), dropping values JSON
// cannot carry; nil if there are none.
func SchedulerStats(s sched.Scheduler) map[string]float64 {
	var m map[string]float64
	switch r := s.(type) {
	case interface{ Stats() map[string]float64 }:
		m = r.Stats()
	case interface{ Metrics() map[string]float64 }:
		m = r.Metrics()
	}
	out := map[string]float64{}
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

const utilBins = 200

// windowUtilization averages the device's utilization samples over the
// timed region [t0, t1) and resamples them into bins of equal width. With no
// samples it falls back to the device's own mean over its busy time.
func windowUtilization(st device.Stats, t0, t1 time.Duration, bins int) (float64, []UtilPoint) {
	span := t1 - t0
	if len(st.Utilization) == 0 || span <= 0 {
		return st.SMUtilization, nil
	}
	width := float64(span) / float64(bins)
	warps := make([]float64, bins)
	busy := make([]float64, bins)
	var total float64
	for _, s := range st.Utilization {
		lo, hi := float64(s.T-t0), float64(s.T+s.Width-t0)
		if hi <= 0 || lo >= float64(span) {
			continue
		}
		lo, hi = max(lo, 0), min(hi, float64(span))
		total += s.Warps * (hi - lo)
		for b := int(lo / width); b < bins && float64(b)*width < hi; b++ {
			blo, bhi := float64(b)*width, float64(b+1)*width
			ov := min(hi, bhi) - max(lo, blo)
			if ov > 0 {
				warps[b] += s.Warps * ov / width
				busy[b] += s.Busy * ov / width
			}
		}
	}
	series := make([]UtilPoint, bins)
	for b := range series {
		series[b] = UtilPoint{T: round(float64(b)*width/1e3, 3), Warps: round(warps[b], 4), Busy: round(busy[b], 4)}
	}
	return total / float64(span), series
}

func formatRace(r device.Race) string {
	return fmt.Sprintf("%s (stream %d, %v-%v) and %s (stream %d, %v-%v) overlap on [%#x, %#x)",
		r.A.Name, r.A.Stream, r.A.Start, r.A.End, r.B.Name, r.B.Stream, r.B.Start, r.B.End, r.Lo, r.Hi)
}

// compareOutputs describes the first difference between two output sets,
// or returns "".
func compareOutputs(want, got map[string][]byte) string {
	names := sortedKeys(want)
	for _, n := range names {
		g, ok := got[n]
		if !ok {
			return fmt.Sprintf("output %s missing", n)
		}
		w := want[n]
		if len(g) != len(w) {
			return fmt.Sprintf("output %s has %d bytes, serial's has %d", n, len(g), len(w))
		}
		if !bytes.Equal(g, w) {
			diff := 0
			first := -1
			for i := range w {
				if w[i] != g[i] {
					diff++
					if first < 0 {
						first = i
					}
				}
			}
			return fmt.Sprintf("output %s differs from serial's in %d of %d bytes, first at byte %d", n, diff, len(w), first)
		}
	}
	for _, n := range sortedKeys(got) {
		if _, ok := want[n]; !ok {
			return fmt.Sprintf("output %s not produced by serial", n)
		}
	}
	return ""
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// TimelineFile is the file name of a row's timeline.
func TimelineFile(row *Row) string {
	name := row.Workload + "__" + row.Scheduler + "__" + row.Device
	if len(row.Point) > 0 {
		name += "__" + pointString(row.Point)
	}
	return sanitize(name) + ".json"
}
