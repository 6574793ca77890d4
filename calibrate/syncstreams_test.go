package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A report of the first "synchronizes over streams" (no synchronize of one
// stream again and again) gets host.sync_switch_ns from its own figures:
// per round, the mean over the stream counts of "synchronize again" less
// its host.sync_call_ns; its unobserved-work figure becomes reported
// only. A report that has the figure keeps it.
func TestDeriveSyncSwitch(t *testing.T) {
	r := &Report{Measurements: []Measurement{
		measurement("synchronize call cost", "host.sync_call_ns", "ns", "", []float64{450, 460, 470}),
		measurement(syncUnobservedName, "host.sync_completed_ns", "ns", "", []float64{100, 120, 110}),
	}}
	for i, s := range syncOverStreams {
		// Rounds 1960, 1860 and 1900 less 10 ns per stream count step.
		d := float64(10 * i)
		r.Measurements = append(r.Measurements, measurement(fmt.Sprintf("synchronize again, %d streams", s), "", "ns", "",
			[]float64{1960 - d, 1860 - d, 1900 - d}))
	}
	deriveSyncSwitch(r)
	m, ok := r.Get("host.sync_switch_ns")
	require.True(t, ok)
	// Mean over the six counts of 10 i is 25: rounds 1935, 1835, 1875 less
	// the median call cost 460.
	assert.InDeltaSlice(t, []float64{1475, 1375, 1415}, m.Rounds, 1e-9)
	assert.InDelta(t, 1415, m.Value, 1e-9)
	u, ok := r.byName(syncUnobservedName)
	require.True(t, ok)
	assert.Empty(t, u.Field, "reported only")
	n := len(r.Measurements)
	deriveSyncSwitch(r)
	assert.Len(t, r.Measurements, n, "derived once")

	// Without the per-count figures nothing is derived.
	bare := &Report{Measurements: []Measurement{measurement("synchronize call cost", "host.sync_call_ns", "ns", "", []float64{450})}}
	deriveSyncSwitch(bare)
	_, ok = bare.Get("host.sync_switch_ns")
	assert.False(t, ok)
}
