package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// queueCallConfig is parkedConfig (1 us thread hand-off, no parking) with
// a Put or Len costing call ns plus perThread ns per other live host
// thread.
func queueCallConfig(t *testing.T, call, perThread float64) *Config {
	cfg := parkedConfig(t, 0, 0, 0, 0)
	cfg.Host.QueueCallNs, cfg.Host.QueueCallPerThreadNs = call, perThread
	return cfg
}

// Two workers wait in Get; at 1 us the main thread Puts twice with three
// host threads alive: each Put takes 200 + 2 x 60 = 320 ns of its time and
// its value is there when it ends, so the workers wake 1 us (the
// hand-off) after 1,320 and 1,640 ns. Once they have finished, the main
// thread's Len costs 200 ns: it is alone.
func TestQueueCallCostGrowsWithLiveThreads(t *testing.T) {
	var woke [2]time.Duration
	runOn(t, queueCallConfig(t, 200, 60), func(h device.Host) error {
		q := h.NewQueue("work")
		for i := range woke {
			h.Go("worker", func(w device.Host) error {
				_, ok := w.Get(q)
				require.True(t, ok)
				woke[i] = w.Now()
				return nil
			})
		}
		h.Spend(time.Microsecond)
		q.Put(1)
		assert.Equal(t, 1320*time.Nanosecond, h.Now(), "Put with two other threads alive")
		q.Put(2)
		assert.Equal(t, 1640*time.Nanosecond, h.Now(), "the second Put")
		h.Spend(5 * time.Microsecond)
		assert.Equal(t, 0, q.Len())
		assert.Equal(t, 6840*time.Nanosecond, h.Now(), "Len alone")
		return nil
	})
	assert.Equal(t, [2]time.Duration{2320 * time.Nanosecond, 2640 * time.Nanosecond}, woke)

	// Two threads ping-pong: each Put takes 260 ns (one other thread
	// alive) before its value is there, and the other thread, waiting in
	// Get, resumes the 1 us hand-off later: 1,260 ns a hand-off, which is
	// why a config sets host.handoff_ns to the measured ping-pong less a
	// Put.
	runOn(t, queueCallConfig(t, 200, 60), func(h device.Host) error {
		ping, pong := h.NewQueue("ping"), h.NewQueue("pong")
		h.Go("pong", func(w device.Host) error {
			for {
				v, ok := w.Get(ping)
				if !ok {
					return nil
				}
				pong.Put(v)
			}
		})
		t0 := h.Now()
		for i := 0; i < 10; i++ {
			ping.Put(i)
			_, ok := h.Get(pong)
			require.True(t, ok)
		}
		assert.Equal(t, 20*1260*time.Nanosecond, h.Now()-t0, "10 exchanges")
		ping.Close()
		return nil
	})

	// Without the fields queue calls are free, as before they existed.
	runOn(t, queueCallConfig(t, 0, 0), func(h device.Host) error {
		q := h.NewQueue("q")
		q.Put(1)
		q.Len()
		assert.Equal(t, time.Duration(0), h.Now())
		return nil
	})
}
