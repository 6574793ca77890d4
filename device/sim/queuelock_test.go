package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// queueLockConfig is parkedConfig (1 us thread hand-off, no parking) with
// the queue lock held lock ns per call and a contended hand-off of
// handoff ns.
func queueLockConfig(t *testing.T, lock, handoff float64) *Config {
	cfg := parkedConfig(t, 0, 0, 0, 0)
	cfg.Host.QueueLockNs, cfg.Host.QueueLockHandoffNs = lock, handoff
	return cfg
}

// One thread alone: a Put, a Len and a Get that finds the value each hold
// the lock 0.5 us, nobody else wants it.
func TestQueueLockUncontended(t *testing.T) {
	runOn(t, queueLockConfig(t, 500, 2000), func(h device.Host) error {
		q := h.NewQueue("q")
		q.Put(1)
		assert.Equal(t, 500*time.Nanosecond, h.Now(), "Put")
		assert.Equal(t, 1, q.Len())
		assert.Equal(t, 1000*time.Nanosecond, h.Now(), "Len")
		_, ok := h.Get(q)
		require.True(t, ok)
		assert.Equal(t, 1500*time.Nanosecond, h.Now(), "Get")
		return nil
	})
	// Without the fields queue calls are free, as before they existed.
	runOn(t, queueLockConfig(t, 0, 0), func(h device.Host) error {
		q := h.NewQueue("q")
		q.Put(1)
		q.Len()
		_, ok := h.Get(q)
		require.True(t, ok)
		assert.Equal(t, time.Duration(0), h.Now())
		return nil
	})
}

// A worker parked in Get is woken by the main thread's Put at 0: the Put
// holds the lock until 0.5 us, the value arrives 1 us later (the
// hand-off) and the worker's Get takes the free lock: 2 us. With a 2 us
// lock, a second thread's Len at 0.1 us (the main thread's Put holds the
// lock to 2 us) waits, pays the contended hand-off and holds it:
// 2 + 1 + 2 = 5 us.
func TestQueueLockHandoffAndContention(t *testing.T) {
	var woke time.Duration
	runOn(t, queueLockConfig(t, 500, 1000), func(h device.Host) error {
		q := h.NewQueue("work")
		h.Go("worker", func(w device.Host) error {
			_, ok := w.Get(q)
			require.True(t, ok)
			woke = w.Now()
			return nil
		})
		q.Put(1)
		return nil
	})
	assert.Equal(t, 2000*time.Nanosecond, woke)

	var lenAt time.Duration
	runOn(t, queueLockConfig(t, 2000, 1000), func(h device.Host) error {
		q := h.NewQueue("work")
		h.Go("poller", func(w device.Host) error {
			w.Spend(100 * time.Nanosecond)
			q.Len()
			lenAt = w.Now()
			return nil
		})
		q.Put(1)
		assert.Equal(t, 2000*time.Nanosecond, h.Now())
		return nil
	})
	assert.Equal(t, 5000*time.Nanosecond, lenAt)
}
