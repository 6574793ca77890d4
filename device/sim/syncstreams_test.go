package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// host.sync_switch_ns: a stream synchronize whose host thread's previous
// stream synchronize was of another stream costs sync_call_ns +
// sync_switch_ns; one of the same stream again, or the thread's first,
// sync_call_ns. A synchronize that blocks pays the switch on its call and
// then waits for the stream (its wake-up as before); a device synchronize
// neither pays nor resets it. Left out, every synchronize of an idle
// stream costs sync_call_ns.
func TestSyncSwitch(t *testing.T) {
	const extra = 1300
	for _, on := range []bool{true, false} {
		cfg := streamHostConfig(t, func(c *Config) {
			if on {
				c.Host.SyncSwitchNs = extra
			}
		})
		d, err := New(cfg)
		require.NoError(t, err)
		took, timed := callTimer(t)
		var blocked time.Duration
		require.NoError(t, d.Run(func(h device.Host) error {
			a, _ := h.NewStream(device.StreamOptions{})
			b, _ := h.NewStream(device.StreamOptions{})
			timed(h, "first", func() error { return h.StreamSynchronize(a) })
			timed(h, "same again", func() error { return h.StreamSynchronize(a) })
			timed(h, "another", func() error { return h.StreamSynchronize(b) })
			timed(h, "back", func() error { return h.StreamSynchronize(a) })
			require.NoError(t, h.Launch(b, spinLaunch(1, 32, 20*time.Microsecond)))
			t0 := h.Now()
			require.NoError(t, h.StreamSynchronize(b)) // blocks until b's kernel ends
			blocked = h.Now() - t0
			require.NoError(t, h.Synchronize())
			timed(h, "after a device synchronize", func() error { return h.StreamSynchronize(b) })
			return nil
		}))
		hc := cfg.Host
		x := 0.0
		if on {
			x = extra
		}
		ns := func(v float64) time.Duration { return time.Duration(v) }
		assert.Equal(t, ns(hc.SyncCallNs), took["first"], "the thread's first synchronize")
		assert.Equal(t, ns(hc.SyncCallNs), took["same again"])
		assert.Equal(t, ns(hc.SyncCallNs+x), took["another"], "on=%v", on)
		assert.Equal(t, ns(hc.SyncCallNs+x), took["back"], "on=%v", on)
		assert.Equal(t, ns(hc.SyncCallNs), took["after a device synchronize"], "b again: the device synchronize in between is not a stream's")
		// The blocking one: b's kernel (launch latency + 20 us after its
		// launch) and the wake-up; its call, a switch, hides under the wait.
		want := ns(hc.LaunchNs) + ns(cfg.FrontEnd.LaunchLatencyNs) + 20*time.Microsecond + ns(hc.WakeupNs)
		assert.InDelta(t, float64(want-ns(hc.LaunchNs)), float64(blocked), float64(time.Microsecond), "blocked %v", blocked)
	}
}
