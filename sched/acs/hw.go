package acs

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// HW is ACS-HW: kernels are submitted in program order to the device's
// hardware dependency queue with upstream ids the host computed against its
// list of the last M submissions.
//
// With HWParams.Checkers = 0 the submitting host thread computes each
// kernel's upstream list itself before submitting it (one CPU thread does
// everything). With C > 0 checker threads, the upstream lists are computed
// ahead by C host threads, kernel k by checker k mod C, and handed to the
// submitting thread, which only submits, in program order. This is the
// same check: the host's list of the last M kernels is fixed by program
// order (kernels since the last copy), not by timing, so any thread can
// compute kernel k's list; only the submissions must stay in order, so
// that every upstream kernel already has its id.
type HW struct {
	p HWParams
	// access is an operation's access set: in.Access, replaceable by
	// tests (a scheduler that ignores dependencies must be caught).
	access func(in *workloads.Instance, k int) []device.Arg

	// Set up by Prepare (Checkers > 0), kept across Runs until Cleanup.
	started bool
	tasks   []device.Queue // submitting thread -> checker c: *workloads.Instance per Run
	results []device.Queue // checker c -> submitting thread: checked, in program order
	exited  device.Queue   // checker threads -> Cleanup
}

// Needs implements sched.Needer: the device's hardware dependency queue.
func (*HW) Needs() []sched.Trait { return []sched.Trait{sched.TraitDependencyQueue} }

var (
	_ sched.Scheduler = (*HW)(nil)
	_ sched.Preparer  = (*HW)(nil)
)

// NewHW returns ACS-HW with parameters p.
func NewHW(p HWParams) (*HW, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &HW{p: p, access: (*workloads.Instance).Access}, nil
}

func (s *HW) Name() string { return s.p.Name() }

// checked is one kernel's upstream list: the operations (program order
// indices) among the host's last M kernels that it conflicts with.
type checked struct {
	op     int
	up     []int
	listed int // the length of the host's list k was checked against
}

// check computes kernel k's upstream list against the host's list of the
// last M kernels before it (stopping at a copy, after which everything
// earlier is done) and returns it with the check's CPU cost, charged as
// ACS-SW's (CheckCost of the list's length and k's ranges).
func (s *HW) check(in *workloads.Instance, k int) checked {
	acc := s.access(in, k)
	c := checked{op: k}
	for j := k - 1; j >= 0 && c.listed < s.p.StaleList; j-- {
		if in.Launch(j) == nil {
			break
		}
		c.listed++
		if device.Conflicts(acc, s.access(in, j)) {
			c.up = append(c.up, j)
		}
	}
	return c
}

// cost is the CPU time charged for ck's check: ACS-SW's CheckCost of the
// list's length and the kernel's memory ranges.
func (s *HW) cost(in *workloads.Instance, ck checked) time.Duration {
	return CheckCost(ck.listed, rangesOf(s.access(in, ck.op)))
}

// Prepare starts the checker threads (Checkers > 0), which then wait for
// runs: like ACS-SW's thread pool, they exist before the timed region.
func (s *HW) Prepare(h device.Host, _ *workloads.Instance) error {
	if s.started {
		return errors.New("acs-hw: Prepare called twice without Cleanup")
	}
	if _, ok := h.(device.DependencyQueue); !ok {
		return fmt.Errorf("acs-hw: %w", device.ErrUnsupported)
	}
	s.started = true
	if s.p.Checkers == 0 {
		return nil
	}
	s.exited = h.NewQueue("acs-hw-exited")
	s.tasks = make([]device.Queue, s.p.Checkers)
	s.results = make([]device.Queue, s.p.Checkers)
	for c := range s.tasks {
		s.tasks[c] = h.NewQueue(fmt.Sprintf("acs-hw-task-%d", c))
		s.results[c] = h.NewQueue(fmt.Sprintf("acs-hw-checked-%d", c))
		h.Go(fmt.Sprintf("acs-hw-check-%d", c), s.checker(c))
	}
	return nil
}

// checker is checker thread c: per run, it checks kernels c, c+C, c+2C,
// ... in program order and hands each list to the submitting thread.
func (s *HW) checker(c int) func(h device.Host) error {
	return func(h device.Host) error {
		defer s.exited.Put(c)
		for {
			v, ok := h.Get(s.tasks[c])
			if !ok {
				return nil
			}
			in := v.(*workloads.Instance)
			for k := c; k < in.N(); k += s.p.Checkers {
				if in.Launch(k) == nil {
					continue
				}
				ck := s.check(in, k)
				if s.p.CheckCost {
					h.Spend(s.cost(in, ck))
				}
				s.results[c].Put(ck)
			}
		}
	}
}

// Cleanup stops the checker threads and waits for them to return.
func (s *HW) Cleanup(h device.Host) error {
	if !s.started {
		return nil
	}
	s.started = false
	for _, q := range s.tasks {
		q.Close()
	}
	for range s.tasks {
		if _, ok := h.Get(s.exited); !ok {
			return errors.New("acs-hw: exit queue closed while stopping")
		}
	}
	s.tasks, s.results, s.exited = nil, nil, nil
	return nil
}

// Run submits every kernel to the dependency queue in program order and
// waits for the queue to drain. A copy is not a kernel the queue can hold:
// the host drains the queue, runs the copy on a stream and synchronizes,
// then goes on (the programs ACS targets have no copies between their
// kernels).
func (s *HW) Run(h device.Host, in *workloads.Instance) (err error) {
	dq, ok := h.(device.DependencyQueue)
	if !ok {
		return fmt.Errorf("acs-hw: %w", device.ErrUnsupported)
	}
	if !s.started {
		if err := s.Prepare(h, in); err != nil {
			return err
		}
		defer sched.JoinCleanup(h, s, &err)
	}
	for _, q := range s.tasks {
		q.Put(in)
	}
	var copyStream device.Stream
	defer func() {
		if copyStream != nil {
			err = errors.Join(err, h.Destroy(copyStream))
		}
	}()
	ids := make([]uint64, in.N()) // DQSubmit's id of each submitted kernel
	var deps []uint64
	for k := 0; k < in.N(); k++ {
		l := in.Launch(k)
		if l == nil {
			if err := s.runCopy(h, dq, in, k, &copyStream); err != nil {
				return s.drain(h, in, k+1, err)
			}
			continue
		}
		var ck checked
		if s.p.Checkers == 0 {
			ck = s.check(in, k)
			if s.p.CheckCost {
				h.Spend(s.cost(in, ck))
			}
		} else {
			v, ok := h.Get(s.results[k%s.p.Checkers])
			if !ok {
				return errors.New("acs-hw: a checker's queue closed during a run")
			}
			ck = v.(checked)
			if ck.op != k {
				return fmt.Errorf("acs-hw: checker handed operation %d for %d (bug)", ck.op, k)
			}
		}
		deps = deps[:0]
		for _, u := range ck.up {
			deps = append(deps, ids[u])
		}
		id, err := dq.DQSubmit(l, deps)
		if err != nil {
			return s.drain(h, in, k+1, fmt.Errorf("acs-hw: submit %s: %w", l.Name(), err))
		}
		ids[k] = id
	}
	return dq.DQSynchronize()
}

func (s *HW) runCopy(h device.Host, dq device.DependencyQueue, in *workloads.Instance, k int, st *device.Stream) error {
	if err := dq.DQSynchronize(); err != nil {
		return err
	}
	if *st == nil {
		var err error
		if *st, err = h.NewStream(device.StreamOptions{}); err != nil {
			return err
		}
	}
	if err := in.Issue(h, *st, k); err != nil {
		return err
	}
	return h.StreamSynchronize(*st)
}

// drain takes the checkers' lists of kernels from operation `from` on,
// which a failed run will not submit, so that the next Run starts with
// empty queues, and returns err.
func (s *HW) drain(h device.Host, in *workloads.Instance, from int, err error) error {
	if s.p.Checkers > 0 {
		for k := from; k < in.N(); k++ {
			if in.Launch(k) != nil {
				h.Get(s.results[k%s.p.Checkers])
			}
		}
	}
	if serr := h.(device.DependencyQueue).DQSynchronize(); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}
