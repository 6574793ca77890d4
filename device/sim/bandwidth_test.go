package sim

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// The shared-bandwidth tests run on the H100 datasheet config with round
// figures: device memory 4,224 bytes/ns, copy latency 1 us. A kernel of
// 1,056 blocks of 128 threads (8 per SM, 4,224 warps) is HBM-bound: each
// block gets 4 of the 4,224 bytes/ns (4 warps of 4,224; its SM would give
// it 100 x 4/32 = 12.5), so 40,000 bytes a block take 10 us and the
// kernel draws all of the bandwidth (load 1). A device-to-device copy of
// 4,224,000 bytes reads and writes 8,448,000: 2 us after its 1 us latency.
func sharingConfig(t *testing.T, contention float64) *Config {
	c := h100Config(t)
	c.Info.MemBandwidth = 4.224e12
	c.Copy.LatencyNs = 1000
	c.Copy.DtoDContention = contention
	return c
}

const sharedCopyBytes = 4224000

func streamingKernel(w device.Work) *device.Launch {
	return &device.Launch{Kernel: spinK, Grid: device.D1(1056), Block: device.D1(128), Work: w, Label: "kernel"}
}

var hbmWork = device.Work{Bytes: 40000}

// sharingRun issues ops (each on its own stream, in order) and returns the
// spans of the kernel and of the copy, by label, and the trace.
func sharingRun(t *testing.T, cfg *Config, ops ...func(h device.Host, s device.Stream, dst, src device.Buffer) error) (map[string][2]Time, []byte) {
	t.Helper()
	d, err := New(cfg, WithTrace(true))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		src, err := h.Malloc(64 << 20)
		require.NoError(t, err)
		dst, err := h.Malloc(64 << 20)
		require.NoError(t, err)
		for _, op := range ops {
			s, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			require.NoError(t, op(h, s, dst, src))
		}
		return h.Synchronize()
	}))
	spans := opSpans(d)
	var trace bytes.Buffer
	require.NoError(t, d.WriteTrace(&trace))
	return spans, trace.Bytes()
}

func launchOp(w device.Work) func(device.Host, device.Stream, device.Buffer, device.Buffer) error {
	return func(h device.Host, s device.Stream, dst, _ device.Buffer) error {
		l := streamingKernel(w)
		l.Args = []device.Arg{device.Out(dst)}
		return h.Launch(s, l)
	}
}

func copyOp(kind device.CopyKind, n int64) func(device.Host, device.Stream, device.Buffer, device.Buffer) error {
	return func(h device.Host, s device.Stream, dst, src device.Buffer) error {
		c := &device.Copy{Kind: kind, Dst: dst, Src: src, Bytes: n, Label: "copy"}
		if kind != device.DeviceToDevice {
			host, err := h.AllocHost(n, true)
			if err != nil {
				return err
			}
			c.Host = host
			if kind == device.DeviceToHost {
				c.Dst, c.Src = device.Buffer{}, dst
			} else {
				c.Src = device.Buffer{}
			}
		}
		return h.Copy(s, c)
	}
}

const us = Time(1e6)

func TestSharedBandwidthAlone(t *testing.T) {
	// Alone, neither changes: the copy takes its latency and 2 us, the
	// kernel 10 us, with sharing on or off.
	for _, c := range []float64{0, 1} {
		sp, _ := sharingRun(t, sharingConfig(t, c), copyOp(device.DeviceToDevice, sharedCopyBytes))
		assert.Equal(t, 3*us, sp["copy"][1]-sp["copy"][0], "contention %g", c)
		sp, _ = sharingRun(t, sharingConfig(t, c), launchOp(hbmWork))
		assert.Equal(t, 10*us, sp["kernel"][1]-sp["kernel"][0], "contention %g", c)
	}
}

func TestSharedBandwidthKernelThenCopy(t *testing.T) {
	// The kernel starts at K0, the copy at C0 (after it; the kernel is
	// still running when the copy's data moves at T = C0 + 1 us). From T
	// both have load 1: with contention c the kernel's bytes slow by
	// 1 + c and the copy by 1 + c x 1. The copy's 2 us take 2(1 + c) us,
	// in which the kernel does 2 us of its work: it ends 2c us late.
	//   c = 1: kernel K0 + 12 us, copy C0 + 1 + 4 us
	//   c = 0.5: kernel K0 + 11 us, copy C0 + 1 + 3 us
	//   c = 0: kernel K0 + 10 us, copy C0 + 3 us (no sharing)
	for _, tc := range []struct {
		c            float64
		kernel, copy Time
	}{{1, 12 * us, 5 * us}, {0.5, 11 * us, 4 * us}, {0, 10 * us, 3 * us}} {
		sp, _ := sharingRun(t, sharingConfig(t, tc.c), launchOp(hbmWork), copyOp(device.DeviceToDevice, sharedCopyBytes))
		k, c := sp["kernel"], sp["copy"]
		require.Less(t, k[0], c[0]+us, "the kernel runs before the copy's data moves")
		assert.Equal(t, tc.kernel, k[1]-k[0], "kernel, contention %g", tc.c)
		assert.Equal(t, tc.copy, c[1]-c[0], "copy, contention %g", tc.c)
	}
}

func TestSharedBandwidthCopyThenKernel(t *testing.T) {
	// A copy of 20 us (ten times the bytes) first; the kernel starts at K0
	// while its data moves (from T = C0 + 1 us). With c = 1 both slow 2x:
	// the kernel takes 20 us, in which the copy does 10 us of its work;
	// the copy has done K0 - T before and 10 - (K0 - T) after, at full
	// rate: it ends at K0 + 20 + 10 - (K0 - T) = T + 30 us, the sum of
	// both alone.
	sp, _ := sharingRun(t, sharingConfig(t, 1), copyOp(device.DeviceToDevice, 10*sharedCopyBytes), launchOp(hbmWork))
	k, c := sp["kernel"], sp["copy"]
	require.Greater(t, k[0], c[0]+us, "the kernel starts while the copy's data moves")
	assert.Equal(t, 20*us, k[1]-k[0])
	assert.Equal(t, 31*us, c[1]-c[0])
}

func TestSharedBandwidthLeavesComputeAndPCIe(t *testing.T) {
	// A compute-bound kernel (cycles only) moves no memory: it and the copy
	// beside it keep their times alone.
	sp, _ := sharingRun(t, sharingConfig(t, 1), launchOp(device.Work{Cycles: cyclesFor(10 * time.Microsecond)}),
		copyOp(device.DeviceToDevice, sharedCopyBytes))
	assert.Equal(t, 10*us, sp["kernel"][1]-sp["kernel"][0])
	assert.Equal(t, 3*us, sp["copy"][1]-sp["copy"][0])
	// Copies over PCIe do not share HBM (calibrate: 0.995x and 1.01x the
	// longer alone): a 4,224,000-byte pinned copy takes 1 us + 4,224,000 /
	// 55 GB/s = 77.8 us; the kernel beside it keeps 10 us.
	for _, kind := range []device.CopyKind{device.HostToDevice, device.DeviceToHost} {
		sp, _ = sharingRun(t, sharingConfig(t, 1), launchOp(hbmWork), copyOp(kind, sharedCopyBytes))
		assert.Equal(t, 10*us, sp["kernel"][1]-sp["kernel"][0], "%v", kind)
		assert.Equal(t, us+nsTime(sharedCopyBytes/55.0), sp["copy"][1]-sp["copy"][0], "%v", kind)
	}
}

func TestSharedBandwidthIsDeterministic(t *testing.T) {
	// Queued copies, two kernels and copies racing at the same instants:
	// the same inputs give the same trace, byte for byte.
	ops := []func(device.Host, device.Stream, device.Buffer, device.Buffer) error{
		copyOp(device.DeviceToDevice, 3*sharedCopyBytes), launchOp(hbmWork), copyOp(device.DeviceToDevice, sharedCopyBytes),
		launchOp(device.Work{Bytes: 20000, Cycles: cyclesFor(3 * time.Microsecond)}), copyOp(device.DeviceToDevice, 2*sharedCopyBytes),
	}
	_, a := sharingRun(t, sharingConfig(t, 1.2), ops...)
	_, b := sharingRun(t, sharingConfig(t, 1.2), ops...)
	assert.Equal(t, a, b)
	_, off := sharingRun(t, sharingConfig(t, 0), ops...)
	assert.NotEqual(t, a, off, "sharing moves these ends")
}

func TestSharedBandwidthContentionRange(t *testing.T) {
	_, err := New(sharingConfig(t, 2.5))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "copy.dtod_contention")
	_, err = New(sharingConfig(t, -0.5))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "copy.dtod_contention")
}

// opSpans is the start and end of each kernel and copy of d's last run,
// by label.
func opSpans(d *Device) map[string][2]Time {
	spans := map[string][2]Time{}
	for _, s := range d.lastTrace.spans {
		if s.kind == trackStream || s.kind == trackCopy {
			spans[s.name] = [2]Time{s.start, s.end}
		}
	}
	return spans
}
