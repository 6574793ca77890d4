package sim

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// The duplex tests run on the H100 datasheet config with round figures:
// copy latency 1 us, 50 GB/s each way (50 bytes/ns), duplex slowdown
// 1.25, pageable copies at 25 GB/s. A copy of 500,000 bytes moves in
// 10 us alone: 11 us with its latency.
func duplexConfig(t *testing.T, duplex float64) *Config {
	c := h100Config(t)
	c.Copy.LatencyNs = 1000
	c.Copy.HtoDGBps, c.Copy.DtoHGBps, c.Copy.PageableGBps = 50, 50, 25
	c.Copy.DuplexSlowdown = duplex
	return c
}

// duplexCopy is one copy of a duplex run: its direction, bytes and
// whether its host memory is pinned.
type duplexCopy struct {
	kind   device.CopyKind
	bytes  int64
	pinned bool
}

// duplexRun issues the copies, each on its own stream, all behind an
// event recorded after a 200 us gate kernel (so that they reach their
// engines at one instant), and returns each copy's start and end.
func duplexRun(t *testing.T, cfg *Config, copies ...duplexCopy) [][2]Time {
	t.Helper()
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		cps := make([]*device.Copy, len(copies))
		streams := make([]device.Stream, len(copies))
		for i, c := range copies {
			s, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			buf, err := h.Malloc(c.bytes)
			require.NoError(t, err)
			mem, err := h.AllocHost(c.bytes, c.pinned)
			require.NoError(t, err)
			cps[i], streams[i] = &device.Copy{Kind: c.kind, Host: mem, Bytes: c.bytes, Label: string(rune('a' + i))}, s
			if c.kind == device.HostToDevice {
				cps[i].Dst = buf
			} else {
				cps[i].Src = buf
			}
		}
		gate, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		open, err := h.NewEvent(device.EventOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Launch(gate, &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(32),
			Work: device.Work{Cycles: cyclesFor(200 * time.Microsecond)}, Label: "gate"}))
		require.NoError(t, h.Record(open, gate))
		for i := range cps {
			require.NoError(t, h.Wait(streams[i], open))
			require.NoError(t, h.Copy(streams[i], cps[i]))
		}
		return h.Synchronize()
	}))
	return copySpans(t, d, len(copies))
}

// copySpans is the start and end of each of the n copies of d's last run,
// by label ("a", "b", ...), every one of them required to have run.
func copySpans(t *testing.T, d *Device, n int) [][2]Time {
	t.Helper()
	spans := make([][2]Time, n)
	for _, s := range d.lastTrace.spans {
		if s.kind == trackCopy {
			spans[s.name[0]-'a'] = [2]Time{s.start, s.end}
		}
	}
	for i, s := range spans {
		require.NotZero(t, s[1], "copy %d ran", i)
	}
	return spans
}

var (
	htod10 = duplexCopy{device.HostToDevice, 500000, true}
	dtoh10 = duplexCopy{device.DeviceToHost, 500000, true}
)

func TestDuplexSlowsBothDirectionsAtOnce(t *testing.T) {
	// Both move from T = start + 1 us at 1/1.25 of their rate: 10 us of
	// bytes take 12.5 us each; with the field left out, 10 us.
	for _, tc := range []struct {
		duplex float64
		span   Time
	}{{1.25, 27 * us / 2}, {0, 11 * us}, {1, 11 * us}} {
		sp := duplexRun(t, duplexConfig(t, tc.duplex), htod10, dtoh10)
		require.Equal(t, sp[0][0], sp[1][0], "both reach their engines at once")
		assert.Equal(t, tc.span, sp[0][1]-sp[0][0], "host to device, duplex %g", tc.duplex)
		assert.Equal(t, tc.span, sp[1][1]-sp[1][0], "device to host, duplex %g", tc.duplex)
	}
}

func TestDuplexRetimesTheLongerCopy(t *testing.T) {
	// A 20 us host-to-device copy beside a 10 us device-to-host one, both
	// moving from T = start + 1 us: the shorter ends at T + 12.5 us, when
	// the longer has moved 10 us of its 20; the rest alone takes 10 us:
	// T + 22.5 us (alone T + 20).
	sp := duplexRun(t, duplexConfig(t, 1.25), duplexCopy{device.HostToDevice, 1000000, true}, dtoh10)
	assert.Equal(t, 27*us/2, sp[1][1]-sp[1][0], "the shorter copy")
	assert.Equal(t, 47*us/2, sp[0][1]-sp[0][0], "the longer copy")
}

func TestDuplexLeavesOneDirectionTakingTurns(t *testing.T) {
	// Two copies the same way take turns on their engine at full speed, as
	// without the field (calibrate: 1.00x twice one alone).
	for _, c := range []duplexCopy{htod10, dtoh10} {
		sp := duplexRun(t, duplexConfig(t, 1.25), c, c)
		assert.Equal(t, 11*us, sp[0][1]-sp[0][0], "%v, first", c.kind)
		assert.Equal(t, sp[0][1], sp[1][0], "%v: the second starts when the first ends", c.kind)
		assert.Equal(t, 11*us, sp[1][1]-sp[1][0], "%v, second", c.kind)
	}
}

func TestDuplexQueuedCopyMeetsTheOtherDirection(t *testing.T) {
	// Two host-to-device copies queue on their engine beside one 30 us
	// device-to-host copy (1,500,000 bytes), all from T = start + 1 us
	// moving: the first host copy's 10 us take 12.5 (ends T + 12.5), while
	// the device copy moves 10 of its 30; the second host copy waits its
	// latency (T + 12.5 to T + 13.5, the device copy alone moves 1 us
	// more: 19 left) and both move slow again: the second host copy's
	// 10 us take 12.5 (ends T + 26), the device copy has moved 10 more,
	// 9 left alone: T + 35 (alone T + 30).
	sp := duplexRun(t, duplexConfig(t, 1.25), htod10, htod10, duplexCopy{device.DeviceToHost, 1500000, true})
	start := sp[0][0]
	assert.Equal(t, start+27*us/2, sp[0][1], "first host copy")
	assert.Equal(t, start+27*us, sp[1][1], "second host copy")
	assert.Equal(t, start+36*us, sp[2][1], "device copy")
}

func TestDuplexLeavesPageableCopies(t *testing.T) {
	// A pageable copy (staged by the driver, 25 GB/s here: 20 us) beside a
	// pinned one the other way: neither slows (not measured on a GPU).
	sp := duplexRun(t, duplexConfig(t, 1.25), dtoh10, duplexCopy{device.HostToDevice, 500000, false})
	assert.Equal(t, 11*us, sp[0][1]-sp[0][0], "pinned")
	assert.Equal(t, 21*us, sp[1][1]-sp[1][0], "pageable")
}

func TestDuplexNeedsTwoEngines(t *testing.T) {
	// With one copy engine both directions take turns on it: no duplex.
	c := duplexConfig(t, 1.25)
	c.Info.CopyEngines = 1
	sp := duplexRun(t, c, htod10, dtoh10)
	assert.Equal(t, 11*us, sp[0][1]-sp[0][0])
	assert.Equal(t, sp[0][1], sp[1][0])
	assert.Equal(t, 11*us, sp[1][1]-sp[1][0])
}

func TestDuplexSlowdownIsChecked(t *testing.T) {
	for _, v := range []float64{0.5, -1, 5, math.NaN(), math.Inf(1)} {
		_, err := New(duplexConfig(t, v))
		require.Error(t, err, "%g", v)
		assert.Contains(t, err.Error(), "copy.duplex_slowdown", "%g", v)
	}
}

func TestDuplexIsDeterministic(t *testing.T) {
	cfg := duplexConfig(t, 1.12)
	run := func() [][2]Time {
		return duplexRun(t, cfg, htod10, dtoh10, duplexCopy{device.HostToDevice, 777777, true}, duplexCopy{device.DeviceToHost, 333333, true}, htod10)
	}
	assert.Equal(t, run(), run())
}
