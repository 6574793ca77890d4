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
