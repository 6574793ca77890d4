package device_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// Buffer ranges are checked as Off <= Size and Len <= Size-Off, never as
// Off+Len <= Size, which wraps negative for a huge Len and let
// [8, 8+(1<<63-4)) of a 64-byte buffer through.
func TestValidateLaunchBufferRange(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	k := &device.Kernel{Module: "m", Name: "k", Regs: 32}
	tests := []struct {
		name     string
		off, n   int64
		accepted bool
	}{
		{"whole buffer", 0, 64, true},
		{"tail", 8, 56, true},
		{"empty at the end", 64, 0, true},
		{"one past the end", 8, 57, false},
		{"offset past the end", 65, 0, false},
		{"negative offset", -1, 8, false},
		{"negative length", 0, -1, false},
		{"length wraps off+len", 8, 1<<63 - 4, false},
		{"max length", 0, math.MaxInt64, false},
		{"max offset", math.MaxInt64, math.MaxInt64, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &device.Launch{Kernel: k, Grid: device.Dim3{X: 1, Y: 1, Z: 1}, Block: device.Dim3{X: 32, Y: 1, Z: 1},
				Args: []device.Arg{{Kind: device.ArgBuffer, Buf: device.Buffer{Addr: 1 << 40, Size: 64}, Mode: device.Read, Off: tc.off, Len: tc.n}}}
			err := device.ValidateLaunch(&cfg.Info, l)
			if tc.accepted {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "lies outside its 64-byte buffer")
		})
	}
}

func TestValidateCopyRange(t *testing.T) {
	buf := device.Buffer{Addr: 1 << 40, Size: 64}
	host := &device.HostMem{Data: make([]byte, 64), Pinned: true}
	tests := []struct {
		name                    string
		kind                    device.CopyKind
		dstOff, srcOff, hostOff int64
		bytes                   int64
		want                    string // "" = accepted
	}{
		{"device to device, whole", device.DeviceToDevice, 0, 0, 0, 64, ""},
		{"device to device, tail", device.DeviceToDevice, 8, 8, 0, 56, ""},
		{"device to device, one past", device.DeviceToDevice, 8, 0, 0, 57, "destination range"},
		{"device to device, wraps", device.DeviceToDevice, 8, 0, 0, 1<<63 - 4, "source range"},
		{"destination wraps", device.DeviceToDevice, 8, 0, 0, 1<<63 - 4, "outside its 64-byte buffer"},
		{"destination offset past the end", device.DeviceToDevice, 65, 0, 0, 0, "destination range"},
		{"host to device, host wraps", device.HostToDevice, 0, 0, 8, 1<<63 - 4, "host range"},
		{"device to host, max offset", device.DeviceToHost, 0, math.MaxInt64, 0, 1, "source range"},
		{"host offset past the end", device.HostToDevice, 0, 0, 65, 0, "host range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &device.Copy{Kind: tc.kind, Dst: buf, DstOff: tc.dstOff, Src: buf, SrcOff: tc.srcOff, Host: host, HostOff: tc.hostOff, Bytes: tc.bytes, Label: "range"}
			err := device.ValidateCopy(c)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			// The error shows the figures as given, never a wrapped sum.
			assert.NotRegexp(t, `-[0-9]`, err.Error())
		})
	}
}
