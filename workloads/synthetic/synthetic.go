// Package synthetic generates random layered DAG programs: the workload of
// gpusched's quickstart, and a controllable stand-in for the many-small-
// kernel programs the papers study. Its knobs are the ones that decide what
// concurrent scheduling can gain: the DAG's width (parallel slack), its
// fan-in (how many cross-stream waits a schedule needs), the grid sizes
// (how much of the GPU one kernel fills) and the work per element.
//
// Every node is a real kernel (synth_node in workloads/kernels/synthetic.cu)
// over real data, and Reference computes the same results bit for bit on
// the CPU, so a schedule that breaks a dependency is caught by its outputs
// on a GPU as well as by the simulator's race checker.
package synthetic

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// Kernel is synth_node's descriptor, generated from nvcc's resource report
// for sm_90 (workloads/kernels); nil if the module is missing, which
// Generate reports as an error.
var Kernel, kernelErr = kernels.Lookup("synthetic", "synth_node")

// Params shape the DAG.
type Params struct {
	Layers    int     `yaml:"layers"`     // layers of nodes after the input layer
	Width     int     `yaml:"width"`      // nodes per layer
	FanIn     int     `yaml:"fan_in"`     // inputs per node, 1 to 4
	MinBlocks int     `yaml:"min_blocks"` // grid size range, drawn log-uniformly
	MaxBlocks int     `yaml:"max_blocks"`
	Threads   int     `yaml:"threads"` // threads per block
	Iters     int     `yaml:"iters"`   // dependent multiply-adds per element
	Steps     int     `yaml:"steps"`   // repetitions of the DAG; each step's inputs are the last step's outputs
	Skip      float64 `yaml:"skip"`    // probability that an input comes from any earlier layer, not the previous one
}

// Defaults is a small GPU-underfilling DAG: the regime where concurrency pays.
func Defaults() Params {
	return Params{Layers: 8, Width: 8, FanIn: 2, MinBlocks: 4, MaxBlocks: 64, Threads: 128, Iters: 256, Steps: 4, Skip: 0.2}
}

func (p Params) check() error {
	switch {
	case p.Layers < 1:
		return fmt.Errorf("layers must be at least 1, got %d", p.Layers)
	case p.Width < 1:
		return fmt.Errorf("width must be at least 1, got %d", p.Width)
	case p.FanIn < 1 || p.FanIn > 4:
		return fmt.Errorf("fan_in must be 1 to 4, got %d", p.FanIn)
	case p.MinBlocks < 1 || p.MaxBlocks < p.MinBlocks:
		return fmt.Errorf("need 1 <= min_blocks <= max_blocks, got %d and %d", p.MinBlocks, p.MaxBlocks)
	case p.Threads < 32 || p.Threads > 1024 || p.Threads%32 != 0:
		return fmt.Errorf("threads must be a multiple of 32 from 32 to 1024, got %d", p.Threads)
	case p.Iters < 0:
		return fmt.Errorf("iters must not be negative, got %d", p.Iters)
	case p.Steps < 1:
		return fmt.Errorf("steps must be at least 1, got %d", p.Steps)
	case p.Skip < 0 || p.Skip > 1:
		return fmt.Errorf("skip must be a probability, got %g", p.Skip)
	}
	return nil
}

// node is one kernel of the DAG: its output buffer, its inputs, its size.
type node struct {
	out    int
	inputs []int // buffer indices
	blocks int
}

// Generate builds the program. The DAG is the same every step; step 0 reads
// the input layer, later steps read the previous step's last layer, so
// steps are chained through real data (and through write-after-read
// hazards on the node buffers that a schedule must respect).
func Generate(p Params, seed int64) (*workloads.Program, error) {
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("synthetic: %w", err)
	}
	if kernelErr != nil {
		return nil, fmt.Errorf("synthetic: %w", kernelErr)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	prog := &workloads.Program{Name: fmt.Sprintf("synthetic(%dx%d,fan%d,seed%d)", p.Layers, p.Width, p.FanIn, seed)}
	size := func(blocks int) int64 { return int64(blocks * p.Threads * 4) }
	drawBlocks := func() int {
		lo, hi := math.Log(float64(p.MinBlocks)), math.Log(float64(p.MaxBlocks)+1)
		b := int(math.Exp(lo + rng.Float64()*(hi-lo)))
		return min(max(b, p.MinBlocks), p.MaxBlocks)
	}
	// Layer 0: input buffers, initialized with seeded data.
	var layers [][]node
	var in0 []node
	for j := 0; j < p.Width; j++ {
		blocks := drawBlocks()
		idx := len(prog.Buffers)
		vals := seededFloats(rng.Uint64(), blocks*p.Threads)
		prog.Buffers = append(prog.Buffers, workloads.BufferSpec{
			Name: fmt.Sprintf("in%d", j), Bytes: size(blocks),
			Init: func(b []byte) { putFloats(b, vals) },
		})
		in0 = append(in0, node{out: idx, blocks: blocks})
	}
	layers = append(layers, in0)
	for l := 1; l <= p.Layers; l++ {
		var layer []node
		for j := 0; j < p.Width; j++ {
			nd := node{blocks: drawBlocks()}
			for f := 0; f < p.FanIn; f++ {
				src := l - 1
				if l > 1 && rng.Float64() < p.Skip {
					src = rng.IntN(l)
				}
				nd.inputs = append(nd.inputs, layers[src][rng.IntN(p.Width)].out)
			}
			nd.out = len(prog.Buffers)
			prog.Buffers = append(prog.Buffers, workloads.BufferSpec{
				Name: fmt.Sprintf("n%d.%d", l, j), Bytes: size(nd.blocks), Output: l == p.Layers,
			})
			layer = append(layer, nd)
		}
		layers = append(layers, layer)
	}
	// Steps after the first read the previous step's last layer in place of
	// the input layer.
	remap := map[int]int{}
	for j := range layers[0] {
		remap[layers[0][j].out] = layers[p.Layers][j%len(layers[p.Layers])].out
	}
	for s := 0; s < p.Steps; s++ {
		var step workloads.Step
		for l := 1; l <= p.Layers; l++ {
			for j, nd := range layers[l] {
				ins := nd.inputs
				if s > 0 {
					ins = make([]int, len(nd.inputs))
					for i, b := range nd.inputs {
						if r, ok := remap[b]; ok {
							b = r
						}
						ins[i] = b
					}
				}
				step.Ops = append(step.Ops, op(prog, fmt.Sprintf("s%d.n%d.%d", s, l, j), ins, nd, p))
			}
		}
		prog.Steps = append(prog.Steps, step)
	}
	// The reference is computed once, at the first check: at long kernels
	// (iters in the thousands) it costs seconds of CPU, and a runner checks
	// every schedule's outputs against it.
	var (
		once   sync.Once
		ref    [][]float32
		refErr error
	)
	prog.Check = func(out map[string][]byte) error {
		once.Do(func() { ref, refErr = Reference(prog) })
		if refErr != nil {
			return refErr
		}
		return check(prog, ref, out)
	}
	return prog, nil
}

func op(prog *workloads.Program, name string, ins []int, nd node, p Params) workloads.Op {
	var args []workloads.ArgSpec
	for i := 0; i < 4; i++ {
		b := ins[min(i, len(ins)-1)]
		args = append(args, workloads.BufArg(b, device.Read), workloads.Scalar32(int32(prog.Buffers[b].Bytes/4)))
	}
	n := nd.blocks * p.Threads
	args = append(args, workloads.Scalar32(int32(len(ins))), workloads.BufArg(nd.out, device.Write),
		workloads.Scalar32(int32(n)), workloads.Scalar32(int32(p.Iters)))
	return workloads.Op{
		Name: name, Kind: workloads.OpKernel, Kernel: Kernel,
		Grid: device.D1(nd.blocks), Block: device.D1(p.Threads), Args: args,
		Work: Work(p.Threads, len(ins), p.Iters),
	}
}

// Work is one block's cost: a dependent chain of iters multiply-adds per
// thread (about 4 cycles each: the FMA pipeline latency, since one element
// per thread leaves no independent work to hide it), plus the loads and the
// store of one element per thread.
func Work(threads, nin, iters int) device.Work {
	return device.Work{
		Cycles: 600 + 8*float64(iters), // ~600 cycles of load latency; mul and add are two dependent ops of ~4 cycles
		Flops:  float64(threads * (2*iters + 2*nin)),
		Bytes:  float64(threads * 4 * (nin + 1)),
	}
}

// Reference runs the program's operations in order on the CPU with exactly
// the kernel's float32 arithmetic, and returns every buffer's contents.
func Reference(prog *workloads.Program) ([][]float32, error) {
	bufs := make([][]float32, len(prog.Buffers))
	for i, b := range prog.Buffers {
		raw := make([]byte, b.Bytes)
		if b.Init != nil {
			b.Init(raw)
		}
		bufs[i] = getFloats(raw)
	}
	for _, st := range prog.Steps {
		for _, o := range st.Ops {
			if o.Kernel != Kernel {
				return nil, fmt.Errorf("synthetic reference: unexpected kernel %s", o.Kernel)
			}
			a := o.Args
			nin := int(int32(a[8].Bits))
			out := bufs[a[9].Buf]
			n := int(int32(a[10].Bits))
			iters := int(int32(a[11].Bits))
			ins := [4][]float32{bufs[a[0].Buf], bufs[a[2].Buf], bufs[a[4].Buf], bufs[a[6].Buf]}
			for i := 0; i < n; i++ {
				out[i] = Node(ins, nin, i, iters)
			}
		}
	}
	return bufs, nil
}

// Node is synth_node's arithmetic for element i. Each product is rounded
// to float32 before the add (the explicit conversions stop Go from fusing
// them, as __fmul_rn and __fadd_rn stop nvcc).
func Node(ins [4][]float32, nin, i, iters int) float32 {
	var acc float32
	w := [4]float32{1, 0.5, 0.25, 0.125}
	for k := 0; k < nin; k++ {
		v := ins[k][i%len(ins[k])]
		if k == 0 {
			acc += v
		} else {
			acc += float32(w[k] * v)
		}
	}
	x := acc
	for k := 0; k < iters; k++ {
		x = float32(x*0.9999) + 0.001
	}
	return x
}

func check(prog *workloads.Program, ref [][]float32, out map[string][]byte) error {
	for i, b := range prog.Buffers {
		if !b.Output {
			continue
		}
		got, ok := out[b.Name]
		if !ok {
			return fmt.Errorf("output %s missing", b.Name)
		}
		g := getFloats(got)
		for j := range g {
			if math.Float32bits(g[j]) != math.Float32bits(ref[i][j]) {
				return fmt.Errorf("output %s[%d] = %g, reference %g", b.Name, j, g[j], ref[i][j])
			}
		}
	}
	return nil
}

func seededFloats(seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.Float64()*2 - 1)
	}
	return v
}

func putFloats(b []byte, v []float32) {
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
}

func getFloats(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
