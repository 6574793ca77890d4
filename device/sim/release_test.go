package sim

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// Destroyed graphs, execs and events are released within the Run, not
// kept until it ends: a long simulated Run that captures every round (the
// soak's KeSCo with graphs) must not grow. Ids stay unique within the Run,
// and a destroyed handle used again is still a clear error.
func TestDestroyReleasesCapturedGraphsAndEvents(t *testing.T) {
	const rounds = 4
	var graphsFreed, eventsFreed atomic.Int32
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		s0, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		s1, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		lastID := -1
		var stale device.Event
		for range rounds {
			// One round as a captured multi-stream schedule does it: fork
			// and join events recorded inside the capture.
			fork, err := h.NewEvent(device.EventOptions{})
			require.NoError(t, err)
			join, err := h.NewEvent(device.EventOptions{})
			require.NoError(t, err)
			for _, e := range []device.Event{fork, join} {
				id := e.(*eventObj).id
				assert.Greater(t, id, lastID, "event ids are unique and increasing within a Run")
				lastID = id
				runtime.SetFinalizer(e.(*eventObj), func(*eventObj) { eventsFreed.Add(1) })
			}
			require.NoError(t, h.BeginCapture(s0))
			require.NoError(t, h.Record(fork, s0))
			require.NoError(t, h.Wait(s1, fork))
			require.NoError(t, h.Launch(s0, spinLaunch(1, 32, time.Microsecond)))
			require.NoError(t, h.Launch(s1, spinLaunch(1, 32, time.Microsecond)))
			require.NoError(t, h.Record(join, s1))
			require.NoError(t, h.Wait(s0, join))
			g, err := h.EndCapture(s0)
			require.NoError(t, err)
			runtime.SetFinalizer(g.(*graph), func(*graph) { graphsFreed.Add(1) })
			gx, err := h.Instantiate(g)
			require.NoError(t, err)
			require.NoError(t, h.GraphLaunch(gx, s0))
			require.NoError(t, h.Synchronize())
			for _, r := range []device.Resource{gx, g, fork, join} {
				require.NoError(t, h.Destroy(r))
			}
			stale = join
		}
		err = h.Record(stale, s0)
		require.Error(t, err, "recording a destroyed event")
		assert.Contains(t, err.Error(), "was destroyed")
		// Nothing but the device could still reach the destroyed objects.
		for i := 0; i < 100 && (graphsFreed.Load() < rounds || eventsFreed.Load() < 2*rounds); i++ {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		assert.EqualValues(t, rounds, graphsFreed.Load(), "destroyed graphs freed during the Run")
		assert.EqualValues(t, 2*rounds, eventsFreed.Load(), "destroyed events freed during the Run")
		return nil
	}))
}
