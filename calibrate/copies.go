package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// Sizes of the copy measurements: the slope between them is the
// bandwidth, the intercept the latency.
const copySmall, copyLarge = 4 << 10, 64 << 20

// copyEnv is what the copy measurements share: two device buffers, pinned
// and pageable host memory, each copyLarge bytes.
type copyEnv struct {
	t                *timedStream
	d1, d2           device.Buffer
	pinned, pageable *device.HostMem
}

func newCopyEnv(h device.Host) (*copyEnv, error) {
	env := &copyEnv{}
	var err error
	if env.t, err = newTimedStream(h); err != nil {
		return nil, err
	}
	if env.d1, err = h.Malloc(copyLarge); err != nil {
		return nil, err
	}
	if env.d2, err = h.Malloc(copyLarge); err != nil {
		return nil, err
	}
	if env.pinned, err = h.AllocHost(copyLarge, true); err != nil {
		return nil, err
	}
	if env.pageable, err = h.AllocHost(copyLarge, false); err != nil {
		return nil, err
	}
	for i := range env.pinned.Data {
		env.pinned.Data[i] = byte(i)
		env.pageable.Data[i] = byte(i)
	}
	return env, nil
}

func (env *copyEnv) copy(kind device.CopyKind, host *device.HostMem, bytes int64) *device.Copy {
	return &device.Copy{Kind: kind, Dst: env.d1, Src: env.d2, Host: host, Bytes: bytes}
}

// copies measures pinned and pageable copies each way, and device-to-device
// copies (device memory bandwidth).
func (c *calibrator) copies(h device.Host) error {
	env, err := newCopyEnv(h)
	if err != nil {
		return err
	}
	if err := c.pinnedCopies(h, env); err != nil {
		return err
	}
	if err := c.pageableCopies(h, env); err != nil {
		return err
	}
	return c.deviceCopies(h, env)
}

// pinnedCopies: Elapsed around pinned copies of two sizes per direction.
func (c *calibrator) pinnedCopies(h device.Host, env *copyEnv) error {
	var lats [][]float64
	for _, kind := range []device.CopyKind{device.HostToDevice, device.DeviceToHost} {
		var bw, lat []float64
		if err := c.warmRounds(func(measured bool) error {
			y1, err := env.t.elapsed(h, func() error { return h.Copy(env.t.s, env.copy(kind, env.pinned, copySmall)) })
			if err != nil {
				return err
			}
			y2, err := env.t.elapsed(h, func() error { return h.Copy(env.t.s, env.copy(kind, env.pinned, copyLarge)) })
			if err != nil {
				return err
			}
			if !measured {
				return nil
			}
			b := (copyLarge - copySmall) / (y2 - y1) // bytes per ns = GB/s
			bw = append(bw, b)
			lat = append(lat, y1-c.copyEnqNs-copySmall/b)
			return nil
		}); err != nil {
			return err
		}
		field := "copy.htod_gbps"
		if kind == device.DeviceToHost {
			field = "copy.dtoh_gbps"
		}
		c.record(fmt.Sprintf("pinned %s bandwidth", kind), field, "GB/s", "slope of Elapsed over 4 KiB and 64 MiB pinned copies", bw)
		c.record(fmt.Sprintf("pinned %s latency", kind), "", "ns", "intercept of the same, less the copy enqueue cost", lat)
		lats = append(lats, lat)
	}
	c.record("copy latency", "copy.latency_ns", "ns", "per round, the mean of the two directions' latencies", meanOfRounds(lats))
	return nil
}

// meanOfRounds is, round by round, the mean of several figures' rounds.
func meanOfRounds(figs [][]float64) []float64 {
	out := make([]float64, len(figs[0]))
	for i := range out {
		for _, f := range figs {
			out[i] += f[i] / float64(len(figs))
		}
	}
	return out
}

// pageableCopies: pageable copies block the host, so Host.Now around the
// call gives their bandwidth.
func (c *calibrator) pageableCopies(h device.Host, env *copyEnv) error {
	var bws [][]float64
	for _, kind := range []device.CopyKind{device.HostToDevice, device.DeviceToHost} {
		var bw []float64
		hostTime := func(bytes int64) (float64, error) {
			t0 := h.Now()
			if err := h.Copy(env.t.s, env.copy(kind, env.pageable, bytes)); err != nil {
				return 0, err
			}
			return ns(h.Now() - t0), nil
		}
		if err := c.warmRounds(func(measured bool) error {
			y1, err := hostTime(copySmall)
			if err != nil {
				return err
			}
			y2, err := hostTime(copyLarge)
			if err != nil {
				return err
			}
			if err := h.StreamSynchronize(env.t.s); err != nil {
				return err
			}
			if measured {
				bw = append(bw, (copyLarge-copySmall)/(y2-y1))
			}
			return nil
		}); err != nil {
			return err
		}
		c.record(fmt.Sprintf("pageable %s bandwidth", kind), "", "GB/s",
			"slope of Host.Now around 4 KiB and 64 MiB pageable copies (they block the host)", bw)
		bws = append(bws, bw)
	}
	c.record("pageable bandwidth", "copy.pageable_gbps", "GB/s", "per round, the mean of the two directions", meanOfRounds(bws))
	return nil
}

// deviceCopies: a device-to-device copy reads and writes every byte.
func (c *calibrator) deviceCopies(h device.Host, env *copyEnv) error {
	var mem []float64
	if err := c.warmRounds(func(measured bool) error {
		y1, err := env.t.elapsed(h, func() error { return h.Copy(env.t.s, env.copy(device.DeviceToDevice, nil, copySmall)) })
		if err != nil {
			return err
		}
		y2, err := env.t.elapsed(h, func() error { return h.Copy(env.t.s, env.copy(device.DeviceToDevice, nil, copyLarge)) })
		if err != nil {
			return err
		}
		if measured {
			mem = append(mem, 2*(copyLarge-copySmall)/(y2-y1)*1e9) // read and write: bytes per second
		}
		return nil
	}); err != nil {
		return err
	}
	c.record("device memory bandwidth", "info.mem_bandwidth", "B/s",
		"slope of Elapsed over 4 KiB and 64 MiB device-to-device copies, counting bytes read and written", mem)
	return nil
}
