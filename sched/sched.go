// Package sched defines what a scheduling strategy is, and holds the
// baselines every strategy is measured against: serial on one stream,
// round-robin over K streams with events for cross-stream dependencies, and
// CUDA graphs (captured once, or rebuilt per step).
//
// A Scheduler takes a bound program (workloads.Instance) and a host thread
// and issues the program's work. It owns its policy and nothing else: it
// does not time itself, check outputs or allocate the program's buffers;
// the experiments runner does that, identically for every scheduler.
// Strategies live in subpackages: sched/acs (out-of-order window), sched/graph
// (whole-DAG stream assignment and search), sched/pipeline (many-job
// pipelines) and sched/tilesync (tile-level producer/consumer sync).
package sched

import (
	"errors"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Scheduler issues a program's operations on a device.
type Scheduler interface {
	// Name identifies the scheduler and its parameters in result tables,
	// e.g. "round-robin(k=4)".
	Name() string
	// Run issues every operation of in, in an order and on streams of the
	// scheduler's choosing that respect the program's dependencies, and
	// returns once all of them have completed.
	Run(h device.Host, in *workloads.Instance) error
}

// Preparer is a Scheduler with set-up that is not part of the measured run
// (stream creation, capturing and instantiating a graph once). The runner
// calls Prepare before the timed region and Cleanup after it.
type Preparer interface {
	Prepare(h device.Host, in *workloads.Instance) error
	Cleanup(h device.Host) error
}

// JoinCleanup calls p.Cleanup(h) and adds its error to *err: for a Run
// that prepared itself and must release what it prepared without dropping
// either error,
//
//	func (s *S) Run(h device.Host, in *workloads.Instance) (err error) {
//		if !s.prepared {
//			if err := s.Prepare(h, in); err != nil {
//				return errors.Join(err, s.Cleanup(h))
//			}
//			defer sched.JoinCleanup(h, s, &err)
//		}
//		...
func JoinCleanup(h device.Host, p Preparer, err *error) {
	cerr := p.Cleanup(h)
	switch {
	case cerr == nil:
	case *err == nil:
		*err = cerr
	default:
		*err = errors.Join(*err, cerr)
	}
}

// AbortCapture ends the stream capture on st after err and destroys the
// partial graph, returning err joined with any error of the destroy.
func AbortCapture(h device.Host, st device.Stream, err error) error {
	if g, e := h.EndCapture(st); e == nil && g != nil {
		err = errors.Join(err, h.Destroy(g))
	}
	return err
}

// RunOnce runs s on in as a runner does, untimed: Prepare (if s is a
// Preparer), Run, Synchronize, Cleanup, keeping every error.
func RunOnce(h device.Host, in *workloads.Instance, s Scheduler) (err error) {
	if p, ok := s.(Preparer); ok {
		if err := p.Prepare(h, in); err != nil {
			return errors.Join(err, p.Cleanup(h))
		}
		defer JoinCleanup(h, p, &err)
	}
	if err := s.Run(h, in); err != nil {
		return err
	}
	return h.Synchronize()
}
