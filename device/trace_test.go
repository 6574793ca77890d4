package device

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type traceDoc struct {
	SchemaVersion    int              `json:"schemaVersion"`
	DeviceProperties []map[string]any `json:"deviceProperties"`
	TraceEvents      []struct {
		Ph, Name, Cat string
		Pid, Tid      int
		Ts, Dur       float64
		ID            uint64 `json:"id"`
		Bp            string `json:"bp"`
		Args          map[string]any
	} `json:"traceEvents"`
}

func TestTimelineWriteJSON(t *testing.T) {
	info := Info{Name: "GPU X", SMs: 4, WarpSize: 32, MemoryBytes: 1 << 30}
	tl := Timeline{
		Processes: []TraceProcess{{Pid: 2, Name: "streams", Label: "GPU 0"}, {Pid: 1, Name: "host", Label: "CPU"}},
		Lanes:     []TraceLane{{Pid: 2, Tid: 7, Name: "stream 7"}, {Pid: 1, Tid: 0, Name: "main"}},
		Spans: []TraceSpan{
			{Pid: 2, Tid: 7, Name: "k\"1", Cat: "kernel", Start: 1500 * time.Nanosecond, Dur: 2001 * time.Nanosecond, Correlation: 5,
				Args: []TraceArg{{"stream", 7}, {"grid", DimArg(Dim3{2, 1, 1})}, {"ratio", 0.5}}},
			{Pid: 1, Tid: 0, Name: "cuLaunchKernel", Cat: CatRuntime, Start: 1000 * time.Nanosecond, Dur: 300 * time.Nanosecond, Correlation: 5},
		},
		Device:  &info,
		Regions: []TraceRegion{{Pid: TraceHostPid, Step: 3, Start: 900 * time.Nanosecond, End: 3600 * time.Nanosecond}},
	}
	var a, b bytes.Buffer
	require.NoError(t, tl.WriteJSON(&a))
	require.NoError(t, tl.WriteJSON(&b))
	assert.Equal(t, a.String(), b.String(), "deterministic")
	require.NoError(t, CheckTraceJSON(a.Bytes()))

	var doc traceDoc
	require.NoError(t, json.Unmarshal(a.Bytes(), &doc), a.String())
	assert.Equal(t, 1, doc.SchemaVersion)
	require.Len(t, doc.DeviceProperties, 1)
	assert.Equal(t, "GPU X", doc.DeviceProperties[0]["name"])
	assert.Equal(t, 4.0, doc.DeviceProperties[0]["numSms"])
	// 2 processes x 3 and 2 lanes x 2 metadata events, then the region,
	// the call, the flow's start, the kernel and the flow's end.
	ev := doc.TraceEvents
	require.Len(t, ev, 10+5)
	assert.Equal(t, "process_name", ev[0].Name)
	assert.Equal(t, "host", ev[0].Args["name"])
	assert.Equal(t, "CPU", ev[1].Args["labels"])
	assert.Equal(t, "thread_name", ev[6].Name)
	assert.Equal(t, "main", ev[6].Args["name"])
	region, call, start, kernel, end := ev[10], ev[11], ev[12], ev[13], ev[14]
	assert.Equal(t, "ProfilerStep#3", region.Name)
	assert.Equal(t, "user_annotation", region.Cat)
	assert.Equal(t, 0.9, region.Ts)
	assert.Equal(t, 2.7, region.Dur)
	assert.Equal(t, "cuLaunchKernel", call.Name)
	assert.Equal(t, 1.0, call.Ts)
	assert.Equal(t, 0.3, call.Dur)
	assert.Equal(t, 5.0, call.Args["correlation"])
	assert.Equal(t, `k"1`, kernel.Name)
	assert.Equal(t, "X", kernel.Ph)
	assert.Equal(t, 1.5, kernel.Ts)
	assert.Equal(t, 2.001, kernel.Dur)
	assert.Equal(t, 5.0, kernel.Args["correlation"], "the kernel carries its launch's correlation id")
	assert.Equal(t, 7.0, kernel.Args["stream"], "numeric args stay numbers")
	assert.Equal(t, []any{2.0, 1.0, 1.0}, kernel.Args["grid"])
	assert.Equal(t, 0.5, kernel.Args["ratio"])
	assert.Equal(t, "s", start.Ph)
	assert.Equal(t, [3]any{1, 0, 1.0}, [3]any{start.Pid, start.Tid, start.Ts}, "the flow starts at the call")
	assert.Equal(t, "f", end.Ph)
	assert.Equal(t, "e", end.Bp)
	assert.Equal(t, [3]any{2, 7, 1.5}, [3]any{end.Pid, end.Tid, end.Ts}, "and ends at the kernel")
	assert.Equal(t, start.ID, end.ID)
}

func TestCheckTraceJSON(t *testing.T) {
	ok := `{"schemaVersion":1,"traceEvents":[` +
		`{"ph":"X","name":"a","pid":1,"tid":0,"ts":1,"dur":2,"args":{"stream":3}},` +
		`{"ph":"s","name":"f","pid":1,"tid":0,"ts":1,"id":4},{"ph":"f","name":"f","pid":2,"tid":3,"ts":2,"id":4,"bp":"e"}]}`
	require.NoError(t, CheckTraceJSON([]byte(ok)))
	for name, tc := range map[string]struct{ doc, want string }{
		"not JSON":      {`{"traceEvents":[`, "not JSON"},
		"no version":    {`{"traceEvents":[]}`, "schemaVersion"},
		"no ts":         {`{"schemaVersion":1,"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":0,"dur":1}]}`, `"ts"`},
		"no pid":        {`{"schemaVersion":1,"traceEvents":[{"ph":"X","name":"a","tid":0,"ts":0,"dur":1}]}`, `"pid"`},
		"negative":      {`{"schemaVersion":1,"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":0,"ts":0,"dur":-1}]}`, "negative"},
		"string stream": {`{"schemaVersion":1,"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":0,"ts":0,"dur":1,"args":{"stream":"7"}}]}`, `"stream" is not a number`},
		"lone start":    {`{"schemaVersion":1,"traceEvents":[{"ph":"s","pid":1,"tid":0,"ts":0,"id":1}]}`, "never finishes"},
		"backwards":     {`{"schemaVersion":1,"traceEvents":[{"ph":"s","pid":1,"tid":0,"ts":5,"id":1},{"ph":"f","pid":1,"tid":0,"ts":4,"id":1}]}`, "before it starts"},
		"two starts":    {`{"schemaVersion":1,"traceEvents":[{"ph":"s","pid":1,"tid":0,"ts":5,"id":1},{"ph":"s","pid":1,"tid":0,"ts":5,"id":1}]}`, "two"},
	} {
		err := CheckTraceJSON([]byte(tc.doc))
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tc.want, name)
		}
	}
}
