package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// hostCopyRun issues n host-to-device copies of bytes behind an event
// recorded after a 200 us gate kernel, back to back on one stream or each
// on its own stream, and returns each copy's start and end.
func hostCopyRun(t *testing.T, cfg *Config, n int, bytes int64, spread bool) [][2]Time {
	t.Helper()
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		gate, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		open, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Launch(gate, &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(32),
			Work: device.Work{Cycles: cyclesFor(200 * time.Microsecond)}, Label: "gate"}))
		require.NoError(t, h.Record(open, gate))
		var streams []device.Stream
		for i := 0; i < n; i++ {
			if i == 0 || spread {
				s, err := h.NewStream(device.StreamOptions{})
				require.NoError(t, err)
				require.NoError(t, h.Wait(s, open))
				streams = append(streams, s)
			}
			buf, err := h.Malloc(bytes)
			require.NoError(t, err)
			mem, err := h.AllocHost(bytes, true)
			require.NoError(t, err)
			cp := &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: mem, Bytes: bytes, Label: string(rune('a' + i))}
			require.NoError(t, h.Copy(streams[len(streams)-1], cp))
		}
		return h.Synchronize()
	}))
	return copySpans(t, d, n)
}

// Hand-computed: latency 1 us, back to back 0.4 us, queued 0.7 us, 50
// bytes/ns, 500,000 bytes move in 10 us. Back to back on one stream the
// first copy takes 11 us and each after it 10.4; issued at once on three
// streams, the second and third wait on the engine and take 10.7 each.
// Without the fields every copy takes 11 us either way. The test runs with
// duplex on (the engines re-timed, pcie.go) and off (each copy's end fixed
// when it starts).
func TestHostCopiesFollowingCopiesPayLess(t *testing.T) {
	for _, duplex := range []float64{0, 1.25} {
		cfg := duplexConfig(t, duplex)
		cfg.Copy.BackToBackLatencyNs, cfg.Copy.QueuedLatencyNs = 400, 700
		const us = Time(1_000_000) // ps
		durs := func(spans [][2]Time) []Time {
			var out []Time
			for i, s := range spans {
				out = append(out, s[1]-s[0])
				if i > 0 {
					assert.Equal(t, spans[i-1][1], s[0], "duplex %g: copy %d starts as the one before ends", duplex, i)
				}
			}
			return out
		}
		assert.Equal(t, []Time{11 * us, 10400 * us / 1000, 10400 * us / 1000}, durs(hostCopyRun(t, cfg, 3, 500_000, false)), "duplex %g, back to back", duplex)
		assert.Equal(t, []Time{11 * us, 10700 * us / 1000, 10700 * us / 1000}, durs(hostCopyRun(t, cfg, 3, 500_000, true)), "duplex %g, spread", duplex)
		cfg.Copy.BackToBackLatencyNs, cfg.Copy.QueuedLatencyNs = 0, 0
		assert.Equal(t, []Time{11 * us, 11 * us, 11 * us}, durs(hostCopyRun(t, cfg, 3, 500_000, false)), "duplex %g, back to back, no fields", duplex)
		assert.Equal(t, []Time{11 * us, 11 * us, 11 * us}, durs(hostCopyRun(t, cfg, 3, 500_000, true)), "duplex %g, spread, no fields", duplex)
	}
}

// A copy that finds its engine idle pays the whole latency even when the
// engine's last copy was its own stream's: a kernel between them let the
// engine go idle.
func TestHostCopyAfterAnIdleEnginePaysTheLatency(t *testing.T) {
	cfg := duplexConfig(t, 1.25)
	cfg.Copy.BackToBackLatencyNs = 400
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		for i := 0; i < 2; i++ {
			buf, err := h.Malloc(500_000)
			require.NoError(t, err)
			mem, err := h.AllocHost(500_000, true)
			require.NoError(t, err)
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: mem, Bytes: 500_000, Label: string(rune('a' + i))}))
			if i == 0 {
				require.NoError(t, h.Launch(s, &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(32),
					Work: device.Work{Cycles: cyclesFor(20 * time.Microsecond)}, Label: "between"}))
			}
		}
		return h.Synchronize()
	}))
	var durs []Time
	for _, sp := range d.lastTrace.spans {
		if sp.kind == trackCopy {
			durs = append(durs, sp.end-sp.start)
		}
	}
	assert.Equal(t, []Time{11_000_000, 11_000_000}, durs)
}
