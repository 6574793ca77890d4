package file

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

func loadExample(t *testing.T) *File {
	t.Helper()
	data, err := os.ReadFile("testdata/example.yaml")
	require.NoError(t, err)
	f, err := Parse(data, "example.yaml")
	require.NoError(t, err)
	return f
}

func opNamed(t *testing.T, p *workloads.Program, name string) workloads.Op {
	t.Helper()
	for _, s := range p.Steps {
		for _, op := range s.Ops {
			if op.Name == name {
				return op
			}
		}
	}
	t.Fatalf("no op %q", name)
	return workloads.Op{}
}

func TestExampleBecomesReplayLaunches(t *testing.T) {
	f := loadExample(t)
	assert.Equal(t, 32, f.Steps[0].Ops[1].Line(), "conv1's line")
	p, err := Program(f, Options{})
	require.NoError(t, err)
	require.Len(t, p.Steps, 1)
	require.Len(t, p.Steps[0].Ops, 5)
	require.Equal(t, 32, ReplayKernel.Regs, "the replay kernel must stay within 32 registers (launch bounds)")

	// conv1: 256 threads x 128 registers = 32768 registers a block, so 2
	// blocks per SM (registers bind; shared memory would allow 13). The
	// replay (32 registers) would fit 8, so it is padded to half the SM's
	// shared memory: 233472/2 - 1024 reserved = 115712 (the replay has no
	// static shared memory).
	c1 := opNamed(t, p, "conv1")
	assert.Equal(t, device.Dim3{X: 98, Y: 2, Z: 1}, c1.Grid)
	assert.Equal(t, device.D1(256), c1.Block)
	assert.Equal(t, 115712, c1.SharedMem)
	// 196 blocks fit in one wave of 132 x 2: each block spins the whole 12 us.
	assert.Equal(t, uint64(12000), c1.Args[spinArg].Bits)
	assert.InDelta(t, 12000*1.98, c1.Work.Cycles, 1e-6)

	// conv2: 48 KB of dynamic shared memory bind at 4 blocks; the replay with
	// the same shared memory fits 4 as well.
	c2 := opNamed(t, p, "conv2")
	assert.Equal(t, 49152, c2.SharedMem)
	add := opNamed(t, p, "add")
	assert.Equal(t, 0, add.SharedMem, "add is bound by threads, like the replay")

	// Occupancy on the recorded device matches the original's.
	in := f.Device.info()
	for _, name := range []string{"conv1", "conv2", "add"} {
		op := opNamed(t, p, name)
		l := device.Launch{Kernel: op.Kernel, Block: op.Block, SharedMem: op.SharedMem}
		got, _ := in.Occupancy(&l)
		var orig *Op
		for i := range f.Steps[0].Ops {
			if f.Steps[0].Ops[i].Name() == name {
				orig = &f.Steps[0].Ops[i]
			}
		}
		want, _ := f.Device.blocksPerSM(orig.Block.Count(), orig.Registers, orig.StaticShared+orig.DynamicShared)
		assert.Equal(t, want, got, name)
	}

	// Copies stay copies over real-sized buffers; the others are compressed.
	up := opNamed(t, p, "upload")
	assert.Equal(t, workloads.OpCopy, up.Kind)
	assert.Equal(t, device.HostToDevice, up.Copy.Kind)
	assert.Equal(t, int64(602112), up.Copy.Bytes)
	sizes := map[string]int64{}
	for _, b := range p.Buffers {
		sizes[b.Name] = b.Bytes
	}
	assert.Equal(t, int64(602112), sizes["x"])
	assert.Equal(t, int64(802816), sizes["out"], "downloaded: real size")
	assert.Equal(t, int64(4), sizes["replay.arena"], "w1, w2, y1, y2: accessed whole, one byte each, side by side")
	assert.NotContains(t, sizes, "w1")
	steps, err := f.nodes()
	require.NoError(t, err)
	r := newRanges(f, steps)
	assert.Equal(t, "w2", r.owner(r.arena, 1), "a difference in the arena is reported with its buffer")
	assert.Equal(t, "", r.owner(0, 1))
}

func TestMultiWaveKernelSpinsPerWave(t *testing.T) {
	f := loadExample(t)
	conv1 := &f.Steps[0].Ops[1]
	conv1.Grid = Dim{600, 1, 1} // 2 blocks per SM x 132 SMs = 264 a wave: 3 waves
	p, err := Program(f, Options{OverheadNS: 500})
	require.NoError(t, err)
	assert.Equal(t, uint64(12000/3-500), opNamed(t, p, "conv1").Args[spinArg].Bits)
	assert.InDelta(t, 12000/3*1.98, opNamed(t, p, "conv1").Work.Cycles, 1e-6, "the simulated block lasts spin + overhead: the recorded time per wave")
	assert.Equal(t, uint64(8000-500), opNamed(t, p, "conv2").Args[spinArg].Bits)
	f.Steps[0].Ops[3].DurationNS = 300
	p, err = Program(f, Options{OverheadNS: 500})
	require.NoError(t, err)
	assert.Equal(t, uint64(0), opNamed(t, p, "add").Args[spinArg].Bits, "spin never goes negative")
	assert.InDelta(t, 500*1.98, opNamed(t, p, "add").Work.Cycles, 1e-6, "a kernel shorter than the overhead lasts the overhead")

	// With a floor of 700 ns: add (300 ns recorded, spin 0) lasts the floor;
	// conv2 (8 us) is above it and lasts its recorded time.
	p, err = Program(f, Options{OverheadNS: 500, FloorNS: 700})
	require.NoError(t, err)
	assert.InDelta(t, 700*1.98, opNamed(t, p, "add").Work.Cycles, 1e-6, "a kernel shorter than the floor lasts the floor")
	assert.InDelta(t, 8000*1.98, opNamed(t, p, "conv2").Work.Cycles, 1e-6)
	_, err = Program(f, Options{FloorNS: -1})
	assert.ErrorContains(t, err, "floor_ns must not be negative")

	// profiler_ns comes off the recorded duration before it is spread over
	// the waves: conv1 (12 us over 3 waves) spins (12000-900)/3 - 500.
	p, err = Program(f, Options{OverheadNS: 500, ProfilerNS: 900})
	require.NoError(t, err)
	assert.Equal(t, uint64((12000-900)/3-500), opNamed(t, p, "conv1").Args[spinArg].Bits)
	assert.Equal(t, uint64(0), opNamed(t, p, "add").Args[spinArg].Bits, "300 ns recorded, less 900: nothing to spin")
	_, err = Program(f, Options{ProfilerNS: -1})
	assert.ErrorContains(t, err, "profiler_ns must not be negative")
}

// flat returns the program's operations in program order with a name index.
func flatIndex(p *workloads.Program) map[string]int {
	m := map[string]int{}
	k := 0
	for _, s := range p.Steps {
		for _, op := range s.Ops {
			m[op.Name] = k
			k++
		}
	}
	return m
}

// TestOverlappingWritesAreOrdered checks the count word replay.desc
// holds: the probe's overlap kernel writes two ranges that share bytes
// 80-159, so the replay kernel must write them one after the other (bit 31);
// adjacent ranges do not overlap.
func TestOverlappingWritesAreOrdered(t *testing.T) {
	f := probeFile(loadExample(t).Device.info())
	over := []dataArg{{buf: 0, off: 0, n: 160, mode: device.Write}, {buf: 0, off: 80, n: 160, mode: device.Write}}
	b := &builder{}
	assert.Equal(t, uint32(2|orderedWrites), b.count(over))
	over[1].off = 160
	assert.Equal(t, uint32(2), b.count(over), "adjacent ranges")
	_, r, err := program(f, Options{})
	require.NoError(t, err)
	last := r.ops[len(r.ops)-1]
	assert.True(t, writesOverlap(last.args), "the probe's overlap kernel")
	assert.False(t, writesOverlap(r.ops[len(r.ops)-2].args))
}

func programRef(t *testing.T, f *File) (*workloads.Program, *reference) {
	t.Helper()
	p, r, err := program(f, Options{})
	require.NoError(t, err)
	return p, r
}

func TestReferenceDetectsBrokenOrderAndIsIdempotent(t *testing.T) {
	p, r := programRef(t, loadExample(t))
	ix := flatIndex(p)
	serial := r.run()
	require.NoError(t, p.Check(serial))

	// conv2 before conv1 respects every dependency: same outputs.
	swapped := []int{ix["upload"], ix["conv2"], ix["conv1"], ix["add"], ix["download"]}
	assert.NoError(t, p.Check(r.exec(swapped, 1)))
	// add before conv2 reads y2 before it is written: different outputs.
	broken := []int{ix["upload"], ix["conv1"], ix["add"], ix["conv2"], ix["download"]}
	err := p.Check(r.exec(broken, 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "differs from the serial reference")
	// Running the whole program twice (as schedulers that time every
	// operation first do) leaves the same outputs.
	order := []int{0, 1, 2, 3, 4}
	assert.NoError(t, p.Check(r.exec(order, 2)))
}

func TestInPlaceOnInitialDataIsOrderOnly(t *testing.T) {
	f := loadExample(t)
	// A kernel that updates w1 in place (read and write, nothing wrote it
	// before): hashing its initial bytes would make a rerun differ.
	f.Steps[0].Ops[1].Writes = append(f.Steps[0].Ops[1].Writes, Access{Buffer: "w1"})
	p, r := programRef(t, f)
	assert.NoError(t, p.Check(r.exec([]int{0, 1, 2, 3, 4}, 3)))
	conv1 := r.ops[1]
	var w1 []dataArg
	for _, a := range conv1.args {
		if a.buf == len(p.Buffers)-4 && a.off == 0 { // the arena's first byte is w1
			w1 = append(w1, a)
		}
	}
	require.Len(t, w1, 1, "the read and the write of w1 merge into one range")
	assert.Equal(t, device.ReadWrite, w1[0].mode)
	assert.True(t, w1[0].orderOnly)
	assert.Equal(t, uint32(2), w1[0].descMode(), "written, not hashed")
}

func TestAfterBecomesAccesses(t *testing.T) {
	f := loadExample(t)
	ops := f.Steps[0].Ops
	// Drop the data: only explicit dependencies remain.
	for i := range ops {
		if ops[i].Kind() != "copy" {
			ops[i].Reads, ops[i].Writes = nil, nil
		}
	}
	ops[3].After = []string{"conv1", "conv2"} // add after both convs
	ops[1].After = []string{"upload"}         // conv1 after a copy
	ops[4].After = []string{"add", "upload"}  // download after a kernel and a copy
	p, r := programRef(t, f)
	names := []string{}
	for _, op := range p.Steps[0].Ops {
		names = append(names, op.Name)
	}
	assert.Equal(t, []string{"upload", "conv1", "conv2", "add", "join upload -> download", "download"}, names)
	inst := instance(p)
	dep := func(a, b string) bool {
		ix := flatIndex(p)
		return device.Conflicts(inst[ix[a]], inst[ix[b]])
	}
	assert.True(t, dep("conv1", "add"))
	assert.True(t, dep("conv2", "add"))
	assert.True(t, dep("upload", "conv1"), "conv1 reads what upload writes")
	assert.True(t, dep("add", "download"), "add writes (order only) what download reads")
	assert.True(t, dep("upload", "join upload -> download"))
	assert.True(t, dep("join upload -> download", "download"))
	assert.False(t, dep("conv1", "conv2"), "no edge between the two convs")
	ix := flatIndex(p)
	broken := []int{ix["upload"], ix["conv1"], ix["add"], ix["conv2"], ix["join upload -> download"], ix["download"]}
	assert.Error(t, p.Check(r.exec(broken, 1)), "add's signature depends on conv2's")
}

// instance binds nothing: it lists each operation's access set with
// addresses standing in for buffers (buffer i at i<<40).
func instance(p *workloads.Program) [][]device.Arg {
	var out [][]device.Arg
	buf := func(i int) device.Buffer { return device.Buffer{Addr: uint64(i+1) << 40, Size: p.Buffers[i].Bytes} }
	for _, s := range p.Steps {
		for _, op := range s.Ops {
			var args []device.Arg
			if op.Kind == workloads.OpCopy {
				c := device.Copy{Kind: op.Copy.Kind, DstOff: op.Copy.DstOff, SrcOff: op.Copy.SrcOff, Bytes: op.Copy.Bytes}
				if c.Kind != device.DeviceToHost {
					c.Dst = buf(op.Copy.Dst)
				}
				if c.Kind != device.HostToDevice {
					c.Src = buf(op.Copy.Src)
				}
				r, w := c.DeviceRanges()
				args = append(r, w...)
			} else {
				for _, a := range op.Args {
					if a.Buf >= 0 {
						args = append(args, device.Arg{Kind: device.ArgBuffer, Buf: buf(a.Buf), Mode: a.Mode, Off: a.Off, Len: a.Len})
					}
				}
			}
			out = append(out, args)
		}
	}
	return out
}

func TestBadFilesAreErrorsWithLines(t *testing.T) {
	base, err := os.ReadFile("testdata/example.yaml")
	require.NoError(t, err)
	cases := []struct {
		name, old, new, want string
	}{
		{"unknown field", "        registers: 40\n", "        registers: 40\n        regs: 3\n", `line 44: unknown field "regs" in op (known fields: after, block, bytes, copy,`},
		{"negative buffer", "{name: w2, bytes: 36864}", "{name: w2, bytes: -8}", `buffer "w2" has size -8`},
		{"negative duration", "duration_ns: 8000", "duration_ns: -1", `kernel "conv2" (step 0 op 2): duration_ns -1 is negative`},
		{"negative shared", "dynamic_shared: 49152", "dynamic_shared: -1", `line 40: kernel "conv2" (step 0 op 2): shared memory sizes must not be negative`},
		{"block over limit", "block: 512\n", "block: 2048\n", `block (2048,1,1) exceeds CUDA's limits`},
		{"no room on an SM", "block: 256\n        registers: 128\n", "block: 512\n        registers: 255\n", `one block does not fit on an SM of NVIDIA H100 80GB HBM3 (registers)`},
		{"unknown buffer", "reads: [y1, y2]", "reads: [y1, y3]", `line 48: kernel "add" (step 0 op 3): unknown buffer "y3"`},
		{"range outside", "writes: [y1]", "writes: [{buffer: y1, offset: 802816}]", `lies outside buffer "y1"`},
		{"duplicate name", "kernel: conv2", "kernel: conv1", `the name is used by an earlier operation`},
		{"bad after", "duration_ns: 5000\n", "duration_ns: 5000\n        after: [conv9]\n", `after names "conv9"`},
		{"cycle", "duration_ns: 12000\n", "duration_ns: 12000\n        after: [add]\n", `dependency cycle: "add" (line 49) -> "conv1" (line 32) -> "add"`},
		{"bad shape", "grid: 64", "grid: [64, x]", `line 41: a shape's entries must be integers, got "x"`},
		{"copy without direction", "        direction: DtoH\n", "", `direction must be HtoD, DtoH or DtoD`},
		{"kernel field on copy", "direction: HtoD\n", "direction: HtoD\n        grid: 3\n", `grid are for kernels, not copies`},
		{"no duration", "        duration_ns: 5000\n", "", `needs duration_ns (measured on the device) or a work estimate`},
		{"format", "gpusched-workload/1", "gpusched-workload/9", `field format must be "gpusched-workload/1"`},
		{"device", "sms: 132", "sms: 0", `device: sms must be positive`},
		{"yaml type", "registers: 16", "registers: many", `line 51: cannot unmarshal !!str ` + "`many`" + ` into int`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := string(base)
			require.Contains(t, text, c.old)
			_, err := Parse([]byte(strings.Replace(text, c.old, c.new, 1)), "w.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.True(t, strings.HasPrefix(err.Error(), "w.yaml: "), err.Error())
		})
	}
}

func TestJSONIsReadToo(t *testing.T) {
	f := loadExample(t)
	js := `{"format": "gpusched-workload/1", "name": "j", "device": ` + deviceJSON(f) + `,
	  "buffers": [{"name": "a", "bytes": 64}],
	  "steps": [{"ops": [
	    {"kernel": "k1", "grid": [4], "block": [128], "registers": 32, "duration_ns": 3000, "writes": ["a"]},
	    {"kernel": "k2", "grid": 4, "block": 128, "duration_ns": 3000, "reads": [{"buffer": "a", "offset": 0, "bytes": 32}]}]}]}`
	g, err := Parse([]byte(js), "w.json")
	require.NoError(t, err)
	assert.Equal(t, 6, g.Steps[0].Ops[0].Line())
	p, err := Program(g, Options{})
	require.NoError(t, err)
	assert.Equal(t, 2, p.NumOps())
	_, err = Parse([]byte(strings.Replace(js, `"registers"`, `"regs"`, 1)), "w.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "regs"`)
}

func deviceJSON(f *File) string {
	d := f.Device
	return `{"name": "` + d.Name + `", "sms": 132, "clock_hz": 1980000000, "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
	  "registers_per_sm": 65536, "reg_alloc_unit": 256, "shared_per_sm": 233472, "shared_reserved_per_block": 1024,
	  "max_shared_per_block": 232448, "max_threads_per_block": 1024, "max_regs_per_thread": 255, "warp_size": 32}`
}

func TestForwardAfterReordersWithinTheStep(t *testing.T) {
	f := loadExample(t)
	ops := f.Steps[0].Ops
	// conv2 declared after add but needed by it only through `after`: the
	// step is reordered so that conv2 comes first, keeping file order
	// otherwise.
	ops[2].After = []string{"conv1"}
	ops[1].After = nil
	f.Steps[0].Ops = []Op{ops[0], ops[1], ops[3], ops[2], ops[4]}
	f.Steps[0].Ops[2].Reads = []Access{{Buffer: "y1"}} // add no longer reads y2
	f.Steps[0].Ops[2].After = []string{"conv2"}
	order, err := f.Order()
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 3, 2, 4}, order[0])
}

func TestPinHostPinsPageableCopies(t *testing.T) {
	f := loadExample(t)
	f.Steps[0].Ops[0].Pageable = true
	p, err := Program(f, Options{})
	require.NoError(t, err)
	assert.False(t, p.Host[0].Pinned, "recorded pageable: replayed pageable")
	p, err = Program(f, Options{PinHost: true})
	require.NoError(t, err)
	assert.True(t, p.Host[0].Pinned)
}

// TestReplayBlocks checks the blocks the replay spins for against the
// file's recorded durations: the probe file's kernels of 1 ns and
// 20,000 ns, less profiler_ns (and never below 0), one wave each.
func TestReplayBlocks(t *testing.T) {
	f := probeFile(loadExample(t).Device.info())
	blocks, err := f.ReplayBlocks(500)
	require.NoError(t, err)
	require.Len(t, blocks, 2*probeReps*len(probeShapes(f.Device.info()))+1)
	assert.Equal(t, ReplayBlock{NS: 0, Waves: 1}, blocks[0], "1 ns recorded, 500 taken off")
	assert.Equal(t, ReplayBlock{NS: 19500, Waves: 1}, blocks[probeReps], "20,000 ns recorded")
	// 128 threads of 32 registers: 16 blocks to an SM (2,048 threads), so
	// 3 x 16 blocks per SM run in 3 waves, each a third of the duration.
	f.Steps[0].Ops[probeReps].Grid = Dim{3 * f.Device.SMs * 16, 1, 1}
	blocks, err = f.ReplayBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, ReplayBlock{NS: 6667, Waves: 3}, blocks[probeReps])
}

// The replay kernel (the ninth) reads its descriptor from parameters
// d0..d24 after a0..a23: the words replay.desc holds for the kernel, less
// the seed.
func TestReplayKernelPassesItsDescriptor(t *testing.T) {
	f := loadExample(t)
	p, err := Program(f, Options{})
	require.NoError(t, err)
	desc := p.Buffers[slices.IndexFunc(p.Buffers, func(b workloads.BufferSpec) bool { return b.Name == descBuf })]
	words := make([]byte, desc.Bytes)
	desc.Init(words)
	word := func(i int64) uint64 { return uint64(binary.LittleEndian.Uint32(words[4*i:])) }
	for _, name := range []string{"conv1", "conv2", "add"} {
		op := opNamed(t, p, name)
		require.GreaterOrEqual(t, len(op.Args), fixedArgs+seenArgs+descArgs, name)
		at := op.Args[0].Off / 4 // the kernel's head in replay.desc
		d := op.Args[fixedArgs+seenArgs : fixedArgs+seenArgs+descArgs]
		count := word(at + 1)
		assert.Equal(t, count<<32, d[0].Bits, "%s: d0 = {0, count}: the seed stays in replay.desc", name)
		n := int64(count & 0xff)
		require.Positive(t, n, name)
		for i := int64(1); i < descArgs; i++ {
			want := uint64(0)
			if i <= n {
				want = word(at+2*i) | word(at+2*i+1)<<32
			}
			assert.Equal(t, want, d[i].Bits, "%s: d%d = range %d's {mode, length}", name, i, i-1)
		}
	}
	eighth, err := Program(f, Options{kernel: replayAlt})
	require.NoError(t, err)
	require.Equal(t, "replay_v8", replayAlt.Name)
	assert.Len(t, opNamed(t, eighth, "conv1").Args, fixedArgs+seenArgs, "the eighth takes no descriptor parameters")
}
