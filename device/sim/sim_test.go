package sim

import (
	"testing"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/devicetest"
)

// The conformance suite on every device config, with exact assertions.
func TestConformance(t *testing.T) {
	spin := &device.Kernel{Module: "devicetest", Name: "spin", Regs: 10}
	for _, name := range ConfigNames() {
		t.Run(name, func(t *testing.T) {
			devicetest.Run(t, func(t *testing.T) device.Device {
				d, err := NewNamed(name)
				if err != nil {
					t.Fatal(err)
				}
				return d
			}, devicetest.Options{Exact: true, Spin: spin})
		})
	}
}
