package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// coldProfile is testProfile with an effective L2 of 4 MB and a kernel
// test.c of 1000 ns a block warm and 0.01 ns per byte of its Work cold:
// 100 KB a block is 1000 ns more when none of its reads is in L2.
var coldProfile = strings.Replace(testProfile, "kernels:\n", `effective_l2_bytes: 4000000
kernels:
  - kernel: test.c
    regs: 32
    static_shared: 0
    model: {ns: 1000, ns_per_cycle: 0, ns_per_flop: 0, ns_per_byte: 0, cold_ns_per_byte: 0.01, roofline: false, gpu_share: 0, coresidency: []}
    fit: {points: 0, median_pct: 0, max_pct: 0, spread_pct: 0}
    points: []
`, 1)

// l2Step is a kernel of test.c (two blocks, one per SM, alone) over args,
// or a device-to-device copy when cp is set.
type l2Step struct {
	args []device.Arg
	cp   *device.Copy
}

// l2Elapsed runs steps in order on one stream over buffers of the sizes
// given (bufs[i] is buffer i, for the steps' arguments) and returns each
// kernel's elapsed time from the record before it: back_to_back_ns (1000)
// plus its block time.
func l2Elapsed(t *testing.T, d *Device, sizes []int64, steps func(bufs []device.Buffer) []l2Step) []time.Duration {
	t.Helper()
	var out []time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		bufs := make([]device.Buffer, len(sizes))
		for i, n := range sizes {
			bufs[i], err = h.Malloc(n)
			require.NoError(t, err)
		}
		// A gate, so that every step is queued before the first runs.
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, 500*time.Microsecond)))
		var evs [][2]device.Event
		for _, st := range steps(bufs) {
			if st.cp != nil {
				require.NoError(t, h.Copy(s, st.cp))
				continue
			}
			a, _ := h.NewEvent(device.EventOptions{})
			b, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.Record(a, s))
			require.NoError(t, h.Launch(s, &device.Launch{Kernel: &device.Kernel{Module: "test", Name: "c", Regs: 32},
				Grid: device.D1(2), Block: device.D1(128), Args: st.args, Work: device.Work{Bytes: 100e3}}))
			require.NoError(t, h.Record(b, s))
			evs = append(evs, [2]device.Event{a, b})
		}
		require.NoError(t, h.Synchronize())
		for _, e := range evs {
			el, err := h.Elapsed(e[0], e[1])
			require.NoError(t, err)
			out = append(out, el)
		}
		return nil
	}))
	return out
}

const (
	warmNs = 2000 * time.Nanosecond // back-to-back 1000 + block 1000
	coldNs = 3000 * time.Nanosecond // + 0.01 x 100 KB
)

func reads(bs ...device.Buffer) []l2Step {
	var st []l2Step
	for _, b := range bs {
		st = append(st, l2Step{args: []device.Arg{device.In(b)}})
	}
	return st
}

// Two kernels reading one buffer: the first cold, the second warm; a
// kernel reading what the one before wrote, warm.
func TestL2SecondReaderIsWarm(t *testing.T) {
	d := twoSMDeviceWith(t, coldProfile)
	got := l2Elapsed(t, d, []int64{1e6, 1e6}, func(b []device.Buffer) []l2Step {
		return append(reads(b[0], b[0]), l2Step{args: []device.Arg{device.In(b[0]), device.Out(b[1])}}, l2Step{args: []device.Arg{device.In(b[1])}})
	})
	assert.Equal(t, []time.Duration{coldNs, warmNs, warmNs, warmNs}, got)
}

// Buffers of a quarter of the L2 each: four fit, so a buffer read again
// after three others is warm, after four others cold; after four others
// and one of an eighth of the L2, half of it is left: half the cold term.
func TestL2HoldsTheMostRecentBytes(t *testing.T) {
	d := twoSMDeviceWith(t, coldProfile)
	q := int64(1e6)
	got := l2Elapsed(t, d, []int64{q, q, q, q, q, q / 2}, func(b []device.Buffer) []l2Step {
		return reads(b[0], b[1], b[2], b[3], b[0], b[4], b[1], b[5], b[3])
	})
	// b0 b1 b2 b3 fill the L2 (least recent first); b0 again is warm and
	// most recent: b1 b2 b3 b0. b4 evicts b1: b2 b3 b0 b4; b1, cold, evicts
	// b2: b3 b0 b4 b1; b5 (an eighth) takes half of b3: b3/2 b0 b4 b1 b5;
	// b3 again: half cold.
	assert.Equal(t, []time.Duration{coldNs, coldNs, coldNs, coldNs, warmNs, coldNs, coldNs, coldNs, warmNs + 500*time.Nanosecond}, got)
}

// Ten kernels over ten buffers of a quarter of the L2, twice round: the
// second round finds none of them (each was evicted by the four after it).
func TestL2TenBuffersRoundTwiceAreCold(t *testing.T) {
	d := twoSMDeviceWith(t, coldProfile)
	sizes := make([]int64, 10)
	for i := range sizes {
		sizes[i] = 1e6
	}
	got := l2Elapsed(t, d, sizes, func(b []device.Buffer) []l2Step { return append(reads(b...), reads(b...)...) })
	for i, g := range got {
		assert.Equal(t, coldNs, g, "kernel %d", i)
	}
}

// A device-to-device copy moves its bytes through L2: one of twice the L2
// evicts what a kernel read, as `gpusched profile --cold-l2` does.
func TestL2CopyEvicts(t *testing.T) {
	d := twoSMDeviceWith(t, coldProfile)
	got := l2Elapsed(t, d, []int64{1e6, 8e6, 8e6}, func(b []device.Buffer) []l2Step {
		st := reads(b[0], b[0])
		st = append(st, l2Step{cp: &device.Copy{Kind: device.DeviceToDevice, Src: b[1], Dst: b[2], Bytes: 8e6}})
		return append(st, reads(b[0])...)
	})
	assert.Equal(t, []time.Duration{coldNs, warmNs, coldNs}, got)
}

// Without a cold term in the profile nothing is tracked: test.k's times
// do not move (TestProfiledBlockTimes), and the device's L2 stays empty.
func TestL2OffWithoutColdTerms(t *testing.T) {
	d := twoSMDevice(t)
	require.False(t, d.prof.cold)
	_ = gatedElapsed(t, d, &device.Launch{Kernel: profiledK, Grid: device.D1(2), Block: device.D1(128), Work: device.Work{Flops: 1000}})
	assert.Empty(t, d.l2.lru)
}

// A launch's share of its cold term: all of it within the effective L2,
// none beyond the L2's size, linear between; all of it without sizes.
func TestColdShare(t *testing.T) {
	p := &Profile{L2Bytes: 50e6, EffectiveL2Bytes: 25e6}
	assert.Equal(t, 1.0, p.ColdShare(10e6))
	assert.Equal(t, 1.0, p.ColdShare(25e6))
	assert.InDelta(t, 0.4, p.ColdShare(40e6), 1e-12)
	assert.Equal(t, 0.0, p.ColdShare(50e6))
	assert.Equal(t, 0.0, p.ColdShare(80e6))
	assert.Equal(t, 1.0, (&Profile{}).ColdShare(80e6))
	assert.Equal(t, 0.0, (&Profile{EffectiveL2Bytes: 25e6}).ColdShare(30e6))
	assert.InDelta(t, 0.25, (&Profile{L2Bytes: 40e6}).ColdShare(30e6), 1e-12)
}

// A launch moving more bytes than the L2 holds (blocks x Work.Bytes over
// l2_bytes) pays no cold term: its measured time is from device memory
// already (test.c's hand-written model has no points, so no largest point
// to extrapolate from: TestL2BeyondTheLargestPointPaysTheLostHits).
func TestL2BeyondTheCacheIsNotCold(t *testing.T) {
	src := strings.Replace(coldProfile, "effective_l2_bytes: 4000000\n", "l2_bytes: 150000\neffective_l2_bytes: 100000\n", 1)
	d := twoSMDeviceWith(t, src)
	// 2 blocks x 100 KB = 200 KB > the 150 KB L2: warm time only.
	got := l2Elapsed(t, d, []int64{1e6}, func(b []device.Buffer) []l2Step { return reads(b[0]) })
	assert.Equal(t, []time.Duration{warmNs}, got)
}

// pointProfile is coldProfile with an effective L2 of 100 KB, an L2 of
// 300 KB and test.c fitted on one point of grid blocks of bytes each.
func pointProfile(grid int, bytes float64) string {
	src := strings.Replace(coldProfile, "effective_l2_bytes: 4000000\n", "l2_bytes: 300000\neffective_l2_bytes: 100000\n", 1)
	return strings.Replace(src, "    points: []\n", fmt.Sprintf(`    points:
      - {grid: %d, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 0, bytes: %g, launches: 8, ns: [1000]}
`, grid, bytes), 1)
}

// A launch beyond the largest point its kernel's model was fitted on pays,
// besides the cold share of its bytes not resident, the back-to-back hits
// the model's warm terms assumed at that point and the launch no longer
// gets: ColdShare is 1 at the 100 KB point and 0.5 at the launch's 200 KB
// (2 blocks x 100 KB).
func TestL2BeyondTheLargestPointPaysTheLostHits(t *testing.T) {
	d := twoSMDeviceWith(t, pointProfile(1, 100e3))
	// First read of the 200 KB buffer: all missed, 0.5 of the 1000 ns term
	// for its bytes and 0.5 lost. Second: the L2 (100 KB) holds half of
	// it, so 0.5 x 0.5 + 0.5 lost = 750 ns.
	got := l2Elapsed(t, d, []int64{200e3}, func(b []device.Buffer) []l2Step { return reads(b[0], b[0]) })
	assert.Equal(t, []time.Duration{coldNs, warmNs + 750*time.Nanosecond}, got)
}

// Within its largest point (2 blocks of 150 KB) the same launch pays only
// the share of its bytes not resident: 0.5 x 1, then 0.5 x 0.5.
func TestL2WithinTheLargestPointPaysNoLostHits(t *testing.T) {
	d := twoSMDeviceWith(t, pointProfile(2, 150e3))
	got := l2Elapsed(t, d, []int64{200e3}, func(b []device.Buffer) []l2Step { return reads(b[0], b[0]) })
	assert.Equal(t, []time.Duration{warmNs + 500*time.Nanosecond, warmNs + 250*time.Nanosecond}, got)
}

// inSlice is a read of n bytes of b from off.
func inSlice(b device.Buffer, off, n int64) device.Arg {
	a := device.In(b)
	a.Off, a.Len = off, n
	return a
}

// A DNN's layers read their own slices of one weights buffer (issue #18,
// session 16): a slice is cold until it is read, however much of the
// buffer's other slices is resident; the whole buffer is warm once both
// its halves were read; a slice of a buffer written whole is warm; half a
// slice resident is half the cold term.
func TestL2SlicesOfOneBufferAreResidentByRange(t *testing.T) {
	d := twoSMDeviceWith(t, coldProfile)
	got := l2Elapsed(t, d, []int64{2e6, 1e6}, func(b []device.Buffer) []l2Step {
		return []l2Step{
			{args: []device.Arg{inSlice(b[0], 0, 1e6)}},     // cold
			{args: []device.Arg{inSlice(b[0], 1e6, 1e6)}},   // another slice: cold
			{args: []device.Arg{inSlice(b[0], 0, 1e6)}},     // read again: warm
			{args: []device.Arg{device.In(b[0])}},           // both halves resident: warm
			{args: []device.Arg{device.Out(b[1])}},          // written whole (reads nothing: warm)
			{args: []device.Arg{inSlice(b[1], 2.5e5, 5e5)}}, // a slice of it: warm
		}
	})
	assert.Equal(t, []time.Duration{coldNs, coldNs, warmNs, warmNs, warmNs, warmNs}, got)
}

// Ranges overlapping a resident one pay only for their bytes outside it,
// and the oldest bytes go first: after [0,2MB) and [3MB,5MB) of a 6 MB
// buffer fill the 4 MB L2, reading [1MB,3MB) finds half of it resident
// (half the cold term) and, 5 MB touched, evicts the oldest 1 MB, [0,1MB).
func TestL2OverlappingRangesPayForTheirMissingBytes(t *testing.T) {
	d := twoSMDeviceWith(t, coldProfile)
	got := l2Elapsed(t, d, []int64{6e6}, func(b []device.Buffer) []l2Step {
		return []l2Step{
			{args: []device.Arg{inSlice(b[0], 0, 2e6)}},
			{args: []device.Arg{inSlice(b[0], 3e6, 2e6)}},
			{args: []device.Arg{inSlice(b[0], 1e6, 2e6)}}, // [1,2) resident, [2,3) not
			{args: []device.Arg{inSlice(b[0], 0, 1e6)}},   // evicted: cold
		}
	})
	assert.Equal(t, []time.Duration{coldNs, coldNs, warmNs + 500*time.Nanosecond, coldNs}, got)
}
