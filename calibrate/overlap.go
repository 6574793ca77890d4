package calibrate

import (
	"github.com/gpusched/gpusched/device"
)

// overlapBytes is what each copy and the streaming kernel of copyOverlap
// move.
const overlapBytes = 64 << 20

// copyOverlap measures the copy engines beside each other and beside
// kernels: a pinned host-to-device and a device-to-host copy of 64 MiB,
// and a kernel reading 64 MiB on every SM, each alone and in pairs on two
// streams released at once. Each pair's Elapsed, over the longer of its
// two alone, is 1 when they overlap fully and up to 2 when they
// serialize; the device-to-device copy beside the kernel shows whether
// they share device memory bandwidth.
func (c *calibrator) copyOverlap(h device.Host) error {
	ss, err := newStreamSet(h, 2)
	if err != nil {
		return err
	}
	src, err := h.Malloc(2 * overlapBytes)
	if err != nil {
		return err
	}
	dst, err := h.Malloc(overlapBytes)
	if err != nil {
		return err
	}
	out, err := h.Malloc(int64(4 * 1024 * c.info.SMs))
	if err != nil {
		return err
	}
	pin, err := h.AllocHost(overlapBytes, true)
	if err != nil {
		return err
	}
	ops := map[string]func(s device.Stream) error{
		"HtoD": func(s device.Stream) error {
			return h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: dst, Host: pin, Bytes: overlapBytes})
		},
		"DtoH": func(s device.Stream) error {
			return h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: dst, Host: pin, Bytes: overlapBytes})
		},
		"DtoD": func(s device.Stream) error {
			return h.Copy(s, &device.Copy{Kind: device.DeviceToDevice, Dst: dst, Src: src, SrcOff: overlapBytes, Bytes: overlapBytes})
		},
		"kernel": func(s device.Stream) error {
			return h.Launch(s, c.streamLaunch(src, out, 0, c.info.SMs, 1024, overlapBytes))
		},
	}
	alone := map[string]float64{}
	for _, name := range []string{"HtoD", "DtoH", "DtoD", "kernel"} {
		r, err := c.gatedRounds(h, ss, 2, 2, func() error { return ops[name](ss.stream(0)) })
		if err != nil {
			return err
		}
		alone[name] = c.record(name+" alone (overlap measurements)", "", "ns", "Elapsed behind a gate kernel", r)
	}
	for _, pair := range [][2]string{{"HtoD", "DtoH"}, {"HtoD", "kernel"}, {"DtoH", "kernel"}, {"DtoD", "kernel"}} {
		r, err := c.gatedRounds(h, ss, 2, 2, func() error {
			if err := ops[pair[0]](ss.stream(0)); err != nil {
				return err
			}
			return ops[pair[1]](ss.stream(1))
		})
		if err != nil {
			return err
		}
		longer := max(alone[pair[0]], alone[pair[1]])
		for i := range r {
			r[i] /= longer
		}
		c.record(pair[0]+" beside "+pair[1]+": time over the longer alone", "", "x",
			"Elapsed of both on two streams released at once, over the longer one's Elapsed alone (1: full overlap, 2: serialized)", r)
	}
	return nil
}
