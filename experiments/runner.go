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
	return Row{Index: j.index, Group: j.group, Point: j.point, Workload: j.workload.Name, Family: j.workload.Family,
		Scheduler: j.sched.Name, Kind: j.sched.Kind, Baseline: j.sched.Name == j.exp.Baseline && j.exp.Baseline != "",
		Device: j.device}
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
	refs := map[string]*reference{}
	for _, i := range idx {
		j := jobs[i]
		key := pointString(j.point) + "\x00" + j.workload.Name
		ref, ok := refs[key]
		if !ok {
			ref = serialReference(dev, j)
			refs[key] = ref
		}
		rows[i] = j.execute(dev, ref, sink)
		done <- i
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
}

// runOnce runs prog under s on dev: bind, prepare, synchronize, time the
// scheduler's Run between two synchronizations, read the outputs (if
// wanted), clean up.
func runOnce(dev device.Device, prog *workloads.Program, s sched.Scheduler, outputs bool) (once, error) {
	var r once
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
		if err := h.Synchronize(); err != nil {
			return err
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

// execute runs a row's repetitions on dev. ref is the serial schedule's
// outputs on a device that computes (nil on the simulator, which moves no
// data). sink, if not nil, receives the last repetition's timeline.
func (j *job) execute(dev device.Device, ref *reference, sink timelineSink) Row {
	row := j.newRow()
	row.DeviceName = dev.Info().Name
	row.Warmup = j.warmup()
	fail := func(format string, a ...any) Row {
		row.Errors = append(row.Errors, fmt.Sprintf(format, a...))
		return row
	}
	prog, err := j.program()
	if err != nil {
		return fail("%v", err)
	}
	if s, err := j.scheduler(); err == nil {
		row.SchedulerDesc = s.Name()
	}
	computes := ref != nil
	switch {
	case !computes:
		row.Outputs = "not compared (the simulator moves no data)"
	case ref.err != nil:
		row.Outputs = "not compared (no serial reference)"
		row.Errors = append(row.Errors, ref.err.Error())
	default:
		row.Outputs = "equal to serial"
	}
	obs, _ := dev.(device.Observer)
	tracer, _ := dev.(device.Tracer)
	trace := tracer != nil && sink != nil
	var makespans []float64
	reps := j.warmup() + j.exp.Repetitions
	for rep := 0; rep < reps; rep++ {
		measured := rep >= row.Warmup
		last := rep == reps-1
		if trace {
			tracer.EnableTrace(last)
		}
		s, err := j.scheduler()
		if err != nil {
			return fail("%v", err)
		}
		r, err := runOnce(dev, prog, s, computes)
		if err != nil {
			return fail("repetition %d: %v", rep, err)
		}
		if computes && ref.err == nil {
			// Outputs bit-identical to the serial reference pass the
			// workload's check exactly when the reference did (checked
			// once, in serialReference); only different outputs are
			// checked again, to say how far off they are.
			if msg := compareOutputs(ref.outputs, r.outputs); msg != "" {
				row.Outputs = "DIFFERENT from serial"
				row.Errors = append(row.Errors, msg)
				if prog.Check != nil {
					if err := prog.Check(r.outputs); err != nil {
						row.Errors = append(row.Errors, fmt.Sprintf("workload check: %v", err))
					}
				}
			}
		}
		if !measured {
			continue
		}
		if last {
			row.SchedulerStats = schedulerStats(s)
		}
		row.MakespansNS = append(row.MakespansNS, r.makespan.Nanoseconds())
		makespans = append(makespans, float64(r.makespan.Nanoseconds())/1e3)
		if obs != nil {
			j.observe(&row, obs, r, last)
		}
	}
	sum := Summarize(makespans)
	sum = Summary{N: sum.N, Median: round(sum.Median, 3), Mean: round(sum.Mean, 3), Std: round(sum.Std, 3),
		Min: round(sum.Min, 3), Max: round(sum.Max, 3), CI95Lo: round(sum.CI95Lo, 3), CI95Hi: round(sum.CI95Hi, 3)}
	row.Makespan = &sum
	if trace {
		var buf bytes.Buffer
		if err := tracer.WriteTrace(&buf); err != nil {
			row.Errors = append(row.Errors, fmt.Sprintf("timeline: %v", err))
		} else if err := sink(&row, buf.Bytes()); err != nil {
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
	k := st.Kernels
	row.Kernels = &k
	util, series := windowUtilization(st, r.t0, r.t1, utilBins)
	util = round(util, 4)
	row.SMUtil = &util
	row.Utilization = series
}

// schedulerStats reads the counters a scheduler reports, by either of the
// conventions strategies use, dropping values JSON cannot carry.
func schedulerStats(s sched.Scheduler) map[string]float64 {
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
