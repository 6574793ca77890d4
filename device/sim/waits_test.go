package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// pollRun runs issue on a traced device of cfg with its dependency queue
// off (the host is a plain thread, whose clock is the arrival), then
// synchronizes; it returns the host clock as issue returned (its last
// command's arrival) and every labelled command's span.
func pollRun(t *testing.T, cfg *Config, issue func(h device.Host)) (arrive Time, spans map[string][2]Time) {
	t.Helper()
	cfg.DQ.Enabled = false
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		issue(h)
		arrive = h.(*thread).clock
		return h.Synchronize()
	}))
	return arrive, opSpans(d)
}

// pollCopy is the poll tests' copy: 500,000 bytes in from pinned memory
// (10 us of bytes at 50 bytes/ns), labelled "a".
func pollCopy(t *testing.T, h device.Host) *device.Copy {
	buf, err := h.Malloc(500_000)
	require.NoError(t, err)
	mem, err := h.AllocHost(500_000, true)
	require.NoError(t, err)
	return &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: mem, Bytes: 500_000, Label: "a"}
}

// pollKernel is a one-block kernel spinning for d (0: empty), labelled.
func pollKernel(d time.Duration, label string) *device.Launch {
	return &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(32), Work: device.Work{Cycles: cyclesFor(d)}, Label: label}
}

// pollStream is a new stream of h.
func pollStream(t *testing.T, h device.Host) device.Stream {
	s, err := h.NewStream(device.StreamOptions{})
	require.NoError(t, err)
	return s
}

// pollPair issues, on one stream, a 20 us kernel "k" then the copy "a",
// the host holding hold between them, or (copyFirst) the copy then an
// empty kernel; it returns the second command's arrival, the first's end
// and the second's span.
func pollPair(t *testing.T, cfg *Config, hold time.Duration, copyFirst bool) (arrive, firstEnd Time, second [2]Time) {
	t.Helper()
	arrive, spans := pollRun(t, cfg, func(h device.Host) {
		s, cp := pollStream(t, h), pollCopy(t, h)
		if copyFirst {
			require.NoError(t, h.Copy(s, cp))
			h.Spend(hold)
			require.NoError(t, h.Launch(s, pollKernel(0, "k")))
		} else {
			require.NoError(t, h.Launch(s, pollKernel(20*time.Microsecond, "k")))
			h.Spend(hold)
			require.NoError(t, h.Copy(s, cp))
		}
	})
	require.Contains(t, spans, "a")
	require.Contains(t, spans, "k")
	if copyFirst {
		return arrive, spans["a"][1], spans["k"]
	}
	return arrive, spans["k"][1], spans["a"]
}

// Hand-computed, a copy behind a kernel: with copy_poll_ns 8 us the copy,
// arriving while the 20 us kernel runs, starts at the first multiple of
// 8 us after its arrival by which the kernel has ended, and pays
// idle_latency_ns (0.5 us) and its 10 us of bytes; issued 30 us later,
// after the kernel, it starts as it arrives; with the fields left out it
// starts as the kernel ends and pays latency_ns (1 us).
func TestACopyBehindAKernelWaitsForAPoll(t *testing.T) {
	cfg := duplexConfig(t, 0)
	cfg.FrontEnd.CopyPollNs, cfg.Copy.IdleLatencyNs = 8000, 500
	const period = 8 * us
	arrive, kEnd, a := pollPair(t, cfg, 0, false)
	require.Less(t, arrive, kEnd, "the copy arrives while the kernel runs")
	n := (kEnd - arrive + period - 1) / period
	assert.Equal(t, arrive+n*period, a[0], "starts at the first poll after the kernel's end")
	assert.Less(t, a[0]-period, kEnd, "and not a poll later")
	assert.Equal(t, 10*us+us/2, a[1]-a[0], "idle latency and bytes")

	arrive, kEnd, a = pollPair(t, cfg, 30*time.Microsecond, false)
	require.Greater(t, arrive, kEnd, "the copy arrives after the kernel")
	assert.Equal(t, [2]Time{arrive, arrive + 10*us + us/2}, a, "starts as it arrives")

	cfg.FrontEnd.CopyPollNs, cfg.Copy.IdleLatencyNs = 0, 0
	_, kEnd, a = pollPair(t, cfg, 0, false)
	assert.Equal(t, [2]Time{kEnd, kEnd + 11*us}, a, "no fields: at the kernel's end, the whole latency")
}

// Hand-computed, a kernel behind a copy: with kernel_poll_ns 6 us the
// empty kernel, arriving while the copy moves its bytes, gets its first
// block back_to_back_ns after the first multiple of 6 us after its
// arrival by which the copy has ended.
func TestAKernelBehindACopyWaitsForAPoll(t *testing.T) {
	cfg := duplexConfig(t, 0)
	cfg.FrontEnd.KernelPollNs = 6000
	const period = 6 * us
	b2b := nsTime(cfg.FrontEnd.BackToBackNs)
	arrive, cEnd, k := pollPair(t, cfg, 0, true)
	require.Less(t, arrive, cEnd, "the kernel arrives while the copy runs")
	n := (cEnd - arrive + period - 1) / period
	require.Greater(t, n, Time(0))
	assert.Equal(t, arrive+n*period+b2b, k[0], "first block back to back after the first poll past the copy's end")

	cfg.FrontEnd.KernelPollNs = 0
	_, cEnd, k = pollPair(t, cfg, 0, true)
	assert.Equal(t, cEnd+b2b, k[0], "no field: back to back after the copy")
}

// Hand-computed, across streams: a copy on a second stream behind a wait
// on an event recorded after a 20 us kernel polls as one behind the
// kernel on its own stream does; an empty kernel there does not (a
// kernel behind a kernel, one engine), its first block back_to_back_ns
// after the kernel's end.
func TestAWaitOnAnotherEnginesWorkPolls(t *testing.T) {
	cfg := duplexConfig(t, 0)
	cfg.FrontEnd.CopyPollNs, cfg.FrontEnd.KernelPollNs, cfg.Copy.IdleLatencyNs = 8000, 8000, 500
	const period = 8 * us
	for _, copySecond := range []bool{true, false} {
		arrive, spans := pollRun(t, cfg, func(h device.Host) {
			a, b := pollStream(t, h), pollStream(t, h)
			ev, err := h.NewEvent(device.EventOptions{})
			require.NoError(t, err)
			cp := pollCopy(t, h)
			require.NoError(t, h.Launch(a, pollKernel(20*time.Microsecond, "k")))
			require.NoError(t, h.Record(ev, a))
			require.NoError(t, h.Wait(b, ev))
			if copySecond {
				require.NoError(t, h.Copy(b, cp))
			} else {
				require.NoError(t, h.Launch(b, pollKernel(0, "a")))
			}
		})
		kEnd, a := spans["k"][1], spans["a"]
		require.Less(t, arrive, kEnd, "the second command arrives while the kernel runs")
		if copySecond {
			n := (kEnd - arrive + period - 1) / period
			assert.Equal(t, [2]Time{arrive + n*period, arrive + n*period + 10*us + us/2}, a, "the copy starts at a poll")
		} else {
			assert.Equal(t, kEnd+nsTime(cfg.FrontEnd.BackToBackNs), a[0], "the kernel does not poll")
		}
	}
}

// Hand-computed, a copy queued deeper: behind two 20 us kernels, the copy
// arrives before the second starts, so with engine_wait_ns 3 us it starts
// 3 us after that kernel's end (a running pipeline's wait), not at a
// poll; with the field left out it polls as a copy arriving while the
// kernel runs does.
func TestACommandQueuedBeforeItsWorkStartedWaitsAFixedTime(t *testing.T) {
	cfg := duplexConfig(t, 0)
	cfg.FrontEnd.CopyPollNs, cfg.FrontEnd.EngineWaitNs, cfg.Copy.IdleLatencyNs = 8000, 3000, 500
	const period = 8 * us
	run := func() (arrive, k2Start, k2End Time, a [2]Time) {
		arrive, spans := pollRun(t, cfg, func(h device.Host) {
			s, cp := pollStream(t, h), pollCopy(t, h)
			for _, l := range []string{"k1", "k2"} {
				require.NoError(t, h.Launch(s, pollKernel(20*time.Microsecond, l)))
			}
			require.NoError(t, h.Copy(s, cp))
		})
		return arrive, spans["k2"][0], spans["k2"][1], spans["a"]
	}
	arrive, k2Start, k2End, a := run()
	require.Less(t, arrive, k2Start, "the copy arrives before the kernel it follows starts")
	assert.Equal(t, [2]Time{k2End + 3*us, k2End + 3*us + 10*us + us/2}, a, "a fixed wait after the kernel, then the idle latency")

	cfg.FrontEnd.EngineWaitNs = 0
	arrive, _, k2End, a = run()
	n := (k2End - arrive + period - 1) / period
	assert.Equal(t, arrive+n*period, a[0], "without the field: the first poll after the kernel's end")
}
