package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// withTileSync is the h100-datasheet device with tile_sync costs c.
func withTileSync(t *testing.T, c TileSyncCosts) *Device {
	t.Helper()
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.TileSync = c
	d, err := New(cfg)
	require.NoError(t, err)
	return d
}

// plainPost posts counter c from every block and says that the plain
// launch has its last argument 0.
type plainPost struct{ postAll }

func (plainPost) PlainArgs(args []device.Arg) []device.Arg {
	out := append([]device.Arg(nil), args...)
	out[len(out)-1] = device.I32(0)
	return out
}

// A synchronized launch is timed from its plain launch's profile point
// when its Sync says what that is: test.k on the two-SM profile, a point
// of 4 blocks at 3000 flops with scalars (1, 7, 0) measured at 4000 ns per
// launch. The launch passes (1, 7, 5), its Sync clears the 5: the point's
// 4000 ns (back_to_back_ns 1000, then one wave of 3000 ns blocks), then
// with post_fraction 0.1 every block (all four in one wave) 300 ns longer. A Sync that does not say (postAll) leaves the model's time,
// 1000 + 1.5 x (1000 + 3000) = 7000 ns.
func TestSyncLaunchTimedFromItsPlainPoint(t *testing.T) {
	src := strings.Replace(testProfile, "ns: [3500, 3600]}", `ns: [3500, 3600]}
      - {grid: 4, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 3000, bytes: 0, launches: 1, ns: [4000], scalars: '4:1 4:7 4:0'}`, 1)
	p, err := ParseProfile([]byte(src), "test.yaml")
	require.NoError(t, err)
	cnt := device.Counter{Buf: device.Buffer{Addr: 1 << 20}}
	launch := func(sync device.BlockSync) *device.Launch {
		return &device.Launch{Kernel: profiledK, Grid: device.D1(4), Block: device.D1(128), Work: device.Work{Flops: 3000},
			Args: []device.Arg{device.I32(1), device.I32(7), device.I32(5)}, Sync: sync}
	}
	for _, tc := range []struct {
		post float64 // post_fraction
		sync device.BlockSync
		want time.Duration
	}{
		{0, plainPost{postAll{cnt}}, 4000 * time.Nanosecond},
		{0.1, plainPost{postAll{cnt}}, 4300 * time.Nanosecond},
		{0, postAll{cnt}, 7000 * time.Nanosecond},
	} {
		cfg, err := LoadConfig("h100-datasheet")
		require.NoError(t, err)
		cfg.Info.SMs = 2
		cfg.TileSync.PostFraction = tc.post
		d, err := New(cfg, WithProfile(p))
		require.NoError(t, err)
		assert.Equal(t, []time.Duration{tc.want}, gatedElapsed(t, d, launch(tc.sync)), "post_fraction %g, %T", tc.post, tc.sync)
	}
}

// syncPairSpans runs a 10 us producer block that posts a counter and a
// 10 us consumer block that waits for it, and returns how long each took
// from the event before it on its stream (stream order: the consumer
// behind the producer on one stream; else the consumer first, on its own
// stream, spinning until the producer posts, and its span is measured from
// the producer's end).
func syncPairSpans(t *testing.T, d *Device, streamOrder bool) (prod, cons time.Duration) {
	t.Helper()
	require.NoError(t, d.Run(func(h device.Host) error {
		cnt, err := h.Malloc(64)
		if err != nil {
			return err
		}
		sp, _ := h.NewStream(device.StreamOptions{})
		sc := sp
		if !streamOrder {
			sc, _ = h.NewStream(device.StreamOptions{})
		}
		e0, _ := h.NewEvent(device.EventOptions{})
		e1, _ := h.NewEvent(device.EventOptions{})
		e2, _ := h.NewEvent(device.EventOptions{})
		p := spinLaunch(1, 1024, 10*time.Microsecond)
		p.Sync = postAll{device.Counter{Buf: cnt}}
		c := spinLaunch(1, 1024, 10*time.Microsecond)
		c.Sync = waitAll{c: device.Counter{Buf: cnt}, target: 1}
		if !streamOrder {
			require.NoError(t, h.Launch(sc, c))
			require.NoError(t, h.Record(e2, sc))
		}
		require.NoError(t, h.Record(e0, sp))
		require.NoError(t, h.Launch(sp, p))
		require.NoError(t, h.Record(e1, sp))
		if streamOrder {
			require.NoError(t, h.Launch(sc, c))
			require.NoError(t, h.Record(e2, sc))
		}
		require.NoError(t, h.Synchronize())
		if prod, err = h.Elapsed(e0, e1); err != nil {
			return err
		}
		cons, err = h.Elapsed(e1, e2)
		return err
	}))
	return prod, cons
}

// Hand-computed against the same runs without tile_sync costs: in stream
// order the producer's 10 us block takes post_fraction (0.1: 1000 ns)
// longer and the consumer's, whose wait is met when it starts,
// poll_fraction (0.05: 500 ns) longer; on two streams the consumer block
// spins, starts release_ns (300) after the producer's post and takes 500 ns
// longer: it ends 800 ns later after the producer's end.
func TestTileSyncCostsPerBlock(t *testing.T) {
	costs := TileSyncCosts{PostFraction: 0.1, PollFraction: 0.05, ReleaseNs: 300}
	p0, c0 := syncPairSpans(t, withTileSync(t, TileSyncCosts{}), true)
	p1, c1 := syncPairSpans(t, withTileSync(t, costs), true)
	assert.Equal(t, 1000*time.Nanosecond, p1-p0, "stream order: the producer posts")
	assert.Equal(t, 500*time.Nanosecond, c1-c0, "stream order: the consumer polls once, its wait met")

	p0, c0 = syncPairSpans(t, withTileSync(t, TileSyncCosts{}), false)
	p1, c1 = syncPairSpans(t, withTileSync(t, costs), false)
	assert.Equal(t, 1000*time.Nanosecond, p1-p0, "two streams: the producer posts")
	assert.Equal(t, 10*time.Microsecond, c0, "no costs: the consumer starts as the producer posts")
	assert.Equal(t, 800*time.Nanosecond, c1-c0, "two streams: released 300 ns late, then polls")
}

func TestTileSyncCostsAreChecked(t *testing.T) {
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.TileSync.ReleaseNs = -1
	_, err = New(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tile_sync.release_ns must not be negative")
	cfg.TileSync.ReleaseNs = 0
	cfg.TileSync.PollFraction = math.NaN()
	_, err = New(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tile_sync.poll_fraction is NaN")
}
