package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// On the simulator, graph steps' parts are the config's costs: a chain of
// 8 short kernels round-robin over 8 streams is 8 operations, 7
// cross-stream waits, 8 levels and one segment; its instantiation is the
// base plus 8 nodes of 12 arguments plus a segment, its capture begins
// and ends at host.capture_ns, a fresh exec's first launch call exceeds a
// later one's by 8 x host.first_graph_launch_per_node_ns, its exec
// destroy is host.destroy_ns plus 8 nodes plus a segment, and the loop
// timed part by part takes what GraphPerStep's own Run takes.
func TestGraphStepsOnSim(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	cfg.Host.FirstGraphLaunchPerNodeNs, cfg.Host.InstantiatePerArgNs = 700, 25
	cfg.Host.InstantiatePerSegmentNs, cfg.Host.DestroyExecPerSegmentNs = 4000, 2500
	dev := mustSim(t, cfg)
	c, err := newCalibrator(dev, nil)
	require.NoError(t, err)
	c.rounds = 1
	sweep := sweepShapes()[0]
	require.Equal(t, "sweep 8 nodes x 1 wide", sweep.name)
	require.NoError(t, dev.Run(func(h device.Host) error {
		return c.graphStepsOf(h, []graphStepShape{sweep, campaignShapes()[3]})
	}))
	get := func(shape, what string) float64 {
		m, ok := c.report.byName(GraphStepPrefix + shape + ": " + what)
		require.True(t, ok, what)
		return m.Value
	}
	s, hc := sweep.name, cfg.Host
	assert.Equal(t, 8.0, get(s, "operations"))
	assert.Equal(t, 8.0, get(s, "kernel nodes"))
	assert.Equal(t, 7.0, get(s, "waits"))
	assert.Equal(t, 8.0, get(s, "levels"))
	assert.Equal(t, 1.0, get(s, "widest level"))
	assert.Equal(t, 0.0, get(s, "plan"), "Go time is no simulated time")
	assert.Equal(t, hc.CaptureNs, get(s, "capture begin"))
	assert.Equal(t, hc.CaptureNs, get(s, "capture end"))
	assert.InDelta(t, hc.InstantiateBaseNs+8*hc.InstantiatePerNodeNs+8*12*hc.InstantiatePerArgNs+4000, get(s, "instantiate"), 1, "a chain: one segment")
	assert.InDelta(t, 8*700, get(s, "first launch call")-get(s, "later launch call"), 1)
	assert.InDelta(t, hc.DestroyNs+8*hc.DestroyExecPerNodeNs+2500, get(s, "exec destroy"), 1)
	for _, shape := range []string{s, "big"} {
		assert.InEpsilon(t, get(shape, "scheduler's run"), get(shape, "run: total"), 0.01, shape)
		assert.Greater(t, get(shape, "later launch's device span"), 0.0, shape)
	}
	assert.Equal(t, 16.0, get("big", "operations"))
	assert.Equal(t, 4.0, get("big", "levels"))
	assert.Equal(t, 4.0, get("big", "widest level"))
}

// Fitted to the simulator's own graph steps, the per-segment costs come
// back (the parts are linear in them), and the comment gives the
// campaign shapes' error, zero here.
func TestGraphStepsFitGivesBackSegmentCosts(t *testing.T) {
	truth, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	truth.Host.InstantiatePerSegmentNs, truth.Host.DestroyExecPerSegmentNs = 4200, 2600
	rep, err := simulateGraphSteps(truth, append(sweepShapes(), campaignShapes()...))
	require.NoError(t, err)
	base := *truth
	base.Host.InstantiatePerSegmentNs, base.Host.DestroyExecPerSegmentNs = 0, 0
	f := &Fitted{Config: &base, Comments: map[string]string{}}
	require.NoError(t, f.fitGraphSteps(rep))
	assert.Equal(t, 4200.0, f.Config.Host.InstantiatePerSegmentNs)
	assert.Equal(t, 2600.0, f.Config.Host.DestroyExecPerSegmentNs)
	assert.Contains(t, f.Comments["host.instantiate_per_segment_ns"], "the campaign's shapes (not fitted) 0% median, 0% max")

	other := *truth
	other.Host.InstantiatePerSegmentNs = 0
	bare := &Fitted{Config: &other, Comments: map[string]string{}}
	require.NoError(t, bare.fitGraphSteps(&Report{}))
	assert.Zero(t, bare.Config.Host.InstantiatePerSegmentNs, "no graph steps measured: the base config's value stays")
}
