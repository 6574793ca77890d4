package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// "scheduler threads behind a window", hand-off only: with free queue
// calls one round trip is two hand-offs and K scheduler threads overlap K
// of them; with a queue lock every Put and Get holds it, so one round trip
// pays four lock holds more, and the window thread's own Put and Get bound
// the time per kernel however many threads reply.
func TestWindowHandoffsSeeTheQueueLock(t *testing.T) {
	perKernel := func(lock float64) map[int]float64 {
		cfg := lockOnly(t)
		cfg.Host.HandoffNs, cfg.Host.QueueLockNs, cfg.Host.QueueLockHandoffNs = 1000, lock, 0
		rep, err := Measure(mustSim(t, cfg), []string{"scheduler threads behind a window"}, nil)
		require.NoError(t, err)
		out := map[int]float64{}
		for _, n := range threadedCounts {
			m, ok := rep.byName(windowName(windowHandoffLoop, n))
			require.True(t, ok, "measured %d threads", n)
			out[n] = m.Value
		}
		return out
	}
	free := perKernel(0)
	assert.InDelta(t, 2000, free[1], 1, "a round trip: two 1 us hand-offs")
	assert.InDelta(t, 250, free[8], 1, "eight threads overlap eight round trips")
	locked := perKernel(500)
	assert.InDelta(t, 4000, locked[1], 1, "two hand-offs and four 0.5 us lock holds")
	assert.GreaterOrEqual(t, locked[8], 1000.0, "the window thread's Put and Get hold the lock 1 us per kernel")
}

// host.queue_lock_ns and host.queue_lock_handoff_ns (with host.handoff_ns)
// are fitted to the window's hand-off only figures: a report simulated
// with one pair gives it back.
func TestQueueLockFitRecoversTheSimulatedPair(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the window probe a few dozen times")
	}
	truth := lockOnly(t)
	truth.Host.QueueLockNs, truth.Host.QueueLockHandoffNs = 400, 1500
	rep, err := Measure(mustSim(t, truth), []string{"host thread hand-off", "scheduler threads behind a window"}, nil)
	require.NoError(t, err)
	// A coarser grid around the truth keeps the test short.
	ls, hs := queueLocks, queueLockHandoffs
	queueLocks, queueLockHandoffs = []float64{0, 200, 400, 600, 800}, []float64{0, 500, 1500, 2500}
	defer func() { queueLocks, queueLockHandoffs = ls, hs }()
	f, err := FitQueueLock(rep, lockOnly(t))
	require.NoError(t, err)
	assert.Equal(t, 400.0, f.Config.Host.QueueLockNs)
	assert.Equal(t, 1500.0, f.Config.Host.QueueLockHandoffNs)
	assert.InDelta(t, truth.Host.HandoffNs, f.Config.Host.HandoffNs, 1, "the ping-pong less two lock holds")
	assert.Contains(t, f.Comments["host.queue_lock_ns"], "8 threads")

	_, err = FitQueueLock(&Report{}, loadConfig(t, "h100"))
	assert.ErrorContains(t, err, "host thread hand-off")
}
