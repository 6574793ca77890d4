//go:build cuda

package cuda_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda"
	"github.com/gpusched/gpusched/device/cuda/cudatest"
	"github.com/gpusched/gpusched/device/devicetest"
	"github.com/gpusched/gpusched/workloads/kernels"
)

func kernel(t testing.TB, module, name string) *device.Kernel {
	k, err := kernels.Lookup(module, name)
	require.NoError(t, err)
	return k
}

// The conformance suite every backend passes.
func TestConformance(t *testing.T) {
	spin := kernel(t, "devicetest", "spin")
	devicetest.Run(t, func(t *testing.T) device.Device {
		d := cudatest.Open(t)
		t.Logf("effective SM clock after warm-up: %.0f MHz (nominal %d MHz)", warm(t, d, spin), d.Info().ClockHz/1000000)
		return d
	}, devicetest.Options{Spin: spin})
}

// warm brings the GPU to its working clock and returns the SM clock it
// then runs at. The suite's spin kernel counts SM cycles, and a GPU that has
// idled (each subtest opens a fresh context) runs its first milliseconds of
// work at a fraction of its boost clock, which stretches every duration the
// suite compares.
func warm(t *testing.T, d *cuda.Device, spin *device.Kernel) (mhz float64) {
	in := d.Info()
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		stamps, err := h.Malloc(int64(16 * in.SMs))
		require.NoError(t, err)
		launch := func(blocks int, seconds float64) *device.Launch {
			return &device.Launch{Kernel: spin, Grid: device.D1(blocks), Block: device.D1(32),
				Args: []device.Arg{device.U64(uint64(seconds * float64(in.ClockHz))), device.Out(stamps)}}
		}
		require.NoError(t, h.Launch(s, launch(in.SMs, 0.05))) // every SM busy for 50 ms at the nominal clock
		e0, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		e1, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Record(e0, s))
		require.NoError(t, h.Launch(s, launch(1, 0.002)))
		require.NoError(t, h.Record(e1, s))
		require.NoError(t, h.StreamSynchronize(s))
		el, err := h.Elapsed(e0, e1)
		require.NoError(t, err)
		mhz = 0.002 * float64(in.ClockHz) / el.Seconds() / 1e6
		return nil
	}))
	return mhz
}

func TestInfoDescribesTheGPU(t *testing.T) {
	d := cudatest.Open(t)
	in := d.Info()
	require.NoError(t, in.Check())
	assert.Positive(t, in.SMs)
	assert.Equal(t, 32, in.WarpSize)
	assert.LessOrEqual(t, in.StreamPriorityHigh, in.StreamPriorityLowest)
	list, err := cuda.Devices()
	require.NoError(t, err)
	require.NotEmpty(t, list)
	assert.Equal(t, in.Name, list[0].Name)
	t.Logf("%+v", list[0])
}

// synthRef is synth_node with one input, in float32 rounded per operation
// as the kernel's __fmul_rn/__fadd_rn.
func synthRef(x float32, iters int) float32 {
	for k := 0; k < iters; k++ {
		x = float32(float32(x*0.9999) + 0.001)
	}
	return x
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		u := math.Float32bits(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return v
}

// synthLaunch is synth_node reading in and writing out, n elements.
func synthLaunch(k *device.Kernel, in, out device.Buffer, n, iters int) *device.Launch {
	return &device.Launch{
		Kernel: k, Grid: device.D1((n + 255) / 256), Block: device.D1(256),
		Args: []device.Arg{
			device.In(in), device.I32(int32(n)), device.In(in), device.I32(int32(n)),
			device.In(in), device.I32(int32(n)), device.In(in), device.I32(int32(n)),
			device.I32(1), device.Out(out), device.I32(int32(n)), device.I32(int32(iters)),
		},
	}
}

func TestKernelComputesAndCopiesRoundTrip(t *testing.T) {
	d := cudatest.Open(t)
	k := kernel(t, "synthetic", "synth_node")
	const n = 10000
	for _, pinned := range []bool{true, false} {
		err := d.Run(func(h device.Host) error {
			s, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			in, err := h.Malloc(4 * n)
			require.NoError(t, err)
			out, err := h.Malloc(4 * n)
			require.NoError(t, err)
			hin, err := h.AllocHost(4*n, pinned)
			require.NoError(t, err)
			hout, err := h.AllocHost(4*n, pinned)
			require.NoError(t, err)
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(i%97) * 0.37
			}
			copy(hin.Data, f32bytes(src))
			for i := range hout.Data {
				hout.Data[i] = 0xff // poison
			}
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: in, Host: hin, Bytes: 4 * n}))
			require.NoError(t, h.Launch(s, synthLaunch(k, in, out, n, 50)))
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: out, Host: hout, Bytes: 4 * n}))
			require.NoError(t, h.StreamSynchronize(s))
			got := bytesF32(hout.Data)
			for i := range src {
				if got[i] != synthRef(src[i], 50) {
					t.Fatalf("pinned=%v element %d: got %v, want %v", pinned, i, got[i], synthRef(src[i], 50))
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
}

// The launch path allocates nothing.
func TestLaunchAllocatesNothing(t *testing.T) {
	d := cudatest.Open(t)
	empty := kernel(t, "calibrate", "cal_empty")
	k := kernel(t, "synthetic", "synth_node")
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		buf, err := h.Malloc(4096)
		require.NoError(t, err)
		le := &device.Launch{Kernel: empty, Grid: device.D1(1), Block: device.D1(1)}
		ls := synthLaunch(k, buf, buf, 1024, 1)
		ls.Args[9] = device.InOut(buf)
		for _, l := range []*device.Launch{le, ls} {
			require.NoError(t, h.Launch(s, l)) // warm: loads the function
			allocs := testing.AllocsPerRun(1000, func() {
				if err := h.Launch(s, l); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs, "allocations per launch of %s", l.Name())
		}
		return h.StreamSynchronize(s)
	}))
}

func TestHostCallbacksQueuesAndThreads(t *testing.T) {
	d := cudatest.Open(t)
	spin := kernel(t, "calibrate", "cal_spin")
	require.NoError(t, d.Run(func(h device.Host) error {
		done := h.NewQueue("done")
		results := h.NewQueue("results")
		counter, err := h.Malloc(4)
		require.NoError(t, err)
		zero, err := h.AllocHost(4, true)
		require.NoError(t, err)
		init, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Copy(init, &device.Copy{Kind: device.HostToDevice, Dst: counter, Host: zero, Bytes: 4}))
		require.NoError(t, h.StreamSynchronize(init))
		const workers = 4
		for w := 0; w < workers; w++ {
			w := w
			h.Go("worker", func(h device.Host) error {
				s, err := h.NewStream(device.StreamOptions{})
				if err != nil {
					return err
				}
				l := &device.Launch{Kernel: spin, Grid: device.D1(2), Block: device.D1(32),
					Args: []device.Arg{device.U64(20000), device.InOut(counter)}}
				if err := h.Launch(s, l); err != nil {
					return err
				}
				if err := h.HostFunc(s, func() { done.Put(w) }); err != nil {
					return err
				}
				v, ok := h.Get(done)
				if !ok {
					return errors.New("done queue closed")
				}
				results.Put(v)
				return nil
			})
		}
		var got []int
		for i := 0; i < workers; i++ {
			v, ok := h.Get(results)
			require.True(t, ok)
			got = append(got, v.(int))
		}
		sort.Ints(got)
		assert.Equal(t, []int{0, 1, 2, 3}, got)
		require.NoError(t, h.Synchronize())
		host, err := h.AllocHost(4, true)
		require.NoError(t, err)
		s, err := h.NewStream(device.StreamOptions{Priority: d.Info().StreamPriorityHigh})
		require.NoError(t, err)
		assert.Equal(t, d.Info().StreamPriorityHigh, s.Priority())
		require.NoError(t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: counter, Host: host, Bytes: 4}))
		require.NoError(t, h.StreamSynchronize(s))
		assert.Equal(t, uint32(2*workers), uint32(host.Data[0])|uint32(host.Data[1])<<8, "every block ran")
		return nil
	}))
}

func TestDeadlockIsReported(t *testing.T) {
	d := cudatest.Open(t)
	err := d.Run(func(h device.Host) error {
		q := h.NewQueue("never")
		_, ok := h.Get(q)
		assert.False(t, ok)
		return nil
	})
	var dl *device.DeadlockError
	require.ErrorAs(t, err, &dl)
	assert.Contains(t, dl.Error(), "queue never")
}

func TestDriverErrorsNameCallAndCode(t *testing.T) {
	d := cudatest.Open(t)
	err := d.Run(func(h device.Host) error {
		a, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		b, err := h.NewEvent(device.EventOptions{DisableTiming: true})
		require.NoError(t, err)
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Record(a, s))
		require.NoError(t, h.Record(b, s))
		require.NoError(t, h.StreamSynchronize(s))
		_, err = h.Elapsed(a, b)
		var api *device.APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, "cuEventElapsedTime", api.Call)
		assert.Equal(t, "CUDA_ERROR_INVALID_HANDLE", api.Code)

		_, err = h.Malloc(1 << 50)
		require.ErrorAs(t, err, &api)
		assert.Equal(t, "cuMemAlloc", api.Call)
		assert.Equal(t, "CUDA_ERROR_OUT_OF_MEMORY", api.Code)

		low, err := h.NewStream(device.StreamOptions{Priority: 7})
		require.NoError(t, err)
		assert.Equal(t, d.Info().StreamPriorityLowest, low.Priority(), "priorities are clamped into the device's range, as CUDA does")

		err = h.Free(device.Buffer{Addr: 12345, Size: 8})
		require.ErrorAs(t, err, &api)
		assert.Equal(t, "cuMemFree", api.Call)

		bad := &device.Launch{Kernel: kernel(t, "calibrate", "cal_empty"), Grid: device.D1(1), Block: device.D1(4096)}
		var le *device.LaunchError
		require.ErrorAs(t, h.Launch(s, bad), &le)
		return nil
	})
	require.NoError(t, err)
}

func TestGraphCaptureAcrossStreamsAndUpdate(t *testing.T) {
	d := cudatest.Open(t)
	k := kernel(t, "synthetic", "synth_node")
	const n = 4096
	require.NoError(t, d.Run(func(h device.Host) error {
		s1, _ := h.NewStream(device.StreamOptions{})
		s2, _ := h.NewStream(device.StreamOptions{})
		fork, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
		join, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
		a, _ := h.Malloc(4 * n)
		b, _ := h.Malloc(4 * n)
		c, _ := h.Malloc(4 * n)
		hin, _ := h.AllocHost(4*n, true)
		hb, _ := h.AllocHost(4*n, true)
		hc, _ := h.AllocHost(4*n, true)
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i) / n
		}
		copy(hin.Data, f32bytes(src))

		require.NoError(t, h.BeginCapture(s1))
		require.NoError(t, h.Copy(s1, &device.Copy{Kind: device.HostToDevice, Dst: a, Host: hin, Bytes: 4 * n})) // node 0
		require.NoError(t, h.Record(fork, s1))
		require.NoError(t, h.Wait(s2, fork))
		require.NoError(t, h.Launch(s1, synthLaunch(k, a, b, n, 10))) // node 1
		require.NoError(t, h.Launch(s2, synthLaunch(k, a, c, n, 20))) // node 2
		require.NoError(t, h.Record(join, s2))
		require.NoError(t, h.Wait(s1, join))
		require.NoError(t, h.Copy(s1, &device.Copy{Kind: device.DeviceToHost, Src: b, Host: hb, Bytes: 4 * n})) // node 3
		require.NoError(t, h.Copy(s1, &device.Copy{Kind: device.DeviceToHost, Src: c, Host: hc, Bytes: 4 * n})) // node 4
		g, err := h.EndCapture(s1)
		require.NoError(t, err)
		assert.Equal(t, 5, g.Nodes())
		x, err := h.Instantiate(g)
		require.NoError(t, err)
		require.NoError(t, h.Destroy(g)) // the exec keeps what it needs

		check := func(itB, itC int) {
			gb, gc := bytesF32(hb.Data), bytesF32(hc.Data)
			for i := range src {
				require.Equal(t, synthRef(src[i], itB), gb[i], "b[%d]", i)
				require.Equal(t, synthRef(src[i], itC), gc[i], "c[%d]", i)
			}
		}
		require.NoError(t, h.GraphLaunch(x, s1))
		require.NoError(t, h.StreamSynchronize(s1))
		check(10, 20)

		// New parameters for node 2, and node 4 copies b instead of c.
		require.NoError(t, h.SetKernelNode(x, 2, synthLaunch(k, a, c, n, 35)))
		require.NoError(t, h.SetCopyNode(x, 4, &device.Copy{Kind: device.DeviceToHost, Src: b, Host: hc, Bytes: 4 * n}))
		require.NoError(t, h.GraphLaunch(x, s1))
		require.NoError(t, h.StreamSynchronize(s1))
		check(10, 10)

		assert.ErrorContains(t, h.SetKernelNode(x, 0, synthLaunch(k, a, c, n, 1)), "is a copy node")
		assert.ErrorContains(t, h.SetCopyNode(x, 4, &device.Copy{Kind: device.HostToDevice, Dst: b, Host: hc, Bytes: 4 * n}), "direction cannot change")
		return nil
	}))
}

// TestGraphKernelNodeChangesKernel updates the one kernel node of a graph
// to another kernel of another module, with other arguments, grid and
// block, and back (cuGraphExecKernelNodeSetParams with a new function, as
// cuda.h allows within one context): each launch of the exec must compute
// what the node's launch at that time computes. ACS-SW's graph dispatch
// relies on it.
func TestGraphKernelNodeChangesKernel(t *testing.T) {
	d := cudatest.Open(t)
	a := kernel(t, "synthetic", "synth_node")
	b := kernel(t, "calibrate", "cal_spin")
	const n = 4096
	const blocks = 7
	require.NoError(t, d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		in, _ := h.Malloc(4 * n)
		out, _ := h.Malloc(4 * n)
		count, _ := h.Malloc(4)
		hin, _ := h.AllocHost(4*n, true)
		hout, _ := h.AllocHost(4*n, true)
		hcount, _ := h.AllocHost(4, true)
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i) / n
		}
		copy(hin.Data, f32bytes(src))
		require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: in, Host: hin, Bytes: 4 * n}))
		require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: count, Host: hcount, Bytes: 4}))
		require.NoError(t, h.StreamSynchronize(s))
		read := func() ([]float32, uint32) {
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: out, Host: hout, Bytes: 4 * n}))
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: count, Host: hcount, Bytes: 4}))
			require.NoError(t, h.StreamSynchronize(s))
			c := hcount.Data
			return bytesF32(hout.Data), uint32(c[0]) | uint32(c[1])<<8 | uint32(c[2])<<16 | uint32(c[3])<<24
		}
		checkA := func(iters int) {
			got, _ := read()
			for i := range src {
				require.Equal(t, synthRef(src[i], iters), got[i], "out[%d] after kernel A with %d iterations", i, iters)
			}
		}

		require.NoError(t, h.BeginCapture(s))
		require.NoError(t, h.Launch(s, synthLaunch(a, in, out, n, 10)))
		g, err := h.EndCapture(s)
		require.NoError(t, err)
		x, err := h.Instantiate(g)
		require.NoError(t, err)
		require.NoError(t, h.GraphLaunch(x, s))
		checkA(10)

		// Kernel B: another module, other arguments, grid and block.
		spin := &device.Launch{Kernel: b, Grid: device.D1(blocks), Block: device.D1(64),
			Args: []device.Arg{device.U64(0), device.InOut(count)}}
		require.NoError(t, h.SetKernelNode(x, 0, spin), "cuGraphExecKernelNodeSetParams from %s to %s", a, b)
		require.NoError(t, h.GraphLaunch(x, s))
		require.NoError(t, h.GraphLaunch(x, s))
		got, c := read()
		assert.Equal(t, uint32(2*blocks), c, "two launches of B, %d blocks each, counted", blocks)
		for i := range src {
			require.Equal(t, synthRef(src[i], 10), got[i], "out[%d]: B must not run A", i)
		}

		// Back to A, with other arguments.
		require.NoError(t, h.SetKernelNode(x, 0, synthLaunch(a, in, out, n, 25)), "cuGraphExecKernelNodeSetParams from %s back to %s", b, a)
		require.NoError(t, h.GraphLaunch(x, s))
		checkA(25)
		_, c = read()
		assert.Equal(t, uint32(2*blocks), c, "A does not count")
		return nil
	}))
}

func TestTraceTimeline(t *testing.T) {
	d := cudatest.Open(t)
	spin := kernel(t, "calibrate", "cal_spin")
	d.EnableTrace(true)
	defer d.EnableTrace(false)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		other, _ := h.NewStream(device.StreamOptions{})
		counter, _ := h.Malloc(4)
		big, _ := h.Malloc(8 << 20)
		pinned, _ := h.AllocHost(8<<20, true)
		for i := 0; i < 3; i++ {
			l := &device.Launch{Kernel: spin, Grid: device.D1(1), Block: device.D1(32), Label: "spin",
				Args: []device.Arg{device.U64(100000), device.InOut(counter)}}
			require.NoError(t, h.Launch(s, l))
		}
		require.NoError(t, h.Copy(other, &device.Copy{Kind: device.HostToDevice, Dst: big, Host: pinned, Bytes: 8 << 20, Label: "upload"}))
		require.NoError(t, h.HostFunc(other, func() {}))
		return h.Synchronize()
	}))
	var buf bytes.Buffer
	require.NoError(t, d.WriteTrace(&buf))
	if *traceFile != "" {
		require.NoError(t, os.WriteFile(*traceFile, buf.Bytes(), 0o644))
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Name, Cat string
			Pid           int
			Ts, Dur       float64
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	var kernelsSeen []float64
	cats := map[string]int{}
	var onStream, onThread []float64 // the callback's stream span and its run: start, end
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			cats[e.Cat]++
		}
		if e.Ph == "X" && e.Cat == "kernel" {
			kernelsSeen = append(kernelsSeen, e.Ts)
			assert.Greater(t, e.Dur, 90.0, "a 100 us spin lasts about 100 us")
		}
		if e.Ph == "X" && e.Cat == "callback" {
			if e.Pid == 4 {
				onThread = []float64{e.Ts, e.Ts + e.Dur}
			} else {
				onStream = []float64{e.Ts, e.Ts + e.Dur}
			}
		}
	}
	assert.Equal(t, map[string]int{"kernel": 3, "gpu_memcpy": 1, "callback": 2, device.CatRuntime: 8}, cats,
		"a stream span per command, a host span per call and the callback's run on the callback thread")
	require.Len(t, onStream, 2, "the host function's span on its stream")
	require.Len(t, onThread, 2, "the host function's run on the driver's callback thread (pid 4)")
	assert.GreaterOrEqual(t, onThread[0], onStream[0], "the callback runs once its stream reaches it")
	assert.LessOrEqual(t, onThread[1], onStream[1], "its stream goes on once it has returned")
	require.Len(t, kernelsSeen, 3)
	assert.True(t, sort.Float64sAreSorted(kernelsSeen))
	assert.GreaterOrEqual(t, kernelsSeen[2]-kernelsSeen[0], 190.0, "one stream runs them one after another")
}

var traceFile = flag.String("tracefile", "", "write TestTraceTimeline's Chrome trace here")

var copyDiag = flag.Bool("copydiag", false, "measure first and second 16 MiB pinned copies into fresh buffers")

// TestCopyFirstTouch reports how much longer the first copy into freshly
// allocated buffers takes than the next one. It runs only with -copydiag:
// it is a measurement, not a check.
func TestCopyFirstTouch(t *testing.T) {
	if !*copyDiag {
		t.Skip("measurement; run with -copydiag")
	}
	d := cudatest.Open(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		const bytes = 16 << 20
		s, _ := h.NewStream(device.StreamOptions{})
		e0, _ := h.NewEvent(device.EventOptions{})
		e1, _ := h.NewEvent(device.EventOptions{})
		for round := 0; round < 3; round++ {
			src, err := h.AllocHost(bytes, true)
			require.NoError(t, err)
			dst, err := h.Malloc(bytes)
			require.NoError(t, err)
			var times []time.Duration
			for i := 0; i < 3; i++ {
				require.NoError(t, h.Record(e0, s))
				require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: dst, Host: src, Bytes: bytes}))
				require.NoError(t, h.Record(e1, s))
				require.NoError(t, h.StreamSynchronize(s))
				el, err := h.Elapsed(e0, e1)
				require.NoError(t, err)
				times = append(times, el)
			}
			t.Logf("fresh buffers, round %d: 16 MiB HtoD copies took %v (first, second, third)", round, times)
		}
		return nil
	}))
}

var launchBench = flag.Int("launchbench", 0, "run the launch benchmark with this many launches per loop (e.g. 100000)")

// TestLaunchLoopGoVsC launches an empty kernel n times through the Device
// interface and n times from a loop in C in the same binary (each loop ends
// with one stream synchronize), in pairs whose order alternates (C then Go,
// Go then C) so that drift favours neither. It reports per-launch times and
// the median of the pairs' Go/C ratios. It runs only with -launchbench=N: it
// is a measurement, not a check.
func TestLaunchLoopGoVsC(t *testing.T) {
	if *launchBench <= 0 {
		t.Skip("measurement; run with -launchbench=100000")
	}
	d := cudatest.Open(t)
	empty := kernel(t, "calibrate", "cal_empty")
	n := *launchBench
	const pairs = 10
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		l := &device.Launch{Kernel: empty, Grid: device.D1(1), Block: device.D1(1)}
		goLoop := func() time.Duration {
			start := time.Now()
			for i := 0; i < n; i++ {
				if err := h.Launch(s, l); err != nil {
					t.Fatal(err)
				}
			}
			require.NoError(t, h.StreamSynchronize(s))
			return time.Since(start)
		}
		cLoop := func() time.Duration {
			start := time.Now()
			_, err := cuda.LaunchLoopC(h, s, empty, n)
			require.NoError(t, err)
			require.NoError(t, h.StreamSynchronize(s))
			return time.Since(start)
		}
		mumaxLoop := func() time.Duration {
			start := time.Now()
			_, err := cuda.LaunchLoopMumax(h, s, empty, n)
			require.NoError(t, err)
			require.NoError(t, h.StreamSynchronize(s))
			return time.Since(start)
		}
		rawLoop := func() time.Duration {
			start := time.Now()
			_, err := cuda.LaunchLoopCgo(h, s, empty, n)
			require.NoError(t, err)
			require.NoError(t, h.StreamSynchronize(s))
			return time.Since(start)
		}
		goLoop() // warm up: function load, clocks
		cLoop()
		var gos, cs, ms, rs []time.Duration
		var ratios, mratios, rratios []float64
		for p := 0; p < pairs; p++ {
			var g, c time.Duration
			if p%2 == 0 {
				c, g = cLoop(), goLoop()
			} else {
				g, c = goLoop(), cLoop()
			}
			gos, cs = append(gos, g), append(cs, c)
			ratios = append(ratios, float64(g)/float64(c))
			m := mumaxLoop()
			ms = append(ms, m)
			mratios = append(mratios, float64(m)/float64(c))
			r := rawLoop()
			rs = append(rs, r)
			rratios = append(rratios, float64(r)/float64(c))
		}
		med := func(v []time.Duration) time.Duration {
			v = append([]time.Duration(nil), v...)
			sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
			return v[len(v)/2]
		}
		r := append([]float64(nil), ratios...)
		sort.Float64s(r)
		mg, mc := med(gos), med(cs)
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) / 1e3 }
		t.Logf("launches per loop: %d; %d pairs, order alternating (C,Go), (Go,C), ...; loop = launches + one stream synchronize", n, pairs)
		t.Logf("C  loop: median %v (%.3f us/launch); all %v", mc, per(mc), cs)
		t.Logf("Go loop: median %v (%.3f us/launch); all %v", mg, per(mg), gos)
		t.Logf("Go/C per pair: %.4f", ratios)
		t.Logf("Go/C ratio: median of pairs %.4f (min %.4f, max %.4f); ratio of medians %.4f", (r[pairs/2-1]+r[pairs/2])/2, r[0], r[pairs-1], float64(mg)/float64(mc))
		sort.Float64s(mratios)
		mm := med(ms)
		t.Logf("for comparison, the same loop through mumax's cu.LaunchKernel (after each pair): median %v (%.3f us/launch); mumax/C median ratio %.4f",
			mm, per(mm), (mratios[pairs/2-1]+mratios[pairs/2])/2)
		sort.Float64s(rratios)
		rm := med(rs)
		t.Logf("and a Go loop of bare cgo calls (no Device path): median %v (%.3f us/launch); bare-cgo/C median ratio %.4f",
			rm, per(rm), (rratios[pairs/2-1]+rratios[pairs/2])/2)
		return nil
	}))
}
