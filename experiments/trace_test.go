package experiments

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// TestTraceMarksTheMeasuredRun: a row's timeline is in the trace event
// format, lists the device, and marks the timed run (after the untimed warm
// run) as ProfilerStep#0, as long as the row's makespan.
func TestTraceMarksTheMeasuredRun(t *testing.T) {
	e := parseSmall(t, "")
	var buf bytes.Buffer
	row, err := Trace(e, e.Workloads[0].Name, e.Schedulers[1].Name, "", &buf)
	require.NoError(t, err)
	require.NoError(t, device.CheckTraceJSON(buf.Bytes()))
	var doc struct {
		DeviceProperties []struct{ Name string }
		TraceEvents      []struct {
			Ph, Name, Cat string
			Ts, Dur       float64
		}
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	require.Len(t, doc.DeviceProperties, 1)
	assert.Equal(t, row.DeviceName, doc.DeviceProperties[0].Name)
	var steps []float64
	kernels := 0
	var first float64 = -1
	for _, ev := range doc.TraceEvents {
		if ev.Name == "ProfilerStep#0" {
			assert.Equal(t, "user_annotation", ev.Cat)
			steps = append(steps, ev.Dur)
			first = ev.Ts
		}
		if ev.Cat == "kernel" {
			kernels++
		}
	}
	require.Len(t, steps, 1, "one measured region")
	assert.InDelta(t, row.Makespan.Median, steps[0], 0.002, "the region is the timed run")
	assert.Positive(t, first, "after the warm run and the setup")
	assert.Positive(t, kernels)
}
