package experiments

import (
	"bytes"
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

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
// repetitions of several rows can interleave (runInterleaved).
type rowRun struct {
	j        *job
	dev      device.Device
	ref      *reference
	sink     timelineSink
	row      Row
	prog     *workloads.Program
	computes bool
	obs      device.Observer
	tracer   device.Tracer
	trace    bool
	reps     int
	// stats are the scheduler's counters of each measured repetition.
	stats []map[string]float64
	// stopped: a repetition failed (or the row could not start); the row
	// is final as it stands.
	stopped bool
	// timeline is the last repetition's timeline, rendered as soon as it
	// ran: in interleaved rounds the device's last timeline is, by the
	// time the row finishes, another row's.
	timeline    []byte
	timelineErr error
}

func (j *job) start(dev device.Device, ref *reference, sink timelineSink) *rowRun {
	r := &rowRun{j: j, dev: dev, ref: ref, sink: sink, row: j.newRow(), reps: j.warmup() + j.exp.Repetitions}
	info := dev.Info()
	r.row.DeviceName = info.Name
	r.row.Warmup = j.warmup()
	prog, tp, err := j.program()
	if err != nil {
		r.fail("%v", err)
		return r
	}
	r.prog = prog
	r.row.Program, r.row.Throughput = prog.Name, tp
	if j.paper != nil && j.paper.Facts != nil {
		r.row.Facts = j.paper.Facts(prog, &info)
	}
	if s, err := j.scheduler(); err == nil {
		r.row.SchedulerDesc = s.Name()
		if r.notApplicable(s, prog, dev) {
			return r
		}
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

// notApplicable stops a row of a paper that runs applicable rows only
// when s needs what prog or dev does not offer.
func (r *rowRun) notApplicable(s sched.Scheduler, prog *workloads.Program, dev device.Device) bool {
	if r.j.paper == nil || !r.j.paper.OnlyApplicable {
		return false
	}
	devOffers, err := DeviceOffers(dev)
	if err != nil {
		r.fail("%v", err)
		return true
	}
	for _, t := range Applies(s, prog, devOffers) {
		r.row.NotApplicable = append(r.row.NotApplicable, string(t))
	}
	r.stopped = len(r.row.NotApplicable) > 0
	return r.stopped
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
	row.Choices = o.choices
	if r.computes && r.ref.err == nil {
		r.check(o.outputs)
	}
	if rep < row.Warmup {
		return
	}
	r.stats = append(r.stats, SchedulerStats(s))
	row.MakespansNS = append(row.MakespansNS, o.makespan.Nanoseconds())
	if last {
		if r.trace {
			// The timed region is marked in the timeline.
			measured := device.TraceRegion{Pid: device.TraceHostPid, Step: rep - row.Warmup, Start: o.t0, End: o.t1}
			var buf bytes.Buffer
			r.timelineErr = writeTimeline(r.tracer, r.dev.Info(), measured, &buf)
			r.timeline = buf.Bytes()
		}
	}
	if r.obs != nil {
		r.j.observe(row, r.obs, o, last)
	}
}

// check compares a repetition's outputs with the serial reference's.
// Outputs bit-identical to the reference pass the workload's check exactly
// when the reference did (checked once, in serialReference); only
// different outputs are checked again, to say how far off they are.
func (r *rowRun) check(out map[string][]byte) {
	row := &r.row
	row.OutputsSHA256 = hashOutputs(out)
	msg := compareOutputs(r.ref.outputs, out)
	if msg == "" {
		return
	}
	row.Outputs = "DIFFERENT from serial"
	row.Errors = append(row.Errors, msg)
	if r.prog.Check != nil {
		if err := r.prog.Check(out); err != nil {
			row.Errors = append(row.Errors, fmt.Sprintf("workload check: %v", err))
		}
	}
}

// finish summarizes the measured repetitions (a stopped row stays as it
// stood when it failed), keeps the counters of the repetition with the
// median makespan, and writes the timeline.
func (r *rowRun) finish() Row {
	if r.stopped {
		return r.row
	}
	row := r.row
	sum := MakespanSummary(row.MakespansNS)
	row.Makespan = &sum
	if len(r.stats) > 0 {
		row.SchedulerStats = r.stats[stats.UpperMedianIndex(row.MakespansNS)]
	}
	if r.trace && (r.timeline != nil || r.timelineErr != nil) {
		if r.timelineErr != nil {
			row.Errors = append(row.Errors, fmt.Sprintf("timeline: %v", r.timelineErr))
		} else if err := r.sink(&row, r.timeline); err != nil {
			row.Errors = append(row.Errors, fmt.Sprintf("timeline: %v", err))
		}
	}
	row.Errors = dedupe(row.Errors)
	return row
}
