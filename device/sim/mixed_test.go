package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// Two launches of test.own share one SM (4 warps each; factor 1 at 4
// warps, 1.5 at 8): an older one block of 21000 ns alone (20000 flops),
// started behind a 20 us gate, then, issued 30 us of host time later on
// another stream, a younger one of 1000 ns (0 flops). The younger reads
// its curve at 8 warps (the older's count 1): 1500 ns, whatever the
// weight. With sm.younger_kernel_weight 0.5 and the rate model the older
// reads 4 + 0.5 x 4 = 6 warps (1.25) meanwhile: those 1500 ns do
// 1500/26250 of its work where alone they would do 1500/21000, so it ends
// 1500 - 1200 = 300 ns later than alone; with every warp counting 1 (at
// 1.5) 500 ns later; without the rate model its time is fixed when it is
// placed alone (21000 ns), whatever the weight.
func TestYoungerKernelCountsItsWeightInTheOlderOnesFactor(t *testing.T) {
	run := func(retime, weight float64) (older, younger time.Duration) {
		d := rateDevice(t, oneSMProfile, 1, 0, retime)
		d.cfg.SM.YoungerKernelWeight = weight
		r := olderThenYounger(t, d, padded("own", 1, 20000), padded("own", 1, 0))
		return r.older, r.younger
	}
	alone, _ := run(0, 0)
	_, younger := run(0, 0)
	for _, tc := range []struct {
		retime, weight float64
		late           time.Duration
	}{{0.001, 0.5, 300}, {0.001, 0, 500}, {0, 0.5, 0}, {0, 0, 0}} {
		o, y := run(tc.retime, tc.weight)
		assert.Equal(t, tc.late*time.Nanosecond, o-alone, "retime %g, weight %g", tc.retime, tc.weight)
		assert.Equal(t, younger, y, "retime %g, weight %g", tc.retime, tc.weight)
	}
	d := rateDevice(t, oneSMProfile, 1, 0, 0)
	lone := olderThenYounger(t, d, padded("own", 1, 0), padded("own", 1, 0)).younger // the older ends before the younger comes
	assert.Equal(t, 500*time.Nanosecond, younger-lone, "the younger takes 1500 ns beside the older, 1000 alone")
}

// olderYounger is what olderThenYounger measures of its two launches.
type olderYounger struct {
	older      time.Duration // the older's end from the gate's
	younger    time.Duration // the younger's Elapsed between records around it
	youngerEnd time.Duration // the younger's end from the gate's
}

// olderThenYounger runs a behind a 20 us gate on one stream, then issues
// b on another stream 30 us of host time later: the two-kernel meeting of
// the co-residency tests (mixed, carve-out).
func olderThenYounger(t *testing.T, d *Device, a, b *device.Launch) (r olderYounger) {
	t.Helper()
	require.NoError(t, d.Run(func(h device.Host) error {
		var ev [4]device.Event
		for i := range ev {
			ev[i], _ = h.NewEvent(device.EventOptions{})
		}
		s0, _ := h.NewStream(device.StreamOptions{})
		s1, _ := h.NewStream(device.StreamOptions{})
		require.NoError(t, h.Launch(s0, spinLaunch(1, 32, 20*time.Microsecond)))
		require.NoError(t, h.Record(ev[0], s0))
		require.NoError(t, h.Launch(s0, a))
		require.NoError(t, h.Record(ev[1], s0))
		h.Spend(30 * time.Microsecond)
		require.NoError(t, h.Record(ev[2], s1))
		require.NoError(t, h.Launch(s1, b))
		require.NoError(t, h.Record(ev[3], s1))
		require.NoError(t, h.Synchronize())
		var err error
		if r.older, err = h.Elapsed(ev[0], ev[1]); err != nil {
			return err
		}
		if r.younger, err = h.Elapsed(ev[2], ev[3]); err != nil {
			return err
		}
		r.youngerEnd, err = h.Elapsed(ev[0], ev[3])
		return err
	}))
	return r
}

// heavyProfile adds to rateProfile's kernels test.heavy, whose curve rises
// twice as fast as test.own's (factor 2 at 8 warps: pressure 1/4 a warp
// against 0.5/4).
var heavyProfile = oneSMProfile + paddedKernelYAML("test.heavy", 0, 2)

// An older heavy kernel's warps count (p_heavy / p_own)^a = 2^a in a
// younger test.own block's factor (the rate model off: fixed when it is
// placed): a = 1, 4 + 4 x 2 = 12 warps, along own's last segment 1.5 +
// 4/4 x 0.5 = 2.0: 2000 ns against 1000 alone; a = 0.5, 4 + 4 x 1.4142 =
// 9.657 warps: 1.707, 1707 ns; a = 0 (off), 8 warps: 1500 ns. The other
// way round (own older, heavy younger) the lighter older's warps count 1:
// heavy at 8 warps, 2000 ns, whatever a; and so do an older launch's of
// the same function (heavy beside heavy: 2000 ns).
func TestOlderHeavyKernelCountsItsPressure(t *testing.T) {
	run := func(a float64, older, younger string) time.Duration {
		d := rateDevice(t, heavyProfile, 1, 0, 0)
		d.cfg.SM.OlderPressureExponent = a
		return olderThenYounger(t, d, padded(older, 1, 20000), padded(younger, 1, 0)).younger
	}
	d := rateDevice(t, heavyProfile, 1, 0, 0)
	lone := olderThenYounger(t, d, padded("own", 1, 0), padded("own", 1, 0)).younger // the older ends before the younger comes
	for _, tc := range []struct {
		a              float64
		older, younger string
		beside         time.Duration
	}{
		{1, "heavy", "own", 1000}, {0.5, "heavy", "own", 707}, {0, "heavy", "own", 500},
		{1, "own", "heavy", 1000}, {0, "own", "heavy", 1000}, {1, "heavy", "heavy", 1000},
	} {
		assert.InDelta(t, float64(tc.beside), float64(run(tc.a, tc.older, tc.younger)-lone), 1, "%+v", tc)
	}
}
