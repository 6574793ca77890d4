package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// HostLaunchProbe measures the launch API cost on dev exactly as Run's
// "launch API cost" does (host.launch_ns: Host.Now around 100 empty-kernel
// launches on one stream, a warm-up round and then 7 rounds on a GPU, 3 on
// the simulator), in a device.Run of its own: a few milliseconds. gpusched
// run times it before a GPU run's first row and after its last, so a
// results file says how fast its host issued launches (host-bound rows
// carry the host's speed).
func HostLaunchProbe(dev device.Device) (Measurement, error) {
	if dev == nil {
		return Measurement{}, fmt.Errorf("calibrate: device is required")
	}
	c, err := newCalibrator(dev, nil)
	if err != nil {
		return Measurement{}, err
	}
	err = dev.Run(func(h device.Host) error {
		env := &hostEnv{h: h, le: c.emptyLaunch(1)}
		if env.s, err = h.NewStream(device.StreamOptions{}); err != nil {
			return err
		}
		if err := c.runCalls(env, []hostCall{c.launchCall()}); err != nil {
			return err
		}
		return h.Destroy(env.s)
	})
	if err != nil {
		return Measurement{}, fmt.Errorf("calibrate: host launch probe: %w", err)
	}
	m, ok := c.report.Get("host.launch_ns")
	if !ok {
		return Measurement{}, fmt.Errorf("calibrate: host launch probe measured nothing")
	}
	return m, nil
}
