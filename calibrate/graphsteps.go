package calibrate

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/synthetic"
)

// graphStepStreams and graphStepSeed are the DAG campaign's graph-per-step
// streams and seed (configs/experiments/fidelity-dags-gpu.yaml).
const (
	graphStepStreams = 8
	graphStepSeed    = 1
)

// graphStepShape is a synthetic program graph-per-step runs.
type graphStepShape struct {
	name string
	p    synthetic.Params
}

// campaignShapes are the DAG campaign's seven shapes, with its parameters
// over synthetic.Defaults as the experiment file gives them.
func campaignShapes() []graphStepShape {
	d := synthetic.Defaults()
	with := func(f func(p *synthetic.Params)) synthetic.Params {
		p := d
		f(&p)
		return p
	}
	return []graphStepShape{
		{"chain", with(func(p *synthetic.Params) {
			*p = synthetic.Params{Layers: 40, Width: 1, FanIn: 1, MinBlocks: 16, MaxBlocks: 128, Threads: d.Threads, Iters: 1024, Steps: 2}
		})},
		{"wide", with(func(p *synthetic.Params) {
			p.Layers, p.Width, p.FanIn, p.MinBlocks, p.MaxBlocks, p.Iters, p.Steps = 2, 32, 2, 4, 32, 2048, 3
		})},
		{"tiny", with(func(p *synthetic.Params) {
			p.Layers, p.Width, p.FanIn, p.MinBlocks, p.MaxBlocks, p.Threads, p.Iters, p.Steps = 8, 8, 2, 1, 2, 64, 512, 3
		})},
		{"big", with(func(p *synthetic.Params) {
			p.Layers, p.Width, p.FanIn, p.MinBlocks, p.MaxBlocks, p.Iters, p.Steps = 4, 4, 2, 1024, 4096, 256, 1
		})},
		{"mixed", with(func(p *synthetic.Params) {
			p.Layers, p.Width, p.FanIn, p.MinBlocks, p.MaxBlocks, p.Iters, p.MaxIters, p.Steps = 6, 6, 2, 1, 1024, 32, 2048, 2
		})},
		{"diamond", with(func(p *synthetic.Params) {
			p.Layers, p.Width, p.Widths, p.FanIn, p.MinBlocks, p.MaxBlocks, p.Iters, p.Steps, p.Skip = 8, 1, []int{8, 1, 16, 1, 4, 1, 8, 1}, 4, 8, 64, 1024, 2, 0
		})},
		{"copies", with(func(p *synthetic.Params) {
			p.Layers, p.Width, p.FanIn, p.MinBlocks, p.MaxBlocks, p.Iters, p.Steps = 6, 6, 2, 8, 128, 1024, 2
			p.Copies, p.CopyBytes, p.Downloads = 0.3, 1<<20, true
		})},
	}
}

// sweepShapes are layered DAGs of 8 to 512 short one- or two-block
// kernels on 1 to 64 parallel branches (one step): the graph costs' terms
// per node, per branch and per level, apart from the kernels' own time.
func sweepShapes() []graphStepShape {
	var out []graphStepShape
	for _, n := range []int{8, 32, 128, 512} {
		for _, w := range []int{1, 8, 64} {
			if w > n {
				continue
			}
			p := synthetic.Params{Layers: n / w, Width: w, FanIn: min(2, w), MinBlocks: 1, MaxBlocks: 2, Threads: 64, Iters: 32, Steps: 1}
			out = append(out, graphStepShape{fmt.Sprintf("sweep %d nodes x %d wide", n, w), p})
		}
	}
	return out
}

// gsPhases are one isolated graph-per-step step's costs (ns): on the host,
// planning (sched.NewPlan; Go time, which the simulator does not count),
// BeginCapture, the captured commands (the fork, the step's operations
// with their records and waits, the join), EndCapture, Instantiate (with
// the upload), destroying the graph, the fresh exec's first launch and a
// later launch of it (the call, behind a gate kernel), a later launch's
// call and the synchronize that follows it on an idle device, and
// destroying the exec; on the device, the span from the gate's end to the
// end of the first and of a later launch (events around it).
type gsPhases struct {
	plan, begin, issue, end, instantiate, destroyGraph float64
	firstCall, laterCall, idleCall, idleWait           float64
	destroyExec, firstDevice, laterDevice              float64
}

// gsRig is what the phases are measured with: the scheduler's streams and
// event pool, a gate's buffer and two timing events.
type gsRig struct {
	streams []device.Stream
	pool    sched.EventPool
	done    device.Buffer
	e0, e1  device.Event
}

func newGSRig(h device.Host) (*gsRig, error) {
	r := &gsRig{}
	var err error
	if r.streams, err = sched.NewStreams(h, graphStepStreams); err != nil {
		return nil, err
	}
	if r.done, err = h.Malloc(4); err != nil {
		return nil, err
	}
	if r.e0, err = h.NewEvent(device.EventOptions{}); err != nil {
		return nil, err
	}
	r.e1, err = h.NewEvent(device.EventOptions{})
	return r, err
}

// captureTimed is sched.CaptureStep with the host time of each part.
func (r *gsRig) captureTimed(h device.Host, in *workloads.Instance, s int, deps [][]int, ph *gsPhases) (device.Graph, error) {
	t0 := h.Now()
	lo, hi := in.StepRange(s)
	assign := make([]int, hi-lo)
	for k := range assign {
		assign[k] = k % len(r.streams)
	}
	plan, err := sched.NewPlan(lo, hi, len(r.streams), assign, deps)
	if err != nil {
		return nil, err
	}
	t1 := h.Now()
	if err := h.BeginCapture(r.streams[0]); err != nil {
		return nil, err
	}
	t2 := h.Now()
	err = sched.Fork(h, r.streams, &r.pool)
	if err == nil {
		err = plan.Issue(h, in, r.streams, &r.pool)
	}
	if err == nil {
		err = sched.Join(h, r.streams, &r.pool)
	}
	if err != nil {
		return nil, sched.AbortCapture(h, r.streams[0], err)
	}
	t3 := h.Now()
	g, err := h.EndCapture(r.streams[0])
	t4 := h.Now()
	ph.plan, ph.begin, ph.issue, ph.end = ns(t1-t0), ns(t2-t1), ns(t3-t2), ns(t4-t3)
	return g, err
}

// gatedLaunch launches x behind a gate kernel long enough to hide the
// launch call: the call's host time, and the device span from the gate's
// end to the graph's.
func (r *gsRig) gatedLaunch(h device.Host, c *calibrator, x device.GraphExec, gate time.Duration) (call, span float64, err error) {
	s := r.streams[0]
	if err := h.Launch(s, c.spinLaunch(gate, r.done)); err != nil {
		return 0, 0, err
	}
	span, err = elapsed(h, s, r.e0, r.e1, func() error {
		t := h.Now()
		err := h.GraphLaunch(x, s)
		call = ns(h.Now() - t)
		return err
	})
	return call, span, err
}

// stepOnce measures one isolated step s of in (the device idle at its start).
func (r *gsRig) stepOnce(h device.Host, c *calibrator, in *workloads.Instance, s int, deps [][]int) (gsPhases, error) {
	var ph gsPhases
	g, err := r.captureTimed(h, in, s, deps, &ph)
	if err != nil {
		return ph, err
	}
	t0 := h.Now()
	x, err := h.Instantiate(g)
	if err != nil {
		return ph, errors.Join(err, h.Destroy(g))
	}
	t1 := h.Now()
	if err := h.Destroy(g); err != nil {
		return ph, errors.Join(err, h.Destroy(x))
	}
	ph.instantiate, ph.destroyGraph = ns(t1-t0), ns(h.Now()-t1)
	lo, hi := in.StepRange(s)
	gate := time.Duration(100_000+4_000*(hi-lo)) * time.Nanosecond
	if ph.firstCall, ph.firstDevice, err = r.gatedLaunch(h, c, x, gate); err == nil {
		ph.laterCall, ph.laterDevice, err = r.gatedLaunch(h, c, x, gate)
	}
	if err == nil {
		t2 := h.Now()
		err = h.GraphLaunch(x, r.streams[0])
		t3 := h.Now()
		err = errors.Join(err, h.StreamSynchronize(r.streams[0]))
		ph.idleCall, ph.idleWait = ns(t3-t2), ns(h.Now()-t3)
	}
	if err != nil {
		return ph, errors.Join(err, h.Destroy(x))
	}
	t4 := h.Now()
	err = h.Destroy(x)
	ph.destroyExec = ns(h.Now() - t4)
	return ph, err
}

// gsRun is a whole graph-per-step run of every step (ns): the scheduler's
// own Run between two synchronizations, as the campaign times a row, and
// the same loop timed part by part, summed over the steps (the device runs
// a step's graph while the host builds the next): capture (planning
// included), instantiate, graph destroy, launch, the final synchronize's
// wait and the execs' destruction.
type gsRun struct {
	sched, capture, instantiate, destroyGraph, launch, wait, destroyExecs, total float64
}

// schedRun times sched.GraphPerStep's Run as the campaign's runner does
// (prepared, warmed once, between two synchronizations).
func schedRun(h device.Host, in *workloads.Instance) (float64, error) {
	g, err := sched.NewGraphPerStep(graphStepStreams)
	if err != nil {
		return 0, err
	}
	if err := g.Prepare(h, in); err != nil {
		return 0, err
	}
	err = sched.Warm(h, g, in)
	if err == nil {
		err = h.Synchronize()
	}
	t0 := h.Now()
	if err == nil {
		err = g.Run(h, in)
	}
	if err == nil {
		err = h.Synchronize()
	}
	t := ns(h.Now() - t0)
	return t, errors.Join(err, g.Cleanup(h))
}

// loopTimed is GraphPerStep.Run's loop with the host time of each part.
func (r *gsRig) loopTimed(h device.Host, in *workloads.Instance, deps [][]int) (gsRun, error) {
	var u gsRun
	var ph gsPhases
	if err := h.Synchronize(); err != nil {
		return u, err
	}
	start := h.Now()
	var execs []device.GraphExec
	destroy := func(err error) error {
		for _, x := range execs {
			err = errors.Join(err, h.Destroy(x))
		}
		return err
	}
	for s := 0; s < in.Steps(); s++ {
		t0 := h.Now()
		g, err := r.captureTimed(h, in, s, deps, &ph)
		if err != nil {
			return u, destroy(err)
		}
		t1 := h.Now()
		x, err := h.Instantiate(g)
		t2 := h.Now()
		if err := errors.Join(err, h.Destroy(g)); err != nil {
			return u, destroy(err)
		}
		t3 := h.Now()
		execs = append(execs, x)
		if err := h.GraphLaunch(x, r.streams[0]); err != nil {
			return u, destroy(err)
		}
		u.capture, u.instantiate, u.destroyGraph, u.launch = u.capture+ns(t1-t0), u.instantiate+ns(t2-t1), u.destroyGraph+ns(t3-t2), u.launch+ns(h.Now()-t3)
	}
	t4 := h.Now()
	err := h.StreamSynchronize(r.streams[0])
	t5 := h.Now()
	err = destroy(err)
	t6 := h.Now()
	u.wait, u.destroyExecs, u.total = ns(t5-t4), ns(t6-t5), ns(t6-start)
	return u, err
}

// gsShapeFacts are what the fit needs of a step: its operations, kernel
// and copy nodes, cross-stream waits over graphStepStreams, levels (the
// longest dependency path) and the widest level.
type gsShapeFacts struct{ ops, kernels, copies, waits, levels, widest int }

func shapeFacts(in *workloads.Instance, deps [][]int) (gsShapeFacts, error) {
	lo, hi := in.StepRange(0)
	f := gsShapeFacts{ops: hi - lo}
	assign := make([]int, hi-lo)
	for k := range assign {
		assign[k] = k % graphStepStreams
	}
	plan, err := sched.NewPlan(lo, hi, graphStepStreams, assign, deps)
	if err != nil {
		return f, err
	}
	f.waits = plan.WaitCount()
	level := make([]int, hi-lo)
	perLevel := map[int]int{}
	for k := lo; k < hi; k++ {
		if in.Op(k).Kind == workloads.OpKernel {
			f.kernels++
		} else {
			f.copies++
		}
		for _, j := range deps[k] {
			if j >= lo {
				level[k-lo] = max(level[k-lo], level[j-lo]+1)
			}
		}
		perLevel[level[k-lo]]++
		f.levels = max(f.levels, level[k-lo]+1)
	}
	for _, n := range perLevel {
		f.widest = max(f.widest, n)
	}
	return f, nil
}

// graphSteps measures what graph-per-step costs a step (#18: the DAG
// campaign's graph-per-step rows, 177-669 us a step on the GPU, not in
// proportion to the nodes): for the campaign's seven shapes and a sweep
// of 8 to 512 nodes on 1 to 64 branches, each part of one isolated step
// (host: planning, capture begin, the captured commands, capture end,
// instantiate, graph destroy, first and later launch calls, a later
// launch's synchronize on an idle device, exec destroy; device: the first
// and a later launch's span behind a gate), the scheduler's whole Run as
// the campaign times it, and the same loop timed part by part. The Go
// collector is off, as in the runner's timed runs. Reported only.
func (c *calibrator) graphSteps(h device.Host) error {
	return c.graphStepsOf(h, append(campaignShapes(), sweepShapes()...))
}

func (c *calibrator) graphStepsOf(h device.Host, shapes []graphStepShape) error {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	r, err := newGSRig(h)
	if err != nil {
		return err
	}
	for _, sh := range shapes {
		if err := c.graphStepShape(h, r, sh); err != nil {
			return fmt.Errorf("%s: %w", sh.name, err)
		}
	}
	return nil
}

func (c *calibrator) graphStepShape(h device.Host, r *gsRig, sh graphStepShape) (err error) {
	prog, err := synthetic.Generate(sh.p, graphStepSeed)
	if err != nil {
		return err
	}
	_, simulated := c.dev.(*sim.Device)
	in, err := workloads.BindWith(h, prog, workloads.BindOptions{NoDeviceData: simulated})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, in.Release(h)) }()
	deps := sched.ProgramDeps(in)
	facts, err := shapeFacts(in, deps)
	if err != nil {
		return err
	}
	var phases []gsPhases
	var runs []gsRun
	if err := c.warmRounds(func(measured bool) error {
		ph, err := r.stepOnce(h, c, in, 0, deps)
		if err != nil {
			return err
		}
		u, err := r.loopTimed(h, in, deps)
		if err != nil {
			return err
		}
		if u.sched, err = schedRun(h, in); err != nil {
			return err
		}
		if measured {
			phases, runs = append(phases, ph), append(runs, u)
		}
		return nil
	}); err != nil {
		return err
	}
	c.recordGraphStep(sh.name, in.Steps(), facts, phases, runs)
	return nil
}

// GraphStepPrefix begins the names of graphSteps' measurements; a name
// is the prefix, the shape, ": " and the part.
const GraphStepPrefix = "graph step, "

func (c *calibrator) recordGraphStep(shape string, steps int, f gsShapeFacts, phases []gsPhases, runs []gsRun) {
	pre := GraphStepPrefix + shape + ": "
	how := fmt.Sprintf("%s (seed %d): %d operations a step (%d kernels, %d copies), %d cross-stream waits over %d streams, %d levels, the widest %d",
		shape, graphStepSeed, f.ops, f.kernels, f.copies, f.waits, graphStepStreams, f.levels, f.widest)
	for _, x := range []struct {
		what string
		v    int
	}{{"operations", f.ops}, {"kernel nodes", f.kernels}, {"copy nodes", f.copies}, {"waits", f.waits}, {"levels", f.levels}, {"widest level", f.widest}, {"steps", steps}} {
		c.record(pre+x.what, "", "count", how, []float64{float64(x.v)})
	}
	for _, m := range []struct {
		what string
		f    func(gsPhases) float64
	}{
		{"plan", func(p gsPhases) float64 { return p.plan }},
		{"capture begin", func(p gsPhases) float64 { return p.begin }},
		{"captured commands", func(p gsPhases) float64 { return p.issue }},
		{"capture end", func(p gsPhases) float64 { return p.end }},
		{"instantiate", func(p gsPhases) float64 { return p.instantiate }},
		{"graph destroy", func(p gsPhases) float64 { return p.destroyGraph }},
		{"first launch call", func(p gsPhases) float64 { return p.firstCall }},
		{"later launch call", func(p gsPhases) float64 { return p.laterCall }},
		{"launch call on an idle device", func(p gsPhases) float64 { return p.idleCall }},
		{"synchronize after it", func(p gsPhases) float64 { return p.idleWait }},
		{"exec destroy", func(p gsPhases) float64 { return p.destroyExec }},
		{"first launch's device span", func(p gsPhases) float64 { return p.firstDevice }},
		{"later launch's device span", func(p gsPhases) float64 { return p.laterDevice }},
	} {
		c.record(pre+m.what, "", "ns", "one isolated step 0, Host.Now around it (device spans: Elapsed behind a gate); "+how, pick(phases, m.f))
	}
	for _, m := range []struct {
		what string
		f    func(gsRun) float64
	}{
		{"scheduler's run", func(u gsRun) float64 { return u.sched }},
		{"run: capture", func(u gsRun) float64 { return u.capture }},
		{"run: instantiate", func(u gsRun) float64 { return u.instantiate }},
		{"run: graph destroy", func(u gsRun) float64 { return u.destroyGraph }},
		{"run: launch", func(u gsRun) float64 { return u.launch }},
		{"run: final wait", func(u gsRun) float64 { return u.wait }},
		{"run: exec destroys", func(u gsRun) float64 { return u.destroyExecs }},
		{"run: total", func(u gsRun) float64 { return u.total }},
	} {
		c.record(pre+m.what, "", "ns", fmt.Sprintf("all %d steps as GraphPerStep.Run (its own Run between synchronizes; or its loop timed part by part, summed over steps); ", steps)+how, pick(runs, m.f))
	}
}
