package jobs

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// MinJobs and MaxJobs bound a workload's job count (the paper's range).
const (
	MinJobs = 4
	MaxJobs = 4096
)

// Workload is a pipeline program together with what its throughput is
// counted in: UnitsPerJob units of Unit per job (pixels, edge relaxations,
// flops ...).
type Workload struct {
	Program     *workloads.Program
	Jobs        int
	Unit        string
	UnitsPerJob float64
	// Reference is job j's expected output slot (OutSlot bytes), computed
	// on the CPU from the job's regenerated input.
	Reference func(j int) []byte
	// OutSlot is the stride of the jobs' slots in the host buffer "out".
	OutSlot int64
}

// Host buffer indices every jobs program uses.
const (
	hostIn  = 0
	hostOut = 1
)

// align is the alignment of sections inside a packed job buffer, so every
// kernel pointer is aligned for any scalar type.
const align = 256

func alignUp(n int64) int64 { return (n + align - 1) / align * align }

// layout packs named sections of 4-byte elements into one byte buffer.
type layout struct {
	off   []int64
	count []int
	total int64
}

func newLayout(counts ...int) layout {
	var l layout
	for _, c := range counts {
		l.off = append(l.off, l.total)
		l.count = append(l.count, c)
		l.total += alignUp(int64(c) * 4)
	}
	return l
}

// bytes is the size of section i.
func (l layout) bytes(i int) int64 { return int64(l.count[i]) * 4 }

// jobShape is what one job needs from the builder: sizes of its input and
// output slots, its scratch buffers, and a function that appends its
// kernels given its buffer indices.
type jobShape struct {
	name     string
	inBytes  int64
	outBytes int64
	scratch  []int64 // sizes of additional per-job device buffers
	// kernels returns the job's kernel operations. in and out are the
	// job's device buffers; scratch its additional ones, in order.
	kernels func(in, out int, scratch []int) []workloads.Op
	// input fills one job's input slot from its random source.
	input func(r *rand.Rand, slot []byte)
	// ref writes the CPU reference of one job's output slot, computed
	// from its input slot.
	ref func(in, out []byte)
	// compare describes the first difference between an output slot and
	// the reference, exact or within a tolerance as the workload allows.
	compare func(got, want []byte) error
}

// jobRand is job j's random source: the same seed and job give the same
// inputs, and different jobs get different ones.
func jobRand(seed int64, j int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(j)*0x9e3779b97f4a7c15+1))
}

// plan is what build lays out for jobs jobs of shape s: per job a copy
// in, its kernels and a copy out, its input, output and scratch buffers;
// on the host the input and output slots and the references.
func (s jobShape) plan(jobs int, inB, outB int64) workloads.Plan {
	f := workloads.F
	scratch := make([]int, len(s.scratch))
	perJob := workloads.Product(workloads.Factor{Name: "input bytes", N: s.inBytes}).Plus(workloads.Product(workloads.Factor{Name: "output bytes", N: s.outBytes}))
	for _, b := range s.scratch {
		perJob = perJob.Plus(workloads.Product(workloads.Factor{Name: "scratch bytes", N: b}))
	}
	hostPerJob := workloads.Product(workloads.Factor{Name: "input slot", N: inB}).Plus(workloads.Product(workloads.Factor{Name: "output slot and reference", N: 2 * outB}))
	return workloads.Plan{
		Ops:         workloads.Product(f("jobs", jobs), f("operations per job", 2+len(s.kernels(0, 1, scratch)))),
		Buffers:     workloads.Product(f("jobs", jobs), f("buffers per job", 2+len(s.scratch))),
		DeviceBytes: perJob.Times(f("jobs", jobs)),
		HostBytes:   hostPerJob.Times(f("jobs", jobs)),
	}
}

// build lays out a program of jobs copies of shape s.
func build(s jobShape, jobs int, seed int64) (*workloads.Program, func(j int) []byte, error) {
	if err := loadKernels(); err != nil {
		return nil, nil, err
	}
	if jobs < MinJobs || jobs > MaxJobs {
		return nil, nil, fmt.Errorf("%s: jobs is %d; it must be between %d and %d", s.name, jobs, MinJobs, MaxJobs)
	}
	inB, outB := alignUp(s.inBytes), alignUp(s.outBytes)
	if err := s.plan(jobs, inB, outB).Check(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.name, err)
	}
	p := &workloads.Program{
		Name: s.name,
		Host: []workloads.HostSpec{
			{Name: "in", Bytes: inB * int64(jobs), Pinned: true, Init: func(data []byte) {
				for j := 0; j < jobs; j++ {
					s.input(jobRand(seed, j), data[int64(j)*inB:int64(j)*inB+s.inBytes])
				}
			}},
			{Name: "out", Bytes: outB * int64(jobs), Pinned: true, Output: true},
		},
	}
	for j := 0; j < jobs; j++ {
		s.addJob(p, j, inB, outB)
	}
	refs := &references{s: &s, seed: seed, jobs: jobs}
	p.Check = func(outputs map[string][]byte) error { return refs.check(outputs, outB) }
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	return p, refs.reference, nil
}

// addJob appends job j to p: its device buffers and its step (copy in from
// host slot j, the kernels, copy out to host slot j; slots inB and outB
// bytes apart).
func (s *jobShape) addJob(p *workloads.Program, j int, inB, outB int64) {
	in := len(p.Buffers)
	p.Buffers = append(p.Buffers,
		workloads.BufferSpec{Name: fmt.Sprintf("in[%d]", j), Bytes: s.inBytes},
		workloads.BufferSpec{Name: fmt.Sprintf("out[%d]", j), Bytes: s.outBytes})
	out := in + 1
	scratch := make([]int, len(s.scratch))
	for i, b := range s.scratch {
		scratch[i] = len(p.Buffers)
		p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: fmt.Sprintf("scratch%d[%d]", i, j), Bytes: b})
	}
	ops := []workloads.Op{{
		Name: fmt.Sprintf("%s[%d] in", s.name, j), Kind: workloads.OpCopy,
		Copy: workloads.CopySpec{Kind: device.HostToDevice, Dst: in, Host: hostIn, HostOff: int64(j) * inB, Bytes: s.inBytes},
	}}
	for _, k := range s.kernels(in, out, scratch) {
		k.Name = fmt.Sprintf("%s[%d] %s", s.name, j, k.Name)
		k.Kind = workloads.OpKernel
		ops = append(ops, k)
	}
	ops = append(ops, workloads.Op{
		Name: fmt.Sprintf("%s[%d] out", s.name, j), Kind: workloads.OpCopy,
		Copy: workloads.CopySpec{Kind: device.DeviceToHost, Src: out, Host: hostOut, HostOff: int64(j) * outB, Bytes: s.outBytes},
	})
	p.Steps = append(p.Steps, workloads.Step{Ops: ops})
}

// references are the jobs' expected output slots, computed on the CPU.
type references struct {
	s    *jobShape
	seed int64
	jobs int
	once sync.Once
	refs [][]byte
}

// reference is job j's expected output slot, from its regenerated input.
func (r *references) reference(j int) []byte {
	in := make([]byte, r.s.inBytes)
	r.s.input(jobRand(r.seed, j), in)
	out := make([]byte, r.s.outBytes)
	r.s.ref(in, out)
	return out
}

// all computes every job's reference once, in parallel (jobs are
// independent, so the result does not depend on the schedule), and keeps
// them: a GPU experiment checks every repetition of every row.
func (r *references) all() [][]byte {
	r.once.Do(func() {
		r.refs = make([][]byte, r.jobs)
		var wg sync.WaitGroup
		next := make(chan int)
		for w := 0; w < runtime.GOMAXPROCS(0); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					r.refs[j] = r.reference(j)
				}
			}()
		}
		for j := 0; j < r.jobs; j++ {
			next <- j
		}
		close(next)
		wg.Wait()
	})
	return r.refs
}

// check compares the "out" host buffer (slots outB bytes apart) with the
// references, job by job.
func (r *references) check(outputs map[string][]byte, outB int64) error {
	s := r.s
	got, ok := outputs["out"]
	if !ok {
		return fmt.Errorf("%s: output %q missing", s.name, "out")
	}
	if int64(len(got)) != outB*int64(r.jobs) {
		return fmt.Errorf("%s: output has %d bytes, want %d", s.name, len(got), outB*int64(r.jobs))
	}
	refs := r.all()
	for j := 0; j < r.jobs; j++ {
		if err := s.compare(got[int64(j)*outB:int64(j)*outB+s.outBytes], refs[j]); err != nil {
			return fmt.Errorf("%s: job %d: %w", s.name, j, err)
		}
	}
	return nil
}

// f32 reads element i of a little-endian float32 section starting at off.
func getF32(b []byte, off int64, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off+int64(i)*4:]))
}

func putF32(b []byte, off int64, i int, v float32) {
	binary.LittleEndian.PutUint32(b[off+int64(i)*4:], math.Float32bits(v))
}

func getI32(b []byte, off int64, i int) int32 {
	return int32(binary.LittleEndian.Uint32(b[off+int64(i)*4:]))
}

func putI32(b []byte, off int64, i int, v int32) {
	binary.LittleEndian.PutUint32(b[off+int64(i)*4:], uint32(v))
}

// f32s decodes n float32 values starting at byte off.
func f32s(b []byte, off int64, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = getF32(b, off, i)
	}
	return out
}

// putF32s encodes vs as float32 values starting at byte off.
func putF32s(b []byte, off int64, vs []float32) {
	for i, v := range vs {
		putF32(b, off, i, v)
	}
}

// compareExact reports the first element where got differs bit for bit from
// want (NaNs compare by bits too).
func compareExact(what string, got, want []float32) error {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("%s[%d] = %g, want %g (exact)", what, i, got[i], want[i])
		}
	}
	return nil
}

// compareClose reports the first element where got differs from want by
// more than tol relative to max(1, |want|).
func compareClose(what string, got, want []float32, tol float64) error {
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.Abs(g-w) > tol*math.Max(1, math.Abs(w)) {
			return fmt.Errorf("%s[%d] = %g, want %g (tolerance %g)", what, i, got[i], want[i], tol)
		}
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
