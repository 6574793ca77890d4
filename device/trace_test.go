package device

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimelineWriteJSON(t *testing.T) {
	tl := Timeline{
		Processes: []TraceProcess{{Pid: 2, Name: "streams"}, {Pid: 1, Name: "host"}},
		Lanes:     []TraceLane{{Pid: 2, Tid: 7, Name: "stream 7"}, {Pid: 1, Tid: 0, Name: "main"}},
		Spans: []TraceSpan{
			{Pid: 2, Tid: 7, Name: "k\"1", Cat: "kernel", Start: 1500 * time.Nanosecond, Dur: 2001 * time.Nanosecond,
				Args: []TraceArg{{"grid", "(1,1,1)"}}},
			{Pid: 1, Tid: 0, Name: "launch", Cat: "host", Start: 1000 * time.Nanosecond, Dur: 300 * time.Nanosecond},
		},
	}
	var a, b bytes.Buffer
	require.NoError(t, tl.WriteJSON(&a))
	require.NoError(t, tl.WriteJSON(&b))
	assert.Equal(t, a.String(), b.String(), "deterministic")

	var doc struct {
		DisplayTimeUnit string `json:"displayTimeUnit"`
		TraceEvents     []struct {
			Ph, Name, Cat string
			Pid, Tid      int
			Ts, Dur       float64
			Args          map[string]string
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(a.Bytes(), &doc), a.String())
	require.Len(t, doc.TraceEvents, 6)
	ev := doc.TraceEvents
	assert.Equal(t, "process_name", ev[0].Name)
	assert.Equal(t, "host", ev[0].Args["name"])
	assert.Equal(t, "thread_name", ev[2].Name)
	assert.Equal(t, "main", ev[2].Args["name"])
	// Spans sorted by start.
	assert.Equal(t, "launch", ev[4].Name)
	assert.Equal(t, 1.0, ev[4].Ts)
	assert.Equal(t, 0.3, ev[4].Dur)
	assert.Equal(t, `k"1`, ev[5].Name)
	assert.Equal(t, "X", ev[5].Ph)
	assert.Equal(t, 1.5, ev[5].Ts)
	assert.Equal(t, 2.001, ev[5].Dur)
	assert.Equal(t, "(1,1,1)", ev[5].Args["grid"])
}
