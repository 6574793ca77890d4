package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A callback thread idle longer than front_end.callback_park_after_ns
// has parked: the callback pays callback_parked_wake_ns beyond the wake.
// Datasheet H100 as in TestCallbackWakeAfterIdle: launch 3.3 us, host
// function 2.5 us, launch latency 2 us, callback 5 us; wake 30 us, park
// after 100 us, parked wake 40 us. The thread has been idle since 0.
func TestCallbackParkAfterIdle(t *testing.T) {
	cfg := h100Config(t)
	cfg.FrontEnd.CallbackWakeNs = 30e3
	cfg.FrontEnd.CallbackParkAfterNs = 100e3
	cfg.FrontEnd.CallbackParkedWakeNs = 40e3
	us := func(x float64) time.Duration { return time.Duration(x * 1e3) }

	// A 20 us kernel (5.3-25.3): the thread, idle for 25.3 us, wakes
	// alone (55.3-60.3). A 200 us kernel (5.3-205.3): idle past 100 us,
	// it parked, and starts 70 us later (275.3-280.3).
	got := callbacksAfter(t, cfg, []time.Duration{20 * time.Microsecond}, [][]string{{"a"}})
	assert.Equal(t, map[string]time.Duration{"a": us(60.3)}, got)
	got = callbacksAfter(t, cfg, []time.Duration{200 * time.Microsecond}, [][]string{{"a"}})
	assert.Equal(t, map[string]time.Duration{"a": us(280.3)}, got)

	// Two streams, 200 us (5.3-205.3) and 290 us kernels (launched
	// 5.8-9.1, 11.1-301.1). A's callback ends at 280.3; B's, reached at
	// 301.1, finds the thread idle for only 20.8 us: a wake alone,
	// 331.1-336.1.
	got = callbacksAfter(t, cfg, []time.Duration{200 * time.Microsecond, 290 * time.Microsecond}, [][]string{{"a"}, {"b"}})
	assert.Equal(t, map[string]time.Duration{"a": us(280.3), "b": us(336.1)}, got)
}

// A host thread parked in Get, woken by a callback that paid the parked
// wake, pays only what host.parked_callback_wake_ns adds beyond it.
func TestCallbackParkIsPaidOnce(t *testing.T) {
	getAt := func(parkedCallback, cbParked float64) time.Duration {
		cfg := h100Config(t)
		cfg.FrontEnd.CallbackWakeNs = 30e3
		cfg.FrontEnd.CallbackParkAfterNs = 100e3
		cfg.FrontEnd.CallbackParkedWakeNs = cbParked
		cfg.Host.ParkAfterNs = 150e3
		cfg.Host.ParkedWakeNs = 80e3
		cfg.Host.ParkedCallbackWakeNs = parkedCallback
		return callbackWake(t, cfg, 300*time.Microsecond)
	}
	base := getAt(50e3, 0)
	// The callback thread's park moves the Put 40 us later, and the host
	// pays 10 us of its 50 on top instead of all 50: the Get returns
	// 40 - 40 = 0 us later in all.
	assert.Equal(t, base, getAt(50e3, 40e3))
	// A host park shorter than the callback's: the host pays none of it.
	assert.Equal(t, getAt(30e3, 0)+10*time.Microsecond, getAt(30e3, 40e3))
}
