package sim

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// testProfile is a profile of kernel test.k on a 2-SM device: 1 us plus
// 1 ns per flop alone; 1.5x with 8 resident warps, 2.5x with 16.
const testProfile = `device: test GPU
sms: 2
source: hand-written
back_to_back_ns: 1000
min_block_ns: 200
default_warp_slope: 0.1
kernels:
  - kernel: test.k
    regs: 32
    static_shared: 0
    model:
      ns: 1000
      ns_per_cycle: 0
      ns_per_flop: 1
      ns_per_byte: 0
      roofline: false
      gpu_share: 0
      coresidency:
        - {warps: 4, factor: 1}
        - {warps: 8, factor: 1.5}
        - {warps: 16, factor: 2.5}
    fit: {points: 1, median_pct: 0, max_pct: 0, spread_pct: 0}
    points:
      - {grid: 4, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 2000, bytes: 0, launches: 1, ns: [3500, 3600]}
  - kernel: test.flat
    regs: 32
    static_shared: 0
    model: {ns: 500, ns_per_cycle: 0, ns_per_flop: 0, ns_per_byte: 0, roofline: false, gpu_share: 0, coresidency: []}
    fit: {points: 0, median_pct: 0, max_pct: 0, spread_pct: 0}
    points: []
  - kernel: test.g
    regs: 32
    static_shared: 0
    model: {ns: 1000, ns_per_cycle: 0, ns_per_flop: 1, ns_per_byte: 0, roofline: false, gpu_share: 1, coresidency: [{warps: 4, factor: 1}, {warps: 8, factor: 1.5}]}
    fit: {points: 0, median_pct: 0, max_pct: 0, spread_pct: 0}
    points: []
`

func TestProfileParsesAndRoundTrips(t *testing.T) {
	p, err := ParseProfile([]byte(testProfile), "test.yaml")
	require.NoError(t, err)
	require.Len(t, p.Kernels, 3)
	assert.Equal(t, "test.k", p.Kernels[0].Kernel)
	assert.Equal(t, 3550.0, p.Kernels[0].Points[0].Median())
	assert.InDelta(t, 100.0/3550, p.Kernels[0].Points[0].Spread(), 1e-12)
	out, err := p.Marshal()
	require.NoError(t, err)
	back, err := ParseProfile(out, "marshalled")
	require.NoError(t, err)
	assert.Equal(t, p, back)
	assert.Contains(t, string(out), "- {grid: 4, threads: 128,", "a point per line")
}

func TestProfileParsingIsStrict(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown field in a point", "launches: 1,", "launches: 1, lunches: 2,", "test.yaml:24: unknown field kernels[0].points[0].lunches"},
		{"missing field", "    static_shared: 0\n    model:\n      ns: 1000", "    model:\n      ns: 1000", "test.yaml:8: missing field kernels[0].static_shared"},
		{"negative coefficient", "ns_per_flop: 1", "ns_per_flop: -1", "test.yaml:14: kernels[0].model.ns_per_flop: must be finite and not negative, got -1"},
		{"not a number", "ns_per_flop: 1", "ns_per_flop: .nan", "test.yaml:14: kernels[0].model.ns_per_flop: must be finite and not negative, got NaN"},
		{"curve out of order", "{warps: 16, factor: 2.5}", "{warps: 8, factor: 2.5}", "test.yaml:21: kernels[0].model.coresidency[2]: warps must increase, got 8 after 8"},
		{"bad kernel name", "kernel: test.flat", "kernel: flat", "test.yaml:25: kernels[1].kernel: must be module.name, got \"flat\""},
		{"twice", "kernel: test.flat", "kernel: test.k", "test.yaml:25: kernels[1].kernel: kernel test.k is profiled twice"},
		{"no samples", "ns: [3500, 3600]", "ns: []", "test.yaml:24: kernels[0].points[0]: ns lists no sample"},
		{"a launch measured twice", "ns: [3500, 3600]}", "ns: [3500, 3600]}\n      - {grid: 4, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 2000, bytes: 0, launches: 2, ns: [1]}",
			"test.yaml:25: kernels[0].points[1]: measures the same launch as points[0]"},
		{"scalars not as written", "ns: [3500, 3600]}", "ns: [3500, 3600], scalars: '4:07 4:1'}", `test.yaml:24: kernels[0].points[0]: scalars "4:07 4:1": write it "4:7 4:1"`},
		{"a 2-byte scalar", "ns: [3500, 3600]}", "ns: [3500, 3600], scalars: '2:1'}", `test.yaml:24: kernels[0].points[0]: scalars "2:1": "2:1" is not SIZE:BITS`},
		{"a launch with its scalars measured twice", "ns: [3500, 3600]}", "ns: [3500, 3600], scalars: '4:1'}\n      - {grid: 4, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 2000, bytes: 0, launches: 2, ns: [1], scalars: '4:1'}",
			"test.yaml:25: kernels[0].points[1]: measures the same launch as points[0]"},
		{"wrong type", "sms: 2", "sms: two", "test.yaml: yaml: unmarshal errors:\n  line 2"},
		{"points not a list", "    points: []", "    points: {}", "test.yaml:30: kernels[1].points must be a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(testProfile, tc.old, tc.new, 1)
			require.NotEqual(t, testProfile, src)
			_, err := ParseProfile([]byte(src), "test.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// twoSMDevice is the h100 config cut to 2 SMs, with the test profile.
func twoSMDevice(t *testing.T) *Device { t.Helper(); return twoSMDeviceWith(t, testProfile) }

// twoSMDeviceWith is twoSMDevice with profile src.
func twoSMDeviceWith(t *testing.T, src string) *Device {
	t.Helper()
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.Info.SMs = 2
	p, err := ParseProfile([]byte(src), "test.yaml")
	require.NoError(t, err)
	d, err := New(cfg, WithProfile(p))
	require.NoError(t, err)
	return d
}

var profiledK = &device.Kernel{Module: "test", Name: "k", Regs: 32}

// gatedElapsed runs each launch on its own stream behind a 20 us gate on
// the first, all released at once, and returns each stream's Elapsed from
// the gate's end to its kernel's end.
func gatedElapsed(t *testing.T, d *Device, ls ...*device.Launch) []time.Duration {
	out := make([]time.Duration, len(ls))
	require.NoError(t, d.Run(func(h device.Host) error {
		var ss []device.Stream
		var e0, e1 []device.Event
		fork, _ := h.NewEvent(device.EventOptions{})
		for range ls {
			s, _ := h.NewStream(device.StreamOptions{})
			a, _ := h.NewEvent(device.EventOptions{})
			b, _ := h.NewEvent(device.EventOptions{})
			ss, e0, e1 = append(ss, s), append(e0, a), append(e1, b)
		}
		require.NoError(t, h.Launch(ss[0], spinLaunch(1, 32, 20*time.Microsecond)))
		require.NoError(t, h.Record(fork, ss[0]))
		for i, l := range ls {
			require.NoError(t, h.Wait(ss[i], fork))
			require.NoError(t, h.Record(e0[i], ss[i]))
			require.NoError(t, h.Launch(ss[i], l))
			require.NoError(t, h.Record(e1[i], ss[i]))
		}
		require.NoError(t, h.Synchronize())
		for i := range ls {
			var err error
			if out[i], err = h.Elapsed(e0[i], e1[i]); err != nil {
				return err
			}
		}
		return nil
	}))
	return out
}

// The co-residency model against hand-computed timelines. test.k with
// 1000 flops per block alone takes 1000 + 1000 = 2000 ns; a kernel's
// first block starts back_to_back_ns (1000) after the record before it
// on its stream completes (a kernel behind a record).
func TestProfiledBlockTimes(t *testing.T) {
	d := twoSMDevice(t)
	k := func(grid, shared int) *device.Launch {
		return &device.Launch{Kernel: profiledK, Grid: device.D1(grid), Block: device.D1(128), SharedMem: shared, Work: device.Work{Flops: 1000}}
	}
	// 2 blocks: one per SM, alone: 2000 ns.
	assert.Equal(t, []time.Duration{3000 * time.Nanosecond}, gatedElapsed(t, d, k(2, 0)))
	// 8 blocks: 4 per SM, 16 warps resident: 2.5 x 2000 = 5000 ns.
	assert.Equal(t, []time.Duration{6000 * time.Nanosecond}, gatedElapsed(t, d, k(8, 0)))
	// 6 blocks: 3 per SM, 12 warps: halfway between 1.5 and 2.5 = 2.0 x 2000.
	assert.Equal(t, []time.Duration{5000 * time.Nanosecond}, gatedElapsed(t, d, k(6, 0)))
	// 8 blocks padded to 2 per SM (shared memory): two waves at 8 warps,
	// 1.5 x 2000 each.
	pad := 233472/3 + 1 - 1024
	assert.Equal(t, []time.Duration{7000 * time.Nanosecond}, gatedElapsed(t, d, k(8, pad)))
	// Two 2-block kernels released together share both SMs: 8 warps each,
	// 3000 ns each.
	assert.Equal(t, []time.Duration{4000 * time.Nanosecond, 4000 * time.Nanosecond}, gatedElapsed(t, d, k(2, 0), k(2, 0)))
	st := d.Stats()
	assert.Equal(t, int64(2), st.ProfiledLaunches)
	assert.Equal(t, int64(1), st.EstimatedLaunches, "the gate kernel is timed from its Work")
	// Beyond the curve's last point it extends its last segment: 32 warps
	// (8 per SM of 2 SMs: 16 blocks) is 2.5 + 16 x 1/8 = 4.5 x 2000.
	assert.Equal(t, []time.Duration{10000 * time.Nanosecond}, gatedElapsed(t, d, k(16, 0)))
	// A kernel without a curve uses the default slope: test.flat's 500 ns
	// with 2 blocks per SM (8 warps): 1 + 0.1 x 4 = 1.4 x 500 = 700 ns.
	flat := &device.Launch{Kernel: &device.Kernel{Module: "test", Name: "flat", Regs: 32}, Grid: device.D1(4), Block: device.D1(128)}
	assert.Equal(t, []time.Duration{1700 * time.Nanosecond}, gatedElapsed(t, d, flat))
}

// gpu_share: 3 blocks on 2 SMs load one SM with 2 and the other with 1.
// test.k (share 0) times each block by its own SM: 2 blocks at 8 warps
// take 1.5 x 2000, and the kernel ends with them; test.g (share 1) times
// every block by the GPU's mean, 6 warps per SM: 1.25 x 2000.
func TestProfiledGPUShare(t *testing.T) {
	d := twoSMDevice(t)
	launch := func(name string) *device.Launch {
		return &device.Launch{Kernel: &device.Kernel{Module: "test", Name: name, Regs: 32}, Grid: device.D1(3), Block: device.D1(128), Work: device.Work{Flops: 1000}}
	}
	assert.Equal(t, []time.Duration{4000 * time.Nanosecond}, gatedElapsed(t, d, launch("k")))
	assert.Equal(t, []time.Duration{3500 * time.Nanosecond}, gatedElapsed(t, d, launch("g")))
}

func TestProfileMustMatchTheDevice(t *testing.T) {
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	p, err := ParseProfile([]byte(testProfile), "test.yaml")
	require.NoError(t, err)
	_, err = New(cfg, WithProfile(p))
	assert.ErrorContains(t, err, "profile: measured on test GPU with 2 SMs; the device has 132")
	cfg.ProfileName = "no-such-profile"
	assert.ErrorContains(t, cfg.loadProfile(""), `profile "no-such-profile": no such embedded profile`)
}

// Configs that load the same profile file share one parse of it; a file
// that changed is parsed again.
func TestConfigsShareTheirParsedProfile(t *testing.T) {
	a, err := LoadConfig("h100")
	require.NoError(t, err)
	b, err := LoadConfig("h100")
	require.NoError(t, err)
	require.NotNil(t, a.Profile)
	assert.Same(t, a.Profile, b.Profile)
	fresh, err := LoadProfile("h100", "")
	require.NoError(t, err)
	assert.NotSame(t, a.Profile, fresh, "LoadProfile's caller may change what it gets")
	assert.Equal(t, a.Profile, fresh)

	dir := t.TempDir()
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.Info.SMs = 2
	cfg.ProfileName = "p.yaml"
	path := filepath.Join(dir, "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(testProfile), 0o644))
	require.NoError(t, cfg.loadProfile(dir))
	first := cfg.Profile
	require.NoError(t, cfg.loadProfile(dir))
	assert.Same(t, first, cfg.Profile)
	changed := strings.Replace(testProfile, "device: test GPU", "device: other GPU", 1)
	require.NoError(t, os.WriteFile(path, []byte(changed), 0o644))
	require.NoError(t, cfg.loadProfile(dir))
	assert.Equal(t, "other GPU", cfg.Profile.Device)
}

func TestWaves(t *testing.T) {
	// 1056 blocks at 2 per SM on 132 SMs: 4 full waves; 1000 blocks: 3
	// full waves and 208 left, 2 on the busiest SM.
	assert.Equal(t, []Wave{{Blocks: 2, Total: 264, Count: 4}}, Waves(1056, 2, 132))
	assert.Equal(t, []Wave{{Blocks: 2, Total: 264, Count: 3}, {Blocks: 2, Total: 208, Count: 1}}, Waves(1000, 2, 132))
	assert.Equal(t, []Wave{{Blocks: 1, Total: 64, Count: 1}}, Waves(64, 16, 132))
}

// A launch that matches a profile point (kernel, blocks, threads, dynamic
// shared memory, Work and blocks per SM) takes the point's measured time;
// any other launch of the kernel its model's. test.k's point: 4 blocks of
// 2000 flops, median 3550 ns per launch, so 2550 ns of kernel after the
// back-to-back gap of 1000 ns; alone its 4 blocks run 2 per SM (8 warps,
// factor 1.5), so its lone block time is 2550 / 1.5 = 1700 ns, where the
// model says 1000 + 2000 = 3000 ns.
func TestMeasuredPointTimesTheLaunchItMatches(t *testing.T) {
	d := twoSMDevice(t)
	k := func(kernel *device.Kernel, grid, shared int, flops float64) *device.Launch {
		return &device.Launch{Kernel: kernel, Grid: device.D1(grid), Block: device.D1(128), SharedMem: shared, Work: device.Work{Flops: flops}}
	}
	// Matched: the measured median, 1000 + 2550 ns.
	assert.Equal(t, []time.Duration{3550 * time.Nanosecond}, gatedElapsed(t, d, k(profiledK, 4, 0, 2000)))
	st := d.Stats()
	assert.Equal(t, [3]int64{1, 0, 1}, [3]int64{st.MeasuredLaunches, st.ProfiledLaunches, st.EstimatedLaunches})
	// Unmatched, the model: other Work, 1000 + 1.5 x 3001 = 5501.5 ns
	// (elapsed in whole ns); another grid (1 block per SM), 1000 + 3000;
	// other shared memory (still 2 per SM), 1000 + 1.5 x 3000.
	assert.Equal(t, []time.Duration{5501 * time.Nanosecond}, gatedElapsed(t, d, k(profiledK, 4, 0, 2001)))
	assert.Equal(t, []time.Duration{4000 * time.Nanosecond}, gatedElapsed(t, d, k(profiledK, 2, 0, 2000)))
	assert.Equal(t, []time.Duration{5500 * time.Nanosecond}, gatedElapsed(t, d, k(profiledK, 4, 1024, 2000)))
	// The same launch where an SM holds 8 blocks, not the point's 16 (64
	// registers a thread): not the co-residency measured, the model.
	regs64 := &device.Kernel{Module: "test", Name: "k", Regs: 64}
	assert.Equal(t, []time.Duration{5500 * time.Nanosecond}, gatedElapsed(t, d, k(regs64, 4, 0, 2000)))
	st = d.Stats()
	assert.Equal(t, [3]int64{0, 1, 1}, [3]int64{st.MeasuredLaunches, st.ProfiledLaunches, st.EstimatedLaunches})
	// Two matched launches released together: 4 blocks per SM (16 warps,
	// factor 2.5) scale the measured lone time as the model's curve says:
	// 1000 + 2.5 x 1700 ns each.
	assert.Equal(t, []time.Duration{5250 * time.Nanosecond, 5250 * time.Nanosecond},
		gatedElapsed(t, d, k(profiledK, 4, 0, 2000), k(profiledK, 4, 0, 2000)))
}

// A point with scalars times only launches with the same scalar
// arguments; one without, any launch of its shape. test.k gets two
// points at 3000 flops, a 1x7 (scalars 1, 7) measured at 4000 ns per
// launch and a 7x1 (7, 1) at 9000: each launch alone takes its own
// point's time (the back-to-back gap, 1000 ns, then the rest); a 3x3
// (3, 3) takes the model's, 1000 + 1.5 x (1000 + 3000) = 7000 ns; and the
// point without scalars at 2000 flops (3550 ns) still times any launch of
// its shape.
func TestMeasuredPointsMatchTheirScalars(t *testing.T) {
	src := strings.Replace(testProfile, "ns: [3500, 3600]}", `ns: [3500, 3600]}
      - {grid: 4, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 3000, bytes: 0, launches: 1, ns: [4000], scalars: '4:1 4:7'}
      - {grid: 4, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 3000, bytes: 0, launches: 1, ns: [9000], scalars: '4:7 4:1'}`, 1)
	p, err := ParseProfile([]byte(src), "test.yaml")
	require.NoError(t, err)
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.Info.SMs = 2
	d, err := New(cfg, WithProfile(p))
	require.NoError(t, err)
	conv := func(flops float64, kh, kw int32) *device.Launch {
		return &device.Launch{Kernel: profiledK, Grid: device.D1(4), Block: device.D1(128), Work: device.Work{Flops: flops},
			Args: []device.Arg{device.I32(kh), device.I32(kw)}}
	}
	assert.Equal(t, []time.Duration{4000 * time.Nanosecond}, gatedElapsed(t, d, conv(3000, 1, 7)))
	assert.Equal(t, []time.Duration{9000 * time.Nanosecond}, gatedElapsed(t, d, conv(3000, 7, 1)))
	st := d.Stats() // of the last run
	assert.Equal(t, [2]int64{1, 0}, [2]int64{st.MeasuredLaunches, st.ProfiledLaunches})
	assert.Equal(t, []time.Duration{7000 * time.Nanosecond}, gatedElapsed(t, d, conv(3000, 3, 3)))
	st = d.Stats()
	assert.Equal(t, [2]int64{0, 1}, [2]int64{st.MeasuredLaunches, st.ProfiledLaunches})
	assert.Equal(t, []time.Duration{3550 * time.Nanosecond}, gatedElapsed(t, d, conv(2000, 7, 1)))
	assert.Equal(t, "4:7 8:ffffffffffffffff 4:3f800000", ScalarSignature([]device.Arg{device.I32(7), device.In(device.Buffer{}), device.U64(1<<64 - 1), device.F32(1)}))
}

// windowsProfile is testProfile with test.k's 1x7 (scalars 1, 7, then
// more) and 7x1 (7, 1, then more) points at 3000 flops, 4000 and 9000 ns
// a launch, and a neighbor rule of one neighbor at radius 1.
func windowsProfile(more string) string {
	src := strings.Replace(testProfile, "ns: [3500, 3600]}", `ns: [3500, 3600]}
      - {grid: 4, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 3000, bytes: 0, launches: 1, ns: [4000], scalars: '4:1 4:7`+more+`'}
      - {grid: 4, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 3000, bytes: 0, launches: 1, ns: [9000], scalars: '4:7 4:1`+more+`'}`, 1)
	return strings.Replace(src, "        - {warps: 16, factor: 2.5}\n", "        - {warps: 16, factor: 2.5}\n      neighbors: 1\n      neighbor_radius: 1\n", 1)
}

// A launch without a point of its own, of a kernel whose model has
// neighbors, takes the model's lone time times the ratio measured/model of
// its nearest profiled launch (neighbors: 1), weighed against the model's
// own at radius 1. test.k's 1x7 point (scalars 1, 7; 3000 flops, 4000 ns a
// launch) has lone time (4000 - 1000) / 1.5 = 2000 ns against the model's
// 1000 + 3000: ratio 1/2; its 7x1 point, 8000 / 1.5 against 4000. A 1x6
// launch lies at log2(1+6) where the 1x7 lies at log2(1+7) (the 7x1 is far
// off); the point without scalars has other features and is not compared.
func TestUnmatchedLaunchesTakeTheirNeighborsRatio(t *testing.T) {
	src := windowsProfile("")
	p, err := ParseProfile([]byte(src), "test.yaml")
	require.NoError(t, err)
	require.Equal(t, 1, p.Kernels[0].Model.Neighbors)
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.Info.SMs = 2
	d, err := New(cfg, WithProfile(p))
	require.NoError(t, err)
	conv := func(kh, kw int32) *device.Launch {
		return &device.Launch{Kernel: profiledK, Grid: device.D1(4), Block: device.D1(128), Work: device.Work{Flops: 3000},
			Args: []device.Arg{device.I32(kh), device.I32(kw)}}
	}
	w := 1 / (0.01 + (3-math.Log2(7))*(3-math.Log2(7)))
	want := 1000 + 1.5*4000*math.Exp(w*math.Log(0.5)/(w+1))
	got := gatedElapsed(t, d, conv(1, 6))
	assert.InDelta(t, want, float64(got[0].Nanoseconds()), 1)
	st := d.Stats()
	assert.Equal(t, [2]int64{0, 1}, [2]int64{st.MeasuredLaunches, st.ProfiledLaunches})
	// The matched launches keep their points' times.
	assert.Equal(t, []time.Duration{9000 * time.Nanosecond}, gatedElapsed(t, d, conv(7, 1)))
	// Feature scales multiply each feature's difference: kw's (the 7th
	// feature, after grid, threads and the three Work terms) doubled puts
	// the 1x7 twice as far from the 1x6 (the 7x1 still farther).
	scaled := strings.Replace(src, "      neighbor_radius: 1\n", "      neighbor_radius: 1\n      neighbor_scales: [1, 1, 1, 1, 1, 1, 2]\n", 1)
	ps, err := ParseProfile([]byte(scaled), "test.yaml")
	require.NoError(t, err)
	ds, err := New(cfg, WithProfile(ps))
	require.NoError(t, err)
	w = 1 / (0.01 + 4*(3-math.Log2(7))*(3-math.Log2(7)))
	want = 1000 + 1.5*4000*math.Exp(w*math.Log(0.5)/(w+1))
	got = gatedElapsed(t, ds, conv(1, 6))
	assert.InDelta(t, want, float64(got[0].Nanoseconds()), 1)
	_, err = ParseProfile([]byte(strings.Replace(scaled, "[1, 1, 1, 1, 1, 1, 2]", "[1, -1]", 1)), "test.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kernels[0].model.neighbor_scales[1]: must be finite and not negative, got -1")
	for _, bad := range []string{"      neighbors: 1\n      neighbor_radius: 0\n", "      neighbors: -1\n      neighbor_radius: 1\n"} {
		_, err := ParseProfile([]byte(strings.Replace(src, "      neighbors: 1\n      neighbor_radius: 1\n", bad, 1)), "test.yaml")
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "test.yaml:22: kernels[0].model.neighbors: must not be negative")
	}
}

// A synchronized launch without a point of its own is placed among its
// kernel's neighbors by its plain launch (profiledLaunch), as the points
// were taken: test.k's 1x7 point (scalars 1, 7, 0; 3000 flops, 4000 ns a
// launch; lone ratio 1/2 as in TestUnmatchedLaunchesTakeTheirNeighborsRatio)
// and a 7x1 (7, 1, 0). A 1x6 launch whose sync argument is 5 is placed at
// (1, 6, 0): the 1x7 lies log2(7) - 3 away, not the sqrt((log2(7) - 3)^2 +
// log2(6)^2) its issued arguments (1, 6, 5) would put between them.
func TestSyncLaunchPlacedAmongNeighborsByItsPlainLaunch(t *testing.T) {
	d := twoSMDeviceWith(t, windowsProfile(" 4:0"))
	l := &device.Launch{Kernel: profiledK, Grid: device.D1(4), Block: device.D1(128), Work: device.Work{Flops: 3000},
		Args: []device.Arg{device.I32(1), device.I32(6), device.I32(5)}, Sync: plainPost{postAll{device.Counter{Buf: device.Buffer{Addr: 1 << 20}}}}}
	w := 1 / (0.01 + (3-math.Log2(7))*(3-math.Log2(7)))
	want := 1000 + 1.5*4000*math.Exp(w*math.Log(0.5)/(w+1))
	got := gatedElapsed(t, d, l)
	assert.InDelta(t, want, float64(got[0].Nanoseconds()), 1)
	st := d.Stats()
	assert.Equal(t, [2]int64{0, 1}, [2]int64{st.MeasuredLaunches, st.ProfiledLaunches})
}
