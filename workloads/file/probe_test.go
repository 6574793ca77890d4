package file

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/graph"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// The probe's kernels: probeReps of each shape at spin 0 (1 ns recorded)
// and at its long spin: probeSpinNS, or probeBusySpinNS a wave for the
// busy shapes (probeBusyPerSM blocks an SM).
const (
	probeReps       = 16
	probeSpinNS     = 20000
	probeBusySpinNS = 40000
	probeBusyPerSM  = 4
)

// probeShape is a group of the probe's kernels: how many buffer ranges
// each touches (0: none, only the signature of the kernel before it, as
// an import of a graph-replay trace does), its grid, and whether it is
// busy: blocks of 256 threads at 64 registers, probeBusyPerSM an SM by
// registers, which the replay (32 registers) matches by padding its
// shared memory to about a quarter of the SM's (what leaves its L1 the
// least room), as the batch-8 models' wide kernels do; else blocks of 128
// threads at 32 registers, no padding.
type probeShape struct {
	ranges, grid int
	busy         bool
}

func (s probeShape) String() string {
	name := fmt.Sprintf("%d ranges grid %d", s.ranges, s.grid)
	if s.ranges == 0 {
		name = fmt.Sprintf("sig grid %d", s.grid)
	}
	if s.busy {
		name += fmt.Sprintf(" %d/SM", probeBusyPerSM)
	}
	return name
}

// waves is how many waves of blocks the shape's kernels run in.
func (s probeShape) waves(in device.Info) int {
	if !s.busy {
		return 1
	}
	return (s.grid + in.SMs*probeBusyPerSM - 1) / (in.SMs * probeBusyPerSM)
}

// longNS is the recorded duration of the shape's long-spin kernels: its
// spin a wave times its waves.
func (s probeShape) longNS(in device.Info) int64 {
	if s.busy {
		return int64(s.waves(in)) * probeBusySpinNS
	}
	return probeSpinNS
}

// probeShapes are the probe's groups: a signature only and 1, 2, 3, 4 and
// 8 ranges at one block; a signature and 4 ranges at a block per SM; 4
// ranges busy, in one wave and in three.
func probeShapes(in device.Info) []probeShape {
	busy := in.SMs * probeBusyPerSM
	return []probeShape{{0, 1, false}, {1, 1, false}, {2, 1, false}, {3, 1, false}, {4, 1, false}, {8, 1, false},
		{0, in.SMs, false}, {4, in.SMs, false}, {4, busy, true}, {4, 3 * busy, true}}
}

// probeFile is a chain of replayed kernels for TestGPUReplayProbe: for
// each of probeShapes, probeReps kernels that spin 0 and probeReps at the
// shape's long spin, each after the one before. A kernel of one range
// updates the chain's last output in place; of r ranges, it reads the
// chain's last output and r-2 weights and writes its own output, as the
// imported kernels do (whole buffers: a byte each in the arena); of none,
// it names the kernel before it in `after`.
func probeFile(in device.Info) *File {
	f := &File{Format: Format, Name: "replay-probe", Device: DeviceOf(in)}
	f.Buffers = []Buffer{{Name: "in", Bytes: 4096}}
	for w := 0; w < 6; w++ {
		f.Buffers = append(f.Buffers, Buffer{Name: fmt.Sprintf("w%d", w), Bytes: 4096})
	}
	prev, last := "in", ""
	var ops []Op
	for _, s := range probeShapes(in) {
		block, regs := 128, 32
		if s.busy {
			block, regs = 256, 64
		}
		for _, dur := range []int64{1, s.longNS(in)} {
			for r := 0; r < probeReps; r++ {
				o := Op{Kernel: fmt.Sprintf("r%d.g%d.d%d.%d", s.ranges, s.grid, dur, r), Grid: Dim{s.grid, 1, 1}, Block: Dim{block, 1, 1},
					Registers: regs, DurationNS: dur}
				switch {
				case s.ranges == 0 && last != "":
					o.After = []string{last}
				case s.ranges == 1:
					o.Reads, o.Writes = []Access{{Buffer: prev}}, []Access{{Buffer: prev}}
				case s.ranges > 1:
					out := o.Kernel + ".out"
					f.Buffers = append(f.Buffers, Buffer{Name: out, Bytes: 4096})
					o.Reads, o.Writes = []Access{{Buffer: prev}}, []Access{{Buffer: out}}
					for w := 0; w < s.ranges-2; w++ {
						o.Reads = append(o.Reads, Access{Buffer: fmt.Sprintf("w%d", w)})
					}
					prev = out
				}
				ops = append(ops, o)
				last = o.Kernel
			}
		}
	}
	// A kernel writing two overlapping ranges: at bytes 80-150 both have
	// sampled positions, and the later range's bytes must win on the GPU
	// as in the reference.
	f.Buffers = append(f.Buffers, Buffer{Name: "overlap", Bytes: 256})
	over := Op{Kernel: "overlap", Grid: Dim{1, 1, 1}, Block: Dim{64, 1, 1}, Registers: 32, DurationNS: 1,
		Reads: []Access{{Buffer: prev}}, Writes: []Access{{Buffer: "overlap", Offset: 0, Bytes: 160}, {Buffer: "overlap", Offset: 80, Bytes: 160}}}
	f.Steps = []Step{{Name: "chain", Ops: ops}, {Name: "overlap", Ops: []Op{over}}}
	return f
}

// probeStats is what the probe reads from one run's stamps, per group of
// probeReps kernels (shape, spin 0 or long): the median of each kernel's
// time from its first block's start to its last block's end less its
// spin (a block's spin times its waves), and the time a kernel adds to
// the chain (the group's last end less its first end, over probeReps-1).
type probeStats struct {
	excess map[string]float64
	chain  map[string]float64
}

func probeGroup(s probeShape, long bool) string {
	if long {
		return fmt.Sprintf("%v long", s)
	}
	return fmt.Sprintf("%v spin 0", s)
}

func readProbe(t *testing.T, f *File, state []byte) probeStats {
	t.Helper()
	steps, err := f.nodes()
	require.NoError(t, err)
	st := probeStats{excess: map[string]float64{}, chain: map[string]float64{}}
	shapes := probeShapes(f.Device.info())
	require.Len(t, steps[0], 2*probeReps*len(shapes))
	for g := 0; g < len(steps[0]); g += probeReps {
		group := steps[0][g : g+probeReps]
		var ex []float64
		var firstEnd, lastEnd uint64
		for i, n := range group {
			slot := state[n.slot*stateSize:]
			start, end := binary.LittleEndian.Uint64(slot[16:]), binary.LittleEndian.Uint64(slot[24:])
			waves := int64(blocksOf(n)+f.Device.SMs*f.Device.occupancy(n)-1) / int64(f.Device.SMs*f.Device.occupancy(n))
			ex = append(ex, float64(int64(end-start)-waves*f.Device.spinNS(n, 0, 0, 0)))
			if i == 0 {
				firstEnd = end
			}
			lastEnd = end
		}
		sort.Float64s(ex)
		key := probeGroup(shapes[g/(2*probeReps)], (g/probeReps)%2 == 1)
		st.excess[key] = ex[len(ex)/2]
		st.chain[key] = float64(int64(lastEnd-firstEnd)) / float64(probeReps-1)
	}
	return st
}

// probeKernel runs the probe file with every operation launched as k, on
// one stream from the host and as one CUDA graph, and returns both runs'
// stamps; with check, the outputs must equal the CPU reference.
func probeKernel(t *testing.T, d device.Device, f *File, k *device.Kernel, check bool) (host, graphed probeStats) {
	t.Helper()
	prog, err := Program(f, Options{kernel: k})
	require.NoError(t, err)
	g, err := graph.New(graph.Options{Policy: graph.PolicySerial, Graph: true})
	require.NoError(t, err)
	for i, s := range []sched.Scheduler{sched.NewSerial(), g} {
		outs, state := runAndStamps(t, d, prog, s)
		if check { // assert: the timings still come out if the bytes are wrong
			assert.NoError(t, prog.Check(outs), "%s under %s against the CPU reference", k.Name, s.Name())
		}
		if i == 0 {
			host = readProbe(t, f, state)
		} else {
			graphed = readProbe(t, f, state)
		}
	}
	return host, graphed
}

// timerProbe runs replay_timer for windowNS: the global timer's smallest
// and largest step, its number of steps, and the SM clock's cycles per ns.
func timerProbe(t *testing.T, d device.Device, windowNS uint64) (least, most, steps uint64, ghz float64) {
	t.Helper()
	k, err := kernels.Lookup("replay", "replay_timer")
	require.NoError(t, err)
	prog := &workloads.Program{Name: "replay-timer",
		Buffers: []workloads.BufferSpec{{Name: "out", Bytes: 40, Output: true}},
		Steps: []workloads.Step{{Ops: []workloads.Op{{Name: "timer", Kind: workloads.OpKernel, Kernel: k,
			Grid: device.D1(1), Block: device.D1(32), Work: device.Work{Cycles: float64(windowNS) * 1.98},
			Args: []workloads.ArgSpec{workloads.BufArg(0, device.Write), workloads.Scalar64(windowNS)}}}}}}
	require.NoError(t, prog.Validate())
	outs, _ := runAndStamps(t, d, prog, sched.NewSerial())
	out := outs["out"]
	require.Len(t, out, 40)
	w := func(i int) uint64 { return binary.LittleEndian.Uint64(out[8*i:]) }
	if w(3) > 0 {
		ghz = float64(w(4)) / float64(w(3))
	}
	return w(0), w(1), w(2), ghz
}

// runAndStamps runs prog under s once on d and returns its outputs and,
// for a replay program, the replay state buffer (first block start and
// last block end per kernel).
func runAndStamps(t *testing.T, d device.Device, prog *workloads.Program, s sched.Scheduler) (map[string][]byte, []byte) {
	t.Helper()
	var outs map[string][]byte
	var state []byte
	require.NoError(t, d.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer func() { _ = in.Release(h) }()
		if err := s.Run(h, in); err != nil {
			return err
		}
		if outs, err = in.Outputs(h); err != nil {
			return err
		}
		idx := slices.IndexFunc(prog.Buffers, func(b workloads.BufferSpec) bool { return b.Name == stateBuf })
		if idx < 0 {
			return nil
		}
		state, err = readBuffer(h, in, idx, prog.Buffers[idx].Bytes)
		return err
	}))
	return outs, state
}

// readBuffer copies program buffer idx of in back to the host.
func readBuffer(h device.Host, in *workloads.Instance, idx int, bytes int64) (_ []byte, err error) {
	m, err := h.AllocHost(bytes, true)
	if err != nil {
		return nil, err
	}
	defer func() {
		if e := h.FreeHost(m); err == nil {
			err = e
		}
	}()
	st, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return nil, err
	}
	defer func() {
		if e := h.Destroy(st); err == nil {
			err = e
		}
	}()
	c := device.Copy{Kind: device.DeviceToHost, Src: in.Bufs[idx], Host: m, Bytes: bytes}
	if err := h.Copy(st, &c); err != nil {
		return nil, err
	}
	if err := h.StreamSynchronize(st); err != nil {
		return nil, err
	}
	return append([]byte(nil), m.Data...), nil
}

// TestReplayProbeRunsOnTheSimulator runs TestGPUReplayProbe's programs on
// the simulator, which writes no stamps: what the GPU test reads must come
// out of the same steps without an error, one entry per group.
func TestReplayProbeRunsOnTheSimulator(t *testing.T) {
	d, err := sim.NewNamed("h100")
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	f := probeFile(d.Info())
	require.NoError(t, f.Check())
	host, graphed := probeKernel(t, d, f, replayAlt, false)
	assert.Len(t, host.excess, 2*len(probeShapes(d.Info())))
	assert.Len(t, graphed.chain, 2*len(probeShapes(d.Info())))
	assert.Contains(t, host.excess, probeGroup(probeShape{4, d.Info().SMs, false}, true))
	_, r, err := program(f, Options{})
	require.NoError(t, err)
	counts := map[int]int{}
	for _, op := range r.ops[:len(r.ops)-1] {
		counts[len(op.args)]++
	}
	assert.Equal(t, map[int]int{0: 1, 1: 3*2*probeReps - 1, 2: 2 * probeReps, 3: 2 * probeReps, 4: 4 * 2 * probeReps, 8: 2 * probeReps}, counts,
		"ranges per kernel: the signature groups and the one-range group touch one (the very first kernel none), the others as many as their shape")
	// The overlap kernel's two ranges share a byte of the arena (buffers
	// shrink to a byte per gap between endpoints: 0-80-160-240).
	last := r.ops[len(r.ops)-1]
	require.Len(t, last.args, 3, "two written ranges and one read")
	assert.Equal(t, last.args[0].off+1, last.args[1].off, "the second range starts at the first one's second byte")
	assert.True(t, writesOverlap(last.args))
	assert.False(t, writesOverlap(r.ops[len(r.ops)-2].args))
	// The busy shapes' launches pad their shared memory down to the
	// original's blocks per SM (64 registers: 4), about a quarter of the SM's.
	prog, err := Program(f, Options{})
	require.NoError(t, err)
	busy := prog.Steps[0].Ops[len(prog.Steps[0].Ops)-1]
	per, _ := f.Device.blocksPerSM(busy.Block.X, ReplayKernel.Regs, busy.SharedMem)
	assert.Equal(t, probeBusyPerSM, per)
	assert.Greater(t, busy.SharedMem, 48<<10)
	_, _, _, ghz := timerProbe(t, d, 1000)
	assert.Zero(t, ghz, "the simulator writes nothing into the timer's output")
}
