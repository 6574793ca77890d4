package kesco

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// Threads is the block size of every kesco kernel (KESCO_THREADS in
// kesco.cu; the block reductions assume it).
const Threads = 256

var (
	kernelMu    sync.Mutex
	kernelCache = map[string]*device.Kernel{}
)

// kernel is the generated descriptor of kesco.cu's function name.
func kernel(name string) (*device.Kernel, error) {
	kernelMu.Lock()
	defer kernelMu.Unlock()
	if k, ok := kernelCache[name]; ok {
		return k, nil
	}
	k, err := kernels.Lookup("kesco", name)
	if err != nil {
		return nil, err
	}
	kernelCache[name] = k
	return k, nil
}

// builder assembles one benchmark's program: float32 (and int32) buffers
// with seeded contents, kernel launches with their per-block work, and the
// checks that compare outputs with the CPU reference.
type builder struct {
	prog   *workloads.Program
	prefix string
	rng    *rand.Rand
	blocks int
	checks []func(out map[string][]byte) error
	err    error
}

func newBuilder(name string, blocks int, seed int64) *builder {
	return &builder{
		prog:   &workloads.Program{Name: name, Steps: []workloads.Step{{}}},
		prefix: strings.ToLower(name) + ".",
		rng:    rand.New(rand.NewPCG(uint64(seed), 0x6b6573636f)),
		blocks: blocks,
	}
}

func f32bytes(v []float32) func([]byte) {
	return func(data []byte) {
		for i, x := range v {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
		}
	}
}

// input adds a device buffer initialized with v.
func (b *builder) input(name string, v []float32) int {
	b.prog.Buffers = append(b.prog.Buffers, workloads.BufferSpec{Name: b.prefix + name, Bytes: int64(4 * len(v)), Init: f32bytes(v)})
	return len(b.prog.Buffers) - 1
}

// inputI32 adds a device buffer of int32s.
func (b *builder) inputI32(name string, v []int32) int {
	b.prog.Buffers = append(b.prog.Buffers, workloads.BufferSpec{Name: b.prefix + name, Bytes: int64(4 * len(v)), Init: func(data []byte) {
		for i, x := range v {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
		}
	}})
	return len(b.prog.Buffers) - 1
}

// scratch adds a zeroed device buffer of n 4-byte elements.
func (b *builder) scratch(name string, n int) int {
	b.prog.Buffers = append(b.prog.Buffers, workloads.BufferSpec{Name: b.prefix + name, Bytes: int64(4 * n)})
	return len(b.prog.Buffers) - 1
}

// output adds a zeroed device buffer of n elements whose final contents are
// checked.
func (b *builder) output(name string, n int) int {
	i := b.scratch(name, n)
	b.prog.Buffers[i].Output = true
	return i
}

// random adds a device buffer of n values drawn uniformly from [lo, hi)
// by a generator of its own, seeded from the builder's. The values are not
// kept: Init writes them straight into the upload, and the returned
// function regenerates them for the CPU reference, so a program holds no
// copy of its large inputs until a check needs them.
func (b *builder) random(name string, n int, lo, hi float32) (int, func() []float32) {
	seed := b.rng.Uint64()
	b.prog.Buffers = append(b.prog.Buffers, workloads.BufferSpec{Name: b.prefix + name, Bytes: int64(4 * n), Init: func(data []byte) {
		fillUniform(seed, n, lo, hi, func(i int, v float32) { binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v)) })
	}})
	return len(b.prog.Buffers) - 1, func() []float32 {
		v := make([]float32, n)
		fillUniform(seed, n, lo, hi, func(i int, x float32) { v[i] = x })
		return v
	}
}

// fillUniform draws n uniform values in [lo, hi), two 24-bit fractions per
// 64-bit draw.
func fillUniform(seed uint64, n int, lo, hi float32, put func(i int, v float32)) {
	src := rand.NewPCG(seed, 0x756e69666f726d)
	const unit = 1.0 / (1 << 24)
	for i := 0; i < n; i += 2 {
		u := src.Uint64()
		put(i, lo+(hi-lo)*float32(u>>40)*unit)
		if i+1 < n {
			put(i+1, lo+(hi-lo)*float32((u>>8)&0xffffff)*unit)
		}
	}
}

// uniform returns n values drawn uniformly from [lo, hi) (small inputs:
// weights and biases, kept by the program).
func (b *builder) uniform(n int, lo, hi float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(lo + (hi-lo)*b.rng.Float64())
	}
	return v
}

// launch appends a kernel launch of grid blocks of Threads threads. flops
// and bytes are the launch's totals (the kernel's arithmetic and its
// device-memory traffic), spread evenly over its blocks for the simulator.
func (b *builder) launch(name, fn string, grid int, flops, bytes float64, args ...workloads.ArgSpec) {
	if b.err != nil {
		return
	}
	k, err := kernel(fn)
	if err != nil {
		b.err = err
		return
	}
	st := &b.prog.Steps[0]
	st.Ops = append(st.Ops, workloads.Op{
		Name: b.prefix + name, Kind: workloads.OpKernel, Kernel: k,
		Grid: device.D1(grid), Block: device.D1(Threads), Args: args,
		Work: device.Work{Flops: flops / float64(grid), Bytes: bytes / float64(grid)},
	})
}

// expect checks output name against want() (the CPU reference, computed
// only when a check runs), element-wise within atol + rtol*|want|.
func (b *builder) expect(name string, want func() []float32, rtol, atol float64) {
	full := b.prefix + name
	b.checks = append(b.checks, func(out map[string][]byte) error {
		want := want()
		got, err := floats(out, full, len(want))
		if err != nil {
			return err
		}
		return closeTo(full, got, want, rtol, atol)
	})
}

func (b *builder) check(fn func(out map[string][]byte) error) { b.checks = append(b.checks, fn) }

// finish returns the program with a Check running every expectation.
func (b *builder) finish() (*workloads.Program, error) {
	if b.err != nil {
		return nil, fmt.Errorf("%s: %w", b.prog.Name, b.err)
	}
	checks := b.checks
	b.prog.Check = func(out map[string][]byte) error {
		for _, c := range checks {
			if err := c(out); err != nil {
				return err
			}
		}
		return nil
	}
	return b.prog, b.prog.Validate()
}

func floats(out map[string][]byte, name string, n int) ([]float32, error) {
	raw, ok := out[name]
	if !ok {
		return nil, fmt.Errorf("output %s missing", name)
	}
	if len(raw) != 4*n {
		return nil, fmt.Errorf("output %s has %d bytes, want %d", name, len(raw), 4*n)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v, nil
}

func int32s(out map[string][]byte, name string, n int) ([]int32, error) {
	raw, ok := out[name]
	if !ok {
		return nil, fmt.Errorf("output %s missing", name)
	}
	if len(raw) != 4*n {
		return nil, fmt.Errorf("output %s has %d bytes, want %d", name, len(raw), 4*n)
	}
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v, nil
}

// closeTo reports the first element outside tolerance, and how many are.
func closeTo(name string, got, want []float32, rtol, atol float64) error {
	bad, first := 0, -1
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.Abs(g-w) > atol+rtol*math.Abs(w) {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("output %s: %d of %d elements differ from the CPU reference; first at %d: got %g, want %g",
			name, bad, len(want), first, got[first], want[first])
	}
	return nil
}

// scaled is max(lo, base*scale) rounded to an integer.
func scaled(base int, scale float64, lo int) int {
	return max(lo, int(math.Round(float64(base)*scale)))
}

// Names of the benchmarks, in GrCUDA's numbering order.
var Names = []string{"VEC", "BS", "ML", "HITS", "IMG", "DL", "M1", "M2"}

// Params size a benchmark.
type Params struct {
	// Scale multiplies the data sizes; 1 is the size meant for a GPU run
	// (tens of milliseconds serially on a data-centre GPU); tests use
	// small scales.
	Scale float64 `yaml:"scale"`
	// Blocks is the grid of the grid-stride kernels (GrCUDA's
	// deliberately small grids); 0 means DefaultBlocks.
	Blocks int `yaml:"blocks"`
}

// DefaultBlocks is the grid of the grid-stride kernels: with 256 threads a
// kernel fills a small part of a 132-SM H100, as in the paper's setup, so
// the eight-wide M1 layer can fill the GPU.
const DefaultBlocks = 16

// MaxScale bounds Scale: data sizes grow with it (M1 at scale 1 holds
// 420 MB), and the program limits of workloads bound the total.
const MaxScale = 64

func (p Params) validate() error {
	if !(p.Scale > 0 && p.Scale <= MaxScale) {
		return fmt.Errorf("scale must be a number in (0, %d] (kesco.MaxScale), got %v", MaxScale, p.Scale)
	}
	if p.Blocks < 0 {
		return fmt.Errorf("blocks must not be negative, got %d", p.Blocks)
	}
	if p.Blocks > 4096 {
		return fmt.Errorf("blocks %d exceeds 4096 (the reductions' partial arrays are sized by it)", p.Blocks)
	}
	return nil
}

var builders = map[string]func(b *builder, scale float64){
	"VEC": buildVEC, "BS": buildBS, "ML": buildML, "HITS": buildHITS,
	"IMG": buildIMG, "DL": buildDL, "M1": buildM1, "M2": buildM2,
}

// New builds benchmark name (one of Names) with its inputs drawn from seed.
// The program has one step.
func New(name string, p Params, seed int64) (*workloads.Program, error) {
	build, ok := builders[strings.ToUpper(name)]
	if !ok {
		return nil, fmt.Errorf("kesco: unknown benchmark %q (known: %s)", name, strings.Join(Names, ", "))
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("kesco %s: %w", name, err)
	}
	blocks := p.Blocks
	if blocks == 0 {
		blocks = DefaultBlocks
	}
	b := newBuilder(strings.ToUpper(name), blocks, seed)
	build(b, p.Scale)
	return b.finish()
}

// The task sets of KeSCo's multi-task mixes.
var (
	LargeSet = []string{"M1", "M2", "BS", "IMG"}
	SmallSet = []string{"VEC", "ML", "DL"}
)

// MixParams describe a multi-task mix.
type MixParams struct {
	Tasks int `yaml:"tasks"` // 16 or 32 in the paper
	// Large and Small are the ratio of tasks drawn from LargeSet and
	// SmallSet (1:1, 2:1, 3:1, 5:1 in the paper).
	Large int `yaml:"large"`
	Small int `yaml:"small"`
	// Scale and Blocks size every task (see Params).
	Scale  float64 `yaml:"scale"`
	Blocks int     `yaml:"blocks"`
}

// Mix builds a multi-task program: round(Tasks*Large/(Large+Small)) tasks
// drawn uniformly from LargeSet and the rest from SmallSet, in a seeded
// random order. Each task is a step with its own buffers (prefixed tNN.),
// so tasks are independent; Check checks every task.
func Mix(p MixParams, seed int64) (*workloads.Program, error) {
	if p.Tasks < 1 || p.Tasks > 1024 {
		return nil, fmt.Errorf("kesco mix: tasks must be in [1, 1024], got %d", p.Tasks)
	}
	if p.Large < 0 || p.Small < 0 || p.Large+p.Small == 0 || p.Large > 1<<20 || p.Small > 1<<20 {
		return nil, fmt.Errorf("kesco mix: ratio %d:%d must be of non-negative numbers up to %d, not 0:0", p.Large, p.Small, 1<<20)
	}
	if err := (Params{Scale: p.Scale, Blocks: p.Blocks}).validate(); err != nil {
		return nil, fmt.Errorf("kesco mix: %w", err)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6d6978))
	nLarge := int(math.Round(float64(p.Tasks*p.Large) / float64(p.Large+p.Small)))
	names := make([]string, p.Tasks)
	for i := range names {
		if i < nLarge {
			names[i] = LargeSet[rng.IntN(len(LargeSet))]
		} else {
			names[i] = SmallSet[rng.IntN(len(SmallSet))]
		}
	}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	progs := make([]*workloads.Program, len(names))
	for i, n := range names {
		var err error
		if progs[i], err = New(n, Params{Scale: p.Scale, Blocks: p.Blocks}, seed*1009+int64(i)); err != nil {
			return nil, err
		}
	}
	return Combine(fmt.Sprintf("mix(%d,%d:%d)", p.Tasks, p.Large, p.Small), progs)
}

// Combine makes one program of independent task programs: each becomes a
// step (its buffers renamed tNN.<name>), and Check runs every task's check
// on its own outputs.
func Combine(name string, tasks []*workloads.Program) (*workloads.Program, error) {
	out := &workloads.Program{Name: name}
	type sub struct {
		prefix string
		check  func(map[string][]byte) error
	}
	var subs []sub
	for ti, t := range tasks {
		if len(t.Host) > 0 {
			return nil, fmt.Errorf("combine: task %s has host buffers, which tasks may not", t.Name)
		}
		prefix := fmt.Sprintf("t%02d.", ti)
		base := len(out.Buffers)
		for _, bs := range t.Buffers {
			bs.Name = prefix + bs.Name
			out.Buffers = append(out.Buffers, bs)
		}
		for _, st := range t.Steps {
			ns := workloads.Step{Ops: make([]workloads.Op, len(st.Ops))}
			for oi, op := range st.Ops {
				op.Name = prefix + op.Name
				if op.Kind != workloads.OpKernel {
					return nil, fmt.Errorf("combine: task %s has copy operations, which tasks may not", t.Name)
				}
				args := make([]workloads.ArgSpec, len(op.Args))
				for ai, a := range op.Args {
					if a.Buf >= 0 {
						a.Buf += base
					}
					args[ai] = a
				}
				op.Args = args
				ns.Ops[oi] = op
			}
			out.Steps = append(out.Steps, ns)
		}
		subs = append(subs, sub{prefix, t.Check})
	}
	out.Check = func(all map[string][]byte) error {
		keys := make([]string, 0, len(all))
		for k := range all {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, s := range subs {
			if s.check == nil {
				continue
			}
			mine := map[string][]byte{}
			for _, k := range keys {
				if strings.HasPrefix(k, s.prefix) {
					mine[strings.TrimPrefix(k, s.prefix)] = all[k]
				}
			}
			if err := s.check(mine); err != nil {
				return fmt.Errorf("task %s: %w", strings.TrimSuffix(s.prefix, "."), err)
			}
		}
		return nil
	}
	return out, out.Validate()
}
