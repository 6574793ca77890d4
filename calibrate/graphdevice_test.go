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
	truth := loadConfig(t, "h100-datasheet")
	truth.FrontEnd.GraphCopyNodeNs, truth.FrontEnd.GraphDispatchNs = 3000, 700
	rep, err := Measure(mustSim(t, truth), []string{"graph device costs"}, nil)
	require.NoError(t, err)
	m, ok := rep.Get("")
	require.True(t, ok, "every figure is reported only")
	assert.Empty(t, m.Field)

	base := loadConfig(t, "h100-datasheet")
	f := newFitted(base)
	require.NoError(t, f.fitGraphDeviceCosts(rep))
	assert.InDelta(t, 3000, f.Config.FrontEnd.GraphCopyNodeNs, 0)
	assert.InDelta(t, 700, f.Config.FrontEnd.GraphDispatchNs, 0)
	assert.Contains(t, f.Comments["front_end.graph_dispatch_ns"], "1 MiB copy, 16x4 kernels, 1 MiB copy +0%")

	other := loadConfig(t, "h100-datasheet")
	other.FrontEnd.GraphDispatchNs = 5
	g := newFitted(other)
	require.NoError(t, g.fitGraphDeviceCosts(&Report{Measurements: []Measurement{{Name: "copy latency", Value: 1}}}))
	assert.InDelta(t, 5, g.Config.FrontEnd.GraphDispatchNs, 0)
	assert.Contains(t, g.Notes[0], "no graph device costs measured")
}

// Measured on a simulator with callback_wake_ns 31 us, callback_ns 4.8 us
// and callback_handoff_ns 40 us, the callback duration, the callback
// hand-off (single, or the parked hand-offs' sweep) and the chunk chain
// with and without a host function fit back to those three from a base
// config without a wake; without the chunk chain the base config's stay.
func TestCallbackWakeFitBack(t *testing.T) {
	truth := loadConfig(t, "h100-datasheet")
	truth.FrontEnd.CallbackWakeNs, truth.FrontEnd.CallbackNs, truth.Host.CallbackHandoffNs = 31000, 4800, 40000
	sections := []string{"host API costs", "launch latency, back-to-back gap, wake-up", "host callbacks", "host thread hand-off", "graph device costs"}
	withSweep, err := Measure(mustSim(t, truth), append(sections, "parked hand-offs"), nil)
	require.NoError(t, err)
	_, ok := withSweep.byName("callback hand-off after 20 us idle")
	require.True(t, ok)
	s := newFitted(measuredCallbacks(t, withSweep))
	s.fitCallbackWake(withSweep)
	assert.InDelta(t, 31000, s.Config.FrontEnd.CallbackWakeNs, 2)
	assert.InDelta(t, 40000, s.Config.Host.CallbackHandoffNs, 2)
	assert.Contains(t, s.Comments["host.callback_handoff_ns"], "the parked hand-offs' callback sweep")

	rep, err := Measure(mustSim(t, truth), sections, nil)
	require.NoError(t, err)
	m, ok := rep.byName("host callback duration")
	require.True(t, ok)
	assert.InDelta(t, 4800+31000/32.0, m.Value, 1, "one wake among the queued callbacks")

	f := newFitted(measuredCallbacks(t, rep))
	f.fitCallbackWake(rep)
	fe := f.Config.FrontEnd
	assert.InDelta(t, 31000, fe.CallbackWakeNs, 2)
	assert.InDelta(t, 4800, fe.CallbackNs, 2)
	assert.InDelta(t, 40000, f.Config.Host.CallbackHandoffNs, 2)
	assert.Contains(t, f.Comments["front_end.callback_wake_ns"], "a host function after each of 16 launches")

	without := &Report{Measurements: []Measurement{m}}
	g := newFitted(measuredCallbacks(t, rep))
	g.Config.FrontEnd.CallbackWakeNs = 7
	g.fitCallbackWake(without)
	assert.InDelta(t, 7, g.Config.FrontEnd.CallbackWakeNs, 0)
	assert.Contains(t, g.Notes[0], "front_end.callback_wake_ns kept from the base config")
}

// measuredCallbacks is the datasheet H100 with rep's callback duration
// and callback hand-off, as Config sets them.
func measuredCallbacks(t *testing.T, rep *Report) *sim.Config {
	t.Helper()
	cfg := loadConfig(t, "h100-datasheet")
	c, ok1 := rep.Get("front_end.callback_ns")
	h, ok2 := rep.Get("host.callback_handoff_ns")
	require.True(t, ok1 && ok2)
	cfg.FrontEnd.CallbackNs, cfg.Host.CallbackHandoffNs = c.Value, h.Value
	return cfg
}
