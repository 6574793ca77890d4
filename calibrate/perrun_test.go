package calibrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// perRunExtras runs "per-run reset" on cfg and returns every call and
// mode's first less twin (host), by "call, mode".
func perRunExtras(t *testing.T, cfgName string, edit func(*sim.Config)) map[string]float64 {
	t.Helper()
	cfg := loadConfig(t, cfgName)
	edit(cfg)
	rep, err := Measure(mustSim(t, cfg), []string{"per-run reset"}, nil)
	require.NoError(t, err)
	out := map[string]float64{}
	for _, pc := range perRunCalls {
		for _, mode := range perRunModes {
			name := fmt.Sprintf("per-run: after %s, %s", pc.name, mode)
			for _, what := range []string{": first launch", ": event record call, first less twin", ": launch call, first less twin", ": device span, first less twin"} {
				_, ok := rep.byName(name + what)
				require.True(t, ok, name+what)
			}
			m, ok := rep.byName(name + ": first less twin")
			require.True(t, ok, name)
			out[pc.name+", "+mode] = m.Value
		}
	}
	return out
}

// Without host.cold_call_ns no call makes the launch after it cost more
// than its twin; with it, only the host writes do (the simulated host is
// told its caches are cold), by the field, for every launch mode: no CUDA
// call of the reset pays, as on the GPU.
func TestPerRunResetChargesOnlyColdCaches(t *testing.T) {
	without := perRunExtras(t, "h100", func(c *sim.Config) { c.Host.ColdCallNs = 0 })
	with := perRunExtras(t, "h100", func(c *sim.Config) { c.Host.ColdCallNs = 14e3 })
	for key, extra := range without {
		assert.InDelta(t, 0, extra, 2, key)
		want := 0.0
		if strings.HasPrefix(key, "host writes 8 MiB, ") {
			want = 14e3
		}
		assert.InDelta(t, want, with[key], 2, key)
	}
}
