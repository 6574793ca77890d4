package calibrate

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator the probe reads back the parked wake and its growth:
// the queue hand-off after each long idle is host.handoff_ns plus
// host.parked_wake_ns plus host.parked_wake_per_decade_ns per tenfold of
// the idle beyond 300 us, and so is the mean; the callback hand-off pays
// the callback thread's park too.
func TestLongWaitsReadTheParkedWake(t *testing.T) {
	cfg := loadConfig(t, "h200")
	_, value := measured(t, cfg, "long waits")
	for _, idle := range longIdles {
		q := value(fmt.Sprintf("long waits: queue hand-off after %d us idle", idle))
		want := cfg.Host.ParkedWakeNs + cfg.Host.HandoffNs + cfg.Host.ParkedWakePerDecadeNs*math.Log10(float64(idle)/300)
		assert.InDelta(t, want, q, 1000, "queue hand-off after %d us", idle)
		assert.InDelta(t, q, value(fmt.Sprintf("long waits: queue hand-off (mean) after %d us idle", idle)), 1)
		cb := value(fmt.Sprintf("long waits: callback hand-off after %d us idle", idle))
		assert.Greater(t, cb, cfg.FrontEnd.CallbackParkedWakeNs+cfg.FrontEnd.CallbackWakeNs, "callback hand-off after %d us", idle)
	}
}
