package hardening

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// TestSoakOnSimulator runs the GPU soak's every case on the simulator at a
// small kernel count: every scheduler must finish every round and hold no
// more streams, events, graphs or buffers at the end than after warm-up.
func TestSoakOnSimulator(t *testing.T) {
	d, err := sim.NewNamed("h100", sim.WithRaceCheck(false))
	require.NoError(t, err)
	rs := Soak(d, SoakCases, SoakOptions{Kernels: 3000, Samples: 4, Seed: 1})
	require.Len(t, rs, len(SoakCases))
	for _, r := range rs {
		assert.Empty(t, r.Err, r.Scheduler)
		assert.Empty(t, r.Growth, r.Scheduler)
		assert.GreaterOrEqual(t, r.Kernels, 3000, r.Scheduler)
		require.GreaterOrEqual(t, len(r.Samples), 3, r.Scheduler)
		last := r.Samples[len(r.Samples)-1]
		// After a round every scheduler has destroyed what it created:
		// only Bind's buffers are live.
		assert.Zero(t, last.Streams, "%s streams", r.Scheduler)
		assert.Zero(t, last.Events, "%s events", r.Scheduler)
		assert.Zero(t, last.Graphs+last.Execs, "%s graphs", r.Scheduler)
	}
	t.Logf("\n%s", SoakReport("h100 (simulator)", SoakOptions{Kernels: 3000, Samples: 4}, rs)[:2000])
}

// TestSoakSeesALeak: a scheduler that forgets to destroy one event per
// round is reported as growth.
func TestSoakSeesALeak(t *testing.T) {
	ch := &countingHost{}
	var ss []SoakSample
	d, err := sim.NewNamed("h100")
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		ch.Host = h
		for round := 0; round <= 20; round++ {
			if _, err := ch.NewEvent(device.EventOptions{}); err != nil {
				return err
			}
			s := ch.snapshot()
			s.Round, s.DeviceFree = round, -1
			ss = append(ss, s)
		}
		return nil
	}))
	g := growth(ss)
	require.Len(t, g, 1)
	assert.Contains(t, g[0], "events 2 -> 21")
}
