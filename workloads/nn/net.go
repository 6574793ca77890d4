package nn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// Module is the kernel module (workloads/kernels/nn.cu) every launch uses.
const Module = "nn"

// WeightsBuffer is the name of the read-only arena holding every weight.
const WeightsBuffer = "weights"

// Tensor is a view of Shape at element offset Off of program buffer Buf.
// Feature maps are [C,H,W] (batch 1), matrices [rows, cols], vectors [n].
// The zero Tensor (nil Shape) means "none".
type Tensor struct {
	Buf   int
	Off   int
	Shape []int
}

// Valid reports whether t names a tensor.
func (t Tensor) Valid() bool { return len(t.Shape) > 0 }

// Numel is the number of elements.
func (t Tensor) Numel() int {
	if !t.Valid() {
		return 0
	}
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// C, H and W are the dimensions of a [C,H,W] feature map.
func (t Tensor) C() int { return t.Shape[0] }
func (t Tensor) H() int { return t.Shape[1] }
func (t Tensor) W() int { return t.Shape[2] }

// Slice is elements [i0, i1) along the first dimension (channels of a
// feature map, rows of a matrix): a contiguous view. Out-of-range bounds
// give the zero Tensor, which builders reject.
func (t Tensor) Slice(i0, i1 int) Tensor {
	if !t.Valid() || i0 < 0 || i1 <= i0 || i1 > t.Shape[0] {
		return Tensor{}
	}
	inner := t.Numel() / t.Shape[0]
	sh := append([]int{i1 - i0}, t.Shape[1:]...)
	return Tensor{Buf: t.Buf, Off: t.Off + i0*inner, Shape: sh}
}

// At is element i along the first dimension, with that dimension removed
// (the zero Tensor when out of range).
func (t Tensor) At(i int) Tensor {
	if !t.Valid() || i < 0 || i >= t.Shape[0] {
		return Tensor{}
	}
	inner := t.Numel() / t.Shape[0]
	sh := append([]int(nil), t.Shape[1:]...)
	if len(sh) == 0 {
		sh = []int{1}
	}
	return Tensor{Buf: t.Buf, Off: t.Off + i*inner, Shape: sh}
}

// Reshape is the same elements under another shape.
func (t Tensor) Reshape(shape ...int) (Tensor, error) {
	u := Tensor{Buf: t.Buf, Off: t.Off, Shape: append([]int(nil), shape...)}
	if u.Numel() != t.Numel() {
		return Tensor{}, fmt.Errorf("nn: reshape %v to %v changes the element count", t.Shape, shape)
	}
	return u, nil
}

// Arg is t as a kernel argument with access mode m over exactly its bytes.
func (t Tensor) Arg(m device.Access) workloads.ArgSpec {
	return workloads.BufRange(t.Buf, m, int64(t.Off)*4, int64(t.Numel())*4)
}

// Init is how a weight is filled.
type Init struct {
	// Uniform in [-Bound, Bound] around Center.
	Center, Bound float32
	// Row > 1 subtracts the mean of every consecutive Row values (one
	// output unit's fan-in). See He.
	Row int
}

// He is the uniform initialization that keeps activations' variance through
// a ReLU layer of fanIn inputs (He et al. 2015), bound sqrt(6/fanIn), with
// each unit's weights shifted to zero mean. The shift stands in for batch
// norm's centering: ReLU outputs are positive, so a unit whose weights sum
// to a clearly negative value is off for every input, and a narrow random
// network (reduced scale) would often output a constant.
func He(fanIn int) Init {
	return Init{Bound: float32(math.Sqrt(6 / float64(fanIn))), Row: fanIn}
}

// Small is a small symmetric init (folded batch-norm biases).
func Small() Init { return Init{Bound: 0.1} }

type weight struct {
	name string
	off  int // element offset in the arena
	n    int
	init Init
	seed uint64
}

type hostOp func(m *Memory)

// Net builds a program; see the package comment.
type Net struct {
	prog    *workloads.Program
	seed    int64
	err     error
	host    [][]hostOp // per step, per op: the CPU reference of each op
	byName  map[string]int
	lastUse map[int]int // buffer -> the step that last named it
	weights []weight
	wByName map[string]int
	wElems  int
	kern    map[string]*device.Kernel
	live    *Memory
	liveAt  workloads.Ref // next op the live memory has not run
	done    bool
	// Totals checked against the program limits as the net grows, so that
	// an oversized model fails before it is built (workloads/limits.go).
	ops, bufBytes int64
}

// New starts a network program named name; seed fixes every weight.
func New(name string, seed int64) *Net {
	n := &Net{
		prog:    &workloads.Program{Name: name, Steps: []workloads.Step{{}}},
		seed:    seed,
		host:    [][]hostOp{nil},
		byName:  map[string]int{},
		lastUse: map[int]int{},
		wByName: map[string]int{},
		kern:    map[string]*device.Kernel{},
	}
	n.prog.Buffers = append(n.prog.Buffers, workloads.BufferSpec{Name: WeightsBuffer, Init: n.fillWeights})
	n.byName[WeightsBuffer] = 0
	return n
}

// Program is the program under construction (complete after Finish).
func (n *Net) Program() *workloads.Program { return n.prog }

// Err is the first error recorded by a builder call, if any.
func (n *Net) Err() error { return n.err }

// Fail records err as the net's error unless one is recorded already
// (the first one wins; Err and Finish report it).
func (n *Net) Fail(err error) {
	if n.err == nil {
		n.err = err
	}
}

func (n *Net) failf(format string, args ...any) Tensor {
	n.Fail(fmt.Errorf("nn %s: "+format, append([]any{n.prog.Name}, args...)...))
	return Tensor{}
}

// ok reports whether building may go on (no error yet, not finished).
func (n *Net) ok() bool {
	if n.done && n.err == nil {
		n.err = fmt.Errorf("nn %s: net used after Finish", n.prog.Name)
	}
	return n.err == nil
}

// Step is the index of the current step.
func (n *Net) Step() int { return len(n.prog.Steps) - 1 }

// NextStep starts a new step; later ops belong to it. The current step must
// not be empty.
func (n *Net) NextStep() {
	if !n.ok() {
		return
	}
	if len(n.prog.Steps[n.Step()].Ops) == 0 {
		n.failf("step %d is empty", n.Step())
		return
	}
	n.prog.Steps = append(n.prog.Steps, workloads.Step{})
	n.host = append(n.host, nil)
}

// buffer returns the buffer named name of bytes, reusing one a previous step
// named, or creating it.
func (n *Net) buffer(name string, elems int) (int, bool) {
	if elems <= 0 {
		n.failf("buffer %s has %d elements", name, elems)
		return 0, false
	}
	step := n.Step()
	if b, ok := n.byName[name]; ok {
		if b == 0 {
			n.failf("buffer name %q is reserved", name)
			return 0, false
		}
		if last, used := n.lastUse[b]; used && last == step {
			n.failf("buffer %s named twice in step %d", name, step)
			return 0, false
		}
		if got := n.prog.Buffers[b].Bytes; got != int64(elems)*4 {
			n.failf("buffer %s reused with %d bytes, was %d", name, elems*4, got)
			return 0, false
		}
		n.lastUse[b] = step
		return b, true
	}
	if n.bufBytes += int64(elems) * 4; n.bufBytes > workloads.MaxDeviceBytes {
		n.failf("buffer %s: the activations need more than %d bytes of device memory (workloads.MaxDeviceBytes)", name, int64(workloads.MaxDeviceBytes))
		return 0, false
	}
	b := len(n.prog.Buffers)
	n.prog.Buffers = append(n.prog.Buffers, workloads.BufferSpec{Name: name, Bytes: int64(elems) * 4})
	n.byName[name] = b
	n.lastUse[b] = step
	return b, true
}

// Activation allocates (or, in a later step, reuses) the buffer named name
// holding one tensor of shape.
func (n *Net) Activation(name string, shape ...int) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if err := checkShape(shape); err != nil {
		return n.failf("activation %s has shape %v: %v", name, shape, err)
	}
	t := Tensor{Shape: append([]int(nil), shape...)}
	b, ok := n.buffer(name, t.Numel())
	if !ok {
		return Tensor{}
	}
	t.Buf = b
	return t
}

// checkShape requires positive dimensions whose product (the elements)
// fits the program's device memory limit, computed without overflow.
func checkShape(shape []int) error {
	dims := make([]workloads.Factor, len(shape))
	for i, d := range shape {
		if d <= 0 {
			return fmt.Errorf("dimension %d is %d", i, d)
		}
		dims[i] = workloads.F(fmt.Sprintf("dim%d", i), d)
	}
	return workloads.Product(dims...).Check("elements", workloads.MaxDeviceBytes/4, "workloads.MaxDeviceBytes")
}

// Input creates a buffer named name of shape filled with data at bind time.
func (n *Net) Input(name string, data []float32, shape ...int) Tensor {
	t := n.Activation(name, shape...)
	if !t.Valid() {
		return t
	}
	if len(data) != t.Numel() {
		return n.failf("input %s: %d values for shape %v", name, len(data), shape)
	}
	vals := append([]float32(nil), data...)
	n.prog.Buffers[t.Buf].Init = func(b []byte) { putFloats(b, vals) }
	return t
}

// Output marks t's buffer as an output: compared by Check.
func (n *Net) Output(t Tensor) {
	if !n.ok() {
		return
	}
	if !t.Valid() || t.Buf == 0 {
		n.failf("output: not an activation")
		return
	}
	n.prog.Buffers[t.Buf].Output = true
}

// Weight returns the weight named name of shape in the arena, creating it
// with init on first use (a later step reuses it by name).
func (n *Net) Weight(name string, init Init, shape ...int) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	t := Tensor{Shape: append([]int(nil), shape...)}
	if err := checkShape(shape); err != nil {
		return n.failf("weight %s has shape %v: %v", name, shape, err)
	}
	if i, ok := n.wByName[name]; ok {
		w := n.weights[i]
		if w.n != t.Numel() {
			return n.failf("weight %s reused with %d elements, was %d", name, t.Numel(), w.n)
		}
		t.Off = w.off
		return t
	}
	h := fnv.New64a()
	var sb [8]byte
	binary.LittleEndian.PutUint64(sb[:], uint64(n.seed))
	h.Write(sb[:])
	h.Write([]byte(name))
	w := weight{name: name, off: n.wElems, n: t.Numel(), init: init, seed: h.Sum64()}
	n.wByName[name] = len(n.weights)
	n.weights = append(n.weights, w)
	n.wElems += w.n
	if int64(n.wElems)*4 > workloads.MaxDeviceBytes {
		return n.failf("weight %s: the weights need more than %d bytes of device memory (workloads.MaxDeviceBytes)", name, int64(workloads.MaxDeviceBytes))
	}
	n.prog.Buffers[0].Bytes = int64(n.wElems) * 4
	t.Off = w.off
	return t
}

// genWeight fills dst with w's values: splitmix64, uniform in the init's range.
func genWeight(w weight, dst []float32) {
	s := w.seed
	for i := range dst {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		u := float32(z>>40) / float32(1<<24) // [0,1)
		dst[i] = w.init.Center + w.init.Bound*(2*u-1)
	}
	if r := w.init.Row; r > 1 {
		for lo := 0; lo+r <= len(dst); lo += r {
			var sum float64
			for _, v := range dst[lo : lo+r] {
				sum += float64(v)
			}
			mean := float32(sum / float64(r))
			for i := lo; i < lo+r; i++ {
				dst[i] -= mean
			}
		}
	}
}

func (n *Net) fillWeights(b []byte) {
	vals := make([]float32, n.wElems)
	for _, w := range n.weights {
		genWeight(w, vals[w.off:w.off+w.n])
	}
	putFloats(b, vals)
}

func putFloats(b []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
}

// Floats decodes little-endian float32 bytes.
func Floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func (n *Net) kernel(name string) *device.Kernel {
	if k, ok := n.kern[name]; ok {
		return k
	}
	k, err := kernels.Lookup(Module, name)
	if err != nil {
		n.Fail(fmt.Errorf("nn %s: %w", n.prog.Name, err))
		return nil
	}
	n.kern[name] = k
	return k
}

// launch appends one kernel op with its CPU reference.
func (n *Net) launch(name, kernel string, grid, block device.Dim3, args []workloads.ArgSpec, flops, bytes float64, ref hostOp) {
	if !n.ok() {
		return
	}
	if n.ops++; n.ops > workloads.MaxOps {
		n.failf("more than %d operations (workloads.MaxOps)", workloads.MaxOps)
		return
	}
	k := n.kernel(kernel)
	if k == nil {
		return
	}
	blocks := float64(grid.Count())
	op := workloads.Op{
		Name: name, Kind: workloads.OpKernel, Kernel: k, Grid: grid, Block: block, Args: args,
		Work: device.Work{Flops: flops / blocks, Bytes: bytes / blocks},
	}
	s := n.Step()
	n.prog.Steps[s].Ops = append(n.prog.Steps[s].Ops, op)
	n.host[s] = append(n.host[s], ref)
}

// Finish validates the program, installs Check and returns the program.
func (n *Net) Finish() (*workloads.Program, error) {
	if n.err != nil {
		return nil, n.err
	}
	if n.done {
		return nil, fmt.Errorf("nn %s: Finish called twice", n.prog.Name)
	}
	for s := range n.prog.Steps {
		if len(n.prog.Steps[s].Ops) == 0 {
			return nil, fmt.Errorf("nn %s: step %d is empty", n.prog.Name, s)
		}
	}
	if n.wElems == 0 {
		// A net without weights still needs a non-empty arena buffer.
		n.prog.Buffers[0].Bytes = 4
	}
	outputs := 0
	for _, b := range n.prog.Buffers {
		if b.Output {
			outputs++
		}
	}
	if outputs == 0 {
		return nil, fmt.Errorf("nn %s: no output marked", n.prog.Name)
	}
	if err := n.prog.Validate(); err != nil {
		return nil, err
	}
	n.done = true
	n.live = nil
	n.prog.Check = n.check
	return n.prog, nil
}

// Tolerance is the relative tolerance of Check (see the package comment).
const Tolerance = 5e-4

func (n *Net) check(outputs map[string][]byte) error {
	ref, err := n.Reference()
	if err != nil {
		return err
	}
	var errs []error
	for _, b := range n.prog.Buffers {
		if !b.Output {
			continue
		}
		got, ok := outputs[b.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("output %s missing", b.Name))
			continue
		}
		if err := Compare(b.Name, Floats(got), ref[b.Name], Tolerance); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Compare checks got against want: every element within tol*(|want| +
// max|want|), none NaN or infinite. The error names the worst element.
func Compare(name string, got, want []float32, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d values, reference has %d", name, len(got), len(want))
	}
	maxAbs := 0.0
	for _, w := range want {
		if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
			return fmt.Errorf("%s: reference is not finite", name)
		}
		maxAbs = math.Max(maxAbs, math.Abs(float64(w)))
	}
	bad, worst, worstI := 0, 0.0, -1
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		d := math.Abs(g - w)
		lim := tol * (math.Abs(w) + maxAbs)
		if math.IsNaN(g) || math.IsInf(g, 0) || d > lim {
			bad++
			ex := d / math.Max(lim, 1e-30)
			if math.IsNaN(ex) || math.IsNaN(g) || math.IsInf(g, 0) {
				ex = math.Inf(1)
			}
			if worstI < 0 || ex > worst {
				worst, worstI = ex, i
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d of %d values differ from the CPU reference beyond %.0e relative; worst [%d]: got %g, want %g",
			name, bad, len(got), tol, worstI, got[worstI], want[worstI])
	}
	return nil
}
