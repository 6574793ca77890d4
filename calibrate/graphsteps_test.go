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
// cross-stream waits, 8 levels; its instantiation is the base plus 8
// nodes of 12 arguments, its capture begins and ends at host.capture_ns, a fresh exec's
// first launch call exceeds a later one's by 8 x
// host.first_graph_launch_per_node_ns, its exec destroy is host.destroy_ns
// plus 8 x host.destroy_exec_per_node_ns, and the loop timed part by part
// takes what GraphPerStep's own Run takes.
func TestGraphStepsOnSim(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	cfg.Host.FirstGraphLaunchPerNodeNs, cfg.Host.InstantiatePerArgNs = 700, 25
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
	assert.InDelta(t, hc.InstantiateBaseNs+8*hc.InstantiatePerNodeNs+8*12*hc.InstantiatePerArgNs, get(s, "instantiate"), 1)
	assert.InDelta(t, 8*700, get(s, "first launch call")-get(s, "later launch call"), 1)
	assert.InDelta(t, hc.DestroyNs+8*hc.DestroyExecPerNodeNs, get(s, "exec destroy"), 1)
	for _, shape := range []string{s, "big"} {
		assert.InEpsilon(t, get(shape, "scheduler's run"), get(shape, "run: total"), 0.01, shape)
		assert.Greater(t, get(shape, "later launch's device span"), 0.0, shape)
	}
	assert.Equal(t, 16.0, get("big", "operations"))
	assert.Equal(t, 4.0, get("big", "levels"))
	assert.Equal(t, 4.0, get("big", "widest level"))
}
