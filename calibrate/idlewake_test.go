package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The idle-wake probe reads the simulator's launch path, which has no idle
// wake: after every idle time a launch and synchronize of the 5 us kernel
// costs the config's launch, launch latency and synchronize wake-up, so the
// probe reports one regime; a slower launch moves every idle time alike.
func TestIdleWakeSeesNoStepOnTheSimulator(t *testing.T) {
	measure := func(launchNs float64) map[int]float64 {
		cfg := loadConfig(t, "h100")
		cfg.Host.LaunchNs = launchNs
		rep, err := Measure(mustSim(t, cfg), []string{"device idle wake"}, nil)
		require.NoError(t, err)
		out := map[int]float64{}
		for _, idle := range idleWakeIdles {
			m, ok := rep.byName(fmt.Sprintf("launch and synchronize of a 5 us kernel after %d us idle", idle))
			require.True(t, ok, "idle %d us", idle)
			out[idle] = m.Value
		}
		for _, name := range []string{"idle wake: GPU idle before a launch pays more", "idle wake: extra cost once idle"} {
			m, ok := rep.byName(name)
			require.True(t, ok, name)
			assert.Zero(t, m.Value, "%s: one regime on the simulator", name)
		}
		return out
	}
	base, slower := measure(4816), measure(6816)
	for _, idle := range idleWakeIdles {
		assert.InDelta(t, base[idleWakeIdles[0]], base[idle], 1, "idle %d us", idle)
		assert.InDelta(t, 2000, slower[idle]-base[idle], 1, "idle %d us: the launch cost is in the figure", idle)
	}
	assert.Greater(t, base[0], 4816.0, "at least the launch call")
}
