package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// coldCallCosts times, per step, the host calls that follow an optional
// ColdCaches: a launch and synchronize of a 10 us kernel (first), then the
// same again (twin); it returns the host time of each.
func coldCallCosts(t *testing.T, cfg *Config, steps []func(h device.Host, s device.Stream, x device.GraphExec) error, cold []bool) (first, twin []time.Duration) {
	t.Helper()
	d, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		require.NoError(t, h.BeginCapture(s))
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, 10*time.Microsecond)))
		g, err := h.EndCapture(s)
		require.NoError(t, err)
		x, err := h.Instantiate(g)
		require.NoError(t, err)
		// Its first launch uploads it.
		require.NoError(t, h.GraphLaunch(x, s))
		require.NoError(t, h.StreamSynchronize(s))
		for i, step := range steps {
			if cold[i] {
				h.(interface{ ColdCaches() }).ColdCaches()
			}
			for k := 0; k < 2; k++ {
				t0 := h.Now()
				require.NoError(t, step(h, s, x))
				require.NoError(t, h.StreamSynchronize(s))
				if k == 0 {
					first = append(first, h.Now()-t0)
				} else {
					twin = append(twin, h.Now()-t0)
				}
			}
		}
		return nil
	}))
	return first, twin
}

// After ColdCaches the first call that submits work, a launch, graph
// launch, copy or event record, pays host.cold_call_ns once, before the
// work reaches the GPU; without ColdCaches, or without the field, no call
// does.
func TestColdCallPaidOnceByTheFirstSubmittingCall(t *testing.T) {
	launch := func(h device.Host, s device.Stream, _ device.GraphExec) error {
		return h.Launch(s, spinLaunch(1, 32, 10*time.Microsecond))
	}
	graph := func(h device.Host, s device.Stream, x device.GraphExec) error { return h.GraphLaunch(x, s) }
	recordFirst := func(h device.Host, s device.Stream, x device.GraphExec) error {
		e, err := h.NewEvent(device.EventOptions{})
		if err != nil {
			return err
		}
		if err := h.Record(e, s); err != nil {
			return err
		}
		return launch(h, s, x)
	}
	steps := []func(h device.Host, s device.Stream, x device.GraphExec) error{launch, launch, graph, recordFirst}
	cold := []bool{true, false, true, true}
	cfg := h100Config(t)
	cfg.Host.ColdCallNs = 14e3
	first, twin := coldCallCosts(t, cfg, steps, cold)
	plainFirst, plainTwin := coldCallCosts(t, h100Config(t), steps, cold)
	for i := range steps {
		want := time.Duration(0)
		if cold[i] {
			want = 14 * time.Microsecond
		}
		assert.Equal(t, want, first[i]-twin[i], "step %d: first less twin", i)
		assert.Equal(t, plainFirst[i], plainTwin[i], "step %d: no cost without the field", i)
	}
}
