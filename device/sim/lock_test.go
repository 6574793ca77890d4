package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// lockedEnds runs n host threads that each create a stream and then do
// work; it returns when each thread finished.
func lockedEnds(t *testing.T, cfg *Config, n int, work func(w device.Host, s device.Stream)) []time.Duration {
	t.Helper()
	d, err := New(cfg)
	require.NoError(t, err)
	var ends []time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		q := h.NewQueue("ends")
		for i := 0; i < n; i++ {
			h.Go("worker", func(w device.Host) error {
				s, err := w.NewStream(device.StreamOptions{})
				require.NoError(t, err)
				work(w, s)
				q.Put(w.Now())
				return nil
			})
		}
		for i := 0; i < n; i++ {
			v, _ := h.Get(q)
			ends = append(ends, v.(time.Duration))
		}
		return nil
	}))
	return ends
}

// A graph call holds the driver lock for host.graph_lock_fraction of its
// cost (driver_lock_fraction where that is 0): two threads building a
// graph each at once run side by side with no lock and one after the
// other with all of it, whatever the launches' fraction.
func TestGraphLockFractionSerializesGraphBuilds(t *testing.T) {
	build := func(w device.Host, s device.Stream) {
		require.NoError(t, w.BeginCapture(s))
		for j := 0; j < 4; j++ {
			require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
		}
		g, err := w.EndCapture(s)
		require.NoError(t, err)
		x, err := w.Instantiate(g)
		require.NoError(t, err)
		require.NoError(t, w.Destroy(g))
		require.NoError(t, w.Destroy(x))
	}
	last := func(driver, graph float64, n int) time.Duration {
		cfg := h100Config(t)
		cfg.Host.ThreadStartNs = 0
		cfg.Host.StreamCreateNs = 0
		cfg.Host.DriverLockFraction, cfg.Host.GraphLockFraction, cfg.Host.GraphLockHandoffNs = driver, graph, 0
		ends := lockedEnds(t, cfg, n, build)
		return max(ends[0], ends[len(ends)-1])
	}
	alone := last(0, 0, 1)
	require.Positive(t, alone)
	assert.Equal(t, alone, last(0, 0, 2), "no lock: side by side")
	assert.Equal(t, 2*alone, last(0, 1, 2), "graph calls wholly under the lock: one after the other")
	assert.Equal(t, 2*alone, last(1, 0, 2), "0 falls back to driver_lock_fraction")
	assert.Equal(t, alone, last(1, 1, 1), "one thread never waits for the lock")
}

// host.graph_lock_handoff_ns is paid by a graph-building call that waits
// for the lock another thread holds, never by a thread that held it last,
// and never by launches.
func TestGraphLockHandoffChargedOnlyWhenContended(t *testing.T) {
	build := captureSpins(t, 5)
	launches := launchSpins(t, 10)
	last := func(work func(device.Host, device.Stream), handoff float64, n int) time.Duration {
		cfg := h100Config(t)
		cfg.Host.ThreadStartNs = 0
		cfg.Host.DriverLockFraction, cfg.Host.GraphLockFraction, cfg.Host.GraphLockHandoffNs = 1, 0, handoff
		ends := lockedEnds(t, cfg, n, work)
		return max(ends[0], ends[len(ends)-1])
	}
	assert.Equal(t, last(build, 0, 1), last(build, 1000, 1), "one thread: no hand-off")
	plain, handed := last(build, 0, 2), last(build, 1000, 2)
	assert.Equal(t, 2*last(build, 0, 1), plain, "two threads under the whole lock: one after the other")
	// The threads alternate on the lock: most of the 20 graph calls of
	// each wait for the other thread's.
	assert.Greater(t, handed, plain+20*time.Microsecond, "contended graph calls pay the hand-off")
	assert.LessOrEqual(t, handed, plain+40*time.Microsecond, "at most one hand-off a call")
	assert.Equal(t, last(launches, 0, 2), last(launches, 1000, 2), "launches pay none")
}

// launchSpins is a host thread's work for the lock tests: n launches of a
// 1 us spin kernel on its stream.
func launchSpins(t *testing.T, n int) func(device.Host, device.Stream) {
	return func(w device.Host, s device.Stream) {
		for j := 0; j < n; j++ {
			require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
		}
	}
}

// captureSpins is a host thread's graph-building work for the lock tests:
// n captures of one 1 us spin kernel, each graph destroyed.
func captureSpins(t *testing.T, n int) func(device.Host, device.Stream) {
	return func(w device.Host, s device.Stream) {
		for j := 0; j < n; j++ {
			require.NoError(t, w.BeginCapture(s))
			require.NoError(t, w.Launch(s, spinLaunch(1, 32, time.Microsecond)))
			g, err := w.EndCapture(s)
			require.NoError(t, err)
			require.NoError(t, w.Destroy(g))
		}
	}
}
