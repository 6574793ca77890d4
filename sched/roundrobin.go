package sched

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// RoundRobin issues operation k on stream k mod K, with an event wait
// wherever an operation depends on one issued to another stream. It is the
// simplest multi-stream baseline: it exposes concurrency between
// independent neighbours without any look at the graph's shape.
type RoundRobin struct {
	K       int
	streams []device.Stream
	pool    EventPool
	waits   int
	// plan is the program's assignment and waits, built in Prepare (as
	// Taskflow, Nimble and KeSCo build theirs) so that the timed Run pays
	// only for issuing: every static planner is timed on the same terms.
	plan *Plan
	inst *workloads.Instance
}

// NewRoundRobin returns round-robin over k streams.
func NewRoundRobin(k int) (*RoundRobin, error) {
	if k < 1 {
		return nil, fmt.Errorf("round-robin: k must be at least 1, got %d", k)
	}
	return &RoundRobin{K: k}, nil
}

func (r *RoundRobin) Name() string { return fmt.Sprintf("round-robin(k=%d)", r.K) }

func (r *RoundRobin) Prepare(h device.Host, in *workloads.Instance) (err error) {
	if err := r.planFor(in); err != nil {
		return err
	}
	r.streams, err = NewStreams(h, r.K)
	return err
}

// planFor builds the plan of in: operation k on stream k mod K, waits
// wherever it depends on an operation issued to another stream.
func (r *RoundRobin) planFor(in *workloads.Instance) error {
	assign := make([]int, in.N())
	for k := range assign {
		assign[k] = k % r.K
	}
	plan, err := NewPlan(0, in.N(), r.K, assign, ProgramDeps(in))
	if err != nil {
		return err
	}
	r.plan, r.inst, r.waits = plan, in, plan.WaitCount()
	return nil
}

func (r *RoundRobin) Cleanup(h device.Host) error {
	err := DestroyStreams(h, r.streams)
	if e := r.pool.Destroy(h); err == nil {
		err = e
	}
	r.streams, r.plan, r.inst = nil, nil, nil
	return err
}

// Stats reports the number of cross-stream waits of the plan, known once
// Prepare has planned.
func (r *RoundRobin) Stats() map[string]float64 { return map[string]float64{"waits": float64(r.waits)} }

func (r *RoundRobin) Run(h device.Host, in *workloads.Instance) (err error) {
	if r.streams == nil {
		if err := r.Prepare(h, in); err != nil {
			return err
		}
		defer JoinCleanup(h, r, &err)
	}
	if r.inst != in { // prepared for another instance
		if err := r.planFor(in); err != nil {
			return err
		}
	}
	if err := r.plan.Issue(h, in, r.streams, &r.pool); err != nil {
		return err
	}
	for _, s := range r.streams {
		if err := h.StreamSynchronize(s); err != nil {
			return err
		}
	}
	return nil
}
