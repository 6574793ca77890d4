package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// A record of a timing-disabled event costs host.untimed_record_ns, one of
// a timing event host.record_ns; without the field both cost record_ns.
func TestUntimedRecordCost(t *testing.T) {
	recordCosts := func(untimed float64) (timing, disabled time.Duration) {
		cfg := h100Config(t)
		cfg.Host.RecordNs, cfg.Host.UntimedRecordNs = 1600, untimed
		cfg.Host.BusyStreamNs, cfg.Host.StreamSwitchNs, cfg.Host.RecordPendingNs = 0, 0, 0
		runOn(t, cfg, func(h device.Host) error {
			s, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			for _, c := range []struct {
				opt  device.EventOptions
				into *time.Duration
			}{{device.EventOptions{}, &timing}, {device.EventOptions{DisableTiming: true}, &disabled}} {
				ev, err := h.NewEvent(c.opt)
				require.NoError(t, err)
				t0 := h.Now()
				require.NoError(t, h.Record(ev, s))
				*c.into = h.Now() - t0
			}
			return nil
		})
		return timing, disabled
	}
	timing, disabled := recordCosts(600)
	assert.Equal(t, 1600*time.Nanosecond, timing)
	assert.Equal(t, 600*time.Nanosecond, disabled)
	timing, disabled = recordCosts(0)
	assert.Equal(t, 1600*time.Nanosecond, timing, "left out: as before")
	assert.Equal(t, 1600*time.Nanosecond, disabled, "left out: record_ns")
}

// host.driver_lock_handoff_ns is paid by a driver call that waits for the
// lock another thread holds: two threads launching 10 times each under the
// whole lock alternate on it (the second starts as the first's first
// launch ends), so every launch but each thread's first and the very last
// (the other thread is done) waits and pays it once; one thread never
// does, and graph builds pay graph_lock_handoff_ns instead.
func TestDriverLockHandoffChargedOnlyWhenContended(t *testing.T) {
	launches := launchSpins(t, 10)
	build := captureSpins(t, 5)
	last := func(work func(device.Host, device.Stream), handoff float64, n int) time.Duration {
		cfg := h100Config(t)
		cfg.Host.ThreadStartNs, cfg.Host.StreamCreateNs = 0, 0
		cfg.Host.DriverLockFraction, cfg.Host.GraphLockFraction, cfg.Host.GraphLockHandoffNs = 1, 0, 0
		cfg.Host.DriverLockHandoffNs = handoff
		ends := lockedEnds(t, cfg, n, work)
		return max(ends[0], ends[len(ends)-1])
	}
	assert.Equal(t, last(launches, 0, 1), last(launches, 1000, 1), "one thread: no hand-off")
	plain, handed := last(launches, 0, 2), last(launches, 1000, 2)
	assert.Equal(t, 2*last(launches, 0, 1), plain, "two threads under the whole lock: one after the other")
	assert.Equal(t, plain+17*time.Microsecond, handed, "17 of the 20 launches wait for the other thread's")
	assert.Equal(t, last(build, 0, 2), last(build, 1000, 2), "graph builds pay graph_lock_handoff_ns, not this")
}

// While a thread that waited for the driver lock wakes
// (host.driver_lock_handoff_ns), the lock's last holder may take it back:
// two threads each launching and recording a timing-disabled event three
// times under the whole lock (launch 3.3 us, record 0.5 us). With a 1 us
// hand-off every record follows its thread's launch at once (the other
// thread is still waking); without it a record queues behind the other
// thread's launch (3.3 us).
func TestDriverLockHandoffLetsTheReleasingThreadBackIn(t *testing.T) {
	records := func(handoff float64) []time.Duration {
		cfg := h100Config(t)
		cfg.Host.ThreadStartNs, cfg.Host.StreamCreateNs, cfg.Host.EventCreateNs = 0, 0, 0
		cfg.Host.DriverLockFraction, cfg.Host.LaunchNs, cfg.Host.UntimedRecordNs = 1, 3300, 500
		cfg.Host.BusyStreamNs, cfg.Host.StreamSwitchNs, cfg.Host.RecordPendingNs = 0, 0, 0
		cfg.Host.DriverLockHandoffNs = handoff
		var got []time.Duration
		lockedEnds(t, cfg, 2, func(w device.Host, s device.Stream) {
			ev, err := w.NewEvent(device.EventOptions{DisableTiming: true})
			require.NoError(t, err)
			for j := 0; j < 3; j++ {
				require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
				t0 := w.Now()
				require.NoError(t, w.Record(ev, s))
				got = append(got, w.Now()-t0)
			}
		})
		return got
	}
	for _, d := range records(1000) {
		assert.Equal(t, 500*time.Nanosecond, d, "the record takes the lock back while the other thread wakes")
	}
	assert.Contains(t, records(0), 3800*time.Nanosecond, "without the hand-off a record waits for the other thread's launch")
}
