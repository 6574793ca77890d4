package pipeline

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// Warm execs (the Warm option; why: docs/history/set.md). A SET pipeline
// captures and instantiates its workers' graphs once and then runs
// thousands of jobs through them, so what the paper measures is the
// steady state. An experiment that makes a fresh scheduler for every
// repetition of a few hundred jobs instead launches each exec only a
// handful of times inside its timed Run (a SET-batch exec of a ring
// position and chunk length, once or twice), so any one-time cost of an
// exec's first launches, or of the first work on a worker's fresh stream,
// lands in the measurement. With Warm, Prepare launches every exec once
// on the stream Run launches it on (a ring position's stream) and waits
// for those launches, so Run starts from execs and streams that have
// worked before, as in a long-running pipeline.
//
// The warm launches are real jobs: each exec still holds the jobs it was
// captured with (a worker's first job, first jobs or first chunk, bound
// to its own buffers), so they read those jobs' inputs, write the
// worker's private (or batch) buffers, and copy those jobs' results into
// their host output slots. That is harmless to Run: every job overwrites
// a worker's buffers before it reads them (a pipeline job's buffers have
// no initial contents, and a worker's buffers already carry one job's data
// into the next), a SET-batch chunk's padding in the batch buffers is
// still what zeroBatchBuffers wrote (kernels write only their slots), and
// Run copies the same results out again. But it means a check of the
// outputs after Run could pass on a job Run never copied out: a runner
// that checks outputs must overwrite them (poison) after Prepare, as
// experiments/set does. The launches are synchronized before Prepare
// returns, so on the simulator they are ordered before everything Run
// issues and cannot change the race checker's verdicts on Run.
//
// SET-kgraph's exec holds only the kernels, over the worker's buffers
// whose contents would be undefined; its warm-up is a whole job instead
// (the worker's first job's copy in, the kernel graph, its copy out), as
// Run dispatches it.

// warmExecs launches every exec of every worker once, on the stream Run
// launches it on, and waits for them (if Warm is set).
func (s *SET) warmExecs(h device.Host) error {
	if !s.p.Warm {
		return nil
	}
	var streams []device.Stream
	seen := map[device.Stream]bool{}
	use := func(st device.Stream) {
		if !seen[st] {
			seen[st] = true
			streams = append(streams, st)
		}
	}
	for _, wk := range s.workers {
		switch {
		case s.p.Copies == CopiesStream:
			if err := s.warmJob(h, wk); err != nil {
				return fmt.Errorf("set: worker %d: warm-up job: %w", wk.id, err)
			}
			use(wk.stream)
		case len(wk.ring) > 0:
			for p, sl := range wk.ring {
				for n, x := range sl.execs {
					if err := h.GraphLaunch(x, sl.stream); err != nil {
						return fmt.Errorf("set: worker %d: warm-up launch of ring position %d's exec for %d jobs: %w", wk.id, p, n+1, err)
					}
				}
				use(sl.stream)
			}
		default:
			if err := h.GraphLaunch(wk.exec, wk.stream); err != nil {
				return fmt.Errorf("set: worker %d: warm-up launch: %w", wk.id, err)
			}
			use(wk.stream)
		}
	}
	for _, st := range streams {
		if err := h.StreamSynchronize(st); err != nil {
			return fmt.Errorf("set: waiting for the warm-up launches: %w", err)
		}
	}
	return nil
}

// warmJob issues SET-kgraph worker wk's first job (or job 0 bound to its
// buffers if it has none) on its stream as launchStreamCopies does, but
// outside the metrics and the timing events.
func (s *SET) warmJob(h device.Host, wk *worker) error {
	var job boundJob
	if len(wk.queue) > 0 {
		job = wk.queue[0]
	} else {
		s.bd.bind(0, wk.slots, &job)
	}
	return s.issueKernelGraphJob(h, wk, &job)
}
