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
	"runtime"
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

	// Optional shape and mix; their zero values keep the plain layered
	// DAG above (and the same programs for the same seed).
	Widths    []int   `yaml:"widths"`     // widths of layers 1..layers, one each (the input layer keeps width): forks, joins, diamonds
	MaxIters  int     `yaml:"max_iters"`  // each node's iters drawn log-uniformly from iters to max_iters: kernels of mixed lengths
	Copies    float64 `yaml:"copies"`     // probability that a node before the last layer is an upload of fresh data (a host-to-device copy) instead of a kernel
	CopyBytes int64   `yaml:"copy_bytes"` // bytes per upload (0: the node's own size)
	Downloads bool    `yaml:"downloads"`  // each step ends copying the last layer to host outputs (device-to-host)
}

// Defaults is a small GPU-underfilling DAG: the regime where concurrency pays.
func Defaults() Params {
	return Params{Layers: 8, Width: 8, FanIn: 2, MinBlocks: 4, MaxBlocks: 64, Threads: 128, Iters: 256, Steps: 4, Skip: 0.2}
}

// IterLimit bounds iters and max_iters: the kernel's dependent chain per
// element (8 cycles a step: 4 ms per kernel at 2 GHz) and the CPU
// reference's, which runs it for every element. The committed experiments
// use 4096.
const IterLimit = 1 << 20

func (p Params) check() error {
	if err := p.checkRanges(); err != nil {
		return err
	}
	// A buffer's elements are indexed with the kernel's int32 arguments.
	elems := workloads.Product(workloads.F("max_blocks", p.MaxBlocks), workloads.F("threads", p.Threads))
	if err := elems.Check("elements in one buffer", math.MaxInt32, "synth_node's int32 element count"); err != nil {
		return err
	}
	return p.plan().Check()
}

// plan is what Generate builds: per step one operation per node (and a
// download per last-layer node), one device buffer per node and input, at
// most max_blocks x threads floats (or copy_bytes) each; on the host the
// inputs' and uploads' data and the CPU reference, each at most as large.
func (p Params) plan() workloads.Plan {
	f := workloads.F
	nodes := workloads.Product(f("layers", p.Layers), f("width", p.Width))
	if len(p.Widths) > 0 {
		nodes = workloads.Product(f("widths[0]", p.Widths[0]))
		for i, w := range p.Widths[1:] {
			nodes = nodes.Plus(workloads.Product(f(fmt.Sprintf("widths[%d]", i+1), w)))
		}
	}
	ops := nodes
	if p.Downloads {
		ops = ops.Plus(workloads.Product(f("downloads", p.width(p.Layers))))
	}
	ops = ops.Times(f("steps", p.Steps))
	buffers := nodes.Plus(workloads.Product(f("inputs", p.Width))).Times(f("device and host", 2))
	perBuffer := max(int64(p.MaxBlocks)*int64(p.Threads)*4, p.CopyBytes)
	bytes := buffers.Times(workloads.Factor{Name: "bytes per buffer", N: perBuffer})
	return workloads.Plan{
		Ops: ops, Buffers: buffers,
		GridBlocks:  workloads.Product(f("max_blocks", p.MaxBlocks)),
		Blocks:      ops.Times(f("max_blocks", p.MaxBlocks)),
		DeviceBytes: bytes,
		HostBytes:   bytes.Times(f("copies (data and reference)", 2)),
	}
}

func (p Params) checkRanges() error {
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
	case p.Iters < 0 || p.Iters > IterLimit:
		return fmt.Errorf("iters must be between 0 and %d (synthetic.IterLimit), got %d", IterLimit, p.Iters)
	case p.Steps < 1:
		return fmt.Errorf("steps must be at least 1, got %d", p.Steps)
	case !(p.Skip >= 0 && p.Skip <= 1): // NaN fails too
		return fmt.Errorf("skip must be a probability, got %g", p.Skip)
	}
	return p.checkMix()
}

// checkMix checks the optional shape and mix parameters.
func (p Params) checkMix() error {
	if len(p.Widths) > 0 && len(p.Widths) != p.Layers {
		return fmt.Errorf("widths lists %d layers, layers is %d: give one width per layer", len(p.Widths), p.Layers)
	}
	for i, w := range p.Widths {
		if w < 1 {
			return fmt.Errorf("widths[%d] must be at least 1, got %d", i, w)
		}
	}
	switch {
	case p.MaxIters != 0 && (p.MaxIters < p.Iters || p.MaxIters > IterLimit):
		return fmt.Errorf("max_iters must be 0 (every node runs iters) or from iters (%d) to %d (synthetic.IterLimit), got %d", p.Iters, IterLimit, p.MaxIters)
	case p.Copies < 0 || p.Copies > 1 || math.IsNaN(p.Copies):
		return fmt.Errorf("copies must be a probability, got %g", p.Copies)
	case p.CopyBytes < 0 || p.CopyBytes%4 != 0 || p.CopyBytes > math.MaxInt32:
		return fmt.Errorf("copy_bytes must be a multiple of 4 from 0 to %d, got %d", math.MaxInt32, p.CopyBytes)
	}
	return nil
}

// width is the number of nodes of layer l (0: the input layer).
func (p Params) width(l int) int {
	if l > 0 && len(p.Widths) > 0 {
		return p.Widths[l-1]
	}
	return p.Width
}

// node is one operation of the DAG: its output buffer, its inputs and size,
// or, for an upload, the host buffer it copies.
type node struct {
	out    int
	inputs []int // buffer indices
	blocks int
	iters  int
	upload int // host buffer index; -1: a kernel
}

// generator draws one program.
type generator struct {
	p      Params
	rng    *rand.Rand
	prog   *workloads.Program
	layers [][]node
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
	g := &generator{p: p, rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed)),
		prog: &workloads.Program{Name: fmt.Sprintf("synthetic(%dx%d,fan%d,seed%d)", p.Layers, p.Width, p.FanIn, seed)}}
	g.inputLayer()
	for l := 1; l <= p.Layers; l++ {
		g.layer(l)
	}
	g.steps()
	prog := g.prog
	// The reference is computed once, at the first check: at long kernels
	// (iters in the thousands) it costs seconds of CPU, and a runner checks
	// every schedule's outputs against it.
	var (
		once     sync.Once
		dev, hst [][]float32
		refErr   error
	)
	prog.Check = func(out map[string][]byte) error {
		once.Do(func() { dev, hst, refErr = reference(prog) })
		if refErr != nil {
			return refErr
		}
		return check(prog, dev, hst, out)
	}
	return prog, nil
}

func (g *generator) size(blocks int) int64 { return int64(blocks * g.p.Threads * 4) }

func (g *generator) drawBlocks() int {
	lo, hi := math.Log(float64(g.p.MinBlocks)), math.Log(float64(g.p.MaxBlocks)+1)
	b := int(math.Exp(lo + g.rng.Float64()*(hi-lo)))
	return min(max(b, g.p.MinBlocks), g.p.MaxBlocks)
}

func (g *generator) drawIters() int {
	if g.p.MaxIters == 0 {
		return g.p.Iters
	}
	lo, hi := math.Log(float64(g.p.Iters)+1), math.Log(float64(g.p.MaxIters)+2)
	n := int(math.Exp(lo+g.rng.Float64()*(hi-lo))) - 1
	return min(max(n, g.p.Iters), g.p.MaxIters)
}

// inputLayer is layer 0: input buffers, initialized with seeded data.
func (g *generator) inputLayer() {
	var in0 []node
	for j := 0; j < g.p.width(0); j++ {
		blocks := g.drawBlocks()
		idx := len(g.prog.Buffers)
		vals := seededFloats(g.rng.Uint64(), blocks*g.p.Threads)
		g.prog.Buffers = append(g.prog.Buffers, workloads.BufferSpec{
			Name: fmt.Sprintf("in%d", j), Bytes: g.size(blocks),
			Init: func(b []byte) { putFloats(b, vals) },
		})
		in0 = append(in0, node{out: idx, blocks: blocks, upload: -1})
	}
	g.layers = append(g.layers, in0)
}

// layer draws layer l's nodes: kernels reading fan_in earlier outputs, or
// (with probability copies, before the last layer) uploads.
func (g *generator) layer(l int) {
	p := g.p
	var layer []node
	for j := 0; j < p.width(l); j++ {
		nd := node{blocks: g.drawBlocks(), upload: -1}
		nd.iters = g.drawIters()
		name := fmt.Sprintf("n%d.%d", l, j)
		bytes := g.size(nd.blocks)
		if p.Copies > 0 && l < p.Layers && g.rng.Float64() < p.Copies {
			if p.CopyBytes > 0 {
				bytes = p.CopyBytes
			}
			nd.upload = len(g.prog.Host)
			vals := seededFloats(g.rng.Uint64(), int(bytes/4))
			g.prog.Host = append(g.prog.Host, workloads.HostSpec{Name: "h" + name, Bytes: bytes, Pinned: true,
				Init: func(b []byte) { putFloats(b, vals) }})
		} else {
			for f := 0; f < p.FanIn; f++ {
				src := l - 1
				if l > 1 && g.rng.Float64() < p.Skip {
					src = g.rng.IntN(l)
				}
				nd.inputs = append(nd.inputs, g.layers[src][g.rng.IntN(len(g.layers[src]))].out)
			}
		}
		nd.out = len(g.prog.Buffers)
		g.prog.Buffers = append(g.prog.Buffers, workloads.BufferSpec{Name: name, Bytes: bytes, Output: l == p.Layers})
		layer = append(layer, nd)
	}
	g.layers = append(g.layers, layer)
}

// steps issues the DAG steps times. Steps after the first read the
// previous step's last layer in place of the input layer.
func (g *generator) steps() {
	p, prog := g.p, g.prog
	last := g.layers[p.Layers]
	remap := map[int]int{}
	for j := range g.layers[0] {
		remap[g.layers[0][j].out] = last[j%len(last)].out
	}
	var downloads []int
	if p.Downloads {
		for j, nd := range last {
			downloads = append(downloads, len(prog.Host))
			prog.Host = append(prog.Host, workloads.HostSpec{Name: fmt.Sprintf("out%d", j), Bytes: prog.Buffers[nd.out].Bytes, Pinned: true, Output: true})
		}
	}
	for s := 0; s < p.Steps; s++ {
		var step workloads.Step
		for l := 1; l <= p.Layers; l++ {
			for j, nd := range g.layers[l] {
				name := fmt.Sprintf("s%d.n%d.%d", s, l, j)
				if nd.upload >= 0 {
					step.Ops = append(step.Ops, workloads.Op{Name: name, Kind: workloads.OpCopy, Copy: workloads.CopySpec{
						Kind: device.HostToDevice, Dst: nd.out, Host: nd.upload, Bytes: prog.Buffers[nd.out].Bytes}})
					continue
				}
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
				step.Ops = append(step.Ops, op(prog, name, ins, nd, p))
			}
		}
		for j, h := range downloads {
			step.Ops = append(step.Ops, workloads.Op{Name: fmt.Sprintf("s%d.out%d", s, j), Kind: workloads.OpCopy, Copy: workloads.CopySpec{
				Kind: device.DeviceToHost, Src: last[j].out, Host: h, Bytes: prog.Buffers[last[j].out].Bytes}})
		}
		prog.Steps = append(prog.Steps, step)
	}
}

func op(prog *workloads.Program, name string, ins []int, nd node, p Params) workloads.Op {
	var args []workloads.ArgSpec
	for i := 0; i < 4; i++ {
		b := ins[min(i, len(ins)-1)]
		args = append(args, workloads.BufArg(b, device.Read), workloads.Scalar32(int32(prog.Buffers[b].Bytes/4)))
	}
	n := nd.blocks * p.Threads
	args = append(args, workloads.Scalar32(int32(len(ins))), workloads.BufArg(nd.out, device.Write),
		workloads.Scalar32(int32(n)), workloads.Scalar32(int32(nd.iters)))
	return workloads.Op{
		Name: name, Kind: workloads.OpKernel, Kernel: Kernel,
		Grid: device.D1(nd.blocks), Block: device.D1(p.Threads), Args: args,
		Work: Work(p.Threads, len(ins), nd.iters),
	}
}

// Work is one block's cost: a dependent chain of iters multiply-adds per
// thread (about 4 cycles each: the FMA pipeline latency, since one element
// per thread leaves no independent work to hide it), plus the loads and the
// store of one element per thread.
// The figures are computed in float64, so no int product can overflow.
func Work(threads, nin, iters int) device.Work {
	t := float64(threads)
	return device.Work{
		Cycles: 600 + 8*float64(iters), // ~600 cycles of load latency; mul and add are two dependent ops of ~4 cycles
		Flops:  t * (2*float64(iters) + 2*float64(nin)),
		Bytes:  t * 4 * float64(nin+1),
	}
}

// Reference runs the program's operations in order on the CPU with exactly
// the kernel's float32 arithmetic, and returns every buffer's contents.
func Reference(prog *workloads.Program) ([][]float32, error) {
	dev, _, err := reference(prog)
	return dev, err
}

// reference is Reference with the host buffers' final contents too.
func reference(prog *workloads.Program) (dev, host [][]float32, err error) {
	initial := func(bytes int64, init func([]byte)) []float32 {
		raw := make([]byte, bytes)
		if init != nil {
			init(raw)
		}
		return getFloats(raw)
	}
	dev = make([][]float32, len(prog.Buffers))
	for i, b := range prog.Buffers {
		dev[i] = initial(b.Bytes, b.Init)
	}
	host = make([][]float32, len(prog.Host))
	for i, b := range prog.Host {
		host[i] = initial(b.Bytes, b.Init)
	}
	for _, st := range prog.Steps {
		for _, o := range st.Ops {
			switch {
			case o.Kind == workloads.OpCopy && o.Copy.Kind == device.HostToDevice:
				copy(dev[o.Copy.Dst], host[o.Copy.Host])
			case o.Kind == workloads.OpCopy && o.Copy.Kind == device.DeviceToHost:
				copy(host[o.Copy.Host], dev[o.Copy.Src])
			case o.Kind == workloads.OpKernel && o.Kernel == Kernel:
				runNode(dev, o.Args)
			default:
				return nil, nil, fmt.Errorf("synthetic reference: unexpected operation %s", o.Name)
			}
		}
	}
	return dev, host, nil
}

// runNode computes one synth_node launch, its elements split over the CPUs
// when there are enough of them (each element depends only on the inputs,
// so the split cannot change a bit).
func runNode(bufs [][]float32, a []workloads.ArgSpec) {
	nin := int(int32(a[8].Bits))
	out := bufs[a[9].Buf]
	n := int(int32(a[10].Bits))
	iters := int(int32(a[11].Bits))
	ins := [4][]float32{bufs[a[0].Buf], bufs[a[2].Buf], bufs[a[4].Buf], bufs[a[6].Buf]}
	parts := 1
	if work := n * (iters + 1); work > 1<<20 {
		parts = min(runtime.GOMAXPROCS(0), n)
	}
	var wg sync.WaitGroup
	for k := 0; k < parts; k++ {
		lo, hi := n*k/parts, n*(k+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				out[i] = Node(ins, nin, i, iters)
			}
		}()
	}
	wg.Wait()
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

func check(prog *workloads.Program, dev, host [][]float32, out map[string][]byte) error {
	want := func(name string, ref []float32) error {
		got, ok := out[name]
		if !ok {
			return fmt.Errorf("output %s missing", name)
		}
		g := getFloats(got)
		for j := range g {
			if math.Float32bits(g[j]) != math.Float32bits(ref[j]) {
				return fmt.Errorf("output %s[%d] = %g, reference %g", name, j, g[j], ref[j])
			}
		}
		return nil
	}
	for i, b := range prog.Buffers {
		if b.Output {
			if err := want(b.Name, dev[i]); err != nil {
				return err
			}
		}
	}
	for i, b := range prog.Host {
		if b.Output {
			if err := want(b.Name, host[i]); err != nil {
				return err
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
