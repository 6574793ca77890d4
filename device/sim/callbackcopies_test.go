package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// callbackBesideCopies launches a 20 us kernel and a host function on one
// stream, then issues on another stream a pinned copy of bytes to the
// device and one back (none for 0 bytes); it returns when the callback
// ended, from the first launch.
func callbackBesideCopies(t *testing.T, cfg *Config, bytes int64) time.Duration {
	d, err := New(cfg)
	require.NoError(t, err)
	var end, t0 time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		a, c, buf, mem := twoStreamsAndBuffers(t, h, max(bytes, 1))
		t0 = h.Now()
		require.NoError(t, h.Launch(a, spinLaunch(1, 32, 20*time.Microsecond)))
		require.NoError(t, h.HostFunc(a, func() { end = d.now.Duration() }))
		if bytes > 0 {
			require.NoError(t, h.Copy(c, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: mem, Bytes: bytes}))
			require.NoError(t, h.Copy(c, &device.Copy{Kind: device.DeviceToHost, Src: buf, Host: mem, Bytes: bytes}))
		}
		return h.Synchronize()
	}))
	return end - t0
}

// twoStreamsAndBuffers makes the timed stream, the copying stream and a
// device buffer and pinned host memory of bytes for the copies.
func twoStreamsAndBuffers(t *testing.T, h device.Host, bytes int64) (a, c device.Stream, buf device.Buffer, mem *device.HostMem) {
	a, err := h.NewStream(device.StreamOptions{})
	require.NoError(t, err)
	c, err = h.NewStream(device.StreamOptions{})
	require.NoError(t, err)
	buf, err = h.Malloc(bytes)
	require.NoError(t, err)
	mem, err = h.AllocHost(bytes, true)
	require.NoError(t, err)
	return a, c, buf, mem
}

// Hand-computed on the datasheet H100 (launch 3.3 us, host function 2.5,
// cuMemcpyAsync 3.5, launch latency 2, callback 5) with copies of 50
// bytes/ns after a 1 us latency: the kernel runs 5.3-25.3 and its callback,
// alone, ends at 30.3. The copy in is issued at 5.8-9.3 and moves from
// 10.3; the copy out waits behind it on its stream. When the callback
// becomes ready (25.3) the copies' time left is the copy out's whole
// transfer and the copy in's less the 15 us it has moved: for 1 MB (20 us
// each way) 25 us, a fifth of it 5 us; for 2 MB 65 us, 13 us. With the
// bound at 8 us the 2 MB copies add 8. Copies done by then add nothing
// (4 KB: 0.08 us each), nor does anything without the field. Duplex on and
// off: the engines' time left is read from their re-timed transfers or
// from their fixed ends.
func TestCallbackCopyDelayIsAFractionOfTheCopiesLeft(t *testing.T) {
	us := func(x float64) time.Duration { return time.Duration(x * 1e3) }
	for _, duplex := range []float64{0, 1.25} {
		cfg := duplexConfig(t, duplex)
		assert.Equal(t, us(30.3), callbackBesideCopies(t, cfg, 0), "duplex %g: alone", duplex)
		assert.Equal(t, us(30.3), callbackBesideCopies(t, cfg, 2_000_000), "duplex %g: without the field", duplex)

		cfg.FrontEnd.CallbackCopyDelay, cfg.FrontEnd.CallbackCopyDelayMaxNs = 0.2, 100e3
		assert.Equal(t, us(30.3), callbackBesideCopies(t, cfg, 4_000), "duplex %g: copies done", duplex)
		assert.Equal(t, us(35.3), callbackBesideCopies(t, cfg, 1_000_000), "duplex %g: 1 MB", duplex)
		assert.Equal(t, us(43.3), callbackBesideCopies(t, cfg, 2_000_000), "duplex %g: 2 MB", duplex)

		cfg.FrontEnd.CallbackCopyDelayMaxNs = 8e3
		assert.Equal(t, us(38.3), callbackBesideCopies(t, cfg, 2_000_000), "duplex %g: 2 MB, bounded", duplex)
	}
}

// A graph's copy nodes count from the graph's start: a captured copy in
// and out of 2 MB, launched just after the host function, delays it as the
// same copies issued to a stream do, give or take the launch's own costs
// (the copies reach their engine later, so more of them is left).
func TestCallbackCopyDelayCountsAGraphsCopies(t *testing.T) {
	cfg := duplexConfig(t, 1.25)
	cfg.FrontEnd.CallbackCopyDelay, cfg.FrontEnd.CallbackCopyDelayMaxNs = 0.2, 100e3
	d, err := New(cfg)
	require.NoError(t, err)
	var end, t0 time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		a, c, buf, mem := twoStreamsAndBuffers(t, h, 2_000_000)
		require.NoError(t, h.BeginCapture(c))
		require.NoError(t, h.Copy(c, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: mem, Bytes: 2_000_000}))
		require.NoError(t, h.Copy(c, &device.Copy{Kind: device.DeviceToHost, Src: buf, Host: mem, Bytes: 2_000_000}))
		g, err := h.EndCapture(c)
		require.NoError(t, err)
		x, err := h.Instantiate(g)
		require.NoError(t, err)
		t0 = h.Now()
		require.NoError(t, h.Launch(a, spinLaunch(1, 32, 20*time.Microsecond)))
		require.NoError(t, h.HostFunc(a, func() { end = d.now.Duration() }))
		require.NoError(t, h.GraphLaunch(x, c))
		return h.Synchronize()
	}))
	delay := end - t0 - 30300*time.Nanosecond
	// The copies' 80 us less what the copy in moved before 25.3 us: it
	// cannot have moved for longer than the 15 us the stream's did.
	assert.GreaterOrEqual(t, delay, 13*time.Microsecond)
	assert.Less(t, delay, 16*time.Microsecond)
}
