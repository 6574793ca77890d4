package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// callbacksAfter launches, on one new stream per entry of kernels, a
// kernel of that duration and then a host function per entry of its
// list; it returns when each named callback ended (engine time), from
// the first launch (stream creation left out).
func callbacksAfter(t *testing.T, cfg *Config, kernels []time.Duration, names [][]string) map[string]time.Duration {
	d, err := New(cfg)
	require.NoError(t, err)
	ends := map[string]time.Duration{}
	var t0 time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		var ss []device.Stream
		for range kernels {
			s, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			ss = append(ss, s)
		}
		t0 = h.Now()
		for i, dur := range kernels {
			require.NoError(t, h.Launch(ss[i], spinLaunch(1, 32, dur)))
			for _, name := range names[i] {
				require.NoError(t, h.HostFunc(ss[i], func() { ends[name] = d.now.Duration() }))
			}
		}
		return h.Synchronize()
	}))
	for name := range ends {
		ends[name] -= t0
	}
	return ends
}

func TestCallbackWakeAfterIdle(t *testing.T) {
	// Datasheet H100: launch 3.3 us, host function 2.5 us, launch latency
	// 2 us, callback 5 us; callback_wake_ns 30 us.
	cfg := h100Config(t)
	cfg.FrontEnd.CallbackWakeNs = 30e3
	us := func(x float64) time.Duration { return time.Duration(x * 1e3) }

	// One stream: a 20 us kernel (arrives 3.3, runs 5.3-25.3), two host
	// functions behind it. The first finds the thread idle at 25.3: it
	// starts at 55.3 and ends at 60.3. The second is reached at 60.3, as
	// the thread frees: no wake, it ends at 65.3.
	got := callbacksAfter(t, cfg, []time.Duration{20 * time.Microsecond}, [][]string{{"a1", "a2"}})
	assert.Equal(t, map[string]time.Duration{"a1": us(60.3), "a2": us(65.3)}, got)

	// Without the field the first starts at 25.3 (as before it existed).
	got = callbacksAfter(t, h100Config(t), []time.Duration{20 * time.Microsecond}, [][]string{{"a1", "a2"}})
	assert.Equal(t, map[string]time.Duration{"a1": us(30.3), "a2": us(35.3)}, got)

	// Two streams. A: launched at 0, kernel 5.3-25.3, host function
	// issued by 5.8. B: launched 5.8-9.1, kernel 11.1-31.1. A's callback
	// wakes the thread (55.3-60.3); B's, reached at 31.1 during that
	// wake, waits for the thread and runs 60.3-65.3 without a wake of
	// its own. With B's kernel 60 us (11.1-71.1) the thread is idle again
	// when B's callback is reached: it runs 101.1-106.1.
	two := [][]string{{"a"}, {"b"}}
	got = callbacksAfter(t, cfg, []time.Duration{20 * time.Microsecond, 20 * time.Microsecond}, two)
	assert.Equal(t, map[string]time.Duration{"a": us(60.3), "b": us(65.3)}, got)
	got = callbacksAfter(t, cfg, []time.Duration{20 * time.Microsecond, 60 * time.Microsecond}, two)
	assert.Equal(t, map[string]time.Duration{"a": us(60.3), "b": us(106.1)}, got)
}

// Elapsed over a kernel and a host function behind it, on one stream:
// the callback holds the stream callback_ns plus, after idle,
// callback_wake_ns, before the record behind it completes.
func TestCallbackWakeHoldsItsStream(t *testing.T) {
	elapsed := func(wake float64) time.Duration {
		cfg := h100Config(t)
		cfg.FrontEnd.CallbackWakeNs = wake
		var el time.Duration
		runOn(t, cfg, func(h device.Host) error {
			s, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			a, _ := h.NewEvent(device.EventOptions{})
			b, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.Launch(s, spinLaunch(1, 32, 100*time.Microsecond)))
			require.NoError(t, h.Record(a, s))
			require.NoError(t, h.HostFunc(s, func() {}))
			require.NoError(t, h.Record(b, s))
			require.NoError(t, h.StreamSynchronize(s))
			el, err = h.Elapsed(a, b)
			return err
		})
		return el
	}
	// The record a completes as the kernel ends; the callback is reached
	// then (the host issued everything during the kernel) and runs 5 us,
	// after a wake of 30 us when the field is set.
	assert.Equal(t, 5*time.Microsecond, elapsed(0))
	assert.Equal(t, 35*time.Microsecond, elapsed(30e3))
}

// Callbacks of two streams ready while the woken thread runs one share
// its wake: the second runs as the first ends, however late within the
// wake or the run it became ready. (A rewake for late ones, fitted on
// calibrate's "host functions over streams", made every SET file worse
// and was not kept: calibration-h100.md, "Session 18: SET's host
// callbacks".)
func TestCallbacksOfTwoStreamsShareOneWake(t *testing.T) {
	// Datasheet H100 as in TestCallbackWakeAfterIdle: stream A's kernel
	// ends at 25.3, stream B's (launched 5.8-9.1) 2 us after it starts at
	// 11.1 + its length. Wake 30 us, callback 5 us: A's callback wakes
	// the thread at 25.3 and runs 55.3-60.3.
	cfg := h100Config(t)
	cfg.FrontEnd.CallbackWakeNs = 30e3
	us := func(x float64) time.Duration { return time.Duration(x * 1e3) }
	two := [][]string{{"a"}, {"b"}}
	// B ready at 31.1 (in A's wake) or 51.1: it runs right after A, 60.3-65.3.
	for _, b := range []time.Duration{20 * time.Microsecond, 40 * time.Microsecond} {
		got := callbacksAfter(t, cfg, []time.Duration{20 * time.Microsecond, b}, two)
		assert.Equal(t, map[string]time.Duration{"a": us(60.3), "b": us(65.3)}, got, "B's kernel %v", b)
	}
	// B ready at 71.1, after A's callback ended: the idle thread wakes
	// again, 71.1 + 30 = 101.1, and runs B 101.1-106.1.
	got := callbacksAfter(t, cfg, []time.Duration{20 * time.Microsecond, 60 * time.Microsecond}, two)
	assert.Equal(t, map[string]time.Duration{"a": us(60.3), "b": us(106.1)}, got)
	// Host functions back to back on one stream run one after another
	// after the one wake: a1 55.3-60.3, a2 60.3-65.3.
	got = callbacksAfter(t, cfg, []time.Duration{20 * time.Microsecond}, [][]string{{"a1", "a2"}})
	assert.Equal(t, map[string]time.Duration{"a1": us(60.3), "a2": us(65.3)}, got)
}

// front_end.callback_release_ns: a callback's stream stays blocked that
// long after the callback ran, unless the next command on it is another
// callback (which the thread runs next, the release after the last);
// what the callback Puts is handed off as it ends, before the release.
func TestCallbackReleaseHoldsItsStreamNotItsPut(t *testing.T) {
	run := func(release float64, funcs int) releaseRun {
		cfg := h100Config(t)
		cfg.FrontEnd.CallbackWakeNs = 30e3
		cfg.FrontEnd.CallbackReleaseNs = release
		return runReleased(t, cfg, funcs, false)
	}
	// One host function: wake 30 + run 5, then the release before the
	// record behind it.
	before, after := run(0, 1), run(10e3, 1)
	assert.Equal(t, 35*time.Microsecond, before.elapsed)
	assert.Equal(t, 45*time.Microsecond, after.elapsed)
	// The thread waiting on its Put resumes when the callback ends.
	assert.Equal(t, before.get, after.get)
	// Two back to back: one wake, two runs, one release after the second.
	assert.Equal(t, 40*time.Microsecond, run(0, 2).elapsed)
	assert.Equal(t, 50*time.Microsecond, run(10e3, 2).elapsed)
}

// releaseRun is what runReleased measures: the Elapsed from the record
// before the host functions to the record after them, and the host's time
// to its last Get.
type releaseRun struct{ elapsed, get time.Duration }

// runReleased launches a 100 us kernel, records, enqueues funcs host
// functions that Put, and records again, before the Gets or (afterGets)
// once they have returned.
func runReleased(t *testing.T, cfg *Config, funcs int, afterGets bool) releaseRun {
	t.Helper()
	var g releaseRun
	runOn(t, cfg, func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		q := h.NewQueue("callback puts")
		a, _ := h.NewEvent(device.EventOptions{})
		b, _ := h.NewEvent(device.EventOptions{})
		t0 := h.Now()
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, 100*time.Microsecond)))
		require.NoError(t, h.Record(a, s))
		for i := 0; i < funcs; i++ {
			require.NoError(t, h.HostFunc(s, func() { q.Put(i) }))
		}
		if !afterGets {
			require.NoError(t, h.Record(b, s))
		}
		for i := 0; i < funcs; i++ {
			_, ok := h.Get(q)
			require.True(t, ok)
		}
		g.get = h.Now() - t0
		if afterGets {
			require.NoError(t, h.Record(b, s))
		}
		require.NoError(t, h.StreamSynchronize(s))
		g.elapsed, err = h.Elapsed(a, b)
		return err
	})
	return g
}

// The release of the work queued behind a callback keeps the callback
// thread busy: another stream's callback ready meanwhile waits for it,
// without a wake of its own; with nothing queued behind, no release.
func TestCallbackReleaseKeepsTheThreadBusy(t *testing.T) {
	us := func(x float64) time.Duration { return time.Duration(x * 1e3) }
	run := func(release float64, behind bool) map[string]time.Duration {
		cfg := h100Config(t)
		cfg.FrontEnd.CallbackWakeNs = 30e3
		cfg.FrontEnd.CallbackReleaseNs = release
		d, err := New(cfg)
		require.NoError(t, err)
		ends := map[string]time.Duration{}
		var t0 time.Duration
		require.NoError(t, d.Run(func(h device.Host) error {
			a, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			b, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			t0 = h.Now()
			end := func(name string) func() { return func() { ends[name] = d.now.Duration() } }
			// Datasheet H100 (TestCallbackWakeAfterIdle): A's 20 us kernel
			// runs 5.3-25.3; its callback wakes the thread and runs
			// 55.3-60.3. With a kernel queued behind it, the release
			// keeps the thread until 70.3 (release 10 us).
			require.NoError(t, h.Launch(a, spinLaunch(1, 32, 20*time.Microsecond)))
			require.NoError(t, h.HostFunc(a, end("a")))
			if behind {
				require.NoError(t, h.Launch(a, spinLaunch(1, 32, time.Microsecond)))
			}
			// B's 55 us kernel is launched after A's commands (the
			// assertions give its times).
			require.NoError(t, h.Launch(b, spinLaunch(1, 32, 55*time.Microsecond)))
			require.NoError(t, h.HostFunc(b, end("b")))
			return h.Synchronize()
		}))
		for name := range ends {
			ends[name] -= t0
		}
		return ends
	}
	// B's callback, ready at 69.4 (its kernel launched 9.1-12.4, run
	// 14.4-69.4), finds the thread busy releasing A's kernel until 70.3:
	// it runs 70.3-75.3 without a wake.
	assert.Equal(t, map[string]time.Duration{"a": us(60.3), "b": us(75.3)}, run(10e3, true))
	// Without the release the thread is idle at 69.4: a wake, 99.4-104.4.
	assert.Equal(t, map[string]time.Duration{"a": us(60.3), "b": us(104.4)}, run(0, true))
	// Nothing queued behind A's callback: no release; B's kernel is
	// launched 5.8-9.1 and ends at 66.1, the thread idle since 60.3:
	// a wake, 96.1-101.1, as without the field.
	assert.Equal(t, run(0, false), run(10e3, false))
	assert.Equal(t, map[string]time.Duration{"a": us(60.3), "b": us(101.1)}, run(10e3, false))
}

// front_end.callback_release_holds_stream: with nothing queued behind a
// host callback when it runs, its stream is still held for the release,
// so a record the host issues once the callback's Put woke it lands behind
// the release: wake 30 + run 5 + release 10 after the kernel, 45 us, as
// when the record was queued before (TestCallbackReleaseHoldsItsStreamNotItsPut).
// Without the field the record passes as soon as the woken host issues it.
// The callback thread is not held: the Put wakes the host at the same time.
func TestCallbackReleaseHoldsTheStreamForWorkItsPutBrings(t *testing.T) {
	run := func(hold bool) releaseRun {
		cfg := h100Config(t)
		cfg.FrontEnd.CallbackWakeNs = 30e3
		cfg.FrontEnd.CallbackReleaseNs = 10e3
		cfg.FrontEnd.CallbackReleaseHoldsStream = hold
		return runReleased(t, cfg, 1, true)
	}
	free, held := run(false), run(true)
	assert.Equal(t, 45*time.Microsecond, held.elapsed)
	assert.Less(t, free.elapsed, 40*time.Microsecond, "without the field the record passes once issued")
	assert.Greater(t, free.elapsed, 35*time.Microsecond, "after the callback's wake and run")
	assert.Equal(t, free.get, held.get, "the Put wakes the host as the callback ends either way")
}
