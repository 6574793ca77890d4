package workloads

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// TestResetRestoresWhatTheProgramWrites: Bind uploads every device buffer;
// Reset uploads again only those an operation writes (a kernel's written
// argument, a copy's destination) and refills only the host buffers a copy
// writes, leaving weights and inputs as they are; Init runs once.
func TestResetRestoresWhatTheProgramWrites(t *testing.T) {
	k := &device.Kernel{Module: "m", Name: "k"}
	one := device.Dim3{X: 1, Y: 1, Z: 1}
	ones := func(d []byte) { copy(d, bytes.Repeat([]byte{1}, len(d))) }
	inits := 0
	counted := func(d []byte) { inits++; ones(d) }
	p := &Program{Name: "p",
		Buffers: []BufferSpec{{Name: "weights", Bytes: 64, Init: ones}, {Name: "x", Bytes: 64}, {Name: "y", Bytes: 64, Init: counted, Output: true}},
		Host:    []HostSpec{{Name: "in", Bytes: 64, Init: ones}, {Name: "out", Bytes: 64, Init: ones}},
		Steps: []Step{{Ops: []Op{
			{Name: "load", Kind: OpCopy, Copy: CopySpec{Kind: device.HostToDevice, Dst: 1, Host: 0, Bytes: 64}},
			{Name: "f", Kind: OpKernel, Kernel: k, Grid: one, Block: one, Args: []ArgSpec{BufArg(0, device.Read), BufArg(1, device.Read), BufArg(2, device.Write)}},
			{Name: "store", Kind: OpCopy, Copy: CopySpec{Kind: device.DeviceToHost, Src: 2, Host: 1, Bytes: 64}},
		}}}}
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	var bound, reset []string
	require.NoError(t, dev.Run(func(h device.Host) error {
		ch := &copyLabels{Host: h}
		in, err := Bind(ch, p)
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		bound, ch.labels = ch.labels, nil
		in.Host[0].Data[0], in.Host[1].Data[0] = 7, 7
		if err := in.Reset(ch); err != nil {
			return err
		}
		reset = ch.labels
		assert.Equal(t, byte(7), in.Host[0].Data[0], "a host buffer only read keeps what it holds")
		assert.Equal(t, byte(1), in.Host[1].Data[0], "a host buffer a copy writes is refilled")
		return nil
	}))
	assert.Equal(t, []string{"init weights", "init x", "init y"}, bound)
	assert.Equal(t, []string{"init x", "init y"}, reset)
	assert.Equal(t, 1, inits, "a buffer's Init runs once per program, its bytes reused")
}

// copyLabels records the labels of the copies issued through it.
type copyLabels struct {
	device.Host
	labels []string
}

func (h *copyLabels) Copy(s device.Stream, c *device.Copy) error {
	h.labels = append(h.labels, c.Label)
	return h.Host.Copy(s, c)
}

// TestBindWithoutDeviceData: on a device that moves no data, BindWith
// NoDeviceData issues the same uploads at the same simulated times as Bind,
// but never generates a device buffer's contents; host buffers are filled.
func TestBindWithoutDeviceData(t *testing.T) {
	k := &device.Kernel{Module: "m", Name: "k"}
	one := device.Dim3{X: 1, Y: 1, Z: 1}
	devInits, hostInits := 0, 0
	p := &Program{Name: "p",
		Buffers: []BufferSpec{{Name: "x", Bytes: 1 << 20, Init: func([]byte) { devInits++ }}, {Name: "y", Bytes: 64, Init: func([]byte) { devInits++ }}},
		Host:    []HostSpec{{Name: "in", Bytes: 64, Init: func(d []byte) { hostInits++; d[0] = 5 }}},
		Steps: []Step{{Ops: []Op{
			{Name: "f", Kind: OpKernel, Kernel: k, Grid: one, Block: one, Args: []ArgSpec{BufArg(0, device.Read), BufArg(1, device.Write)}},
		}}}}
	bind := func(opt BindOptions) (labels []string, bound, reset time.Duration) {
		dev, err := sim.NewNamed("h100")
		require.NoError(t, err)
		require.NoError(t, dev.Run(func(h device.Host) error {
			ch := &copyLabels{Host: h}
			in, err := BindWith(ch, p, opt)
			if err != nil {
				return err
			}
			defer func() { assert.NoError(t, in.Release(h)) }()
			bound = h.Now()
			assert.Equal(t, byte(5), in.Host[0].Data[0], "host buffers are filled either way")
			if err := in.Reset(ch); err != nil {
				return err
			}
			reset, labels = h.Now(), ch.labels
			return nil
		}))
		return labels, bound, reset
	}
	l0, b0, r0 := bind(BindOptions{NoDeviceData: true})
	assert.Zero(t, devInits, "no device buffer's contents generated, on Bind or Reset")
	assert.Equal(t, 1, hostInits)
	l1, b1, r1 := bind(BindOptions{})
	assert.Equal(t, 2, devInits)
	assert.Equal(t, l1, l0, "the same uploads")
	assert.Equal(t, []string{"init x", "init y", "init y"}, l0)
	assert.Equal(t, b1, b0, "at the same simulated times")
	assert.Equal(t, r1, r0)
}
