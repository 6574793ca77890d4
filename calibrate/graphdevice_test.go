package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// Measured on a simulator with graph_copy_node_ns 3 us and
// graph_dispatch_ns 0.7 us, the graph device costs fit back to those
// values from a base config without them; a report without the section
// keeps the base config's.
func TestGraphDeviceCostsFitBack(t *testing.T) {
	truth, err := sim.LoadConfig("h100-datasheet")
	require.NoError(t, err)
	truth.FrontEnd.GraphCopyNodeNs, truth.FrontEnd.GraphDispatchNs = 3000, 700
	rep, err := Measure(mustSim(t, truth), []string{"graph device costs"}, nil)
	require.NoError(t, err)
	m, ok := rep.Get("")
	require.True(t, ok, "every figure is reported only")
	assert.Empty(t, m.Field)

	base, err := sim.LoadConfig("h100-datasheet")
	require.NoError(t, err)
	f := &Fitted{Config: base, Comments: map[string]string{}}
	require.NoError(t, f.fitGraphDeviceCosts(rep))
	assert.InDelta(t, 3000, f.Config.FrontEnd.GraphCopyNodeNs, 0)
	assert.InDelta(t, 700, f.Config.FrontEnd.GraphDispatchNs, 0)
	assert.Contains(t, f.Comments["front_end.graph_dispatch_ns"], "1 MiB copy, 16x4 kernels, 1 MiB copy +0%")

	other, err := sim.LoadConfig("h100-datasheet")
	require.NoError(t, err)
	other.FrontEnd.GraphDispatchNs = 5
	g := &Fitted{Config: other, Comments: map[string]string{}}
	require.NoError(t, g.fitGraphDeviceCosts(&Report{Measurements: []Measurement{{Name: "copy latency", Value: 1}}}))
	assert.InDelta(t, 5, g.Config.FrontEnd.GraphDispatchNs, 0)
	assert.Contains(t, g.Notes[0], "no graph device costs measured")
}
