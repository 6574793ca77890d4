package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On the simulator a copy each way runs on its own engine at full speed
// (the pair takes as long as the longer alone), and two copies the same
// way take one engine's turns (twice one alone).
func TestCopiesBothWaysReadTheEngines(t *testing.T) {
	rep, err := Measure(mustSim(t, loadConfig(t, "h200")), []string{"copies both ways at once"}, nil)
	require.NoError(t, err)
	value := func(name string) float64 {
		m, ok := rep.byName(name)
		require.True(t, ok, name)
		return m.Value
	}
	for _, mib := range []string{"4", "64"} {
		assert.InDelta(t, 1, value("copies, "+mib+" MiB, one each way at once over the longer alone"), 0.02, mib)
		assert.InDelta(t, 1, value("copies, "+mib+" MiB, two host-to-device at once over twice one alone"), 0.02, mib)
		assert.InDelta(t, 1, value("copies, "+mib+" MiB, two device-to-host at once over twice one alone"), 0.02, mib)
	}
}
