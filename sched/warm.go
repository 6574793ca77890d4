package sched

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Warm is the warm run, the one rule by which every runner times every
// scheduler on equal terms. After Prepare and before the timed Run, the
// scheduler's Run runs once, untimed, and the program's buffers get their
// initial contents back (workloads.Instance.Reset), so the timed run
// computes one run's outputs from the program's inputs.
//
// Whatever a scheduler does only the first time then falls outside the
// timed run for every scheduler alike, whatever its Prepare did: a graph
// exec's first launch, a kernel's first launch (lazy module loading on a
// GPU), a cache of graphs filled as keys are seen, a worker's first job on a
// fresh stream. What a scheduler does on every run (capturing a graph per
// step, say) stays in it. A Run must therefore leave the scheduler ready to
// run again, as a long-running application would use it; a search in Prepare
// may run the program too, since Reset undoes what it wrote.
func Warm(h device.Host, s Scheduler, in *workloads.Instance) error {
	if err := s.Run(h, in); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	if err := h.Synchronize(); err != nil {
		return err
	}
	if err := in.Reset(h); err != nil {
		return fmt.Errorf("after the warm run: %w", err)
	}
	return nil
}
