package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// parkedConfig is h100-datasheet with threads that start at no cost, a
// 1 us thread hand-off, a 50 us callback hand-off, and the parked costs
// given (0 leaves them out).
func parkedConfig(t *testing.T, after, wake, syncAfter, syncWake float64) *Config {
	cfg := h100Config(t)
	cfg.Host.ThreadStartNs = 0
	cfg.Host.HandoffNs, cfg.Host.CallbackHandoffNs = 1000, 50000
	cfg.Host.ParkAfterNs, cfg.Host.ParkedWakeNs = after, wake
	cfg.Host.SyncParkAfterNs, cfg.Host.SyncParkedWakeNs = syncAfter, syncWake
	return cfg
}

// runOn runs main on a device of cfg.
func runOn(t *testing.T, cfg *Config, main func(h device.Host) error) {
	d, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, d.Run(main))
}

// queueWake: a worker Gets at 0; the main thread Puts after idle. It
// returns when the worker's Get returned.
func queueWake(t *testing.T, cfg *Config, idle time.Duration) time.Duration {
	var got time.Duration
	runOn(t, cfg, func(h device.Host) error {
		q := h.NewQueue("work")
		h.Go("worker", func(w device.Host) error {
			require.Equal(t, time.Duration(0), w.Now(), "the worker starts at 0")
			_, ok := w.Get(q)
			require.True(t, ok)
			got = w.Now()
			return nil
		})
		h.Spend(idle)
		q.Put(1)
		return nil
	})
	return got
}

func TestParkedQueueHandoff(t *testing.T) {
	// park_after 200 us, parked extra 30 us. The value arrives at the Put
	// plus the 1 us hand-off: 100 us idle arrives at 101 us (spinning);
	// 199 us at 200 us, not past the window (spinning); 199.001 us at
	// 200.001 us, past it (parked: 30 us more); 1 ms parked.
	cfg := parkedConfig(t, 200e3, 30e3, 0, 0)
	for _, tc := range []struct {
		idle, want time.Duration
	}{
		{100 * time.Microsecond, 101 * time.Microsecond},
		{199 * time.Microsecond, 200 * time.Microsecond},
		{199001 * time.Nanosecond, 230001 * time.Nanosecond},
		{time.Millisecond, 1031 * time.Microsecond},
	} {
		assert.Equal(t, tc.want, queueWake(t, cfg, tc.idle), "idle %v", tc.idle)
	}
	// Without the fields (or with no extra) every hand-off costs 1 us, as
	// before they existed.
	for _, cfg := range []*Config{parkedConfig(t, 0, 0, 0, 0), parkedConfig(t, 200e3, 0, 0, 0)} {
		assert.Equal(t, 1001*time.Microsecond, queueWake(t, cfg, time.Millisecond))
	}
	// park_after 0: a thread parks at once (device/cuda with no spin).
	assert.Equal(t, 131*time.Microsecond, queueWake(t, parkedConfig(t, 0, 30e3, 0, 0), 100*time.Microsecond))
}

// A value already queued is taken without waiting: no hand-off at all.
func TestParkedQueuedValueCostsNothing(t *testing.T) {
	runOn(t, parkedConfig(t, 0, 30e3, 0, 0), func(h device.Host) error {
		q := h.NewQueue("q")
		q.Put(1)
		h.Spend(time.Millisecond)
		t0 := h.Now()
		_, ok := h.Get(q)
		assert.True(t, ok)
		assert.Equal(t, t0, h.Now())
		return nil
	})
}

// callbackWake: launch a kernel of dur, a host function that Puts, and Get.
func callbackWake(t *testing.T, cfg *Config, dur time.Duration) time.Duration {
	var got time.Duration
	runOn(t, cfg, func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		q := h.NewQueue("done")
		t0 := h.Now()
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, dur)))
		require.NoError(t, h.HostFunc(s, func() { q.Put(1) }))
		_, ok := h.Get(q)
		require.True(t, ok)
		got = h.Now() - t0
		return nil
	})
	return got
}

func TestParkedCallbackHandoff(t *testing.T) {
	// Launch 3.3 us, host function 2.5 us: the Get starts at 5.8 us. The
	// kernel starts at 5.3 us (launch latency 2 us) and ends at 5.3 + D;
	// the callback runs 5 us and Puts at its end, and the value arrives
	// 50 us later: the wait is D + 54.5 us. park_after 150 us: D = 95.5
	// us waits exactly 150 us (spinning, back at D + 60.3 us); D = 96 us
	// parks (30 us more).
	cfg := parkedConfig(t, 150e3, 30e3, 0, 0)
	assert.Equal(t, 155800*time.Nanosecond, callbackWake(t, cfg, 95500*time.Nanosecond))
	assert.Equal(t, 186300*time.Nanosecond, callbackWake(t, cfg, 96*time.Microsecond))
	assert.Equal(t, 156300*time.Nanosecond, callbackWake(t, parkedConfig(t, 0, 0, 0, 0), 96*time.Microsecond))
	// A callback's parked extra of its own (10 us), the thread's left alone.
	cfg.Host.ParkedCallbackWakeNs = 10e3
	assert.Equal(t, 166300*time.Nanosecond, callbackWake(t, cfg, 96*time.Microsecond))
	assert.Equal(t, 1031*time.Microsecond, queueWake(t, cfg, time.Millisecond))
}

// syncWake: launch a kernel of dur and synchronize its stream (or record an
// event behind it and synchronize that).
func syncWake(t *testing.T, cfg *Config, dur time.Duration, event bool) time.Duration {
	var got time.Duration
	runOn(t, cfg, func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		ev, err := h.NewEvent(device.EventOptions{DisableTiming: true})
		require.NoError(t, err)
		t0 := h.Now()
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, dur)))
		if event {
			require.NoError(t, h.Record(ev, s))
			require.NoError(t, h.EventSynchronize(ev))
		} else {
			require.NoError(t, h.StreamSynchronize(s))
		}
		got = h.Now() - t0
		return nil
	})
	return got
}

func TestParkedSynchronize(t *testing.T) {
	// Launch 3.3 us, synchronize entered for 1 us: the thread blocks at
	// 4.3 us. The kernel ends at 5.3 + D and the thread is back 2.5 us
	// later: the wait is D + 3.5 us. sync_park_after 100 us: D = 96.5 us
	// spins (back at 104.3 us), D = 97 us parks (20 us more).
	cfg := parkedConfig(t, 0, 0, 100e3, 20e3)
	assert.Equal(t, 104300*time.Nanosecond, syncWake(t, cfg, 96500*time.Nanosecond, false))
	assert.Equal(t, 124800*time.Nanosecond, syncWake(t, cfg, 97*time.Microsecond, false))
	assert.Equal(t, 104800*time.Nanosecond, syncWake(t, parkedConfig(t, 0, 0, 0, 0), 97*time.Microsecond, false))
	// An event synchronize: the record (1 us) comes first, so the thread
	// blocks at 5.3 us and waits D + 2.5 us: 97.5 us spins, 98 us parks.
	assert.Equal(t, 105300*time.Nanosecond, syncWake(t, cfg, 97500*time.Nanosecond, true))
	assert.Equal(t, 125800*time.Nanosecond, syncWake(t, cfg, 98*time.Microsecond, true))
	// The queue's parking leaves synchronizes alone, and the other way.
	assert.Equal(t, 104800*time.Nanosecond, syncWake(t, parkedConfig(t, 1, 30e3, 0, 0), 97*time.Microsecond, false))
	assert.Equal(t, 1001*time.Microsecond, queueWake(t, parkedConfig(t, 0, 0, 1, 20e3), time.Millisecond))
}

// Ping-pong over idle times on both sides of the window gives the same
// clocks every run.
func TestParkedHandoffsAreDeterministic(t *testing.T) {
	run := func() []time.Duration {
		var clocks []time.Duration
		runOn(t, parkedConfig(t, 200e3, 30e3, 100e3, 20e3), func(h device.Host) error {
			ping, pong := h.NewQueue("ping"), h.NewQueue("pong")
			for w := 0; w < 3; w++ {
				h.Go("worker", func(w device.Host) error {
					for {
						v, ok := w.Get(ping)
						if !ok {
							return nil
						}
						pong.Put(w.Now() + v.(time.Duration))
					}
				})
			}
			for i := 0; i < 20; i++ {
				h.Spend(time.Duration(i*37%23) * 10 * time.Microsecond)
				ping.Put(time.Duration(i))
				v, _ := h.Get(pong)
				clocks = append(clocks, v.(time.Duration), h.Now())
			}
			ping.Close()
			return nil
		})
		return clocks
	}
	first := run()
	assert.Equal(t, first, run())
	assert.Len(t, first, 40)
}
