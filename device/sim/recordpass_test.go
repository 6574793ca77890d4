package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// recordPassSpans runs, on one hardware queue, kernel A (20 us) and a
// record of e on stream 0, then kernel C (1 us) on stream 1, kernel B on
// stream 0, and on stream 2 a wait on e and kernel D (1 us); it returns
// the kernels' spans and whether e was complete when C's stream was
// synchronized.
func recordPassSpans(t *testing.T, pass bool) (map[string][2]Time, bool) {
	cfg := h100Config(t)
	cfg.FrontEnd.RecordsPassQueue = pass
	d, err := New(cfg, WithHardwareQueues(1), WithTrace(true))
	require.NoError(t, err)
	var doneAtC bool
	require.NoError(t, d.Run(func(h device.Host) error {
		s0, _ := h.NewStream(device.StreamOptions{})
		s1, _ := h.NewStream(device.StreamOptions{})
		s2, _ := h.NewStream(device.StreamOptions{})
		e, _ := h.NewEvent(device.EventOptions{})
		launch := func(s device.Stream, label string, dur time.Duration) {
			l := spinLaunch(1, 32, dur)
			l.Label = label
			require.NoError(t, h.Launch(s, l))
		}
		launch(s0, "A", 20*time.Microsecond)
		require.NoError(t, h.Record(e, s0))
		launch(s1, "C", time.Microsecond)
		launch(s0, "B", time.Microsecond)
		require.NoError(t, h.Wait(s2, e))
		launch(s2, "D", time.Microsecond)
		require.NoError(t, h.StreamSynchronize(s1))
		var err error
		if doneAtC, err = h.Query(e); err != nil {
			return err
		}
		return h.Synchronize()
	}))
	spans := map[string][2]Time{}
	for _, s := range d.lastTrace.spans {
		if s.kind == trackStream {
			spans[s.name] = [2]Time{s.start, s.end}
		}
	}
	for _, k := range []string{"A", "B", "C", "D"} {
		require.Contains(t, spans, k)
	}
	return spans, doneAtC
}

// A record behind a running kernel holds its hardware queue (the other
// streams' kernels behind it wait for that kernel) unless
// front_end.records_pass_queue; either way the record completes when its
// kernel does, and what waits on it or follows it on its stream starts
// after that kernel.
func TestRecordsPassQueue(t *testing.T) {
	hold, holdDone := recordPassSpans(t, false)
	pass, passDone := recordPassSpans(t, true)
	for name, spans := range map[string]map[string][2]Time{"hold": hold, "pass": pass} {
		assert.GreaterOrEqual(t, spans["B"][0], spans["A"][1], "%s: B follows A on its stream", name)
		assert.GreaterOrEqual(t, spans["D"][0], spans["A"][1], "%s: D waits for A's record", name)
	}
	assert.GreaterOrEqual(t, hold["C"][0], hold["A"][1], "holding: C is queued behind A's record")
	assert.Less(t, pass["C"][1], pass["A"][1], "passing: C runs beside A")
	assert.True(t, holdDone, "holding: C ran after A, so the record is complete")
	assert.False(t, passDone, "passing: C ended before A, so the record is still pending")
	assert.Equal(t, hold["A"], pass["A"])
}
