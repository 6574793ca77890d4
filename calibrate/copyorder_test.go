package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator a direction's copies run one after the other on one
// engine, in the order their streams reach them: of n copies issued at
// once, the first ends one copy's time after the gate (the cross-stream
// wait's front_end.event_wait_ns, its latency and its bytes at the link's
// rate), and each later one a queued copy's time
// (copy.queued_latency_ns where set, else copy.latency_ns, plus its bytes)
// after the one before; the probe reads that order back.
func TestCopiesAtOnceReadTheEngineOrder(t *testing.T) {
	cfg := loadConfig(t, "h200")
	_, value := measured(t, cfg, "copies at once, each timed")
	for _, way := range []string{"host-to-device", "device-to-host"} {
		gbps := cfg.Copy.HtoDGBps
		if way == "device-to-host" {
			gbps = cfg.Copy.DtoHGBps
		}
		for _, kib := range []int64{256, 1024} {
			bytes := float64(kib<<10) / gbps // ns at the link's rate
			lone := value(fmt.Sprintf("copies at once, %s, %d KiB, a lone copy's end", way, kib))
			assert.InDelta(t, cfg.FrontEnd.EventWaitNs+cfg.Copy.LatencyNs+bytes, lone, 0.05*lone, "%s %d KiB: a lone copy", way, kib)
			queued := cfg.Copy.LatencyNs
			if cfg.Copy.QueuedLatencyNs > 0 {
				queued = cfg.Copy.QueuedLatencyNs
			}
			for _, n := range []int{2, 4, 8} {
				first := value(coName(way, kib, n, "first"))
				last := value(coName(way, kib, n, "last"))
				assert.InDelta(t, lone, first, 0.05*lone, "%s %d KiB, %d streams: the first ends as a lone copy does", way, kib, n)
				want := lone + float64(n-1)*(queued+bytes)
				assert.InDelta(t, want, last, 0.05*want, "%s %d KiB, %d streams: the last after n-1 more copies", way, kib, n)
			}
		}
	}
}
