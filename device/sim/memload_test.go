package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// loadProfile is a profile of a memory-bound kernel test.m on an 8-SM
// device: 1 ns per byte, measured once at 2 blocks of 10,000 bytes (10 us
// a launch after the 1 us back-to-back gap): 2 SMs drawing 1 byte per ns
// each, a demand of 2 bytes per ns. test.c is compute-bound (bytes move
// nothing in its model).
const loadProfile = `device: test GPU
sms: 8
source: hand-written
back_to_back_ns: 1000
min_block_ns: 0
default_warp_slope: 0
kernels:
  - kernel: test.m
    regs: 32
    static_shared: 0
    model: {ns: 0, ns_per_cycle: 0, ns_per_flop: 0, ns_per_byte: 1, roofline: false, gpu_share: 0, coresidency: []}
    fit: {points: 1, median_pct: 0, max_pct: 0, spread_pct: 0}
    points:
      - {grid: 2, threads: 128, shared: 0, per_sm: 16, forced: false, cycles: 0, flops: 0, bytes: 10000, launches: 1, ns: [11000]}
  - kernel: test.c
    regs: 32
    static_shared: 0
    model: {ns: 0, ns_per_cycle: 0, ns_per_flop: 1, ns_per_byte: 0, roofline: false, gpu_share: 0, coresidency: []}
    fit: {points: 0, median_pct: 0, max_pct: 0, spread_pct: 0}
    points: []
`

// loadDevice is the h100 datasheet config cut to 8 SMs with the residency
// rate model and sm.load_bandwidth b (bytes per second; 0: off).
func loadDevice(t *testing.T, b float64) *Device {
	t.Helper()
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.Info.SMs = 8
	cfg.SM.RetimeThreshold = 0.001
	cfg.SM.LoadBandwidth = b
	p, err := ParseProfile([]byte(loadProfile), "load.yaml")
	require.NoError(t, err)
	d, err := New(cfg, WithProfile(p))
	require.NoError(t, err)
	return d
}

func memLaunch(kernel string, grid int, work device.Work) *device.Launch {
	return &device.Launch{Kernel: &device.Kernel{Module: "test", Name: kernel, Regs: 32}, Grid: device.D1(grid), Block: device.D1(128), Work: work}
}

func TestLoadStretch(t *testing.T) {
	assert.InDelta(t, 1.0, LoadStretch(1, 5, 5, 8), 1e-12, "at the demand it was measured at")
	assert.InDelta(t, 2.0, LoadStretch(1, 8, 0, 8), 1e-12, "a byte takes twice as long at demand B")
	assert.InDelta(t, 1.5, LoadStretch(0.5, 8, 0, 8), 1e-12, "only the bytes' share stretches") // 1 + 0.5 x (2 - 1)
	assert.InDelta(t, 1.0, LoadStretch(0, 8, 0, 8), 1e-12, "no bytes")
	assert.InDelta(t, 1.0, LoadStretch(1, 8, 0, 0), 1e-12, "off")
	assert.Less(t, LoadStretch(1, 1, 2, 8), 1.0, "below the measured demand a block runs faster")
	assert.InDelta(t, 3.0, LoadRef(3, 2, 4), 1e-12, "within the points' range: its own")
	assert.InDelta(t, 4.0, LoadRef(8, 2, 4), 1e-12, "beyond it: the nearer end")
	assert.InDelta(t, 8.0, LoadRef(8, 1, 0), 1e-12, "no points: its own")
	assert.InDelta(t, 0.0, LoadRef(8, 0, 0), 1e-12, "points that drew nothing from memory")
}

func TestByteShare(t *testing.T) {
	w := device.Work{Flops: 100, Bytes: 300}
	sum := BlockModel{Ns: 100, NsPerFlop: 1, NsPerByte: 1}
	assert.InDelta(t, 0.6, sum.ByteShare(&w, false), 1e-12) // 300 of 500
	roof := BlockModel{NsPerFlop: 1, NsPerByte: 1, Roofline: true}
	assert.InDelta(t, 1.0, roof.ByteShare(&w, false), 1e-12, "the bytes term dominates")
	w.Flops = 400
	assert.Zero(t, roof.ByteShare(&w, false), "the flops term dominates")
}

// The memory-load model against hand-computed times (B = 8 bytes per ns,
// test.m's point drew 2 bytes per ns): a launch at its point alone takes
// the point's time; 8 blocks alone (8 bytes per ns; the model's time, its
// demand beyond the point's kept at 2) take (1 + 8/8) / (1 + 2/8) = 1.6x
// the per-block time; two point launches at once (4 SMs, 4 bytes per ns)
// 1.2x each; a compute-bound kernel neither stretches nor adds demand.
func TestMemoryLoadStretchesProfiledBlocks(t *testing.T) {
	bytes := device.Work{Bytes: 10000}
	ms := func(d []time.Duration) []float64 {
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x) / 1e3
		}
		return out
	}
	for _, tc := range []struct {
		name string
		b    float64
		ls   []*device.Launch
		want []float64 // us
	}{
		{"point alone", 8e9, []*device.Launch{memLaunch("m", 2, bytes)}, []float64{11}},
		{"8 blocks alone", 8e9, []*device.Launch{memLaunch("m", 8, bytes)}, []float64{17}},
		{"8 blocks alone, off", 0, []*device.Launch{memLaunch("m", 8, bytes)}, []float64{11}},
		{"two point launches at once", 8e9, []*device.Launch{memLaunch("m", 2, bytes), memLaunch("m", 2, bytes)}, []float64{13, 13}},
		{"beside a compute-bound kernel", 8e9, []*device.Launch{memLaunch("m", 2, bytes), memLaunch("c", 4, device.Work{Flops: 20000, Bytes: 0})}, []float64{11, 21}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ms(gatedElapsed(t, loadDevice(t, tc.b), tc.ls...))
			require.Len(t, got, len(tc.want))
			for i := range got {
				assert.InDelta(t, tc.want[i], got[i], 0.01*tc.want[i], "launch %d", i)
			}
		})
	}
}

// A co-runner that ends gives the blocks beside it their rate back: the
// long launch's blocks run 1.2x while the short one runs, 1x after.
func TestMemoryLoadFollowsTheDemand(t *testing.T) {
	long := memLaunch("m", 2, device.Work{Bytes: 10000})
	short := memLaunch("m", 2, device.Work{Bytes: 1000}) // 1 us alone, the same demand
	got := gatedElapsed(t, loadDevice(t, 8e9), long, short)
	// the long one: 1.2 us of its work stretched while the short runs
	// (1.2 us), then 9 us at 1x: 1 + 1.2 + 9 = 11.2 us (1 us gap included)
	assert.InDelta(t, 11.2, float64(got[0])/1e3, 0.05)
	assert.InDelta(t, 2.2, float64(got[1])/1e3, 0.05)
}

func TestLoadBandwidthMustBeValid(t *testing.T) {
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.SM.LoadBandwidth = -1
	_, err = New(cfg)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "sm.load_bandwidth"), err.Error())
}

// The same runs with the model on give byte-identical timelines.
func TestMemoryLoadIsDeterministic(t *testing.T) {
	ls := []*device.Launch{memLaunch("m", 5, device.Work{Bytes: 7000}), memLaunch("m", 2, device.Work{Bytes: 3000}), memLaunch("c", 3, device.Work{Flops: 900})}
	assert.Equal(t, gatedElapsed(t, loadDevice(t, 5e9), ls...), gatedElapsed(t, loadDevice(t, 5e9), ls...))
}
