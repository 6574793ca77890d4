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
