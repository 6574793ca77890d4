package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A parked Get's wake grows by host.parked_wake_per_decade_ns for every
// tenfold of its wait beyond 300 us (calibrate "long waits").
func TestParkedWakeGrowsWithTheWait(t *testing.T) {
	// park_after 200 us, parked extra 30 us, 40 us a decade. The value
	// arrives 1 us after the Put, so the wait is the idle plus 1 us:
	// 300 us adds nothing (back at 330 us), 3 ms a decade (40 us: 3,070),
	// 30 ms two (80 us: 30,110).
	cfg := parkedConfig(t, 200e3, 30e3, 0, 0)
	cfg.Host.ParkedWakePerDecadeNs = 40e3
	for _, tc := range []struct {
		idle, want time.Duration
	}{
		{299 * time.Microsecond, 330 * time.Microsecond},
		{2999 * time.Microsecond, 3070 * time.Microsecond},
		{29999 * time.Microsecond, 30110 * time.Microsecond},
	} {
		assert.Equal(t, tc.want, queueWake(t, cfg, tc.idle), "idle %v", tc.idle)
	}
	// A thread that has not parked pays nothing, however the field is set.
	assert.Equal(t, 101*time.Microsecond, queueWake(t, cfg, 100*time.Microsecond))
	// The growth is its own: without a parked extra the 3 ms wait pays 40 us.
	cfg.Host.ParkedWakeNs = 0
	assert.Equal(t, 3040*time.Microsecond, queueWake(t, cfg, 2999*time.Microsecond))
	// A synchronize's wake does not grow: it does not park as a Get does.
	cfg = parkedConfig(t, 0, 0, 100e3, 20e3)
	want := syncWake(t, cfg, 3*time.Millisecond, false)
	cfg.Host.ParkedWakePerDecadeNs = 40e3
	assert.Equal(t, want, syncWake(t, cfg, 3*time.Millisecond, false))
}

// The parked callback thread's wake grows the same way with its idle time
// (front_end.callback_parked_wake_per_decade_ns).
func TestCallbackParkedWakeGrowsWithTheIdle(t *testing.T) {
	cfg := h100Config(t)
	cfg.FrontEnd.CallbackWakeNs = 30e3
	cfg.FrontEnd.CallbackParkAfterNs = 100e3
	cfg.FrontEnd.CallbackParkedWakeNs = 40e3
	cfg.FrontEnd.CallbackParkedWakePerDecadeNs = 60e3
	us := func(x float64) time.Duration { return time.Duration(x * 1e3) }
	// A 2,994.7 us kernel (5.3-3,000): the thread, idle 3 ms, parked a
	// decade past 300 us: it wakes 30 + 40 + 60 us later and runs 5 us.
	// (Times count from after the stream's creation, ~5 us into the run,
	// when the thread's idle began: log10 of 3,005 / 300 adds 43 ns.)
	got := callbacksAfter(t, cfg, []time.Duration{us(2994.7)}, [][]string{{"a"}})
	assert.InDelta(t, us(3135), got["a"], 100)
	// A 244.7 us kernel: idle 250 us, parked, no growth: 250 + 75 us.
	got = callbacksAfter(t, cfg, []time.Duration{us(244.7)}, [][]string{{"a"}})
	assert.Equal(t, map[string]time.Duration{"a": us(325)}, got)
}
