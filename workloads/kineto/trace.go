package kineto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// event is one Chrome trace event of a Kineto trace, as far as the importer
// reads it.
type event struct {
	Ph   string                     `json:"ph"`
	Cat  string                     `json:"cat"`
	Name string                     `json:"name"`
	Pid  json.RawMessage            `json:"pid"`
	Tid  json.RawMessage            `json:"tid"`
	Ts   json.Number                `json:"ts"`
	Dur  json.Number                `json:"dur"`
	Args map[string]json.RawMessage `json:"args"`
}

// rawTrace is the top level of a Kineto trace.
type rawTrace struct {
	DeviceProperties []deviceProps `json:"deviceProperties"`
	TraceEvents      []event       `json:"traceEvents"`
}

// deviceProps is one entry of the trace's deviceProperties.
type deviceProps struct {
	ID                          int    `json:"id"`
	Name                        string `json:"name"`
	ComputeMajor                int    `json:"computeMajor"`
	ComputeMinor                int    `json:"computeMinor"`
	MaxThreadsPerBlock          int    `json:"maxThreadsPerBlock"`
	MaxThreadsPerMultiprocessor int    `json:"maxThreadsPerMultiprocessor"`
	RegsPerMultiprocessor       int    `json:"regsPerMultiprocessor"`
	WarpSize                    int    `json:"warpSize"`
	SharedMemPerMultiprocessor  int    `json:"sharedMemPerMultiprocessor"`
	SharedMemPerBlockOptin      int    `json:"sharedMemPerBlockOptin"`
	NumSms                      int    `json:"numSms"`
}

// span is a CPU-side range: an operator, a runtime call, an annotation.
type span struct {
	name    string
	cat     string
	tid     string
	ts, end int64 // nanoseconds
	corr    int64 // runtime calls: correlation id
	rfID    int64 // operators: record function id (-1 if none)
	extID   int64 // operators: External id (-1 if none)
	top     *span // operators: the outermost operator around it (itself if none)
}

// gpuOp is one kernel, copy or memset as the GPU ran it.
type gpuOp struct {
	kind    string // kernel, memcpy, memset
	name    string // kernel symbol or Kineto's memcpy/memset name
	stream  int64
	device  int64
	corr    int64
	ts, dur int64 // nanoseconds
	grid    [3]int
	block   [3]int
	regs    int
	shared  int
	bytes   int64
	graph   bool  // launched by a graph launch
	graphID int64 // CUDA graph id (-1 if unknown)
	nodeID  int64 // graph node id (-1 if unknown)
	launch  *span // the runtime call that launched it (nil if not in the trace)
	op      *span // the innermost operator around that call (nil if none)
	index   int   // position in program order
}

// streamWait is a recorded cudaStreamWaitEvent: from its correlation on,
// stream waits for the work issued to onStream before the event record with
// correlation recordCorr.
type streamWait struct {
	stream, onStream int64
	corr, recordCorr int64
}

// trace is what the importer takes from a Kineto trace.
type trace struct {
	devices []deviceProps
	spans   []*span // operators and annotations, sorted by (tid, ts)
	calls   map[int64]*span
	ops     []*gpuOp
	waits   []streamWait
	// runtimeWaits counts cudaStreamWaitEvent calls, to tell a trace without
	// synchronization events (Kineto's cuda_sync activity off) from one
	// without waits.
	runtimeWaits int
}

// nanos converts a Chrome trace time (microseconds, integer or with
// fractions) to integer nanoseconds.
func nanos(n json.Number) (int64, error) {
	if n == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("bad time %q", n)
	}
	return int64(math.Round(f * 1000)), nil
}

// idString turns a pid or tid (a number or a string) into a string key.
func idString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

func argInt(args map[string]json.RawMessage, key string, def int64) int64 {
	raw, ok := args[key]
	if !ok {
		return def
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return def
		}
		if f, err = strconv.ParseFloat(s, 64); err != nil {
			return def
		}
	}
	return int64(f)
}

func argDim(args map[string]json.RawMessage, key string) ([3]int, bool) {
	var v []int
	if err := json.Unmarshal(args[key], &v); err != nil || len(v) == 0 || len(v) > 3 {
		return [3]int{}, false
	}
	d := [3]int{1, 1, 1}
	copy(d[:], v)
	return d, true
}

// parseTrace decodes a Kineto trace and sorts out its events.
func parseTrace(data []byte) (*trace, error) {
	var raw rawTrace
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a Kineto trace (Chrome trace JSON): %w", err)
	}
	if len(raw.TraceEvents) == 0 {
		return nil, fmt.Errorf("the trace has no traceEvents")
	}
	t := &trace{devices: raw.DeviceProperties, calls: map[int64]*span{}}
	for i := range raw.TraceEvents {
		if err := t.add(&raw.TraceEvents[i]); err != nil {
			return nil, fmt.Errorf("event %d (%s %q): %w", i, raw.TraceEvents[i].Cat, raw.TraceEvents[i].Name, err)
		}
	}
	sort.SliceStable(t.spans, func(i, j int) bool {
		a, b := t.spans[i], t.spans[j]
		if a.tid != b.tid {
			return a.tid < b.tid
		}
		if a.ts != b.ts {
			return a.ts < b.ts
		}
		return a.end > b.end // the enclosing one first
	})
	t.setTops()
	return t, nil
}

// setTops links every operator to the outermost operator that encloses it
// on its thread.
func (t *trace) setTops() {
	var stack []*span
	tid := ""
	for _, s := range t.spans {
		if s.cat != "cpu_op" {
			continue
		}
		if s.tid != tid {
			stack, tid = stack[:0], s.tid
		}
		for len(stack) > 0 && stack[len(stack)-1].end <= s.ts {
			stack = stack[:len(stack)-1]
		}
		s.top = s
		if len(stack) > 0 {
			s.top = stack[0].top
		}
		stack = append(stack, s)
	}
}

func (t *trace) add(e *event) error {
	if e.Ph != "X" {
		return nil
	}
	ts, err := nanos(e.Ts)
	if err != nil {
		return err
	}
	dur, err := nanos(e.Dur)
	if err != nil {
		return err
	}
	switch strings.ToLower(e.Cat) {
	case "cpu_op", "user_annotation":
		t.spans = append(t.spans, &span{name: e.Name, cat: strings.ToLower(e.Cat), tid: idString(e.Tid), ts: ts, end: ts + dur,
			rfID: argInt(e.Args, "Record function id", -1), extID: argInt(e.Args, "External id", -1)})
	case "cuda_runtime", "cuda_driver":
		corr := argInt(e.Args, "correlation", -1)
		if corr >= 0 {
			t.calls[corr] = &span{name: e.Name, cat: "runtime", tid: idString(e.Tid), ts: ts, end: ts + dur, corr: corr}
		}
		if strings.Contains(e.Name, "StreamWaitEvent") {
			t.runtimeWaits++
		}
	case "kernel":
		return t.addKernel(e, ts, dur)
	case "gpu_memcpy", "gpu_memset":
		kind := "memcpy"
		if strings.ToLower(e.Cat) == "gpu_memset" {
			kind = "memset"
		}
		t.ops = append(t.ops, &gpuOp{kind: kind, name: e.Name, stream: argInt(e.Args, "stream", -1), device: argInt(e.Args, "device", 0),
			corr: argInt(e.Args, "correlation", -1), ts: ts, dur: dur, bytes: argInt(e.Args, "bytes", 0), graphID: -1, nodeID: -1})
	case "cuda_sync":
		if _, ok := e.Args["wait_on_stream"]; ok {
			t.waits = append(t.waits, streamWait{stream: argInt(e.Args, "stream", -1), onStream: argInt(e.Args, "wait_on_stream", -1),
				corr: argInt(e.Args, "correlation", -1), recordCorr: argInt(e.Args, "wait_on_cuda_event_record_corr_id", -1)})
		}
	}
	return nil
}

func (t *trace) addKernel(e *event, ts, dur int64) error {
	grid, ok1 := argDim(e.Args, "grid")
	block, ok2 := argDim(e.Args, "block")
	if !ok1 || !ok2 {
		return fmt.Errorf("a kernel without grid and block arguments")
	}
	op := &gpuOp{kind: "kernel", name: e.Name, stream: argInt(e.Args, "stream", -1), device: argInt(e.Args, "device", 0),
		corr: argInt(e.Args, "correlation", -1), ts: ts, dur: dur, grid: grid, block: block,
		regs: int(argInt(e.Args, "registers per thread", 0)), shared: int(argInt(e.Args, "shared memory", 0)),
		graphID: argInt(e.Args, "graph id", -1), nodeID: argInt(e.Args, "graph node id", -1)}
	if op.corr < 0 {
		return fmt.Errorf("a kernel without a correlation id")
	}
	t.ops = append(t.ops, op)
	return nil
}
