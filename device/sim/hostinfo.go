package sim

import "github.com/gpusched/gpusched/device"

// DeviceInfo makes every simulated host thread a device.InfoHost.
func (th *thread) DeviceInfo() device.Info { return th.d.info }

var _ device.InfoHost = (*thread)(nil)
