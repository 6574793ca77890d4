package pipeline

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// jobSet is a pipeline program seen as jobs: step j is job j, every job has
// the same shape, and each job's written device buffers ("slots") belong to
// it alone, so jobs are independent and a job can be retargeted to another
// set of buffers of the same sizes.
type jobSet struct {
	in *workloads.Instance
	// slotBytes are the sizes of a job's slots, in the order the job first
	// touches them.
	slotBytes []int64
	// local[j][s] is the program buffer that is job j's slot s.
	local [][]int
	ops   int // operations per job
}

func (js *jobSet) jobs() int { return len(js.local) }

// touched calls f for every device buffer an operation accesses, with
// whether it writes it.
func touched(op *workloads.Op, f func(buf int, write bool)) {
	switch op.Kind {
	case workloads.OpKernel:
		for _, a := range op.Args {
			if a.Buf >= 0 {
				f(a.Buf, a.Mode&device.Write != 0)
			}
		}
	case workloads.OpCopy:
		switch c := op.Copy; c.Kind {
		case device.HostToDevice:
			f(c.Dst, true)
		case device.DeviceToHost:
			f(c.Src, false)
		case device.DeviceToDevice:
			f(c.Src, false)
			f(c.Dst, true)
		}
	}
}

// analyze checks that in's program is a pipeline of independent jobs of one
// shape and finds each job's slots. Buffers that no job writes (constant
// inputs shared by all jobs) are left where they are.
func analyze(in *workloads.Instance) (*jobSet, error) {
	p := in.Prog
	if in.Steps() == 0 {
		return nil, fmt.Errorf("pipeline: program %s has no jobs", p.Name)
	}
	writer, err := bufferWriters(p)
	if err != nil {
		return nil, err
	}
	js := &jobSet{in: in, ops: len(p.Steps[0].Ops), local: make([][]int, len(p.Steps))}
	// shape0[k][a] is the slot (or -1-buffer for a shared buffer) that
	// argument a of op k names in job 0, to which every other job must
	// conform.
	var shape0 [][]int
	for j := range p.Steps {
		shape, err := js.jobShape(writer, j)
		if err != nil {
			return nil, err
		}
		if j == 0 {
			shape0 = shape
			for _, b := range js.local[0] {
				js.slotBytes = append(js.slotBytes, p.Buffers[b].Bytes)
			}
			continue
		}
		if err := js.conforms(j, shape, shape0); err != nil {
			return nil, err
		}
	}
	return js, nil
}

// bufferWriters returns, per buffer of p, the one job that writes it (-1:
// none), or an error naming two jobs that write the same buffer.
func bufferWriters(p *workloads.Program) ([]int, error) {
	writer := make([]int, len(p.Buffers))
	for b := range writer {
		writer[b] = -1
	}
	for j := range p.Steps {
		for k := range p.Steps[j].Ops {
			var err error
			touched(&p.Steps[j].Ops[k], func(b int, write bool) {
				if !write || err != nil {
					return
				}
				if w := writer[b]; w >= 0 && w != j {
					err = fmt.Errorf("pipeline: jobs %d and %d of %s both write buffer %s: jobs are not independent", w, j, p.Name, p.Buffers[b].Name)
				}
				writer[b] = j
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return writer, nil
}

// jobShape finds job j's slots (into js.local[j]) and returns, per
// operation, the slot (or -1-buffer for a shared buffer) each of its
// buffer references names; after job 0 it also compares every operation
// with job 0's.
func (js *jobSet) jobShape(writer []int, j int) ([][]int, error) {
	p := js.in.Prog
	ops := p.Steps[j].Ops
	if len(ops) != js.ops {
		return nil, fmt.Errorf("pipeline: job %d of %s has %d operations, job 0 has %d: jobs must have one shape", j, p.Name, len(ops), js.ops)
	}
	slotOf := map[int]int{}
	var shape [][]int
	for k := range ops {
		op := &ops[k]
		var refs []int
		var err error
		touched(op, func(b int, _ bool) {
			if err != nil {
				return
			}
			switch w := writer[b]; {
			case w == j:
				s, ok := slotOf[b]
				if !ok {
					s = len(js.local[j])
					slotOf[b] = s
					js.local[j] = append(js.local[j], b)
					if p.Buffers[b].Init != nil {
						err = fmt.Errorf("pipeline: buffer %s of job %d has initial contents; a job's written buffers must be defined by the job itself so it can run in any buffers", p.Buffers[b].Name, j)
					}
				}
				refs = append(refs, s)
			case w >= 0:
				err = fmt.Errorf("pipeline: job %d of %s reads buffer %s, which job %d writes: jobs are not independent", j, p.Name, p.Buffers[b].Name, w)
			default:
				refs = append(refs, -1-b)
			}
		})
		if err != nil {
			return nil, err
		}
		shape = append(shape, refs)
		if j > 0 {
			if err := sameShape(&p.Steps[0].Ops[k], op); err != nil {
				return nil, fmt.Errorf("pipeline: job %d of %s differs from job 0 at operation %d (%s): %v", j, p.Name, k, op.Name, err)
			}
		}
	}
	return shape, nil
}

// conforms checks job j's slots and buffer references (shape) against
// job 0's (shape0).
func (js *jobSet) conforms(j int, shape, shape0 [][]int) error {
	p := js.in.Prog
	if len(js.local[j]) != len(js.slotBytes) {
		return fmt.Errorf("pipeline: job %d of %s writes %d buffers, job 0 writes %d: jobs must have one shape", j, p.Name, len(js.local[j]), len(js.slotBytes))
	}
	for s, b := range js.local[j] {
		if p.Buffers[b].Bytes != js.slotBytes[s] {
			return fmt.Errorf("pipeline: job %d of %s: buffer %s has %d bytes, job 0's buffer in its place has %d", j, p.Name, p.Buffers[b].Name, p.Buffers[b].Bytes, js.slotBytes[s])
		}
	}
	for k := range shape {
		for a := range shape[k] {
			if shape[k][a] != shape0[k][a] {
				return fmt.Errorf("pipeline: job %d of %s: operation %d (%s) uses its buffers differently from job 0", j, p.Name, k, p.Steps[j].Ops[k].Name)
			}
		}
	}
	return nil
}

// sameShape reports how op differs from ref in anything but its buffers and
// host offsets, which are what retargeting and graph updates may change.
func sameShape(ref, op *workloads.Op) error {
	if ref.Kind != op.Kind {
		return fmt.Errorf("kind differs")
	}
	if op.Kind == workloads.OpCopy {
		a, b := ref.Copy, op.Copy
		if a.Kind != b.Kind || a.Bytes != b.Bytes || a.DstOff != b.DstOff || a.SrcOff != b.SrcOff || a.Host != b.Host {
			return fmt.Errorf("copy %s of %d bytes, job 0 has %s of %d bytes (or other offsets)", b.Kind, b.Bytes, a.Kind, a.Bytes)
		}
		return nil
	}
	if ref.Kernel != op.Kernel || ref.Grid != op.Grid || ref.Block != op.Block || ref.SharedMem != op.SharedMem {
		return fmt.Errorf("kernel %s %v x %v, job 0 has %s %v x %v", op.Kernel, op.Grid, op.Block, ref.Kernel, ref.Grid, ref.Block)
	}
	if len(ref.Args) != len(op.Args) {
		return fmt.Errorf("%d arguments, job 0 has %d", len(op.Args), len(ref.Args))
	}
	for i := range ref.Args {
		a, b := ref.Args[i], op.Args[i]
		if (a.Buf < 0) != (b.Buf < 0) || a.Mode != b.Mode || a.Off != b.Off || a.Len != b.Len || a.Size != b.Size {
			return fmt.Errorf("argument %d differs", i)
		}
	}
	return nil
}

// boundJob is one job's commands bound to a set of buffers: what a graph's
// nodes are set to, in capture order (node k is operation k).
type boundJob struct {
	job      int
	launches []device.Launch // valid where the operation is a kernel
	copies   []device.Copy   // valid where the operation is a copy
	// n, under copies batched, makes the entry a chunk: the n consecutive
	// jobs from job, bound to no buffers (launches and copies unused).
	n int
}

// binder binds jobs to slot buffers. remap is scratch, indexed by program
// buffer, empty between calls.
type binder struct {
	js    *jobSet
	remap []device.Buffer
}

func newBinder(js *jobSet) *binder {
	return &binder{js: js, remap: make([]device.Buffer, len(js.in.Bufs))}
}

// bind builds job j's commands over the given slot buffers (the job's own
// buffers when slots is nil), reusing dst's storage.
func (bd *binder) bind(j int, slots []device.Buffer, dst *boundJob) {
	in := bd.js.in
	local := bd.js.local[j]
	if slots != nil {
		for s, b := range local {
			bd.remap[b] = slots[s]
		}
	}
	dst.job = j
	if dst.launches == nil {
		dst.launches = make([]device.Launch, bd.js.ops)
		dst.copies = make([]device.Copy, bd.js.ops)
	}
	lo, _ := in.StepRange(j)
	for k := 0; k < bd.js.ops; k++ {
		op := in.Op(lo + k)
		switch op.Kind {
		case workloads.OpKernel:
			l := *in.Launch(lo + k)
			if slots != nil {
				l.Args = in.BindArgs(op.Args, bd.remap)
			}
			dst.launches[k] = l
		case workloads.OpCopy:
			c := *in.CopyCmd(lo + k)
			if slots != nil {
				if !bd.remap[op.Copy.Dst].IsNil() && c.Kind != device.DeviceToHost {
					c.Dst = bd.remap[op.Copy.Dst]
				}
				if !bd.remap[op.Copy.Src].IsNil() && c.Kind != device.HostToDevice {
					c.Src = bd.remap[op.Copy.Src]
				}
			}
			dst.copies[k] = c
		}
	}
	if slots != nil {
		for _, b := range local {
			bd.remap[b] = device.Buffer{}
		}
	}
}

// bufferArgs counts a job's buffer references: the pointers retargeting
// rewrites.
func (js *jobSet) bufferArgs() int {
	n := 0
	for k := range js.in.Prog.Steps[0].Ops {
		touched(&js.in.Prog.Steps[0].Ops[k], func(int, bool) { n++ })
	}
	return n
}

// sameLaunch reports whether two launches of one kernel node have the same
// parameters (so a graph update can be skipped).
func sameLaunch(a, b *device.Launch) bool {
	if a.Kernel != b.Kernel || a.Grid != b.Grid || a.Block != b.Block || a.SharedMem != b.SharedMem || len(a.Args) != len(b.Args) {
		return false
	}
	for i := range a.Args {
		if a.Args[i] != b.Args[i] {
			return false
		}
	}
	return true
}

// sameCopy reports whether two copies of one copy node are the same.
func sameCopy(a, b *device.Copy) bool {
	return a.Kind == b.Kind && a.Dst == b.Dst && a.DstOff == b.DstOff && a.Src == b.Src && a.SrcOff == b.SrcOff &&
		a.Host == b.Host && a.HostOff == b.HostOff && a.Bytes == b.Bytes
}

// issueJob issues job j's operations, over its own buffers, on s.
func issueJob(h device.Host, in *workloads.Instance, s device.Stream, j int) error {
	lo, hi := in.StepRange(j)
	for k := lo; k < hi; k++ {
		if err := in.Issue(h, s, k); err != nil {
			return fmt.Errorf("job %d, operation %s: %w", j, in.Op(k).Name, err)
		}
	}
	return nil
}
