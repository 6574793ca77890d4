package graph

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// GrCUDA is a GrCUDA-style runtime scheduler (Parravicini et al., "DAG-based
// scheduling with resource sharing for multi-task applications in a
// polyglot GPU runtime", IPDPS 2021): the dependency DAG is built at run time
// as kernels arrive, in program order, from their array arguments, with an
// unbounded window (every earlier kernel is a candidate parent); a kernel
// reuses the stream of its first parent unless another child already took
// it, and otherwise gets a free stream (one with nothing in flight) or a new
// one; it waits on an event of each parent on another stream. An event is
// recorded after every kernel, since a runtime cannot know whether a later
// kernel will need it.
//
// The dependency bookkeeping really runs on the host (sched.Deps, last
// writers and readers per buffer); on the simulator each operation also
// charges DepCost of host time for it, the runtime's DAG update.
type GrCUDA struct {
	// MaxStreams bounds the stream pool (GrCUDA creates streams on demand).
	MaxStreams int
	// DepCost is the host time charged per operation for the runtime DAG
	// update (simulator only; on a GPU the bookkeeping takes its real time).
	DepCost time.Duration

	streams []device.Stream
	events  []device.Event
	inst    *workloads.Instance
	waits   int
	used    int
}

// DefaultGrCUDADepCost is the default per-operation dependency cost: the
// ACS paper's measured CPU dependency check of one kernel against a
// 32-entry window with 6 ranges (0.51 us), the closest published figure.
const DefaultGrCUDADepCost = 510 * time.Nanosecond

// NewGrCUDA returns a GrCUDA-like runtime scheduler.
func NewGrCUDA(maxStreams int, depCost time.Duration) (*GrCUDA, error) {
	if maxStreams < 1 {
		return nil, fmt.Errorf("grcuda: max_streams must be at least 1, got %d", maxStreams)
	}
	if depCost < 0 {
		return nil, fmt.Errorf("grcuda: dep_cost must not be negative, got %v", depCost)
	}
	return &GrCUDA{MaxStreams: maxStreams, DepCost: depCost}, nil
}

// Name is "grcuda(max=S)".
func (g *GrCUDA) Name() string { return fmt.Sprintf("grcuda(max=%d)", g.MaxStreams) }

// Stats reports the waits issued and streams used in the last run.
func (g *GrCUDA) Stats() map[string]float64 {
	return map[string]float64{"waits": float64(g.waits), "streams": float64(g.used)}
}

// Prepare creates the stream pool and one event per operation.
func (g *GrCUDA) Prepare(h device.Host, in *workloads.Instance) error {
	if g.inst != nil {
		if err := g.Cleanup(h); err != nil {
			return err
		}
	}
	for i := 0; i < g.MaxStreams; i++ {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return errors.Join(err, g.Cleanup(h))
		}
		g.streams = append(g.streams, s)
	}
	for k := 0; k < in.N(); k++ {
		e, err := h.NewEvent(device.EventOptions{DisableTiming: true})
		if err != nil {
			return errors.Join(err, g.Cleanup(h))
		}
		g.events = append(g.events, e)
	}
	g.inst = in
	return nil
}

// Cleanup destroys the pool.
func (g *GrCUDA) Cleanup(h device.Host) error {
	var errs []error
	for _, e := range g.events {
		errs = append(errs, h.Destroy(e))
	}
	for _, s := range g.streams {
		errs = append(errs, h.Destroy(s))
	}
	g.streams, g.events, g.inst = nil, nil, nil
	return errors.Join(errs...)
}

// Run issues the program as the runtime would, kernel by kernel.
func (g *GrCUDA) Run(h device.Host, in *workloads.Instance) error {
	if g.inst != in {
		if err := g.Prepare(h, in); err != nil {
			return err
		}
	}
	n := in.N()
	tracker := sched.NewDeps()
	streamOf := make([]int, n)
	childTaken := make([]bool, n) // a child already reuses this op's stream
	tail := make([]int, len(g.streams))
	for i := range tail {
		tail[i] = -1
	}
	g.waits, g.used = 0, 0
	var deps []int
	for k := 0; k < n; k++ {
		deps = tracker.Add(k, in.Access(k), deps[:0])
		h.Spend(g.DepCost)
		s := -1
		for _, u := range deps {
			if !childTaken[u] && tail[streamOf[u]] == u {
				s = streamOf[u]
				childTaken[u] = true
				break
			}
		}
		if s < 0 {
			var err error
			if s, err = g.freeStream(h, tail); err != nil {
				return err
			}
		}
		st := g.streams[s]
		for _, u := range deps {
			if streamOf[u] == s {
				continue
			}
			if err := h.Wait(st, g.events[u]); err != nil {
				return err
			}
			g.waits++
		}
		if err := in.Issue(h, st, k); err != nil {
			return err
		}
		if err := h.Record(g.events[k], st); err != nil {
			return err
		}
		streamOf[k], tail[s] = s, k
		g.used = max(g.used, s+1)
	}
	for _, st := range g.streams[:g.used] {
		if err := h.StreamSynchronize(st); err != nil {
			return err
		}
	}
	return nil
}

// freeStream returns a stream never used in this run, else one that is idle,
// else the least recently started one (the pool is exhausted).
func (g *GrCUDA) freeStream(h device.Host, tail []int) (int, error) {
	oldest := 0
	for i, t := range tail {
		if t == -1 {
			return i, nil
		}
		if t < tail[oldest] {
			oldest = i
		}
	}
	for i := range tail {
		idle, err := h.StreamQuery(g.streams[i])
		if err != nil {
			return 0, err
		}
		if idle {
			return i, nil
		}
	}
	return oldest, nil
}
