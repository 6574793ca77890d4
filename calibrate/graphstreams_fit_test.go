package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// chunkReport is "graph chunks over streams" measured on a simulator of
// truth.
func chunkReport(t *testing.T, truth *sim.Config) *Report {
	t.Helper()
	rep, err := Measure(mustSim(t, truth), []string{"graph chunks over streams"}, nil)
	require.NoError(t, err)
	return rep
}

func TestGraphLaunchFitRecoversTheSimulatedFields(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the chunk graphs eight times")
	}
	for _, tc := range []struct {
		slope      string
		fixed, per float64
		perField   func(h *sim.HostCosts) float64
	}{
		{"branches", 2000, 1600, func(h *sim.HostCosts) float64 { return h.GraphLaunchBranchNs }},
		{"joins", 1500, 300, func(h *sim.HostCosts) float64 { return h.GraphLaunchJoinNs }},
	} {
		t.Run(tc.slope, func(t *testing.T) {
			truth, err := sim.LoadConfig("h100")
			require.NoError(t, err)
			truth.Host.GraphLaunchNs = tc.fixed
			if tc.slope == "branches" {
				truth.Host.GraphLaunchBranchNs = tc.per
			} else {
				truth.Host.GraphLaunchJoinNs = tc.per
			}
			base, err := sim.LoadConfig("h100")
			require.NoError(t, err)
			f, err := FitGraphLaunch(chunkReport(t, truth), base, tc.slope)
			require.NoError(t, err)
			// The simulator's launch costs are linear in both fields:
			// the fit lands on them but for rounding to whole ns.
			assert.InDelta(t, tc.fixed, f.Config.Host.GraphLaunchNs, 2)
			assert.InDelta(t, tc.per, tc.perField(&f.Config.Host), 2)
			assert.Contains(t, f.Comments["host.graph_launch_ns"], "-> 0.0%")
			assert.Equal(t, 878.1, base.Host.GraphLaunchNs, "the base config is not changed")
		})
	}
}

func TestGraphLaunchFitRefusals(t *testing.T) {
	base, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	_, err = FitGraphLaunch(&Report{}, base, "branches")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "launch calls of 0 chunk graph width(s)")
	_, err = FitGraphLaunch(&Report{}, base, "kernels")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown graph launch slope "kernels" (one of branches, joins)`)
}
