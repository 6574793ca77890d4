package calibrate

import (
	"fmt"
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
	if edit != nil {
		edit(cfg)
	}
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

// On a config without a per-run cost, no call makes the launch after it
// cost more than its twin; the first launch's own figure carries the
// config's launch cost.
func TestPerRunResetSeesNoCostWithoutOne(t *testing.T) {
	for key, extra := range perRunExtras(t, "h100", nil) {
		assert.InDelta(t, 0, extra, 2, key)
	}
}
