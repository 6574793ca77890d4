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
			// The chunks fork their branches from the copy in: with
			// graph_launch_fork_branch_ns set, the branch field is paid
			// once a launch and the slope is the fork field's. The fit is
			// of configs that charge every branch the branch field.
			truth.Host.GraphLaunchForkBranchNs = 0
			if tc.slope == "branches" {
				truth.Host.GraphLaunchBranchNs = tc.per
			} else {
				truth.Host.GraphLaunchJoinNs = tc.per
			}
			base, err := sim.LoadConfig("h100")
			require.NoError(t, err)
			base.Host.GraphLaunchForkBranchNs = 0
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
	fork := base.Host.GraphLaunchForkBranchNs
	base.Host.GraphLaunchForkBranchNs = 0
	_, err = FitGraphLaunch(&Report{}, base, "branches")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "launch calls of 0 chunk graph width(s)")
	base.Host.GraphLaunchForkBranchNs = fork
	_, err = FitGraphLaunch(&Report{}, base, "branches")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "host.graph_launch_fork_branch_ns")
	_, err = FitGraphLaunch(&Report{}, base, "kernels")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown graph launch slope "kernels" (one of branches, joins)`)
}
