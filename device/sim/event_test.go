package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// A wait binds to the event's latest record when it is issued and is
// satisfied when that record completes, not when a later record of the same
// event (on another stream) completes first.
func TestWaitBindsToTheRecordAtCallTime(t *testing.T) {
	d := newH100(t, WithTrace(true))
	var queryAfterB, queryLatest bool
	require.NoError(t, d.Run(func(h device.Host) error {
		x, err := h.Malloc(1 << 20)
		require.NoError(t, err)
		a, _ := h.NewStream(device.StreamOptions{})
		b, _ := h.NewStream(device.StreamOptions{})
		c, _ := h.NewStream(device.StreamOptions{})
		e, _ := h.NewEvent(device.EventOptions{})
		writer := spinLaunch(1, 32, 100*time.Microsecond)
		writer.Label, writer.Args = "writer", []device.Arg{device.Out(x)}
		require.NoError(t, h.Launch(a, writer))
		require.NoError(t, h.Record(e, a))
		require.NoError(t, h.Wait(c, e)) // bound to the record on a
		short := spinLaunch(1, 32, time.Microsecond)
		short.Label = "short"
		require.NoError(t, h.Launch(b, short))
		require.NoError(t, h.Record(e, b)) // re-recorded: completes long before a's record
		reader := spinLaunch(1, 32, 10*time.Microsecond)
		reader.Label, reader.Args = "reader", []device.Arg{device.In(x)}
		require.NoError(t, h.Launch(c, reader))
		// Query and EventSynchronize follow the latest record (b's).
		require.NoError(t, h.StreamSynchronize(b))
		queryAfterB, err = h.Query(e)
		require.NoError(t, err)
		require.NoError(t, h.EventSynchronize(e))
		queryLatest, err = h.Query(e)
		require.NoError(t, err)
		return h.Synchronize()
	}))
	assert.Empty(t, d.Races(), "the reader must wait for the writer")
	spans := map[string][2]Time{}
	for _, s := range d.lastTrace.spans {
		if s.kind == trackStream {
			spans[s.name] = [2]Time{s.start, s.end}
		}
	}
	require.Contains(t, spans, "writer")
	require.Contains(t, spans, "reader")
	assert.GreaterOrEqual(t, spans["reader"][0], spans["writer"][1])
	assert.True(t, queryAfterB, "the latest record (on b) is complete")
	assert.True(t, queryLatest)
}

// EventSynchronize binds to the latest record at call time: re-recording
// the event afterwards on a stream that completes later does not extend the
// wait, and an earlier record still pending does not shorten it.
func TestEventSynchronizeBindsToTheLatestRecord(t *testing.T) {
	d := newH100(t)
	var waited, longEnd time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		a, _ := h.NewStream(device.StreamOptions{})
		b, _ := h.NewStream(device.StreamOptions{})
		e, _ := h.NewEvent(device.EventOptions{})
		require.NoError(t, h.Launch(a, spinLaunch(1, 32, 200*time.Microsecond)))
		require.NoError(t, h.Record(e, a)) // record 1: at about 205 us
		require.NoError(t, h.Launch(b, spinLaunch(1, 32, 20*time.Microsecond)))
		require.NoError(t, h.Record(e, b)) // record 2: at about 30 us
		done, err := h.Query(e)
		require.NoError(t, err)
		assert.False(t, done, "record 2 has not completed yet")
		require.NoError(t, h.EventSynchronize(e))
		waited = h.Now()
		require.NoError(t, h.StreamSynchronize(a))
		longEnd = h.Now()
		return nil
	}))
	assert.Less(t, waited, 60*time.Microsecond, "EventSynchronize waits for record 2 only")
	assert.Greater(t, longEnd, 200*time.Microsecond)
}

// Elapsed uses each event's latest record, even when an older record of
// the same event completes after it.
func TestElapsedUsesTheLatestRecord(t *testing.T) {
	d := newH100(t)
	var el time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		a, _ := h.NewStream(device.StreamOptions{})
		b, _ := h.NewStream(device.StreamOptions{})
		e0, _ := h.NewEvent(device.EventOptions{})
		e1, _ := h.NewEvent(device.EventOptions{})
		require.NoError(t, h.Launch(a, spinLaunch(1, 32, 500*time.Microsecond)))
		require.NoError(t, h.Record(e1, a)) // superseded, completes last
		require.NoError(t, h.Record(e0, b))
		require.NoError(t, h.Launch(b, spinLaunch(1, 32, 50*time.Microsecond)))
		require.NoError(t, h.Record(e1, b))
		require.NoError(t, h.Synchronize())
		var err error
		el, err = h.Elapsed(e0, e1)
		return err
	}))
	// e0 completes when it is recorded (b idle); the launch after it costs
	// 3.3 us, its block starts 2 us later and runs 50 us: 55.3 us. The
	// superseded record on a would give about 500 us.
	assert.Equal(t, 55300*time.Nanosecond, el)
}

// front_end.event_wait_ns: a stream waiting on an event recorded on
// another stream passes the wait that long after the record completes,
// then its kernel starts a back-to-back gap later; a wait on the
// stream's own event and a wait issued after the record completed cost
// nothing more (the same timeline as without the field).
func TestEventWaitDelaysCrossStreamWaits(t *testing.T) {
	with, b2b := eventWaitSpans(t, 3000)
	without, _ := eventWaitSpans(t, 0)
	assert.Equal(t, with["first"][1]+nsTime(3000)+b2b, with["cross"][0], "cross-stream: event_wait_ns, then the gap")
	assert.Equal(t, without["first"][1]+b2b, without["cross"][0], "without the field: the gap only")
	assert.Equal(t, with["cross"][1]+b2b, with["same"][0], "the stream's own record: the gap only")
	assert.Equal(t, without["late"][0]-without["same"][1], with["late"][0]-with["same"][1],
		"a wait issued after its record completed costs the device nothing")
}

// eventWaitSpans runs kernels "first" on stream a, "cross" on b behind a
// wait on a's record, "same" on b behind a wait on b's own record, and,
// after a Synchronize, "late" on a behind a wait on b's record, on the
// datasheet H100 with front_end.event_wait_ns set to eventWait; it returns
// each kernel's span and the back-to-back gap.
func eventWaitSpans(t *testing.T, eventWait float64) (map[string][2]Time, Time) {
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.FrontEnd.EventWaitNs = eventWait
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	launch := func(h device.Host, st device.Stream, wait device.Event, label string) {
		if wait != nil {
			require.NoError(t, h.Wait(st, wait))
		}
		l := spinLaunch(1, 32, 50*time.Microsecond)
		l.Label = label
		require.NoError(t, h.Launch(st, l))
	}
	require.NoError(t, d.Run(func(h device.Host) error {
		a, _ := h.NewStream(device.StreamOptions{})
		b, _ := h.NewStream(device.StreamOptions{})
		ea, _ := h.NewEvent(device.EventOptions{})
		eb, _ := h.NewEvent(device.EventOptions{})
		launch(h, a, nil, "first")
		require.NoError(t, h.Record(ea, a))
		launch(h, b, ea, "cross")
		require.NoError(t, h.Record(eb, b))
		launch(h, b, eb, "same")
		require.NoError(t, h.Synchronize())
		launch(h, a, eb, "late")
		return h.Synchronize()
	}))
	spans := map[string][2]Time{}
	for _, s := range d.lastTrace.spans {
		if s.kind == trackStream {
			spans[s.name] = [2]Time{s.start, s.end}
		}
	}
	require.Len(t, spans, 4)
	return spans, nsTime(cfg.FrontEnd.BackToBackNs)
}

// host.capture_event_ns: a record or wait captured into a graph costs it
// (launches captured still cost capture_ns); left out, capture_ns.
func TestCaptureEventCost(t *testing.T) {
	for _, tc := range []struct{ eventNs, want float64 }{{0, 3 * 1000}, {2500, 1000 + 2*2500}} {
		cfg, err := LoadConfig("h100-datasheet")
		require.NoError(t, err)
		cfg.Host.CaptureNs, cfg.Host.CaptureEventNs = 1000, tc.eventNs
		d, err := New(cfg)
		require.NoError(t, err)
		var took time.Duration
		require.NoError(t, d.Run(func(h device.Host) error {
			a, _ := h.NewStream(device.StreamOptions{})
			b, _ := h.NewStream(device.StreamOptions{})
			fork, _ := h.NewEvent(device.EventOptions{})
			join, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.BeginCapture(a))
			require.NoError(t, h.Record(fork, a))
			require.NoError(t, h.Wait(b, fork))
			t0 := h.Now()
			require.NoError(t, h.Launch(b, spinLaunch(1, 32, time.Microsecond))) // capture_ns
			require.NoError(t, h.Record(join, b))                                // capture_event_ns
			require.NoError(t, h.Wait(a, join))                                  // capture_event_ns
			took = h.Now() - t0
			g, err := h.EndCapture(a)
			require.NoError(t, err)
			return h.Destroy(g)
		}))
		assert.Equal(t, time.Duration(tc.want), took, "capture_event_ns %g", tc.eventNs)
	}
}
