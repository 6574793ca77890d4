package calibrate

import (
	"cmp"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator each direction has one engine that runs its copies one
// after the other, each paying its latency and its bytes at the link's
// rate: a copy past the first adds copy.back_to_back_latency_ns back to
// back on one stream and copy.queued_latency_ns issued at once on as many
// (copy.latency_ns where either is left out), which the probe reads back.
func TestCopiesOneWayReadTheEngine(t *testing.T) {
	for _, lat := range [][2]float64{{0, 0}, {2280, 4200}} {
		cfg := loadConfig(t, "h200")
		cfg.Copy.BackToBackLatencyNs, cfg.Copy.QueuedLatencyNs = lat[0], lat[1]
		_, value := measured(t, cfg, "copies one way on many streams")
		for _, way := range []string{"host-to-device", "device-to-host"} {
			gbps := cfg.Copy.HtoDGBps
			if way == "device-to-host" {
				gbps = cfg.Copy.DtoHGBps
			}
			for _, kib := range []int64{4, 64, 512} {
				for i, how := range []string{"back to back on one stream", "on as many streams at once"} {
					want := cmp.Or(lat[i], cfg.Copy.LatencyNs) + float64(kib<<10)/gbps
					name := fmt.Sprintf("copies one way, %s, %d KiB, each copy past the first, %s", way, kib, how)
					assert.InDelta(t, want, value(name), want*0.02, "%s (latencies %v)", name, lat)
				}
			}
		}
	}
}
