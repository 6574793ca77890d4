// Package devicetest is the conformance suite every device.Device backend
// passes: the CUDA stream model's guarantees, checked by observing a device
// from the outside, through the Device interface only.
//
// It checks in-stream order; event record and wait across streams; that two
// small kernels on two streams overlap while two kernels that each fill the
// GPU do not; occupancy (a grid of blocks-per-SM x SMs blocks finishes in
// one wave, one block more needs two); that copies in opposite directions
// overlap and copies in one direction serialize; that a captured
// multi-stream graph replays with the captured ordering; that a callback
// runs after the work before it; that invalid launches fail with a
// *device.LaunchError; and elapsed time between events.
//
// Times are observed with events (Record, Elapsed), which every backend
// has. Kernels are real: the suite launches Options.Spin, whose blocks spin
// for a number of SM cycles and write their global-timer start and end; on a
// GPU the suite also reads those stamps to see overlap on the device itself
// (the simulator moves no data, so its stamps stay zero and are skipped).
// With Options.Exact (the simulator), relations that hold exactly in a
// deterministic model are asserted exactly: one more wave costs exactly one
// block duration, a full wave ends exactly when a single block does.
package devicetest

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// Options configure the suite for a backend.
type Options struct {
	// Exact enables assertions that need exact, deterministic times (the
	// simulator).
	Exact bool
	// Spin is the kernel the suite launches, with the signature
	//
	//	extern "C" __global__ void spin(long long cycles, unsigned long long* stamps)
	//
	// every block spins for cycles SM clock cycles, then its first thread
	// writes the block's global-timer start and end (ns) to stamps[2*b] and
	// stamps[2*b+1], b the linear block index. Module "devicetest" of
	// workloads/kernels has it (kernels.Lookup("devicetest", "spin")); the
	// suite takes it as an option so that device packages need not import
	// workloads.
	Spin *device.Kernel
	// Unit is the duration of one spinning block; default 200 us, long
	// enough that host launch costs do not blur overlap on a real GPU.
	Unit time.Duration
}

type suite struct {
	newDevice func(t *testing.T) device.Device
	opts      Options
	// unit is the measured duration of Options.Unit worth of spinning: a
	// GPU's clock need not be the nominal one Info reports.
	unit time.Duration
}

// Run runs every conformance test as a subtest of t, each on a fresh device
// from newDevice.
func Run(t *testing.T, newDevice func(t *testing.T) device.Device, opts Options) {
	if opts.Spin == nil {
		t.Fatal("devicetest: Options.Spin is required (module devicetest, function spin)")
	}
	if opts.Unit <= 0 {
		opts.Unit = 200 * time.Microsecond
	}
	s := &suite{newDevice: newDevice, opts: opts}
	s.measureUnit(t)
	t.Run("InStreamOrder", s.inStreamOrder)
	t.Run("EventAcrossStreams", s.eventAcrossStreams)
	t.Run("SmallKernelsOverlap", s.smallKernelsOverlap)
	t.Run("FullKernelsSerialize", s.fullKernelsSerialize)
	t.Run("Occupancy", s.occupancy)
	t.Run("Copies", s.copies)
	t.Run("GraphReplay", s.graphReplay)
	t.Run("CallbackAfterWork", s.callbackAfterWork)
	t.Run("InvalidLaunches", s.invalidLaunches)
	t.Run("Elapsed", s.elapsed)
}

// run executes fn as the main host thread of a fresh device.
func (s *suite) run(t *testing.T, fn func(h device.Host) error) device.Info {
	t.Helper()
	dev := s.newDevice(t)
	defer func() { assert.NoError(t, dev.Close()) }()
	require.NoError(t, dev.Run(fn))
	return dev.Info()
}

// spinner builds launches of the spin kernel with their stamp buffers.
type spinner struct {
	t    *testing.T
	h    device.Host
	info device.Info
	unit time.Duration
	spin *device.Kernel
}

func (s *suite) spinner(t *testing.T, h device.Host, info device.Info) *spinner {
	return &spinner{t: t, h: h, info: info, unit: s.opts.Unit, spin: s.opts.Spin}
}

// launch is a grid of blocks of threads, each spinning for units x Unit.
func (p *spinner) launch(blocks, threads int, units float64) (*device.Launch, device.Buffer) {
	stamps, err := p.h.Malloc(int64(16 * blocks))
	require.NoError(p.t, err)
	cycles := units * float64(p.unit.Nanoseconds()) * float64(p.info.ClockHz) / 1e9
	return &device.Launch{
		Kernel: p.spin, Grid: device.D1(blocks), Block: device.D1(threads),
		Args: []device.Arg{device.U64(uint64(cycles)), device.Out(stamps)},
		Work: device.Work{Cycles: cycles}, Label: "spin",
	}, stamps
}

// stamps reads a kernel's per-block [start, end) global-timer stamps; ok is
// false when the device wrote none (the simulator moves no data).
func (p *spinner) stamps(buf device.Buffer) (iv [][2]uint64, ok bool) {
	h := p.h
	m, err := h.AllocHost(buf.Size, true)
	require.NoError(p.t, err)
	defer func() { assert.NoError(p.t, h.FreeHost(m)) }()
	s, err := h.NewStream(device.StreamOptions{})
	require.NoError(p.t, err)
	defer func() { assert.NoError(p.t, h.Destroy(s)) }()
	require.NoError(p.t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: buf, Host: m, Bytes: buf.Size}))
	require.NoError(p.t, h.StreamSynchronize(s))
	for i := 0; i+16 <= len(m.Data); i += 16 {
		a, b := binary.LittleEndian.Uint64(m.Data[i:]), binary.LittleEndian.Uint64(m.Data[i+8:])
		if a != 0 || b != 0 {
			ok = true
		}
		iv = append(iv, [2]uint64{a, b})
	}
	return iv, ok
}

// span is the [earliest start, latest end] of a kernel's blocks.
func span(iv [][2]uint64) (lo, hi uint64) {
	lo = iv[0][0]
	for _, x := range iv {
		lo, hi = min(lo, x[0]), max(hi, x[1])
	}
	return lo, hi
}

// timer measures, from one start event, when each stream reaches a point.
type timer struct {
	t     *testing.T
	h     device.Host
	start device.Event
}

// newTimer records a start event on streams[0] and makes the other streams
// wait on it, so all of them start from the same instant. Tests build their
// launches (which allocate stamp buffers) before starting the timer: on a GPU
// a cuMemAlloc can take hundreds of microseconds, which would count as
// device time.
func newTimer(t *testing.T, h device.Host, streams ...device.Stream) *timer {
	e, err := h.NewEvent(device.EventOptions{})
	require.NoError(t, err)
	require.NoError(t, h.Record(e, streams[0]))
	for _, s := range streams[1:] {
		require.NoError(t, h.Wait(s, e))
	}
	return &timer{t: t, h: h, start: e}
}

// mark records an event on s; at returns its time since the start once
// the device is synchronized.
func (tm *timer) mark(s device.Stream) device.Event {
	e, err := tm.h.NewEvent(device.EventOptions{})
	require.NoError(tm.t, err)
	require.NoError(tm.t, tm.h.Record(e, s))
	return e
}

func (tm *timer) at(e device.Event) time.Duration {
	d, err := tm.h.Elapsed(tm.start, e)
	require.NoError(tm.t, err)
	return d
}

func streams(t *testing.T, h device.Host, n int) []device.Stream {
	var ss []device.Stream
	for i := 0; i < n; i++ {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		ss = append(ss, s)
	}
	return ss
}

func (s *suite) info(t *testing.T) device.Info {
	dev := s.newDevice(t)
	defer func() { assert.NoError(t, dev.Close()) }()
	return dev.Info()
}

// measureUnit times a kernel of one unit and one of two units, identically
// issued; the difference is one unit of spinning on this device, free of
// launch costs.
func (s *suite) measureUnit(t *testing.T) {
	info := s.info(t)
	var took [2]time.Duration
	s.run(t, func(h device.Host) error {
		p := s.spinner(t, h, info)
		st := streams(t, h, 1)[0]
		// A first launch may load the function (CUDA's lazy module
		// loading, per context) between the start mark and the kernel,
		// which would inflate the one-unit time: launch once untimed.
		k, _ := p.launch(1, 32, 1)
		require.NoError(t, h.Launch(st, k))
		require.NoError(t, h.StreamSynchronize(st))
		for i := range took {
			tm := newTimer(t, h, st)
			k, _ := p.launch(1, 32, float64(i+1))
			require.NoError(t, h.Launch(st, k))
			e := tm.mark(st)
			require.NoError(t, h.StreamSynchronize(st))
			took[i] = tm.at(e)
		}
		return nil
	})
	s.unit = took[1] - took[0]
	t.Logf("one unit of spinning (nominal %v) takes %v", s.opts.Unit, s.unit)
	require.Greater(t, s.unit, s.opts.Unit/4, "the spin kernel's duration must follow its cycle count")
	if s.opts.Exact {
		require.Equal(t, s.opts.Unit, s.unit)
	}
}

func (s *suite) inStreamOrder(t *testing.T) {
	u := s.unit
	info := s.info(t)
	s.run(t, func(h device.Host) error {
		p := s.spinner(t, h, info)
		st := streams(t, h, 1)[0]
		long, _ := p.launch(1, 32, 2)
		short, _ := p.launch(1, 32, 0.5)
		tm := newTimer(t, h, st)
		require.NoError(t, h.Launch(st, long))
		a := tm.mark(st)
		require.NoError(t, h.Launch(st, short))
		b := tm.mark(st)
		require.NoError(t, h.StreamSynchronize(st))
		ta, tb := tm.at(a), tm.at(b)
		// The short kernel runs after the long one, not beside it.
		assert.GreaterOrEqual(t, ta, 2*u)
		assert.GreaterOrEqual(t, tb-ta, u/2)
		return nil
	})
}

func (s *suite) eventAcrossStreams(t *testing.T) {
	u := s.unit
	info := s.info(t)
	s.run(t, func(h device.Host) error {
		p := s.spinner(t, h, info)
		ss := streams(t, h, 2)
		first, _ := p.launch(1, 32, 2)
		second, _ := p.launch(1, 32, 1)
		tm := newTimer(t, h, ss...)
		require.NoError(t, h.Launch(ss[0], first))
		e, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Record(e, ss[0]))
		require.NoError(t, h.Wait(ss[1], e))
		require.NoError(t, h.Launch(ss[1], second))
		b := tm.mark(ss[1])
		require.NoError(t, h.EventSynchronize(b))
		done, err := h.Query(e)
		require.NoError(t, err)
		assert.True(t, done, "the awaited event completed before the waiting stream's work")
		// Without the wait the second kernel would end after 1 unit.
		assert.GreaterOrEqual(t, tm.at(b), 3*u)
		return nil
	})
}

func (s *suite) smallKernelsOverlap(t *testing.T) {
	u := s.unit
	info := s.info(t)
	s.run(t, func(h device.Host) error {
		p := s.spinner(t, h, info)
		ss := streams(t, h, 2)
		k0, b0 := p.launch(1, 32, 2)
		k1, b1 := p.launch(1, 32, 2)
		tm := newTimer(t, h, ss...)
		require.NoError(t, h.Launch(ss[0], k0))
		require.NoError(t, h.Launch(ss[1], k1))
		e0, e1 := tm.mark(ss[0]), tm.mark(ss[1])
		require.NoError(t, h.Synchronize())
		makespan := max(tm.at(e0), tm.at(e1))
		assert.Less(t, makespan, 3*u, "two one-block kernels on two streams run concurrently")
		if s0, ok := p.stamps(b0); ok {
			s1, _ := p.stamps(b1)
			lo0, hi0 := span(s0)
			lo1, hi1 := span(s1)
			assert.True(t, lo0 < hi1 && lo1 < hi0, "the GPU's own stamps show the kernels overlapping")
		}
		return nil
	})
}

func (s *suite) fullKernelsSerialize(t *testing.T) {
	u := s.unit
	info := s.info(t)
	s.run(t, func(h device.Host) error {
		p := s.spinner(t, h, info)
		probe, _ := p.launch(1, 1024, 1)
		perSM, _ := info.Occupancy(probe)
		require.Positive(t, perSM)
		full := perSM * info.SMs
		ss := streams(t, h, 2)
		k0, b0 := p.launch(full, 1024, 1)
		k1, b1 := p.launch(full, 1024, 1)
		tm := newTimer(t, h, ss...)
		require.NoError(t, h.Launch(ss[0], k0))
		require.NoError(t, h.Launch(ss[1], k1))
		e0, e1 := tm.mark(ss[0]), tm.mark(ss[1])
		require.NoError(t, h.Synchronize())
		t0, t1 := tm.at(e0), tm.at(e1)
		assert.GreaterOrEqual(t, max(t0, t1), 2*u, "two GPU-filling kernels cannot overlap")
		if s.opts.Exact {
			assert.Equal(t, u, max(t0, t1)-min(t0, t1), "the second starts exactly when the first's wave ends")
		}
		if s0, ok := p.stamps(b0); ok {
			s1, _ := p.stamps(b1)
			lo0, hi0 := span(s0)
			lo1, hi1 := span(s1)
			// Block placement may overlap the tails by a little; most of
			// each kernel runs alone.
			overlap := int64(min(hi0, hi1)) - int64(max(lo0, lo1))
			assert.Less(t, overlap, int64(u/2), "GPU stamps: the two kernels overlap by %v", time.Duration(overlap))
		}
		return nil
	})
}

func (s *suite) occupancy(t *testing.T) {
	u := s.unit
	info := s.info(t)
	measure := func(blocks, threads int) time.Duration {
		var d time.Duration
		s.run(t, func(h device.Host) error {
			p := s.spinner(t, h, info)
			st := streams(t, h, 1)[0]
			k, _ := p.launch(blocks, threads, 1)
			tm := newTimer(t, h, st)
			require.NoError(t, h.Launch(st, k))
			e := tm.mark(st)
			require.NoError(t, h.StreamSynchronize(st))
			d = tm.at(e)
			return nil
		})
		return d
	}
	probe := &device.Launch{Kernel: s.opts.Spin, Grid: device.D1(1), Block: device.D1(1024)}
	perSM, limiter := info.Occupancy(probe)
	require.Positive(t, perSM)
	t.Logf("%d blocks of 1024 threads per SM (limited by %s), %d SMs", perSM, limiter, info.SMs)
	one := measure(1, 1024)
	wave := measure(perSM*info.SMs, 1024)
	more := measure(perSM*info.SMs+1, 1024)
	assert.Less(t, wave, one+u/2, "a full wave takes one block's time")
	assert.GreaterOrEqual(t, more, wave+u*3/4, "one block more needs a second wave")
	if s.opts.Exact {
		assert.Equal(t, one, wave)
		assert.Equal(t, wave+u, more)
	}
}

func (s *suite) copies(t *testing.T) {
	const bytes = 16 << 20
	s.run(t, func(h device.Host) error {
		src, err := h.AllocHost(bytes, true)
		require.NoError(t, err)
		dst, err := h.AllocHost(bytes, true)
		require.NoError(t, err)
		bufs := make([]device.Buffer, 3)
		for i := range bufs {
			bufs[i], err = h.Malloc(bytes)
			require.NoError(t, err)
		}
		up := func(i int) *device.Copy {
			return &device.Copy{Kind: device.HostToDevice, Dst: bufs[i], Host: src, Bytes: bytes}
		}
		down := func(i int) *device.Copy {
			return &device.Copy{Kind: device.DeviceToHost, Src: bufs[i], Host: dst, Bytes: bytes}
		}
		measure := func(cs ...*device.Copy) time.Duration {
			ss := streams(t, h, len(cs))
			tm := newTimer(t, h, ss...)
			var marks []device.Event
			for i, c := range cs {
				require.NoError(t, h.Copy(ss[i], c))
				marks = append(marks, tm.mark(ss[i]))
			}
			require.NoError(t, h.Synchronize())
			var m time.Duration
			for _, e := range marks {
				m = max(m, tm.at(e))
			}
			return m
		}
		// Touch every buffer once first: on a GPU the first copy into
		// freshly allocated memory takes tens of microseconds longer
		// (docs/results/cuda-conformance.md), which would inflate the
		// one-copy baseline.
		measure(up(0), up(1))
		measure(down(1))
		one := measure(up(0))
		opposite := measure(up(0), down(1))
		same := measure(up(0), up(1))
		t.Logf("one copy %v, opposite directions %v, same direction %v", one, opposite, same)
		assert.Less(t, opposite, one*3/2, "copies in opposite directions overlap")
		assert.GreaterOrEqual(t, same, one*19/10, "copies in one direction serialize")
		return nil
	})
}

func (s *suite) graphReplay(t *testing.T) {
	u := s.unit
	info := s.info(t)
	s.run(t, func(h device.Host) error {
		p := s.spinner(t, h, info)
		ss := streams(t, h, 3)
		origin, side := ss[0], ss[1]
		fork, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		join, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		a, _ := p.launch(1, 32, 1)
		b, _ := p.launch(1, 32, 1)
		c, _ := p.launch(1, 32, 1)
		d, _ := p.launch(1, 32, 1)
		// a -> (b on the side stream, c on the origin) -> d
		require.NoError(t, h.BeginCapture(origin))
		require.NoError(t, h.Launch(origin, a))
		require.NoError(t, h.Record(fork, origin))
		require.NoError(t, h.Wait(side, fork))
		require.NoError(t, h.Launch(side, b))
		require.NoError(t, h.Launch(origin, c))
		require.NoError(t, h.Record(join, side))
		require.NoError(t, h.Wait(origin, join))
		require.NoError(t, h.Launch(origin, d))
		g, err := h.EndCapture(origin)
		require.NoError(t, err)
		require.Equal(t, 4, g.Nodes())
		x, err := h.Instantiate(g)
		require.NoError(t, err)
		run := ss[2]
		tm := newTimer(t, h, run)
		require.NoError(t, h.GraphLaunch(x, run))
		e := tm.mark(run)
		require.NoError(t, h.StreamSynchronize(run))
		took := tm.at(e)
		t.Logf("graph a -> (b || c) -> d of %v kernels took %v", u, took)
		assert.GreaterOrEqual(t, took, 3*u, "a before b and c, both before d")
		assert.Less(t, took, 3*u+u*3/4, "b and c ran concurrently")

		// A fork that never joins back is an error at EndCapture.
		require.NoError(t, h.BeginCapture(origin))
		require.NoError(t, h.Launch(origin, a))
		require.NoError(t, h.Record(fork, origin))
		require.NoError(t, h.Wait(side, fork))
		require.NoError(t, h.Launch(side, b))
		_, err = h.EndCapture(origin)
		var api *device.APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", api.Code)
		return nil
	})
}

func (s *suite) callbackAfterWork(t *testing.T) {
	u := s.unit
	info := s.info(t)
	s.run(t, func(h device.Host) error {
		p := s.spinner(t, h, info)
		st := streams(t, h, 1)[0]
		q := h.NewQueue("callback")
		k, _ := p.launch(1, 32, 2)
		begin := h.Now()
		require.NoError(t, h.Launch(st, k))
		e, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Record(e, st))
		require.NoError(t, h.HostFunc(st, func() { q.Put("ran") }))
		v, ok := h.Get(q)
		require.True(t, ok)
		assert.Equal(t, "ran", v)
		done, err := h.Query(e)
		require.NoError(t, err)
		assert.True(t, done, "the kernel before the callback had completed when it ran")
		assert.GreaterOrEqual(t, h.Now()-begin, 2*u)
		return h.StreamSynchronize(st)
	})
}

func (s *suite) invalidLaunches(t *testing.T) {
	info := s.info(t)
	s.run(t, func(h device.Host) error {
		st := streams(t, h, 1)[0]
		buf, err := h.Malloc(64)
		require.NoError(t, err)
		ok := func() device.Launch {
			return device.Launch{Kernel: s.opts.Spin, Grid: device.D1(1), Block: device.D1(32),
				Args: []device.Arg{device.U64(1), device.Out(buf)}}
		}
		for _, tc := range []struct {
			name string
			edit func(l *device.Launch)
			code string
		}{
			{"block over the thread limit", func(l *device.Launch) { l.Block = device.D1(info.MaxThreadsPerBlock + 1) }, "CUDA_ERROR_INVALID_VALUE"},
			{"empty grid", func(l *device.Launch) { l.Grid = device.D1(0) }, "CUDA_ERROR_INVALID_VALUE"},
			{"grid over the limit", func(l *device.Launch) { l.Grid = device.D2(1, info.MaxGridDim.Y+1) }, "CUDA_ERROR_INVALID_VALUE"},
			{"shared memory over the limit", func(l *device.Launch) { l.SharedMem = info.MaxSharedPerBlock + 1 }, "CUDA_ERROR_INVALID_VALUE"},
			{"no kernel", func(l *device.Launch) { l.Kernel = nil }, "CUDA_ERROR_INVALID_HANDLE"},
			{"nil buffer", func(l *device.Launch) { l.Args[1] = device.Out(device.Buffer{}) }, "CUDA_ERROR_INVALID_VALUE"},
		} {
			l := ok()
			tc.edit(&l)
			err := h.Launch(st, &l)
			var le *device.LaunchError
			if assert.True(t, errors.As(err, &le), "%s: got %v", tc.name, err) {
				assert.Equal(t, tc.code, le.Code, tc.name)
			}
		}
		l := ok()
		require.NoError(t, h.Launch(st, &l), "the unedited launch is valid")
		require.NoError(t, h.StreamSynchronize(st))
		// A destroyed stream is an invalid handle, not a crash.
		require.NoError(t, h.Destroy(st))
		assert.Error(t, h.Launch(st, &l))
		return nil
	})
}

func (s *suite) elapsed(t *testing.T) {
	u := s.unit
	info := s.info(t)
	s.run(t, func(h device.Host) error {
		p := s.spinner(t, h, info)
		st := streams(t, h, 1)[0]
		a, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		b, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		c, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		_, err = h.Elapsed(a, b)
		assert.Error(t, err, "elapsed between events never recorded")
		k1, _ := p.launch(1, 32, 1)
		k2, _ := p.launch(1, 32, 3)
		require.NoError(t, h.Record(a, st))
		require.NoError(t, h.Launch(st, k1))
		require.NoError(t, h.Record(b, st))
		require.NoError(t, h.Launch(st, k2))
		require.NoError(t, h.Record(c, st))
		require.NoError(t, h.EventSynchronize(c))
		ab, err := h.Elapsed(a, b)
		require.NoError(t, err)
		bc, err := h.Elapsed(b, c)
		require.NoError(t, err)
		ac, err := h.Elapsed(a, c)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, ab, u)
		assert.Less(t, ab, u*3/2)
		assert.GreaterOrEqual(t, bc, 3*u)
		assert.Less(t, bc, 3*u+u/2)
		assert.InDelta(t, float64(ac), float64(ab+bc), float64(2*time.Microsecond), "elapsed times add up")
		if s.opts.Exact {
			assert.Equal(t, ac, ab+bc)
		}
		return nil
	})
}
