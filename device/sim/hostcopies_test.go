package sim

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// hostCopyRun issues n host-to-device copies of bytes behind a 200 us
// gate kernel, copy i on stream i mod streams (1: back to back on one
// stream; n: each on its own), and returns each copy's span by label.
func hostCopyRun(t *testing.T, cfg *Config, n int, bytes int64, streams int) [][2]Time {
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
		var ss []device.Stream
		for i := 0; i < n; i++ {
			if i < streams {
				s, err := h.NewStream(device.StreamOptions{})
				require.NoError(t, err)
				require.NoError(t, h.Wait(s, open))
				ss = append(ss, s)
			}
			buf, err := h.Malloc(bytes)
			require.NoError(t, err)
			mem, err := h.AllocHost(bytes, true)
			require.NoError(t, err)
			cp := &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: mem, Bytes: bytes, Label: string(rune('a' + i))}
			require.NoError(t, h.Copy(ss[i%streams], cp))
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
		assert.Equal(t, []Time{11 * us, 10400 * us / 1000, 10400 * us / 1000}, durs(hostCopyRun(t, cfg, 3, 500_000, 1)), "duplex %g, back to back", duplex)
		assert.Equal(t, []Time{11 * us, 10700 * us / 1000, 10700 * us / 1000}, durs(hostCopyRun(t, cfg, 3, 500_000, 3)), "duplex %g, spread", duplex)
		cfg.Copy.BackToBackLatencyNs, cfg.Copy.QueuedLatencyNs = 0, 0
		assert.Equal(t, []Time{11 * us, 11 * us, 11 * us}, durs(hostCopyRun(t, cfg, 3, 500_000, 1)), "duplex %g, back to back, no fields", duplex)
		assert.Equal(t, []Time{11 * us, 11 * us, 11 * us}, durs(hostCopyRun(t, cfg, 3, 500_000, 3)), "duplex %g, spread, no fields", duplex)
	}
}

// A copy that finds its engine idle pays the whole latency even when the
// engine's last copy was its own stream's: a kernel between them let the
// engine go idle.
func TestHostCopyAfterAnIdleEnginePaysTheLatency(t *testing.T) {
	cfg := duplexConfig(t, 1.25)
	cfg.Copy.BackToBackLatencyNs = 400
	assert.Equal(t, []Time{11_000_000, 11_000_000}, copyKernelCopy(t, cfg, false))
}

// Hand-computed, as above: a graph of copy, 20 us kernel, copy on one
// chain. The second copy becomes ready 20 us after the first ended, with
// its engine idle since, and pays the whole latency (11 us), as a program
// captured on one stream does on the GPU (each job's copy in behind the
// last job's kernel); a copy ready as its engine's last copy of the launch
// ends pays the graph latency (TestGraphCopiesAfterTheLaunchsFirstPayLess).
func TestGraphCopyAfterAnIdleEnginePaysTheLatency(t *testing.T) {
	cfg := duplexConfig(t, 0)
	cfg.Copy.GraphLatencyNs = 300
	assert.Equal(t, []Time{11_000_000, 11_000_000}, copyKernelCopy(t, cfg, true))
}

// copyKernelCopy runs a 500,000-byte host-to-device copy, a 20 us kernel
// and a second such copy on one stream, issued or captured as one graph
// and launched, and returns the copies' durations.
func copyKernelCopy(t *testing.T, cfg *Config, graph bool) []Time {
	t.Helper()
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		if graph {
			require.NoError(t, h.BeginCapture(s))
		}
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
		if graph {
			g, err := h.EndCapture(s)
			require.NoError(t, err)
			x, err := h.Instantiate(g)
			require.NoError(t, err)
			require.NoError(t, h.GraphLaunch(x, s))
		}
		return h.Synchronize()
	}))
	var durs []Time
	for _, sp := range d.lastTrace.spans {
		if sp.kind == trackCopy {
			durs = append(durs, sp.end-sp.start)
		}
	}
	return durs
}

// graphCopyRun captures n host-to-device copies of bytes as parallel
// branches (spread) or one chain, launches the graph launches times back
// to back behind a 200 us gate kernel, and returns every copy's duration
// in the order they start.
func graphCopyRun(t *testing.T, cfg *Config, n, launches int, bytes int64, spread bool) []Time {
	t.Helper()
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		var streams []device.Stream
		for i := 0; i <= n+1; i++ {
			s, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			streams = append(streams, s)
		}
		origin, gate := streams[0], streams[n+1]
		fork, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		open, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		require.NoError(t, h.BeginCapture(origin))
		require.NoError(t, h.Record(fork, origin))
		for i := 0; i < n; i++ {
			buf, err := h.Malloc(bytes)
			require.NoError(t, err)
			mem, err := h.AllocHost(bytes, true)
			require.NoError(t, err)
			s := origin
			if spread {
				s = streams[i+1]
				require.NoError(t, h.Wait(s, fork))
			}
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: mem, Bytes: bytes, Label: "copy"}))
			if spread {
				join, err := h.NewEvent(device.EventOptions{})
				require.NoError(t, err)
				require.NoError(t, h.Record(join, s))
				require.NoError(t, h.Wait(origin, join))
			}
		}
		g, err := h.EndCapture(origin)
		require.NoError(t, err)
		x, err := h.Instantiate(g)
		require.NoError(t, err)
		require.NoError(t, h.Launch(gate, &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(32),
			Work: device.Work{Cycles: cyclesFor(200 * time.Microsecond)}, Label: "gate"}))
		require.NoError(t, h.Record(open, gate))
		require.NoError(t, h.Wait(origin, open))
		for range launches {
			require.NoError(t, h.GraphLaunch(x, origin))
		}
		return h.Synchronize()
	}))
	var spans [][2]Time
	for _, s := range d.lastTrace.spans {
		if s.kind == trackCopy {
			spans = append(spans, [2]Time{s.start, s.end})
		}
	}
	slices.SortFunc(spans, func(a, b [2]Time) int { return cmp.Compare(a[0], b[0]) })
	var durs []Time
	for _, s := range spans {
		durs = append(durs, s[1]-s[0])
	}
	return durs
}

// Hand-computed: latency 1 us, graph latency 0.3 us, 500,000 bytes move
// in 10 us. In each launch of a graph of three copies, parallel or
// chained, the first copy takes 11 us and the two after it 10.3 us; the
// next launch's first copy pays the whole latency again. Without the
// field every copy takes 11 us.
func TestGraphCopiesAfterTheLaunchsFirstPayLess(t *testing.T) {
	const us = Time(1_000_000) // ps
	cfg := duplexConfig(t, 0)
	cfg.Copy.GraphLatencyNs = 300
	short := 10300 * us / 1000
	for _, spread := range []bool{true, false} {
		assert.Equal(t, []Time{11 * us, short, short, 11 * us, short, short}, graphCopyRun(t, cfg, 3, 2, 500_000, spread), "spread %v", spread)
	}
	cfg.Copy.GraphLatencyNs = 0
	assert.Equal(t, []Time{11 * us, 11 * us, 11 * us}, graphCopyRun(t, cfg, 3, 1, 500_000, true), "no field")
}

// Hand-computed: latency 1 us, back to back 0.4 us, 500,000 bytes move in
// 10 us. Copies a and c on stream A, b and d on stream B, issued a, b, c,
// d behind a gate. In issue order each waits for the engine behind another
// stream's copy and pays the whole latency: a, b, c, d end at 11, 22, 33,
// 44 us after the gate. With copy.stream_runs the engine serves c, issued
// by A as a ends, before b: a, c, b, d end at 11, 21.4, 32.4, 42.8.
func TestStreamRunsServeAStreamsCopiesInARun(t *testing.T) {
	const us = Time(1_000_000) // ps
	run := func(runs bool) []Time {
		cfg := duplexConfig(t, 1.25)
		cfg.Copy.BackToBackLatencyNs, cfg.Copy.StreamRuns = 400, runs
		spans := hostCopyRun(t, cfg, 4, 500_000, 2)
		var ends []Time
		for _, s := range spans {
			ends = append(ends, s[1]-spans[0][0])
		}
		return ends
	}
	assert.Equal(t, []Time{11 * us, 22 * us, 33 * us, 44 * us}, run(false), "issue order")
	assert.Equal(t, []Time{11 * us, 32400 * us / 1000, 21400 * us / 1000, 42800 * us / 1000}, run(true), "stream runs")
}
