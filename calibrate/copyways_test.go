package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator a copy each way runs on its own engine, both moving
// copy.duplex_slowdown times slower while both move (the pair takes the
// longer alone stretched by nearly that much), and two copies the same way
// take one engine's turns (twice one alone).
func TestCopiesBothWaysReadTheEngines(t *testing.T) {
	// The probe reads back the simulator's duplex slowdown, whatever it is
	// set to (0: both directions at full speed at once), and sees two
	// copies the same way take turns at no loss.
	for _, duplex := range []float64{0, 1.12, 1.5} {
		cfg := loadConfig(t, "h200")
		cfg.Copy.DuplexSlowdown = duplex
		rep, value := measured(t, cfg, "copies both ways at once")
		want := max(duplex, 1)
		assert.InDelta(t, want, value("copies, duplex slowdown"), 0.01, "duplex %g", duplex)
		m, _ := rep.byName("copies, duplex slowdown")
		assert.Equal(t, "copy.duplex_slowdown", m.Field)
		for _, mib := range []string{"4", "64"} {
			both := value("copies, " + mib + " MiB, one each way at once over the longer alone")
			assert.GreaterOrEqual(t, both, 1+(want-1)*0.8-0.005, "duplex %g, %s MiB: the latency dilutes the slowdown only a little", duplex, mib)
			assert.LessOrEqual(t, both, want+0.01, "duplex %g, %s MiB", duplex, mib)
			assert.InDelta(t, 1, value("copies, "+mib+" MiB, two host-to-device at once over twice one alone"), 0.02, mib)
			assert.InDelta(t, 1, value("copies, "+mib+" MiB, two device-to-host at once over twice one alone"), 0.02, mib)
		}
	}
}
