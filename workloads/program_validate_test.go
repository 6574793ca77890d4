package workloads

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// Argument and copy ranges are checked as Off within the buffer and
// Len <= size-Off, never as Off+Len <= size, which wraps negative for a
// huge Len.
func TestProgramValidateRanges(t *testing.T) {
	k := &device.Kernel{Module: "m", Name: "k"}
	kernel := func(a ArgSpec) Op {
		return Op{Name: "k", Kind: OpKernel, Kernel: k, Grid: device.Dim3{X: 1, Y: 1, Z: 1}, Block: device.Dim3{X: 32, Y: 1, Z: 1}, Args: []ArgSpec{a}}
	}
	cp := func(c CopySpec) Op { return Op{Name: "c", Kind: OpCopy, Copy: c} }
	tests := []struct {
		name string
		op   Op
		want string // "" = valid
	}{
		{"argument, whole buffer", kernel(BufRange(0, device.Read, 0, 64)), ""},
		{"argument, tail", kernel(BufRange(0, device.Read, 8, 56)), ""},
		{"argument, one past the end", kernel(BufRange(0, device.Read, 8, 57)), "argument 0 range [8,+57) outside buffer a of 64 bytes"},
		{"argument, off+len wraps", kernel(BufRange(0, device.Read, 8, 1<<63-4)), "argument 0 range"},
		{"argument, max offset and length", kernel(BufRange(0, device.Read, math.MaxInt64, math.MaxInt64)), "argument 0 range"},
		{"argument, offset at the end", kernel(BufRange(0, device.Read, 64, 0)), "argument 0 range"},
		{"copy, device to device", cp(CopySpec{Kind: device.DeviceToDevice, Dst: 1, DstOff: 8, Src: 0, Bytes: 56}), ""},
		{"copy, destination wraps", cp(CopySpec{Kind: device.DeviceToDevice, Dst: 1, DstOff: 8, Src: 0, Bytes: 1<<63 - 4}), "copy source range"},
		{"copy, destination offset wraps", cp(CopySpec{Kind: device.DeviceToDevice, Dst: 1, DstOff: math.MaxInt64, Src: 0, Bytes: 1}), "copy destination range"},
		{"copy, host wraps", cp(CopySpec{Kind: device.HostToDevice, Dst: 0, Host: 0, HostOff: 8, Bytes: 1<<63 - 4}), "copy host range"},
		{"copy, negative size", cp(CopySpec{Kind: device.DeviceToHost, Src: 0, Host: 0, Bytes: -1}), "copy host range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Program{Name: "p", Buffers: []BufferSpec{{Name: "a", Bytes: 64}, {Name: "b", Bytes: 64}}, Host: []HostSpec{{Name: "h", Bytes: 64}},
				Steps: []Step{{Ops: []Op{tc.op}}}}
			err := p.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
