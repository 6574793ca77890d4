package sim

import (
	"testing"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/devicetest"
)

// The conformance suite on every device config, with exact assertions
// where blocks start together (a config with a block distributor's time,
// as a calibrated one, staggers them by fractions of a nanosecond).
func TestConformance(t *testing.T) {
	spin := &device.Kernel{Module: "devicetest", Name: "spin", Regs: 10}
	for _, name := range ConfigNames() {
		t.Run(name, func(t *testing.T) {
			cfg, err := LoadConfig(name)
			if err != nil {
				t.Fatal(err)
			}
			devicetest.Run(t, func(t *testing.T) device.Device {
				d, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				return d
			}, devicetest.Options{Exact: cfg.FrontEnd.BlockDispatchNs == 0, Spin: spin})
		})
	}
}
