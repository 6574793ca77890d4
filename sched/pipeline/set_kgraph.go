package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// SET-kgraph (copies stream; why: docs/history/set.md): each worker's
// graph holds only the job's kernels (and any device-to-device copies
// between them), captured once on the worker's stream over its private
// buffers. Every job a worker runs uses those same buffers, so the graph's
// parameters never change and no node is ever updated; what differs from
// job to job is only where its input comes from and its output goes in
// pinned host memory, and those two copies are issued on the worker's
// stream around the graph launch:
//
//	Copy host->device   job's host input  -> the worker's input buffer
//	GraphLaunch         the worker's kernel graph (its buffers)
//	Copy device->host   the worker's output buffer -> job's host output
//
// Stream order makes that safe with Depth > 1 too: the next job's copy-in
// into the worker's buffers starts only after the previous job's copy-out
// from them. A stolen job is rebound to the thief's buffers, which changes
// only its copies (its kernels are the thief's graph's).

// kernelRange is the part [lo, hi) of a job's operations that goes into a
// SET-kgraph worker's graph: everything between the job's leading
// host-to-device copies and its trailing device-to-host copies.
type kernelRange struct{ lo, hi int }

// validateStreamCopies checks js's job shape for copies on the stream
// and finds the job's kernel range.
func (s *SET) validateStreamCopies(js *jobSet) error {
	if s.p.Copies != CopiesStream {
		return nil
	}
	r, err := jobKernelRange(js, "copies on the stream (copies=stream)")
	if err != nil {
		return err
	}
	s.kernels = r
	return nil
}

// jobKernelRange finds js's kernel range: the job must be its leading
// host-to-device copies, then kernels (and device-to-device copies, at
// least one kernel), then its trailing device-to-host copies. what names
// the option that needs this shape, in the error.
func jobKernelRange(js *jobSet, what string) (kernelRange, error) {
	in := js.in
	lo, _ := in.StepRange(0)
	isCopy := func(k int, kind device.CopyKind) bool {
		op := in.Op(lo + k)
		return op.Kind == workloads.OpCopy && op.Copy.Kind == kind
	}
	r := kernelRange{lo: 0, hi: js.ops}
	for r.lo < js.ops && isCopy(r.lo, device.HostToDevice) {
		r.lo++
	}
	for r.hi > r.lo && isCopy(r.hi-1, device.DeviceToHost) {
		r.hi--
	}
	kernels := 0
	for k := r.lo; k < r.hi; k++ {
		op := in.Op(lo + k)
		if op.Kind == workloads.OpKernel {
			kernels++
			continue
		}
		if c := op.Copy.Kind; c == device.HostToDevice || c == device.DeviceToHost {
			return r, fmt.Errorf("set: %s need jobs shaped as host-to-device copies, kernels, device-to-host copies; %s's operation %d (%s) is a %s copy between kernels", what, in.Prog.Name, k, op.Name, c)
		}
	}
	if kernels == 0 {
		return r, fmt.Errorf("set: %s need at least one kernel per job; %s's jobs have none", what, in.Prog.Name)
	}
	return r, nil
}

// prepareKernelGraph captures the kernel range of first (a job bound to
// wk's buffers) on wk's stream into wk's graph, and checks that every job
// dealt to wk has exactly those kernel parameters once bound to wk's
// buffers, so the graph never needs an update (a workload whose kernels
// take per-job scalars is refused rather than run wrong).
func (s *SET) prepareKernelGraph(h device.Host, wk *worker, first *boundJob) (err error) {
	in := s.js.in
	r := s.kernels
	lo0, _ := in.StepRange(0) // every job has step 0's shape
	for i := range wk.queue {
		job := &wk.queue[i]
		for k := r.lo; k < r.hi; k++ {
			var same bool
			if in.Op(lo0+k).Kind == workloads.OpKernel {
				same = sameLaunch(&job.launches[k], &first.launches[k])
			} else {
				same = sameCopy(&job.copies[k], &first.copies[k])
			}
			if !same {
				return fmt.Errorf("copies on the stream (copies=stream): job %d's operation %d (%s) has parameters other than job %d's beyond its buffers, so one kernel graph per worker cannot serve both", job.job, k, in.Op(lo0+k).Name, first.job)
			}
		}
	}
	if err := h.BeginCapture(wk.stream); err != nil {
		return err
	}
	if err := s.issueOps(h, wk.stream, first, r.lo, r.hi); err != nil {
		return sched.AbortCapture(h, wk.stream, err)
	}
	g, err := h.EndCapture(wk.stream)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.Destroy(g)) }()
	if g.Nodes() != r.hi-r.lo {
		return fmt.Errorf("captured kernel graph has %d nodes for %d operations", g.Nodes(), r.hi-r.lo)
	}
	if wk.exec, err = h.Instantiate(g); err != nil {
		return err
	}
	return nil
}

// launchStreamCopies dispatches job (bound to wk's buffers) on wk's
// stream: its host-to-device copies, a launch of wk's kernel graph, its
// device-to-host copies (between the job's timing events when Gaps is on),
// then done behind them if done is not nil. All of it is host time in
// scheduling calls.
func (s *SET) launchStreamCopies(h device.Host, wk *worker, job *boundJob, m *Metrics, done func()) error {
	if err := s.gaps.jobStart(h, wk.stream, job.job); err != nil {
		return err
	}
	t := h.Now()
	if err := s.issueKernelGraphJob(h, wk, job); err != nil {
		return err
	}
	since(h, t, &m.Schedule)
	if err := s.gaps.jobEnd(h, wk.stream, job.job); err != nil {
		return err
	}
	if done != nil {
		return m.hostFunc(h, wk.stream, done)
	}
	return nil
}

// issueKernelGraphJob issues job (bound to wk's buffers) on wk's stream:
// its host-to-device copies, a launch of wk's kernel graph, its
// device-to-host copies.
func (s *SET) issueKernelGraphJob(h device.Host, wk *worker, job *boundJob) error {
	for k := 0; k < s.kernels.lo; k++ {
		if err := h.Copy(wk.stream, &job.copies[k]); err != nil {
			return err
		}
	}
	if err := h.GraphLaunch(wk.exec, wk.stream); err != nil {
		return err
	}
	for k := s.kernels.hi; k < s.js.ops; k++ {
		if err := h.Copy(wk.stream, &job.copies[k]); err != nil {
			return err
		}
	}
	return nil
}

// stealCost is the host bookkeeping charged for retargeting a stolen job:
// every buffer pointer it holds, or under copies stream only its copies'
// (its kernels are the thief's graph's, never rewritten).
func (s *SET) stealCost() time.Duration {
	if s.p.Copies == CopiesStream {
		return time.Duration(s.kernels.lo+s.js.ops-s.kernels.hi) * s.retargetCost
	}
	return time.Duration(s.bufArgs) * s.retargetCost
}
