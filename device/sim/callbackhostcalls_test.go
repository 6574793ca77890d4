package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// releaseBesideACall runs, on the datasheet H100 (launch 3.3 us, host
// function 2.5, launch latency 2, callback 5) with a 10 us release: a 20
// us kernel (5.3-25.3 from the first launch), a host function (its
// callback 25.3-30.3), an empty kernel behind it (so the callback thread
// releases the stream, 30.3-40.3) and a host function that notes when it
// runs; the host spends until callAt, then launches an empty kernel on
// another stream (a 3.3 us driver call) and spends 100 us. It returns when
// the last host function ran, from the first launch.
func releaseBesideACall(t *testing.T, wait float64, callAt time.Duration) time.Duration {
	cfg := h100Config(t)
	cfg.FrontEnd.CallbackWakeNs, cfg.FrontEnd.CallbackReleaseNs = 0, 10e3
	cfg.FrontEnd.CallbackReleaseHostWaitNs = wait
	d, err := New(cfg)
	require.NoError(t, err)
	var end, t0 time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		a, c, _, _ := twoStreamsAndBuffers(t, h, 1)
		t0 = h.Now()
		require.NoError(t, h.Launch(a, spinLaunch(1, 32, 20*time.Microsecond)))
		require.NoError(t, h.HostFunc(a, func() {}))
		require.NoError(t, h.Launch(a, spinLaunch(1, 32, time.Microsecond)))
		require.NoError(t, h.HostFunc(a, func() { end = d.now.Duration() }))
		h.Spend(t0 + callAt - h.Now())
		require.NoError(t, h.Launch(c, spinLaunch(1, 32, time.Microsecond)))
		h.Spend(100 * time.Microsecond)
		return h.Synchronize()
	}))
	return end - t0
}

// Without the field the release ignores the host's calls. With it, a
// launch called at 29 us (returning at 32.3) covers the release's start
// (30.3): the release starts at 32.3 + 7 us instead, 9 us later, and so
// does everything behind it; a launch called at 31 us, after the release
// began, or at 27 us (returning at 30.3, as the release begins) changes
// nothing.
func TestCallbackReleaseWaitsForTheHostsDriverCall(t *testing.T) {
	base := releaseBesideACall(t, 0, 29*time.Microsecond)
	assert.Equal(t, base, releaseBesideACall(t, 0, 31*time.Microsecond), "without the field")
	assert.Equal(t, base+9*time.Microsecond, releaseBesideACall(t, 7e3, 29*time.Microsecond), "inside the call")
	assert.Equal(t, base, releaseBesideACall(t, 7e3, 31*time.Microsecond), "called after the release began")
	assert.Equal(t, base, releaseBesideACall(t, 7e3, 27*time.Microsecond), "returned as it began")
}
