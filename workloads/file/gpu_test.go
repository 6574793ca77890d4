//go:build cuda

package file

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda/cudatest"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// calibrationFile is a chain of replayed kernels of known durations and
// shapes on the GPU's own figures, with a diamond in the middle so that a
// concurrent schedule has something to get wrong.
func calibrationFile(in device.Info) *File {
	f := &File{Format: Format, Name: "replay-calibration", Device: DeviceOf(in)}
	type shape struct {
		grid, block, regs int
		dur               int64
	}
	shapes := []shape{
		{1, 128, 32, 5000}, {1, 128, 32, 20000},
		{in.SMs, 256, 32, 5000}, {in.SMs, 256, 32, 20000},
		{in.SMs * 2, 512, 64, 10000}, {in.SMs * 6, 256, 128, 30000}, // 3 waves at 2 blocks per SM
		{in.SMs * 16, 128, 32, 5000}, {in.SMs * 48, 128, 32, 24000}, // 1 and 3 waves at 16 blocks per SM
	}
	var ops []Op
	prev := "in"
	f.Buffers = append(f.Buffers, Buffer{Name: "in", Bytes: 4096})
	for rep := 0; rep < 8; rep++ {
		for i, s := range shapes {
			name := fmt.Sprintf("k%d.%d", rep, i)
			out := name + ".out"
			f.Buffers = append(f.Buffers, Buffer{Name: out, Bytes: 1 << 20})
			ops = append(ops, Op{Kernel: name, Grid: Dim{s.grid, 1, 1}, Block: Dim{s.block, 1, 1}, Registers: s.regs,
				DurationNS: s.dur, Reads: []Access{{Buffer: prev}}, Writes: []Access{{Buffer: out}}})
			prev = out
		}
		// A diamond: two branches read prev, a join reads both.
		l, r, j := fmt.Sprintf("l%d", rep), fmt.Sprintf("r%d", rep), fmt.Sprintf("j%d", rep)
		for _, b := range []string{l, r, j} {
			f.Buffers = append(f.Buffers, Buffer{Name: b + ".out", Bytes: 4096})
		}
		ops = append(ops,
			Op{Kernel: l, Grid: Dim{8, 1, 1}, Block: Dim{128, 1, 1}, DurationNS: 8000, Reads: []Access{{Buffer: prev}}, Writes: []Access{{Buffer: l + ".out"}}},
			Op{Kernel: r, Grid: Dim{8, 1, 1}, Block: Dim{128, 1, 1}, DurationNS: 8000, Reads: []Access{{Buffer: prev}}, Writes: []Access{{Buffer: r + ".out"}}},
			Op{Kernel: j, Grid: Dim{8, 1, 1}, Block: Dim{128, 1, 1}, DurationNS: 3000, Reads: []Access{{Buffer: l + ".out"}, {Buffer: r + ".out"}}, Writes: []Access{{Buffer: j + ".out"}}})
		prev = j + ".out"
	}
	f.Steps = []Step{{Name: "chain", Ops: ops}}
	return f
}

// TestGPUReplay checks the replay kernel and the eighth (replay_v8) on a
// GPU: the serial schedule's outputs equal the CPU reference, a
// four-stream schedule's equal serial's, and every kernel lasts its spin
// time plus an overhead it measures on the GPU's global timer (first
// block start to last block end), reported per wave and shape.
//
//	go test -tags cuda ./workloads/file -run GPU -v
func TestGPUReplay(t *testing.T) {
	d := cudatest.Open(t)
	f := calibrationFile(d.Info())
	require.NoError(t, f.Check())
	// Both also at an overhead_ns as the eager imports run: their waves are
	// placed with it (replay_wave_end).
	for _, opt := range []Options{{kernel: ReplayKernel}, {kernel: replayAlt}, {kernel: ReplayKernel, OverheadNS: 416}, {kernel: replayAlt, OverheadNS: 416}} {
		k := opt.kernel
		prog, err := Program(f, opt)
		require.NoError(t, err)
		outs, state := runAndStamps(t, d, prog, sched.NewSerial())
		require.NoError(t, prog.Check(outs), "%s: serial replay against the CPU reference", k.Name)
		rr, err := sched.NewRoundRobin(4)
		require.NoError(t, err)
		outs4, _ := runAndStamps(t, d, prog, rr)
		require.NoError(t, prog.Check(outs4), "%s: round-robin(4) replay against the CPU reference", k.Name)
		racy, _ := runAndStamps(t, d, prog, noDeps{})
		require.Error(t, prog.Check(racy), "%s: four streams without the dependencies' waits: a kernel reads its predecessor's output before it is written", k.Name)
		logOverheads(t, f, fmt.Sprintf("%s@%d", k.Name, opt.OverheadNS), state, opt.OverheadNS)
	}
}

// logOverheads logs, per shape of calibrationFile, what its kernels took
// beyond their spin per wave (their spins at overhead, as Program gave
// them), from the stamps in state, and requires that none ended before
// its waves' spins.
func logOverheads(t *testing.T, f *File, kernel string, state []byte, overhead int64) {
	steps, err := f.nodes()
	require.NoError(t, err)
	byShape := map[string][]float64{}
	for _, n := range steps[0] {
		slot := state[n.slot*stateSize:]
		start, end := binary.LittleEndian.Uint64(slot[16:]), binary.LittleEndian.Uint64(slot[24:])
		waves := int64(blocksOf(n)+f.Device.SMs*f.Device.occupancy(n)-1) / int64(f.Device.SMs*f.Device.occupancy(n))
		spin := f.Device.spinNS(n, 0, overhead, 0)
		key := fmt.Sprintf("grid %d block %d, %d wave(s), %d ns a block", n.op.Grid.X, n.op.Block.X, waves, spin)
		byShape[key] = append(byShape[key], float64(int64(end-start)-waves*spin)/float64(waves))
		require.GreaterOrEqual(t, int64(end-start), waves*spin, "%s %s: the kernel ended before its waves' spins", kernel, n.name)
	}
	var keys []string
	for k := range byShape {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var single []float64
	for _, k := range keys {
		v := byShape[k]
		sort.Float64s(v)
		t.Logf("%-15s %-50s overhead per wave: median %6.0f ns [%6.0f-%6.0f] over %d kernels", kernel, k, v[len(v)/2], v[0], v[len(v)-1], len(v))
		if strings.HasPrefix(k, "grid 1 ") {
			single = append(single, v...)
		}
	}
	// A one-block kernel's excess is the replay's own cost per block after
	// its spin; wider grids add the spread of their blocks' starts, which
	// the original kernel had as well. TestGPUReplayProbe measures what the
	// experiments use.
	sort.Float64s(single)
	t.Logf("%s one-block kernels: %.0f ns beyond their spin (median over %d)", kernel, single[len(single)/2], len(single))
}

// noDeps issues operation k on stream k mod 4 with no waits at all: the
// schedule a scheduler that ignored the dependencies would run.
type noDeps struct{}

func (noDeps) Name() string { return "no-deps(k=4)" }

func (noDeps) Run(h device.Host, in *workloads.Instance) (err error) {
	streams, err := sched.NewStreams(h, 4)
	if err != nil {
		return err
	}
	defer func() {
		if e := sched.DestroyStreams(h, streams); err == nil {
			err = e
		}
	}()
	plan, err := sched.NewPlan(0, in.N(), 4, rrAssign(in.N(), 4), make([][]int, in.N()))
	if err != nil {
		return err
	}
	var pool sched.EventPool
	defer func() {
		if e := pool.Destroy(h); err == nil {
			err = e
		}
	}()
	if err := plan.Issue(h, in, streams, &pool); err != nil {
		return err
	}
	for _, s := range streams {
		if err := h.StreamSynchronize(s); err != nil {
			return err
		}
	}
	return nil
}

func rrAssign(n, k int) []int {
	a := make([]int, n)
	for i := range a {
		a[i] = i % k
	}
	return a
}

// replayBare stamps its start and end and touches nothing: the probe's
// lower bound for any kernel with the replay kernel's parameters.
var replayBare, _ = kernels.Lookup("replay", "replay_bare")

// TestGPUReplayProbe measures what the replay kernel costs on this GPU, for
// the replay kernel, the eighth version (replay_v8: the replay kernel
// reading its descriptor from replay.desc) and replay_bare (the same parameters
// and stamps, nothing read or written: what any such kernel costs): the global
// timer's step and the SM clock's
// rate (replay_timer over 1 ms), then, per shape of probeFile's chain (a
// signature only, as the imports of graph-replay traces touch, or 1 to 8
// buffer ranges, at one block and at a block per SM; 4 ranges at 4 blocks
// an SM with padded shared memory, in one wave and in three, spinning
// 40 us a wave), from the kernels' stamps: its floor (time at spin 0,
// first block's start to last block's end), its overhead (time beyond the
// long spin), and what each kernel adds to a chain of them launched from
// the host and as one CUDA graph (at spin 0, and beyond the spin). The
// last lines give each kernel's overhead_ns and floor_ns for the file
// family's parameters at one block: for a signature (graph traces; the
// replay kernel's is the line "replay signature:") and for 4 ranges (the
// eager imports' kernels touch 3.4 to 4.3; the replay kernel's is the
// line "measured:", which scripts/gpu/imported-v4.sh reads), and the busy
// shapes' overhead beyond the spin.
//
//	go test -tags cuda ./workloads/file -run GPUReplayProbe -v
func TestGPUReplayProbe(t *testing.T) {
	d := cudatest.Open(t)
	least, most, steps, ghz := timerProbe(t, d, 1000000)
	t.Logf("globaltimer: steps of %d to %d ns, %d steps in 1 ms (mean %.1f ns); SM clock %.4f GHz (clock64 over the same ms)",
		least, most, steps, 1e6/float64(max(steps, 1)), ghz)
	f := probeFile(d.Info())
	require.NoError(t, f.Check())
	got := map[string]probeStats{}
	for _, k := range []*device.Kernel{ReplayKernel, replayAlt, replayBare} {
		host, graphed := probeKernel(t, d, f, k, k != replayBare)
		got[k.Name] = host
		t.Logf("%-11s %-22s %9s %9s %9s %9s %9s", k.Name, "shape", "floor", "overhead", "host@0", "graph@0", "graph+")
		for _, s := range probeShapes(d.Info()) {
			at0, atSpin := probeGroup(s, false), probeGroup(s, true)
			t.Logf("%-11s %-22v %9.0f %9.0f %9.0f %9.0f %9.0f", k.Name, s, host.excess[at0], host.excess[atSpin],
				host.chain[at0], graphed.chain[at0], graphed.chain[atSpin]-float64(s.longNS(d.Info())))
		}
	}
	t.Logf("columns: ns; floor = time at spin 0, overhead = beyond the long spin (%d ns; busy shapes %d ns a wave) (one kernel, median); host@0, graph@0 = what a kernel adds to a chain at spin 0, launched from the host or in one CUDA graph; graph+ = beyond the spin in a graph chain", probeSpinNS, probeBusySpinNS)
	var busy []probeShape
	for _, s := range probeShapes(d.Info()) {
		if s.busy {
			busy = append(busy, s)
		}
	}
	for _, k := range []*device.Kernel{replayAlt, replayBare, ReplayKernel} {
		h := got[k.Name]
		sig, four, one := probeShape{0, 1, false}, probeShape{4, 1, false}, probeShape{1, 1, false}
		eight := probeShape{8, 1, false}
		t.Logf("%s per range (1 to 8, floor): %.0f ns; after its spin (1 to 8): %.0f ns", k.Name, (h.excess[probeGroup(eight, false)]-h.excess[probeGroup(one, false)])/7,
			(h.excess[probeGroup(eight, true)]-h.excess[probeGroup(one, true)])/7)
		t.Logf("%s busy, 4 ranges, beyond the spin: %s %.0f ns, %s %.0f ns", k.Name, busy[0], h.excess[probeGroup(busy[0], true)], busy[1], h.excess[probeGroup(busy[1], true)])
		t.Logf("%s signature: overhead_ns=%.0f floor_ns=%.0f", k.Name, max(0, h.excess[probeGroup(sig, true)]), max(0, h.excess[probeGroup(sig, false)]))
		t.Logf("%s 4 ranges: overhead_ns=%.0f floor_ns=%.0f", k.Name, max(0, h.excess[probeGroup(four, true)]), max(0, h.excess[probeGroup(four, false)]))
		if k == ReplayKernel {
			t.Logf("measured: overhead_ns=%.0f floor_ns=%.0f", max(0, h.excess[probeGroup(four, true)]), max(0, h.excess[probeGroup(four, false)]))
		}
	}
}
