package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/configs"
	"github.com/gpusched/gpusched/device"
)

// slowMemoryConfig is the H100 with the least SM bandwidth a config may
// have (1000 bytes/s): one block of one warp draws 1000/16 = 62.5 bytes/s
// (sm_mem_saturation_warps 16), so 900,000 bytes take exactly 4 hours.
func slowMemoryConfig(t *testing.T) *Config {
	cfg := h100Config(t)
	cfg.SM.MaxSMBandwidth = minBandwidth
	require.Equal(t, 16, cfg.SM.SMMemSaturationWarps)
	return cfg
}

// chain runs n one-block kernels of bytes each on one stream.
func chain(d *Device, n int, bytes float64) error {
	return d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			l := &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(32), Work: device.Work{Bytes: bytes}}
			l.Label = "k" + string(rune('0'+i))
			if err := h.Launch(s, l); err != nil {
				return err
			}
		}
		return h.Synchronize()
	})
}

func TestChainsPastTheHorizonFailNamingKernelAndField(t *testing.T) {
	cfg := slowMemoryConfig(t)
	// Five 4-hour kernels end inside the horizon, exactly: 5 x 4 h plus
	// back_to_back_ns (1 us) between consecutive kernels.
	d, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, chain(d, 5, 9e5))
	assert.Equal(t, 20*time.Hour+4*time.Microsecond, d.Stats().DeviceTime)

	// Issue 23's chains of 7 and 8 (they reported 8070450532262.7 us and
	// 30.9 us with exit status 0): the sixth kernel ends past 24 h.
	for _, n := range []int{7, 8} {
		d, err := New(cfg)
		require.NoError(t, err)
		var he *HorizonError
		require.ErrorAs(t, chain(d, n, 9e5), &he, "chain of %d", n)
		assert.Equal(t, `kernel "k5" on stream 0`, he.What)
		assert.Equal(t, "sm.max_sm_bandwidth", he.Field)
		assert.Contains(t, he.Cause, "one block takes 4h0m0s: 900000 bytes of work per block")
		assert.Contains(t, he.Error(), "horizon of 24h0m0s")
		// NewStream 5 us, launch 3.3 us, launch latency 2 us: k0 starts at
		// 10.3 us; five 4 h kernels with 1 us between them end k5 at
		// 24 h + 15.3 us.
		assert.Equal(t, "24h0m0.0000153s", he.At)
	}

	// A block whose duration saturates (about 13 days) fails at the first
	// kernel; before, 8 of them wrapped around to a few microseconds.
	d, err = New(cfg)
	require.NoError(t, err)
	var he *HorizonError
	require.ErrorAs(t, chain(d, 8, 1e15), &he)
	assert.Equal(t, `kernel "k0" on stream 0`, he.What)
	assert.True(t, strings.HasPrefix(he.At, "more than 320h"), he.At)
}

func TestHostCostsPastTheHorizonFail(t *testing.T) {
	cfg := h100Config(t)
	cfg.Host.LaunchNs = 1e13 // 2 h 46 min 40 s per launch: the ninth passes 24 h
	d, err := New(cfg)
	require.NoError(t, err)
	launches := 0
	err = d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		for i := 0; i < 20; i++ {
			if err := h.Launch(s, spinLaunch(1, 32, time.Microsecond)); err != nil {
				return err
			}
			launches++
		}
		return nil
	})
	var he *HorizonError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "host thread main in cuLaunchKernel", he.What)
	assert.Equal(t, "host.launch_ns", he.Field)
	assert.Equal(t, 8, launches, "the ninth launch's call never returns")

	d = newH100(t)
	err = d.Run(func(h device.Host) error {
		h.Spend(23 * time.Hour)
		h.Spend(2 * time.Hour)
		t.Error("the thread runs on past the horizon")
		return nil
	})
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "host thread main in Spend", he.What)
}

func TestSlowCopyPastTheHorizonFails(t *testing.T) {
	cfg := h100Config(t)
	cfg.Copy.HtoDGBps = minBandwidth / 1e9 // a kilobyte per second
	d, err := New(cfg)
	require.NoError(t, err)
	err = d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		b, err := h.Malloc(1e8)
		if err != nil {
			return err
		}
		m, err := h.AllocHost(1e8, true)
		if err != nil {
			return err
		}
		if err := h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: b, Host: m, Bytes: 1e8, Label: "upload"}); err != nil {
			return err
		}
		return h.Synchronize()
	})
	var he *HorizonError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, `copy "upload" on stream 0`, he.What)
	assert.Equal(t, "copy.htod_gbps", he.Field)
}

func TestConfigNumbersMustBeFiniteAndInRange(t *testing.T) {
	base, err := configs.FS.ReadFile("devices/h100-datasheet.yaml")
	require.NoError(t, err)
	src := string(base)
	for _, tc := range []struct{ name, from, to, want string }{
		// Issue 23: NaN and +Inf passed, and a sign typo ran.
		{"NaN bandwidth", "mem_bandwidth: 3.35e+12", "mem_bandwidth: .nan", "h100.yaml:36: device \"h100-datasheet\": info.mem_bandwidth is NaN; it must be a finite number"},
		{"infinite cost", "launch_ns: 3300 ", "launch_ns: .inf ", "h100.yaml:43: device \"h100-datasheet\": host.launch_ns is +Inf; it must be a finite number"},
		{"negative infinity", "back_to_back_ns: 1000", "back_to_back_ns: -.inf", "h100.yaml:97: device \"h100-datasheet\": front_end.back_to_back_ns is -Inf"},
		{"sign typo", "max_sm_bandwidth: 1.0e+11", "max_sm_bandwidth: 1.0e-11", "h100.yaml:106: device \"h100-datasheet\": sm.max_sm_bandwidth is 1e-11 bytes/s, outside the simulator's range"},
		{"cost past the horizon", "launch_ns: 3300 ", "launch_ns: 1e14 ", "h100.yaml:43: device \"h100-datasheet\": host.launch_ns is 1e+14 ns, beyond the simulator's horizon of 24h0m0s"},
		{"copy rate NaN", "htod_gbps: 55", "htod_gbps: .nan", "h100.yaml:111: device \"h100-datasheet\": copy.htod_gbps is NaN"},
		{"huge count", "max_blocks_per_sm: 32", "max_blocks_per_sm: 100000000000", "device \"h100-datasheet\": info.max_blocks_per_sm is 100000000000; the simulator handles at most 2147483647"},
		{"Info.Check's error gets its line", "sms: 132", "sms: 0", "h100.yaml:16: device \"NVIDIA H100 SXM5 80GB\": sms must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edit := strings.Replace(src, tc.from, tc.to, 1)
			require.NotEqual(t, src, edit, "the edit must change the file")
			_, err := ParseConfig([]byte(edit), "h100.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// New checks a Config built in code the same way.
	cfg := h100Config(t)
	cfg.FrontEnd.CallbackNs = -1
	_, err = New(cfg)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "front_end.callback_ns", fe.Field)
}
