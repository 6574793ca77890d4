package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

func newH100(t testing.TB, opts ...Option) *Device {
	t.Helper()
	d, err := NewNamed("h100-datasheet", opts...)
	require.NoError(t, err)
	return d
}

var spinK = &device.Kernel{Module: "test", Name: "spin", Regs: 32}

// cyclesFor is the SM cycles that take dur on the H100 config (1.98 GHz).
func cyclesFor(dur time.Duration) float64 { return float64(dur.Nanoseconds()) * 1.98 }

func spinLaunch(blocks, threads int, dur time.Duration) *device.Launch {
	return &device.Launch{Kernel: spinK, Grid: device.D1(blocks), Block: device.D1(threads), Work: device.Work{Cycles: cyclesFor(dur)}}
}

func TestOneKernelTimeline(t *testing.T) {
	// Hand-computed: NewStream 5 us, NewEvent x2 1 us each, Record 1 us,
	// Launch 3.3 us: the kernel reaches the front end at 11.3 us; first
	// block 2 us later (launch latency) = 13.3 us; 1024-thread blocks fit
	// 2 per SM, so 264 blocks are one 10 us wave and 265 take two.
	for _, tc := range []struct {
		blocks int
		end    time.Duration
	}{{264, 23300 * time.Nanosecond}, {265, 33300 * time.Nanosecond}} {
		d := newH100(t, WithTrace(true))
		var elapsed time.Duration
		err := d.Run(func(h device.Host) error {
			s, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			a, _ := h.NewEvent(device.EventOptions{})
			b, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.Record(a, s))
			require.Equal(t, 8*time.Microsecond, h.Now())
			require.NoError(t, h.Launch(s, spinLaunch(tc.blocks, 1024, 10*time.Microsecond)))
			require.NoError(t, h.Record(b, s))
			require.NoError(t, h.StreamSynchronize(s))
			elapsed, err = h.Elapsed(a, b)
			return err
		})
		require.NoError(t, err)
		st := d.Stats()
		assert.Equal(t, tc.end-13300*time.Nanosecond, st.DeviceTime, "blocks=%d", tc.blocks)
		// The record after the kernel completes when the kernel does; the
		// first record completed when it reached the front end at 8 us.
		assert.Equal(t, tc.end-8*time.Microsecond, elapsed)
		assert.Equal(t, int64(1), st.Kernels)
		assert.Equal(t, int64(tc.blocks), st.Blocks)
	}
}
