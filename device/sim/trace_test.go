package sim

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

type traceEvent struct {
	Ph, Name, Cat string
	Pid, Tid      int
	Ts            float64
	ID            uint64
	Args          map[string]any
}

func traceEvents(t *testing.T, d *Device) []traceEvent {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, d.WriteTrace(&b))
	require.NoError(t, device.CheckTraceJSON(b.Bytes()), "the trace event format")
	var doc struct{ TraceEvents []traceEvent }
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	return doc.TraceEvents
}

// TestTraceLinksCallsToTheirWork: every kernel and copy carries the
// correlation id of the host call that launched it (for a graph's nodes,
// the graph's launch), numeric device and stream ids, and a flow from the
// call to it.
func TestTraceLinksCallsToTheirWork(t *testing.T) {
	d := newH100(t, WithTrace(true))
	require.NoError(t, d.Run(func(h device.Host) error {
		if err := mixed(h); err != nil {
			return err
		}
		x, s := graphOf(t, h, 3, 1, 0)
		if err := h.GraphLaunch(x, s); err != nil {
			return err
		}
		return h.Synchronize()
	}))
	ev := traceEvents(t, d)
	calls := map[float64]traceEvent{}
	for _, e := range ev {
		if e.Cat == device.CatRuntime && e.Args["correlation"] != nil {
			calls[e.Args["correlation"].(float64)] = e
		}
	}
	flowsTo := map[[2]float64]bool{} // (pid, ts) of every flow's end
	for _, e := range ev {
		if e.Ph == "f" {
			flowsTo[[2]float64{float64(e.Pid), e.Ts}] = true
		}
	}
	launchedBy := map[string]int{}
	for _, e := range ev {
		if e.Ph != "X" || (e.Cat != "kernel" && e.Cat != "gpu_memcpy") {
			continue
		}
		corr, ok := e.Args["correlation"].(float64)
		require.True(t, ok, "%s %s has a correlation id", e.Cat, e.Name)
		call, ok := calls[corr]
		require.True(t, ok, "%s's correlation %v names a host call", e.Name, corr)
		launchedBy[call.Name]++
		assert.IsType(t, 0.0, e.Args["stream"], "stream ids are numbers")
		assert.Equal(t, 0.0, e.Args["device"])
		assert.True(t, flowsTo[[2]float64{float64(e.Pid), e.Ts}], "a flow ends at %s", e.Name)
	}
	assert.Equal(t, 3*20, launchedBy["cuLaunchKernel"], "mixed's stream kernels")
	assert.Equal(t, 15+3+1, launchedBy["cuGraphLaunch"], "mixed's graph kernels, and this graph's 3 kernels and its copy")
	assert.Positive(t, launchedBy["cuMemcpyAsync"])
}
