package imported

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/stats"
)

// table is every row by (workload, scheduler), for one device.
type table map[[2]string]*experiments.Row

// row is the row if it ran without errors.
func (t table) row(w, s string) (*experiments.Row, bool) {
	r := t[[2]string{w, s}]
	if r == nil || r.Makespan == nil || len(r.Errors) > 0 {
		return nil, false
	}
	return r, true
}

func (t table) median(w, s string) (float64, bool) {
	r, ok := t.row(w, s)
	if !ok {
		return 0, false
	}
	return r.Makespan.Median, true
}

// data is the results the page reads: the GPU's rows and the simulator's,
// and each one's run of the graph-replay traces at overhead_ns 0, all of
// one run of the replay (one kernel version, with or without profiler_ns).
type data struct {
	run                  replayRun
	gpu, gpu0, sim, sim0 table
	// pred is the simulator's rows committed before the GPU ran (a
	// prediction, at estimated overhead_ns and floor_ns); sim is the same
	// unless sets named -measured (the simulator at the GPU's probe values)
	// were given: then sim holds those and measured is set.
	pred                                        table
	measured                                    bool
	schedulers                                  []string
	gpuName, simName, overhead, floor, profiler string
}

// versionOf is the replay kernel's version an experiment ran: 9 for those
// named -v9 (imported-v9, imported-graph-v9-sim-measured, ...), 8 for -v8,
// down to 2 for -v2, else 1.
func versionOf(experiment string) int {
	for v := 9; v > 1; v-- {
		if strings.Contains(experiment, fmt.Sprintf("-v%d", v)) {
			return v
		}
	}
	return 1
}

// replayRun is which rows one run of the replay holds: the replay
// kernel's version, and whether its workloads took profiler_ns off the
// recorded durations (the experiment's rows name it in their params).
type replayRun struct {
	version  int
	profiler bool
}

// The runs the page shows, newest first: the ninth, eighth, seventh,
// sixth, fifth, fourth and third kernels (with profiler_ns), the second
// with and without it, and the first kernel.
var (
	runNinth    = replayRun{version: 9, profiler: true}
	runEighth   = replayRun{version: 8, profiler: true}
	runSeventh  = replayRun{version: 7, profiler: true}
	runSixth    = replayRun{version: 6, profiler: true}
	runFifth    = replayRun{version: 5, profiler: true}
	runFourth   = replayRun{version: 4, profiler: true}
	runThird    = replayRun{version: 3, profiler: true}
	runProfiler = replayRun{version: 2, profiler: true}
	runSecond   = replayRun{version: 2}
	runFirst    = replayRun{version: 1}
)

// runOf is the run a set's rows belong to.
func runOf(r *experiments.Results) replayRun {
	run := replayRun{version: versionOf(r.Experiment)}
	for i := range r.Rows {
		if tookProfiler(&r.Rows[i]) {
			run.profiler = true
		}
		// The first kernel's simulator rows made again after profiler_ns
		// existed (imported-sim.json) are of other programs than its GPU
		// rows (the importer changed since): a run of their own, not shown.
		if _, named := r.Rows[i].WorkloadParams["profiler_ns"]; named && run.version == 1 {
			run.version = 0
		}
	}
	return run
}

// tookProfiler says whether a row's workload took profiler_ns off its
// durations: rows made before the parameter existed do not name it, rows
// made since name 0 where it took nothing off.
func tookProfiler(row *experiments.Row) bool {
	p := row.WorkloadParams["profiler_ns"]
	return p != "" && p != "0"
}

// newData reads the sets of one run, the held-out models' left out.
func newData(in *experiments.ReportInput, run replayRun) *data {
	return newDataOf(in, run, func(r *experiments.Results) bool { return runOf(r) == run && !isHeldout(r.Experiment) })
}

// newDataOf reads the sets keep keeps, as those of run.
func newDataOf(in *experiments.ReportInput, run replayRun, keep func(*experiments.Results) bool) *data {
	d := &data{run: run, gpu: table{}, gpu0: table{}, sim: table{}, sim0: table{}}
	measured, measuredOn := table{}, ""
	for _, r := range in.Sets {
		if !keep(r) {
			continue
		}
		o0 := strings.HasSuffix(r.Experiment, o0Suffix)
		if strings.HasSuffix(r.Experiment, measuredSuffix) {
			for i := range r.Rows {
				measured[[2]string{r.Rows[i].Workload, r.Rows[i].Scheduler}] = &r.Rows[i]
				measuredOn = r.Rows[i].Device
			}
			continue
		}
		for _, p := range r.Provenance {
			if p.GPU != nil && !o0 {
				d.gpuName = fmt.Sprintf("%s, driver %s, CUDA %s, %s", p.GPU.Name, p.GPU.Driver, p.GPU.CUDA, p.Date)
			}
		}
		for i := range r.Rows {
			d.add(&r.Rows[i], o0)
		}
	}
	d.pred = d.sim
	if len(measured) > 0 {
		d.sim, d.measured = measured, true
		if d.simName == "" {
			d.simName = measuredOn
		}
	}
	return d
}

// add files one row by its device and whether it ran at overhead_ns 0.
func (d *data) add(row *experiments.Row, o0 bool) {
	k := [2]string{row.Workload, row.Scheduler}
	switch {
	case row.Device == experiments.CUDADevice && o0:
		d.gpu0[k] = row
	case row.Device == experiments.CUDADevice:
		d.gpu[k] = row
		if d.gpuName == "" {
			d.gpuName = row.DeviceName
		}
		d.overhead, d.floor = row.WorkloadParams["overhead_ns"], row.WorkloadParams["floor_ns"]
	case o0:
		d.sim0[k] = row
	default:
		d.sim[k], d.simName = row, row.Device
	}
	if tookProfiler(row) {
		d.profiler = row.WorkloadParams["profiler_ns"]
	}
	if !o0 && !contains(d.schedulers, row.Scheduler) {
		d.schedulers = append(d.schedulers, row.Scheduler)
	}
}

// empty says whether no set of this version was given.
func (d *data) empty() bool { return len(d.gpu)+len(d.sim) == 0 }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kernels is the number of kernels a workload launches, as the
// simulator counted them or a GPU graph held them.
func (d *data) kernels(w string) (int64, bool) {
	for _, s := range d.schedulers {
		if r, ok := d.sim.row(w, s); ok && r.Kernels != nil {
			return *r.Kernels, true
		}
	}
	if r, ok := d.gpu.row(w, "serial+graph"); ok && r.SchedulerStats["graph_nodes"] > 0 {
		return int64(r.SchedulerStats["graph_nodes"]), true
	}
	return 0, false
}

// interval is an estimate with its bounds and their joint confidence.
type interval struct {
	med, lo, hi, conf float64
}

func (v interval) String() string {
	return fmt.Sprintf("%.3fx [%.3f-%.3f]", v.med, v.lo, v.hi)
}

func usOf(r *experiments.Row) []float64 {
	out := make([]float64, len(r.MakespansNS))
	for i, v := range r.MakespansNS {
		out[i] = float64(v) / 1e3
	}
	return out
}

// overPyTorch is PyTorch's graph replay over a row: the ratio of the two
// medians, bounded by each median's order-statistic bounds (PyTorch's
// samples and the row's repetitions are independent), with the joint
// confidence of the two (Bonferroni).
func overPyTorch(g *stat, r *experiments.Row) (interval, bool) {
	if g == nil || len(g.Samples) < 2 || len(r.MakespansNS) < 2 {
		return interval{}, false
	}
	pLo, pHi, pConf := stats.MedianBounds(g.Samples)
	rLo, rHi, rConf := stats.MedianBounds(usOf(r))
	return interval{med: experiments.Summarize(g.Samples).Median / r.Makespan.Median, lo: pLo / rHi, hi: pHi / rLo,
		conf: 1 - (1 - pConf) - (1 - rConf)}, true
}

// paired is a row's speedup over the base row of its group, round by
// round (the GPU's rows ran interleaved): the median of the per-round
// ratios with their sign-test bounds. One repetition (the simulator, which
// is deterministic) gives the ratio alone.
func paired(base, r *experiments.Row) (interval, bool) {
	n := len(r.MakespansNS)
	if n == 0 || len(base.MakespansNS) != n {
		return interval{}, false
	}
	ratios := make([]float64, n)
	for i := range ratios {
		if r.MakespansNS[i] <= 0 {
			return interval{}, false
		}
		ratios[i] = float64(base.MakespansNS[i]) / float64(r.MakespansNS[i])
	}
	med := experiments.Summarize(ratios).Median
	if n == 1 {
		return interval{med: med, lo: med, hi: med, conf: 1}, true
	}
	lo, hi, conf := stats.MedianBounds(ratios)
	return interval{med: med, lo: lo, hi: hi, conf: conf}, true
}

// pct is a relative difference, signed.
func pct(a, ref float64) string {
	if ref == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(a-ref)/ref)
}

// within10 says whether a is within 10% of ref, as the targets do.
func within10(a, ref float64) bool { return math.Abs(a-ref) <= 0.1*ref }

// verdict is a difference and whether it meets the 10% target.
func verdict(a, ref float64) string {
	if within10(a, ref) {
		return pct(a, ref) + " met"
	}
	return pct(a, ref) + " **not met**"
}

func us(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}
