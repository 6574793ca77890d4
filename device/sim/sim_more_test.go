package sim

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

func h100Config(t *testing.T) *Config {
	c, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	return c
}

func TestFalseDependencyExactTimeline(t *testing.T) {
	// One hardware queue, H100 costs. Hand-computed:
	//   NewStream x2: 10 us. Launch A (stream 0, 20 us): arrives 13.3,
	//   first block 15.3, ends 35.3. Launch B (stream 0, 20 us): arrives
	//   16.6, waits for A, dispatched 35.3, first block 36.3 (back to
	//   back 1 us), ends 56.3. Launch C (stream 1, 1 us): arrives 19.9,
	//   queued behind B: dispatched 35.3 with B, first block
	//   max(19.9+2, 35.3+1) = 36.3, ends 37.3.
	// With two queues C starts at 21.9 and ends at 22.9.
	for _, tc := range []struct {
		queues int
		cEnd   time.Duration
	}{{1, 37300 * time.Nanosecond}, {2, 22900 * time.Nanosecond}} {
		d := newH100(t, WithHardwareQueues(tc.queues), WithTrace(true))
		require.NoError(t, d.Run(func(h device.Host) error {
			s0, _ := h.NewStream(device.StreamOptions{})
			s1, _ := h.NewStream(device.StreamOptions{})
			a := spinLaunch(1, 32, 20*time.Microsecond)
			a.Label = "A"
			b := spinLaunch(1, 32, 20*time.Microsecond)
			b.Label = "B"
			c := spinLaunch(1, 32, time.Microsecond)
			c.Label = "C"
			require.NoError(t, h.Launch(s0, a))
			require.NoError(t, h.Launch(s0, b))
			require.NoError(t, h.Launch(s1, c))
			return h.Synchronize()
		}))
		spans := map[string][2]Time{}
		for _, s := range d.lastTrace.spans {
			if s.kind == trackStream {
				spans[s.name] = [2]Time{s.start, s.end}
			}
		}
		assert.Equal(t, [2]Time{15300000, 35300000}, spans["A"])
		assert.Equal(t, [2]Time{36300000, 56300000}, spans["B"])
		assert.Equal(t, tc.cEnd, spans["C"][1].Duration(), "queues=%d", tc.queues)
	}
}

func TestResidentGridLimit(t *testing.T) {
	cfg := h100Config(t)
	cfg.Info.MaxResidentGrids = 2
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		for i := 0; i < 3; i++ {
			s, _ := h.NewStream(device.StreamOptions{})
			l := spinLaunch(1, 32, 10*time.Microsecond)
			l.Label = string(rune('A' + i))
			require.NoError(t, h.Launch(s, l))
		}
		return h.Synchronize()
	}))
	spans := map[string][2]Time{}
	for _, s := range d.lastTrace.spans {
		spans[s.name] = [2]Time{s.start, s.end}
	}
	// The third kernel gets a slot only when the first completes.
	assert.Greater(t, spans["C"][0], spans["A"][1])
	assert.Less(t, spans["B"][0], spans["A"][1])
}

func TestUtilization(t *testing.T) {
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		require.NoError(t, h.Launch(s, spinLaunch(264, 1024, 100*time.Microsecond)))
		require.NoError(t, h.Launch(s, spinLaunch(132, 1024, 100*time.Microsecond)))
		return h.Synchronize()
	}))
	st := d.Stats()
	// 100 us at every warp slot, 1 us back-to-back gap, 100 us at half.
	assert.InDelta(t, 150.0/201.0, st.SMUtilization, 0.005)
	require.NotEmpty(t, st.Utilization)
	var busyMax float64
	for _, u := range st.Utilization {
		busyMax = max(busyMax, u.Busy)
		assert.LessOrEqual(t, u.Warps, 1.0+1e-9)
	}
	assert.InDelta(t, 1.0, busyMax, 1e-9)
}

func TestDependencyQueue(t *testing.T) {
	d := newH100(t, WithTrace(true))
	require.NoError(t, d.Run(func(h device.Host) error {
		q, ok := h.(device.DependencyQueue)
		require.True(t, ok, "the simulator's host has the ACS-HW queue")
		assert.Equal(t, 32, q.DQSlots())
		a := spinLaunch(1, 32, 20*time.Microsecond)
		a.Label = "A"
		b := spinLaunch(1, 32, 5*time.Microsecond)
		b.Label = "B"
		c := spinLaunch(1, 32, 5*time.Microsecond)
		c.Label = "C"
		ia, err := q.DQSubmit(a, nil)
		require.NoError(t, err)
		ib, err := q.DQSubmit(b, []uint64{ia})
		require.NoError(t, err)
		_, err = q.DQSubmit(c, []uint64{ia + 100})
		require.Error(t, err, "an id never submitted")
		ic, err := q.DQSubmit(c, nil)
		require.NoError(t, err)
		assert.False(t, q.DQDone(ib))
		require.NoError(t, q.DQSynchronize())
		assert.True(t, q.DQDone(ia) && q.DQDone(ib) && q.DQDone(ic))
		return nil
	}))
	spans := map[string][2]Time{}
	for _, s := range d.lastTrace.spans {
		if s.kind == trackDQ {
			spans[s.name] = [2]Time{s.start, s.end}
		}
	}
	// B waits for A (completion update 31 cycles + dispatch 0.5 us); C,
	// independent, overlaps A.
	assert.GreaterOrEqual(t, spans["B"][0], spans["A"][1]+nsTime(500))
	assert.Less(t, spans["C"][0], spans["A"][1])
	assert.Equal(t, int64(3), d.Stats().Kernels)

	off := newH100(t, WithDependencyQueue(false))
	require.NoError(t, off.Run(func(h device.Host) error {
		_, ok := h.(device.DependencyQueue)
		assert.False(t, ok, "disabled queue is not offered")
		return nil
	}))
}

func TestDependencyQueueFullBlocksHost(t *testing.T) {
	cfg := h100Config(t)
	cfg.DQ.Slots = 2
	d, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		q := h.(device.DependencyQueue)
		for i := 0; i < 2; i++ {
			_, err := q.DQSubmit(spinLaunch(1, 32, 50*time.Microsecond), nil)
			require.NoError(t, err)
		}
		before := h.Now()
		_, err := q.DQSubmit(spinLaunch(1, 32, time.Microsecond), nil)
		require.NoError(t, err)
		// The third submit waited for a slot: about 50 us.
		assert.Greater(t, h.Now()-before, 45*time.Microsecond)
		return q.DQSynchronize()
	}))
}

func TestGraphUpdatesAffectLaterLaunchesOnly(t *testing.T) {
	d := newH100(t, WithTrace(true))
	require.NoError(t, d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		a, _ := h.Malloc(1024)
		b, _ := h.Malloc(1024)
		require.NoError(t, h.BeginCapture(s))
		k := spinLaunch(1, 32, 10*time.Microsecond)
		k.Label, k.Args = "ten", []device.Arg{device.Out(a)}
		require.NoError(t, h.Launch(s, k))
		// Launches during capture do not run.
		g, err := h.EndCapture(s)
		require.NoError(t, err)
		x, err := h.Instantiate(g)
		require.NoError(t, err)
		require.NoError(t, h.GraphLaunch(x, s))
		k.Label, k.Work.Cycles = "forty", cyclesFor(40*time.Microsecond)
		require.NoError(t, h.SetKernelNode(x, 0, k))
		require.NoError(t, h.GraphLaunch(x, s))
		// Another kernel, grid, block and access set (CUDA 12 allows any
		// function of the same context): the next launch runs it, while
		// the launches queued above keep theirs.
		other := &device.Launch{Kernel: &device.Kernel{Module: "test", Name: "other", Regs: 16}, Grid: device.D1(3), Block: device.D1(128),
			Work: device.Work{Cycles: cyclesFor(25 * time.Microsecond)}, Label: "other", Args: []device.Arg{device.Out(b)}}
		require.NoError(t, h.SetKernelNode(x, 0, other))
		var api *device.APIError
		bad := *other
		bad.Block = device.D1(4096)
		var le *device.LaunchError
		require.ErrorAs(t, h.SetKernelNode(x, 0, &bad), &le, "an invalid launch is still rejected")
		require.ErrorAs(t, h.SetKernelNode(x, 3, k), &api)
		require.NoError(t, h.StreamSynchronize(s))
		// The node now writes b, not a: a kernel writing a on another
		// stream, unordered with it, is no race; one writing b is.
		s2, _ := h.NewStream(device.StreamOptions{})
		require.NoError(t, h.GraphLaunch(x, s))
		onA := spinLaunch(1, 32, 10*time.Microsecond)
		onA.Label, onA.Args = "onA", []device.Arg{device.Out(a)}
		require.NoError(t, h.Launch(s2, onA))
		require.NoError(t, h.Synchronize())
		require.NoError(t, h.GraphLaunch(x, s))
		onB := spinLaunch(1, 32, 10*time.Microsecond)
		onB.Label, onB.Args = "onB", []device.Arg{device.Out(b)}
		require.NoError(t, h.Launch(s2, onB))
		return h.Synchronize()
	}))
	var got []string
	var durs []Time
	for _, s := range d.lastTrace.spans {
		if s.kind == trackStream && s.name != "onA" && s.name != "onB" {
			got = append(got, s.name)
			durs = append(durs, s.end-s.start)
		}
	}
	assert.Equal(t, []string{"ten", "forty", "other", "other"}, got)
	assert.Equal(t, []Time{nsTime(10000), nsTime(40000), nsTime(25000), nsTime(25000)}, durs)
	races := d.Races()
	require.Len(t, races, 1, "only the updated node and onB conflict: %v", races)
	names := []string{races[0].A.Name, races[0].B.Name}
	assert.ElementsMatch(t, []string{"other", "onB"}, names)
}

func TestCaptureErrors(t *testing.T) {
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		s2, _ := h.NewStream(device.StreamOptions{})
		e, _ := h.NewEvent(device.EventOptions{})
		code := func(err error) string {
			var api *device.APIError
			if errors.As(err, &api) {
				return api.Code
			}
			return "no APIError: " + errString(err)
		}
		_, err := h.EndCapture(s)
		assert.Equal(t, "CUDA_ERROR_ILLEGAL_STATE", code(err))

		// Synchronizing a capturing stream fails and invalidates the capture.
		require.NoError(t, h.BeginCapture(s))
		assert.Equal(t, "CUDA_ERROR_ILLEGAL_STATE", code(h.BeginCapture(s)))
		assert.Equal(t, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", code(h.StreamSynchronize(s)))
		_, err = h.EndCapture(s)
		assert.Equal(t, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", code(err))

		// Ending a capture on a forked stream rather than its origin.
		require.NoError(t, h.BeginCapture(s))
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, time.Microsecond)))
		require.NoError(t, h.Record(e, s))
		require.NoError(t, h.Wait(s2, e))
		_, err = h.EndCapture(s2)
		assert.Equal(t, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", code(err))
		require.NoError(t, h.Record(e, s2))
		require.NoError(t, h.Wait(s, e))
		g, err := h.EndCapture(s)
		require.NoError(t, err)
		assert.Equal(t, 1, g.Nodes())

		// A capturing stream waiting on an event recorded outside it.
		require.NoError(t, h.Record(e, s2))
		require.NoError(t, h.BeginCapture(s))
		assert.Equal(t, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", code(h.Wait(s, e)))
		_, err = h.EndCapture(s)
		assert.Equal(t, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", code(err))
		return h.Synchronize()
	}))
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func TestHostThreadsQueuesAndDriverLock(t *testing.T) {
	d := newH100(t)
	var got time.Duration
	var tWorker, tMain time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		q := h.NewQueue("work")
		start := h.Now()
		h.Go("worker", func(w device.Host) error {
			v, ok := w.Get(q)
			require.True(t, ok)
			got = v.(time.Duration)
			tWorker = w.Now()
			return nil
		})
		h.Spend(100 * time.Microsecond)
		q.Put(h.Now())
		tMain = h.Now()
		_ = start
		return nil
	}))
	// The worker wakes when the value is put, plus the wake-up cost.
	assert.Equal(t, tMain, got)
	assert.Equal(t, got+2500*time.Nanosecond, tWorker)

	// Two threads launching at once share the driver lock. Both start at
	// 0 (thread start cost 0), each creates a stream (5 us) and launches
	// 10 kernels (3.3 us each): 38 us alone.
	for _, tc := range []struct {
		fraction float64
		last     time.Duration
	}{
		// Whole calls under the lock: 2 x 38 us, one after the other.
		{1, 76 * time.Microsecond},
		// Half of each call under the lock: the lock is busy from 2.5 us
		// (the first locked half) for 2 x (2.5 + 10 x 1.65) us.
		{0.5, 40500 * time.Nanosecond},
		// No lock: the threads run side by side.
		{0, 38 * time.Microsecond},
	} {
		cfg := h100Config(t)
		cfg.Host.ThreadStartNs = 0
		cfg.Host.DriverLockFraction = tc.fraction
		d, err := New(cfg)
		require.NoError(t, err)
		var ends []time.Duration
		require.NoError(t, d.Run(func(h device.Host) error {
			q := h.NewQueue("ends")
			for i := 0; i < 2; i++ {
				h.Go("launcher", func(w device.Host) error {
					s, _ := w.NewStream(device.StreamOptions{})
					for j := 0; j < 10; j++ {
						require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
					}
					q.Put(w.Now())
					return nil
				})
			}
			for i := 0; i < 2; i++ {
				v, _ := h.Get(q)
				ends = append(ends, v.(time.Duration))
			}
			return nil
		}))
		assert.Equal(t, tc.last, max(ends[0], ends[1]), "driver lock fraction %g", tc.fraction)
	}
}

func TestPageableCopyBlocksHost(t *testing.T) {
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		buf, _ := h.Malloc(20e6)
		pinned, _ := h.AllocHost(20e6, true)
		pageable, _ := h.AllocHost(20e6, false)
		t0 := h.Now()
		require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: pinned, Bytes: 20e6}))
		assert.Equal(t, 3500*time.Nanosecond, h.Now()-t0, "a pinned copy returns after its enqueue cost")
		t1 := h.Now()
		require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: pageable, Bytes: 20e6}))
		// Behind the pinned copy (2 us + 20 MB / 55 GB/s = 365.6 us), then
		// 2 us + 20 MB / 20 GB/s = 1002 us, then the wake-up.
		assert.Greater(t, h.Now()-t1, 1300*time.Microsecond)
		return nil
	}))
}

func TestHandlesAndMemoryErrors(t *testing.T) {
	d := newH100(t)
	var old device.Stream
	var oldEv device.Event
	require.NoError(t, d.Run(func(h device.Host) error {
		old, _ = h.NewStream(device.StreamOptions{})
		oldEv, _ = h.NewEvent(device.EventOptions{})
		_, err := h.Malloc(d.Info().MemoryBytes + 1)
		var api *device.APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, "CUDA_ERROR_OUT_OF_MEMORY", api.Code)
		assert.Error(t, h.Free(device.Buffer{Addr: 12345, Size: 1}))
		b, err := h.Malloc(100)
		require.NoError(t, err)
		require.NoError(t, h.Free(b))
		assert.Error(t, h.Free(b), "double free")
		require.NoError(t, h.Destroy(oldEv))
		assert.Error(t, h.Record(oldEv, old), "destroyed event")
		return nil
	}))
	require.NoError(t, d.Run(func(h device.Host) error {
		err := h.Launch(old, spinLaunch(1, 32, time.Microsecond))
		var api *device.APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, "CUDA_ERROR_INVALID_HANDLE", api.Code)
		assert.Contains(t, api.Msg, "another Run")
		return nil
	}))
}

func TestThreadErrorsAndPanics(t *testing.T) {
	d := newH100(t)
	err := d.Run(func(h device.Host) error {
		q := h.NewQueue("never")
		h.Go("stuck", func(w device.Host) error { w.Get(q); return nil })
		return errors.New("main failed")
	})
	assert.EqualError(t, err, "main failed", "a thread's error wins over the deadlock it leaves")
	err = d.Run(func(h device.Host) error {
		h.Go("bad", func(w device.Host) error { panic("boom") })
		return nil
	})
	assert.ErrorContains(t, err, "host thread bad panicked: boom")
	err = d.Run(func(h device.Host) error {
		q := h.NewQueue("never")
		h.Get(q)
		return nil
	})
	var dl *device.DeadlockError
	require.ErrorAs(t, err, &dl)
	assert.Contains(t, dl.Waiting, `host thread main blocked in Get(queue "never")`)
}

func TestTraceIsChromeJSON(t *testing.T) {
	d := newH100(t, WithTrace(true))
	require.NoError(t, d.Run(mixed))
	var doc struct {
		TraceEvents []struct {
			Name string          `json:"name"`
			Ph   string          `json:"ph"`
			Pid  int             `json:"pid"`
			Tid  int             `json:"tid"`
			Ts   float64         `json:"ts"`
			Dur  float64         `json:"dur"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal([]byte(traceOf(t, d)), &doc))
	phases := map[string]int{}
	type track struct{ pid, tid int }
	lastEnd := map[track]float64{}
	for _, e := range doc.TraceEvents {
		phases[e.Ph]++
		if e.Ph == "X" {
			k := track{e.Pid, e.Tid}
			assert.GreaterOrEqual(t, e.Ts+1e-9, lastEnd[k], "slices on one track never overlap (%s)", e.Name)
			lastEnd[k] = e.Ts + e.Dur
		}
	}
	assert.Positive(t, phases["X"])
	assert.Positive(t, phases["M"])
	lanes := map[string]bool{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			var a struct{ Name string }
			require.NoError(t, json.Unmarshal(e.Args, &a))
			lanes[a.Name] = true
		}
	}
	for _, want := range []string{"host thread main", "host thread worker0", "stream 0", "copy engine HtoD", "callback thread", "SM 0-8", "SM 126-131"} {
		assert.True(t, lanes[want], "lane %q in %v", want, lanes)
	}
	off := newH100(t)
	require.NoError(t, off.Run(mixed))
	assert.Error(t, off.WriteTrace(&bytesDiscard{}), "no trace recorded")
}

type bytesDiscard struct{}

func (bytesDiscard) Write(p []byte) (int, error) { return len(p), nil }

func TestHostUsedFromCallbackIsAnError(t *testing.T) {
	d := newH100(t)
	err := d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		require.NoError(t, h.HostFunc(s, func() { _, _ = h.NewEvent(device.EventOptions{}) }))
		return h.Synchronize()
	})
	assert.ErrorContains(t, err, "host thread main's Host used outside that thread")
}

func TestWorkSharingModel(t *testing.T) {
	// Hand-computed on the H100 config: an SM does 256 flops/cycle x 1.98
	// GHz = 506.88 flops/ns; device memory 3,350 bytes/ns. A 128-thread
	// block has 4 warps.
	run := func(cfg *Config, blocks int, w device.Work) time.Duration {
		d, err := New(cfg)
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			s, _ := h.NewStream(device.StreamOptions{})
			require.NoError(t, h.Launch(s, &device.Launch{Kernel: spinK, Grid: device.D1(blocks), Block: device.D1(128), Work: w}))
			return h.Synchronize()
		}))
		return d.Stats().DeviceTime
	}
	one := h100Config(t)
	one.Info.SMs = 1
	flops := device.Work{Flops: 126720} // 1 us at a quarter of the SM
	// Alone, 4 warps get 4/max(4, 16 saturation warps) of the SM.
	assert.Equal(t, time.Microsecond, run(one, 1, flops))
	// Four blocks (16 warps) still each get a quarter.
	assert.Equal(t, time.Microsecond, run(one, 4, flops))
	// Eight (32 warps) get an eighth each: twice as long, all at once.
	assert.Equal(t, 2*time.Microsecond, run(one, 8, flops))

	// Memory: one SM draws at most 100 bytes/ns (max_sm_bandwidth), a
	// block its warps over max(memory warps on the SM, 16) of that; all
	// blocks together share 3,350 bytes/ns by warps.
	h := h100Config(t)
	smBound := device.Work{Bytes: 25000} // 1 us at 4/16 of one SM's 100 bytes/ns
	assert.Equal(t, time.Microsecond, run(h, 1, smBound), "a lone block is bound by its SM, not by 4/4224 of HBM")
	assert.Equal(t, time.Microsecond, run(one, 4, smBound), "four blocks (16 warps) on one SM each keep a quarter")
	assert.Equal(t, 2*time.Microsecond, run(one, 8, smBound), "eight (32 warps) get an eighth")
	// One block per SM: HBM gives each 3,350 x 4/528 = 25.4 bytes/ns, more
	// than its SM's 25: still SM-bound. Two per SM: HBM gives 3,350 x
	// 4/1,056 = 12.69 bytes/ns: 25,000 x 1,056 / 13,400 = 1,970.149 ns.
	assert.Equal(t, time.Microsecond, run(h, 132, smBound))
	assert.Equal(t, 1970*time.Nanosecond, run(h, 264, smBound), "device time has nanosecond resolution")
	hbmBound := device.Work{Bytes: 3350.0 * 4 / 4224 * 1000} // 1 us at 4/4224 of HBM
	// 1,056 blocks (8 per SM, 4,224 warps): HBM-bound at 4/4224 each;
	// 2,112 resident blocks halve it.
	assert.Equal(t, time.Microsecond, run(h, 1056, hbmBound))
	assert.Equal(t, 2*time.Microsecond, run(h, 2112, hbmBound))
	// Cycles and flops: the larger time wins.
	assert.Equal(t, 3*time.Microsecond, run(one, 1, device.Work{Flops: 126720, Cycles: 3 * 1980}))
	// No work at all: the minimum block time.
	assert.Equal(t, 200*time.Nanosecond, run(h, 1, device.Work{}))
}

func TestRunIsNotReentrant(t *testing.T) {
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		err := d.Run(func(device.Host) error { return nil })
		assert.ErrorContains(t, err, "one Run at a time")
		return nil
	}))
	require.NoError(t, d.Close())
	assert.Error(t, d.Run(func(device.Host) error { return nil }), "closed")
}

func TestBlockDispatchTime(t *testing.T) {
	// With 1 ns per block, the 264 blocks of a full wave start over 264 ns:
	// the last (a batch of 2 on the last SM) at 264 ns, so the kernel lasts
	// 10 us + 264 ns. With one block more, it goes to the first SM freed:
	// SM 0's pair started at 2 ns and ends at 10.002 us; the extra block
	// starts 1 ns later and ends at 20.003 us.
	cfg := h100Config(t)
	cfg.FrontEnd.BlockDispatchNs = 1
	for _, tc := range []struct {
		blocks int
		want   time.Duration
	}{{1, 10001 * time.Nanosecond}, {264, 10264 * time.Nanosecond}, {265, 20003 * time.Nanosecond}} {
		d, err := New(cfg)
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			s, _ := h.NewStream(device.StreamOptions{})
			require.NoError(t, h.Launch(s, spinLaunch(tc.blocks, 1024, 10*time.Microsecond)))
			return h.Synchronize()
		}))
		assert.Equal(t, tc.want, d.Stats().DeviceTime, "%d blocks", tc.blocks)
	}
}

func TestWorkMustBeFiniteAndDurationsEndAtTheHorizon(t *testing.T) {
	d := newH100(t)
	err := d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		for _, w := range []device.Work{{Cycles: -1}, {Flops: math.NaN()}, {Bytes: math.Inf(1)}} {
			l := spinLaunch(1, 32, time.Microsecond)
			l.Work = w
			var le *device.LaunchError
			require.ErrorAs(t, h.Launch(s, l), &le, "%+v", w)
			assert.Contains(t, le.Rule, "finite, non-negative")
		}
		// An absurd but finite figure ends the Run at the horizon, naming
		// the kernel and the figure, instead of a saturated or wrapped time.
		l := spinLaunch(1, 32, time.Microsecond)
		l.Work = device.Work{Cycles: 1e300}
		require.NoError(t, h.Launch(s, l))
		return h.Synchronize()
	})
	var he *HorizonError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, `kernel "spin" on stream 0`, he.What)
	assert.Equal(t, "info.clock_hz", he.Field)
	assert.Contains(t, he.Cause, "1e+300 cycles of work per block")
	assert.Contains(t, he.At, "more than")
}

func TestPutOnClosedQueueFailsTheThread(t *testing.T) {
	d := newH100(t)
	err := d.Run(func(h device.Host) error {
		q := h.NewQueue("results")
		q.Put(1)
		q.Close()
		v, ok := h.Get(q)
		assert.True(t, ok, "values put before Close are still delivered")
		assert.Equal(t, 1, v)
		_, ok = h.Get(q)
		assert.False(t, ok, "closed and empty")
		q.Put(2)
		return nil
	})
	assert.ErrorContains(t, err, `Put on closed queue "results"`)
}
