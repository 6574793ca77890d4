package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// host.driver_switch_ns: a driver call pays it once for every other host
// thread that made a driver call since this thread's last one. Threads
// that launch in turn (no driver lock here, so no call waits) pay it on
// every launch but their first: once each with two threads, twice with
// three. One thread alone never pays it, and left out it costs nothing.
func TestDriverSwitchChargedPerOtherThreadSinceLastCall(t *testing.T) {
	const launchNs, switchNs = 4000, 500
	launches := func(threads int, sw float64) []time.Duration {
		cfg := h100Config(t)
		cfg.Host.DriverLockFraction, cfg.Host.DriverSwitchNs = 0, sw
		cfg.Host.LaunchNs, cfg.Host.ThreadStartNs, cfg.Host.StreamCreateNs, cfg.Host.BusyStreamNs = launchNs, 0, 0, 0
		var got []time.Duration
		lockedEnds(t, cfg, threads, func(w device.Host, s device.Stream) {
			for j := 0; j < 6; j++ {
				t0 := w.Now()
				require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
				got = append(got, w.Now()-t0)
			}
		})
		return got
	}
	count := func(ds []time.Duration, d time.Duration) int {
		n := 0
		for _, x := range ds {
			if x == d {
				n++
			}
		}
		return n
	}
	for _, d := range launches(1, switchNs) {
		assert.Equal(t, launchNs*time.Nanosecond, d, "one thread: no switch")
	}
	for _, d := range launches(3, 0) {
		assert.Equal(t, launchNs*time.Nanosecond, d, "left out: nothing")
	}
	two := launches(2, switchNs)
	assert.GreaterOrEqual(t, count(two, (launchNs+switchNs)*time.Nanosecond), 10, "two threads in turn: one other thread since each launch but the first")
	three := launches(3, switchNs)
	assert.GreaterOrEqual(t, count(three, (launchNs+2*switchNs)*time.Nanosecond), 15, "three threads in turn: two others since each launch but the first")
}

// host.driver_switch_threads: the switch cost counts every other thread
// that has made a driver call in the Run and not returned, not only those
// that called since this thread's last call. One thread launches six
// times while the other, after one launch, only spends host time: by
// default only the first thread's first launch after the other's pays
// the switch; with the field every one after it does.
func TestDriverSwitchThreadsCountsEveryLiveDriverThread(t *testing.T) {
	const launchNs, switchNs = 4000, 500
	launches := func(threads bool) []time.Duration {
		cfg := h100Config(t)
		cfg.Host.DriverLockFraction, cfg.Host.DriverSwitchNs, cfg.Host.DriverSwitchThreads = 0, switchNs, threads
		cfg.Host.LaunchNs, cfg.Host.ThreadStartNs, cfg.Host.StreamCreateNs, cfg.Host.BusyStreamNs = launchNs, 0, 0, 0
		var got []time.Duration
		n := 0
		lockedEnds(t, cfg, 2, func(w device.Host, s device.Stream) {
			n++
			if n == 1 { // the other thread: one launch, then host work only
				require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
				w.Spend(time.Millisecond)
				return
			}
			w.Spend(time.Microsecond) // after the other's launch
			for j := 0; j < 6; j++ {
				t0 := w.Now()
				require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
				got = append(got, w.Now()-t0)
			}
		})
		return got
	}
	since := launches(false)
	require.Len(t, since, 6)
	assert.Equal(t, (launchNs+switchNs)*time.Nanosecond, since[0], "the other thread called before this launch")
	for _, d := range since[1:] {
		assert.Equal(t, launchNs*time.Nanosecond, d, "no call of the other's since")
	}
	for _, d := range launches(true) {
		assert.Equal(t, (launchNs+switchNs)*time.Nanosecond, d, "the other thread is live and has called the driver")
	}
}

// host.record_skips_switch: an event record pays no driver switch (it
// still counts as a driver call); left out, it pays like a launch.
func TestRecordSkipsSwitch(t *testing.T) {
	const launchNs, recordNs, switchNs = 4000, 400, 500
	records := func(skips bool) []time.Duration {
		cfg := h100Config(t)
		cfg.Host.DriverLockFraction, cfg.Host.DriverSwitchNs, cfg.Host.DriverSwitchThreads, cfg.Host.RecordSkipsSwitch = 0, switchNs, true, skips
		cfg.Host.LaunchNs, cfg.Host.UntimedRecordNs, cfg.Host.ThreadStartNs, cfg.Host.StreamCreateNs, cfg.Host.EventCreateNs, cfg.Host.BusyStreamNs = launchNs, recordNs, 0, 0, 0, 0
		var got []time.Duration
		lockedEnds(t, cfg, 2, func(w device.Host, s device.Stream) {
			ev, err := w.NewEvent(device.EventOptions{DisableTiming: true})
			require.NoError(t, err)
			for j := 0; j < 4; j++ {
				require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
				t0 := w.Now()
				require.NoError(t, w.Record(ev, s))
				got = append(got, w.Now()-t0)
				require.NoError(t, w.EventSynchronize(ev))
			}
		})
		return got
	}
	pays := records(false)
	require.Len(t, pays, 8)
	for _, d := range pays {
		assert.Equal(t, (recordNs+switchNs)*time.Nanosecond, d, "left out: the record pays the other thread's switch")
	}
	for _, d := range records(true) {
		assert.Equal(t, recordNs*time.Nanosecond, d, "the record pays no switch")
	}
}
