//go:build cuda

package file

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda"
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

// runAndStamps runs prog under s once on d and returns its outputs and the
// replay state buffer (first block start and last block end per kernel).
func runAndStamps(t *testing.T, d device.Device, prog *workloads.Program, s sched.Scheduler) (map[string][]byte, []byte) {
	t.Helper()
	var outs map[string][]byte
	var state []byte
	require.NoError(t, d.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer in.Release(h)
		if err := s.Run(h, in); err != nil {
			return err
		}
		if outs, err = in.Outputs(h); err != nil {
			return err
		}
		idx := len(prog.Buffers) - 3 // real buffers, arena, state, sig, desc
		m, err := h.AllocHost(prog.Buffers[idx].Bytes, true)
		if err != nil {
			return err
		}
		st, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		defer h.Destroy(st)
		c := device.Copy{Kind: device.DeviceToHost, Src: in.Bufs[idx], Host: m, Bytes: prog.Buffers[idx].Bytes}
		if err := h.Copy(st, &c); err != nil {
			return err
		}
		if err := h.StreamSynchronize(st); err != nil {
			return err
		}
		state = append([]byte(nil), m.Data...)
		return h.FreeHost(m)
	}))
	return outs, state
}

// TestGPUReplay checks the replay kernel on a GPU: the serial schedule's
// outputs equal the CPU reference, a four-stream schedule's equal serial's,
// and every kernel lasts its spin time plus an overhead it measures on the
// GPU's global timer (first block start to last block end), reported as
// overhead_ns for the file family's parameter.
//
//	go test -tags cuda ./workloads/file -run GPU -v
func TestGPUReplay(t *testing.T) {
	d, err := cuda.Open(cuda.Options{Modules: kernels.Images()})
	if errors.Is(err, device.ErrNoDevice) {
		t.Skipf("no GPU: %v", err)
	}
	require.NoError(t, err)
	defer d.Close()
	f := calibrationFile(d.Info())
	require.NoError(t, f.Check())
	prog, err := Program(f, Options{})
	require.NoError(t, err)
	outs, state := runAndStamps(t, d, prog, sched.NewSerial())
	require.NoError(t, prog.Check(outs), "serial replay against the CPU reference")
	rr, err := sched.NewRoundRobin(4)
	require.NoError(t, err)
	outs4, _ := runAndStamps(t, d, prog, rr)
	require.NoError(t, prog.Check(outs4), "round-robin(4) replay against the CPU reference")

	steps, err := f.nodes()
	require.NoError(t, err)
	byShape := map[string][]float64{}
	for _, n := range steps[0] {
		slot := state[n.slot*stateSize:]
		start, end := binary.LittleEndian.Uint64(slot[16:]), binary.LittleEndian.Uint64(slot[24:])
		waves := int64(blocksOf(n)+f.Device.SMs*f.Device.occupancy(n)-1) / int64(f.Device.SMs*f.Device.occupancy(n))
		spin := f.Device.spinNS(n, 0, 0)
		key := fmt.Sprintf("grid %d block %d, %d wave(s), %d ns a block", n.op.Grid.X, n.op.Block.X, waves, spin)
		byShape[key] = append(byShape[key], float64(int64(end-start)-waves*spin)/float64(waves))
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
		t.Logf("%-50s overhead per wave: median %6.0f ns [%6.0f-%6.0f] over %d kernels", k, v[len(v)/2], v[0], v[len(v)-1], len(v))
		if strings.HasPrefix(k, "grid 1 ") {
			single = append(single, v...)
		}
	}
	// A one-block kernel's excess is the replay's own cost per block (its
	// ticket, reads, writes, exit); wider grids add the spread of their
	// blocks' starts, which the original kernel had as well.
	sort.Float64s(single)
	t.Logf("overhead_ns=%.0f (median over the %d one-block kernels)", single[len(single)/2], len(single))
}
