package sched

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// CUDA-graph baselines. Both capture a step's operations issued round-robin
// over K streams with events for cross-stream dependencies, so the captured
// graph has the program's dependency edges (plus the stream-order edges
// round-robin adds) and the GPU may run independent nodes concurrently,
// at the lower per-node launch cost graphs have.
//
// GraphOnce captures once (before the timed region) and launches the graph
// for every step: valid only for static programs, whose every step is the
// same operations on the same buffers. GraphPerStep captures, instantiates
// and launches a new graph every step inside the timed region, as a
// framework must for input-dependent graphs (ACS's CUDA Graph baseline).

// GraphOnce is the captured-once CUDA graph baseline.
type GraphOnce struct {
	K       int
	streams []device.Stream
	pool    EventPool
	exec    device.GraphExec
}

// Needs implements Needer: one capture replays every step.
func (*GraphOnce) Needs() []Trait { return []Trait{TraitStaticSteps} }

// GraphPerStep is the rebuilt-every-step CUDA graph baseline.
type GraphPerStep struct {
	K       int
	streams []device.Stream
	pool    EventPool
}

// NewGraphOnce and NewGraphPerStep capture over k streams.
func NewGraphOnce(k int) (*GraphOnce, error) {
	if k < 1 {
		return nil, fmt.Errorf("graph-once: streams must be at least 1, got %d", k)
	}
	return &GraphOnce{K: k}, nil
}

func NewGraphPerStep(k int) (*GraphPerStep, error) {
	if k < 1 {
		return nil, fmt.Errorf("graph-per-step: streams must be at least 1, got %d", k)
	}
	return &GraphPerStep{K: k}, nil
}

func (g *GraphOnce) Name() string    { return fmt.Sprintf("graph-once(k=%d)", g.K) }
func (g *GraphPerStep) Name() string { return fmt.Sprintf("graph-per-step(k=%d)", g.K) }

// CaptureStep captures step s of in into a graph, issued round-robin over
// streams (streams[0] is the capture's origin).
func CaptureStep(h device.Host, in *workloads.Instance, s int, streams []device.Stream, pool *EventPool, deps [][]int) (device.Graph, error) {
	lo, hi := in.StepRange(s)
	assign := make([]int, hi-lo)
	for k := range assign {
		assign[k] = k % len(streams)
	}
	plan, err := NewPlan(lo, hi, len(streams), assign, deps)
	if err != nil {
		return nil, err
	}
	if err := h.BeginCapture(streams[0]); err != nil {
		return nil, err
	}
	fail := func(err error) (device.Graph, error) {
		return nil, AbortCapture(h, streams[0], err)
	}
	if err := Fork(h, streams, pool); err != nil {
		return fail(err)
	}
	if err := plan.Issue(h, in, streams, pool); err != nil {
		return fail(err)
	}
	if err := Join(h, streams, pool); err != nil {
		return fail(err)
	}
	return h.EndCapture(streams[0])
}

// StaticProgram reports whether every step of p is the same operations on
// the same buffers as step 0, and if not, which step differs.
func StaticProgram(p *workloads.Program) (bool, int) {
	for s := 1; s < len(p.Steps); s++ {
		if !reflect.DeepEqual(p.Steps[s].Ops, p.Steps[0].Ops) {
			return false, s
		}
	}
	return true, 0
}

func (g *GraphOnce) Prepare(h device.Host, in *workloads.Instance) error {
	if ok, s := StaticProgram(in.Prog); !ok {
		return fmt.Errorf("graph-once needs a static program, but step %d of %s differs from step 0 (use graph-per-step)", s, in.Prog.Name)
	}
	var err error
	if g.streams, err = NewStreams(h, g.K); err != nil {
		return err
	}
	graph, err := CaptureStep(h, in, 0, g.streams, &g.pool, ProgramDeps(in))
	if err != nil {
		return err
	}
	g.exec, err = h.Instantiate(graph)
	return errors.Join(err, h.Destroy(graph))
}

func (g *GraphOnce) Cleanup(h device.Host) error {
	var first error
	if g.exec != nil {
		first = h.Destroy(g.exec)
		g.exec = nil
	}
	if err := DestroyStreams(h, g.streams); err != nil && first == nil {
		first = err
	}
	if err := g.pool.Destroy(h); err != nil && first == nil {
		first = err
	}
	g.streams = nil
	return first
}

func (g *GraphOnce) Run(h device.Host, in *workloads.Instance) (err error) {
	if g.exec == nil {
		if err := g.Prepare(h, in); err != nil {
			return errors.Join(err, g.Cleanup(h))
		}
		defer JoinCleanup(h, g, &err)
	}
	for s := 0; s < in.Steps(); s++ {
		if err := h.GraphLaunch(g.exec, g.streams[0]); err != nil {
			return err
		}
	}
	return h.StreamSynchronize(g.streams[0])
}

func (g *GraphPerStep) Prepare(h device.Host, _ *workloads.Instance) (err error) {
	g.streams, err = NewStreams(h, g.K)
	return err
}

func (g *GraphPerStep) Cleanup(h device.Host) error {
	err := DestroyStreams(h, g.streams)
	if e := g.pool.Destroy(h); err == nil {
		err = e
	}
	g.streams = nil
	return err
}

func (g *GraphPerStep) Run(h device.Host, in *workloads.Instance) (err error) {
	if g.streams == nil {
		if err := g.Prepare(h, in); err != nil {
			return err
		}
		defer JoinCleanup(h, g, &err)
	}
	deps := ProgramDeps(in)
	execs := make([]device.GraphExec, 0, in.Steps())
	defer func() {
		for _, x := range execs {
			err = errors.Join(err, h.Destroy(x))
		}
	}()
	for s := 0; s < in.Steps(); s++ {
		graph, err := CaptureStep(h, in, s, g.streams, &g.pool, deps)
		if err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
		x, err := h.Instantiate(graph)
		if err := errors.Join(err, h.Destroy(graph)); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
		execs = append(execs, x)
		if err := h.GraphLaunch(x, g.streams[0]); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	return h.StreamSynchronize(g.streams[0])
}
