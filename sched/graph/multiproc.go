package graph

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// MultiProcess is KeSCo's multi-process case: each step of the program is
// one task, and tasks run on their own host threads (KeSCo's processes,
// here sharing one context as KeSCo's do), each scheduled by its own
// instance of an inner scheduler against the same device. With a serial
// inner scheduler it is the "without the scheduler" baseline: each process
// issues its task on one stream, and only the device interleaves processes.
type MultiProcess struct {
	// Processes is the number of host threads; tasks are dealt to them
	// round-robin and each thread runs its tasks one after another. 0 means
	// one thread per task.
	Processes int

	inner func() (sched.Scheduler, error)
	name  string
	procs [][]task
	stats map[string]float64 // of the last Prepare; kept after Cleanup
}

// Needs implements sched.Needer: tasks that may run concurrently.
func (*MultiProcess) Needs() []sched.Trait {
	return []sched.Trait{sched.TraitIndependentSteps, sched.TraitWholeProgram}
}

type task struct {
	view  *workloads.Instance
	sched sched.Scheduler
}

// NewMultiProcess wraps inner, which makes a fresh scheduler per task.
func NewMultiProcess(processes int, innerName string, inner func() (sched.Scheduler, error)) (*MultiProcess, error) {
	if processes < 0 {
		return nil, fmt.Errorf("multiprocess: processes must not be negative, got %d", processes)
	}
	if inner == nil {
		return nil, fmt.Errorf("multiprocess: no inner scheduler")
	}
	return &MultiProcess{Processes: processes, inner: inner, name: innerName}, nil
}

// Name is "multiprocess(p=P,inner)".
func (m *MultiProcess) Name() string {
	p := "tasks"
	if m.Processes > 0 {
		p = fmt.Sprint(m.Processes)
	}
	return fmt.Sprintf("multiprocess(p=%s,%s)", p, m.name)
}

// Prepare splits the program into tasks and prepares an inner scheduler for
// each.
func (m *MultiProcess) Prepare(h device.Host, in *workloads.Instance) error {
	if m.procs != nil {
		if err := m.Cleanup(h); err != nil {
			return err
		}
	}
	np := m.Processes
	if np == 0 || np > in.Steps() {
		np = in.Steps()
	}
	m.procs = make([][]task, np)
	for s := 0; s < in.Steps(); s++ {
		v, err := in.StepView(s)
		if err != nil {
			return errors.Join(err, m.Cleanup(h))
		}
		sc, err := m.inner()
		if err != nil {
			return errors.Join(err, m.Cleanup(h))
		}
		if p, ok := sc.(sched.Preparer); ok {
			if err := p.Prepare(h, v); err != nil {
				return errors.Join(fmt.Errorf("task %d: %w", s, err), m.Cleanup(h))
			}
		}
		m.procs[s%np] = append(m.procs[s%np], task{v, sc})
	}
	m.stats = m.sumStats()
	return nil
}

// Cleanup releases every inner scheduler.
func (m *MultiProcess) Cleanup(h device.Host) error {
	var errs []error
	for _, p := range m.procs {
		for _, t := range p {
			if c, ok := t.sched.(sched.Preparer); ok {
				errs = append(errs, c.Cleanup(h))
			}
		}
	}
	m.procs = nil
	return errors.Join(errs...)
}

// Stats sums the inner schedulers' figures as prepared (streams: the
// largest of any task) and counts the processes. It stays available after
// Cleanup.
func (m *MultiProcess) Stats() map[string]float64 {
	out := make(map[string]float64, len(m.stats))
	for k, v := range m.stats {
		out[k] = v
	}
	return out
}

func (m *MultiProcess) sumStats() map[string]float64 {
	out := map[string]float64{"processes": float64(len(m.procs))}
	for _, p := range m.procs {
		for _, t := range p {
			st, ok := t.sched.(interface{ Stats() map[string]float64 })
			if !ok {
				continue
			}
			for k, v := range st.Stats() {
				if k == "streams" {
					out[k] = max(out[k], v)
				} else {
					out[k] += v
				}
			}
		}
	}
	return out
}

// Run starts one host thread per process and returns when all are done.
func (m *MultiProcess) Run(h device.Host, in *workloads.Instance) error {
	if m.procs == nil {
		if err := m.Prepare(h, in); err != nil {
			return err
		}
	}
	done := h.NewQueue("multiprocess-done")
	for i, p := range m.procs {
		p := p
		h.Go(fmt.Sprintf("process-%d", i), func(h device.Host) error {
			var err error
			for _, t := range p {
				if err = t.sched.Run(h, t.view); err != nil {
					err = fmt.Errorf("%s: %w", t.view.Prog.Name, err)
					break
				}
			}
			done.Put(err)
			return nil // reported through the queue, so Run sees it first
		})
	}
	var errs []error
	for range m.procs {
		v, ok := h.Get(done)
		if !ok {
			return fmt.Errorf("multiprocess: completion queue closed")
		}
		if err, _ := v.(error); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
