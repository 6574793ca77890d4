package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator each direction has one engine that runs its copies one
// after the other, each paying copy.latency_ns and its bytes at the link's
// rate: a copy past the first adds that much whether the copies are back to
// back on one stream or issued at once on as many.
func TestCopiesOneWayReadTheEngine(t *testing.T) {
	cfg := loadConfig(t, "h200")
	_, value := measured(t, cfg, "copies one way on many streams")
	for _, way := range []string{"host-to-device", "device-to-host"} {
		gbps := cfg.Copy.HtoDGBps
		if way == "device-to-host" {
			gbps = cfg.Copy.DtoHGBps
		}
		for _, kib := range []int64{4, 64, 512} {
			want := cfg.Copy.LatencyNs + float64(kib<<10)/gbps
			for _, how := range []string{"back to back on one stream", "on as many streams at once"} {
				name := fmt.Sprintf("copies one way, %s, %d KiB, each copy past the first, %s", way, kib, how)
				assert.InDelta(t, want, value(name), want*0.02, name)
			}
		}
	}
}
