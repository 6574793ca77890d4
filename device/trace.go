package device

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"
)

// Timeline is a run's timeline in a backend-neutral form, written as the
// Chrome trace event JSON that the PyTorch profiler (Kineto) writes, so
// Perfetto, chrome://tracing and tools built for PyTorch traces (Holistic
// Trace Analysis) read it. Both backends build one, so their traces read
// the same: processes group lanes (host threads, streams, SMs, copy
// engines), each lane is a thread, each command or host call is a complete
// ("X") event on its lane.
//
// In Kineto's terms: a host API call is a "cuda_runtime" event; the device
// work it launched is a "kernel" or "gpu_memcpy" event whose args carry
// "device" and "stream" (numbers, as every numeric arg); both carry the
// same "correlation" id, and a flow ("s" on the call, "f" on the work, cat
// "ac2g") draws the arrow between them. The measured region is a
// "user_annotation" named ProfilerStep#N on the host, which tools take as
// iteration N. The file has Kineto's top level: schemaVersion,
// deviceProperties, traceEvents.
type Timeline struct {
	Processes []TraceProcess
	Lanes     []TraceLane
	Spans     []TraceSpan
	// Device, if set, is listed in deviceProperties (device id 0).
	Device *Info
	// Regions mark the measured parts of the run (ProfilerStep#N).
	Regions []TraceRegion
}

// TraceProcess names a group of lanes. Label is Kineto's process label
// ("CPU", "GPU 0").
type TraceProcess struct {
	Pid         int
	Name, Label string
}

// TraceLane names one lane (a host thread, a stream ...).
type TraceLane struct {
	Pid, Tid int
	Name     string
}

// TraceSpan is one interval on a lane. Start is from the run's start.
type TraceSpan struct {
	Pid, Tid   int
	Name       string
	Cat        string // "kernel", "gpu_memcpy", "cuda_runtime", "host_blocked", "callback" ...
	Start, Dur time.Duration
	Args       []TraceArg // shown in the viewer's details pane, in this order
	// Correlation links a host call (Cat "cuda_runtime") and the device
	// work it launched: the same non-zero id on both.
	Correlation uint64
}

// TraceArg is one detail of a span. Value is a string, an integer, a
// float, a bool or a slice of ints (a grid).
type TraceArg struct {
	Key   string
	Value any
}

// TraceRegion is a measured part of a run, on the lane of host thread
// (Pid, Tid): ProfilerStep#Step from Start to End.
type TraceRegion struct {
	Pid, Tid   int
	Step       int
	Start, End time.Duration
}

// TimelineSource is a Tracer whose last timeline can be had as a value,
// for callers that add to it (the measured region, the device).
type TimelineSource interface {
	LastTimeline() (*Timeline, error)
}

// WriteLastTimeline writes src's last timeline as JSON: WriteTrace for a
// TimelineSource.
func WriteLastTimeline(src TimelineSource, w io.Writer) error {
	tl, err := src.LastTimeline()
	if err != nil {
		return err
	}
	return tl.WriteJSON(w)
}

// WriteJSON writes the timeline as Chrome trace event JSON. Output is
// deterministic: metadata first (sorted by pid, tid), then spans, regions
// and flow events sorted by start, pid, tid and name. Times are
// microseconds with nanosecond precision.
func (t *Timeline) WriteJSON(w io.Writer) error {
	tw := traceWriter{w: bufio.NewWriter(w), first: true}
	tw.raw(`{"schemaVersion":1,"displayTimeUnit":"ns","deviceProperties":[`)
	if d := t.Device; d != nil {
		tw.raw(fmt.Sprintf(`{"id":0,"name":%s,"totalGlobalMem":%d,"numSms":%d,"warpSize":%d,"maxThreadsPerBlock":%d,`+
			`"maxThreadsPerMultiprocessor":%d,"regsPerMultiprocessor":%d,"sharedMemPerMultiprocessor":%d,"sharedMemPerBlockOptin":%d}`,
			quote(d.Name), d.MemoryBytes, d.SMs, d.WarpSize, d.MaxThreadsPerBlock, d.MaxThreadsPerSM, d.RegistersPerSM,
			d.SharedPerSM, d.MaxSharedPerBlock))
	}
	tw.raw(`],"traceEvents":[`)
	t.writeMetadata(&tw)
	for _, e := range t.events() {
		tw.event(e)
	}
	tw.raw("\n]}\n")
	return tw.w.Flush()
}

func (t *Timeline) writeMetadata(tw *traceWriter) {
	procs := append([]TraceProcess(nil), t.Processes...)
	sort.SliceStable(procs, func(i, j int) bool { return procs[i].Pid < procs[j].Pid })
	lanes := append([]TraceLane(nil), t.Lanes...)
	sort.SliceStable(lanes, func(i, j int) bool {
		if lanes[i].Pid != lanes[j].Pid {
			return lanes[i].Pid < lanes[j].Pid
		}
		return lanes[i].Tid < lanes[j].Tid
	})
	for _, p := range procs {
		tw.meta("process_name", p.Pid, 0, TraceArg{"name", p.Name})
		if p.Label != "" {
			tw.meta("process_labels", p.Pid, 0, TraceArg{"labels", p.Label})
		}
		tw.meta("process_sort_index", p.Pid, 0, TraceArg{"sort_index", p.Pid})
	}
	for _, l := range lanes {
		tw.meta("thread_name", l.Pid, l.Tid, TraceArg{"name", l.Name})
		tw.meta("thread_sort_index", l.Pid, l.Tid, TraceArg{"sort_index", l.Tid})
	}
}

// traceEvent is one event of the traceEvents array.
type traceEvent struct {
	ph, name, cat string
	pid, tid      int
	ts, dur       time.Duration
	args          []TraceArg
	id            uint64 // flow events
}

// events are the spans, the regions and a flow pair for every correlated
// call and its work, sorted.
func (t *Timeline) events() []traceEvent {
	var out []traceEvent
	calls := map[uint64]*TraceSpan{}
	for i := range t.Spans {
		s := &t.Spans[i]
		args := s.Args
		if s.Correlation != 0 {
			args = append([]TraceArg{{"correlation", s.Correlation}}, args...)
			if s.Cat == CatRuntime {
				calls[s.Correlation] = s
			}
		}
		out = append(out, traceEvent{ph: "X", name: s.Name, cat: s.Cat, pid: s.Pid, tid: s.Tid, ts: s.Start, dur: s.Dur, args: args})
	}
	// One flow per piece of work: a graph launch's kernels share its
	// correlation id, so flows number their own pairs.
	flow := uint64(0)
	for i := range t.Spans {
		s := &t.Spans[i]
		c, ok := calls[s.Correlation]
		if !ok || s.Cat == CatRuntime {
			continue
		}
		flow++
		out = append(out,
			traceEvent{ph: "s", name: "ac2g", cat: "ac2g", pid: c.Pid, tid: c.Tid, ts: c.Start, id: flow},
			traceEvent{ph: "f", name: "ac2g", cat: "ac2g", pid: s.Pid, tid: s.Tid, ts: s.Start, id: flow})
	}
	for _, r := range t.Regions {
		out = append(out, traceEvent{ph: "X", name: "ProfilerStep#" + strconv.Itoa(r.Step), cat: "user_annotation",
			pid: r.Pid, tid: r.Tid, ts: r.Start, dur: r.End - r.Start, args: []TraceArg{{"measured", true}}})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		switch {
		case a.ts != b.ts:
			return a.ts < b.ts
		case a.pid != b.pid:
			return a.pid < b.pid
		case a.tid != b.tid:
			return a.tid < b.tid
		case (a.ph == "X") != (b.ph == "X"):
			return a.ph == "X" // a slice before the flows that bind to it
		case a.name != b.name:
			return a.name < b.name
		}
		return a.ph < b.ph
	})
	return out
}

// CatRuntime is the category of host API calls (Kineto's).
const CatRuntime = "cuda_runtime"

// TraceHostPid is the pid of the host threads' lanes in both backends'
// timelines; the main host thread is tid 0.
const TraceHostPid = 1

type traceWriter struct {
	w     *bufio.Writer
	first bool
}

func (tw *traceWriter) raw(s string) { tw.w.WriteString(s) }

func (tw *traceWriter) sep() {
	if tw.first {
		tw.first = false
		tw.raw("\n")
	} else {
		tw.raw(",\n")
	}
}

func (tw *traceWriter) meta(name string, pid, tid int, arg TraceArg) {
	tw.sep()
	tw.raw(`{"ph":"M","name":"` + name + `","pid":` + strconv.Itoa(pid) + `,"tid":` + strconv.Itoa(tid) + `,"ts":0,"args":{`)
	tw.args([]TraceArg{arg})
	tw.raw("}}")
}

func (tw *traceWriter) event(e traceEvent) {
	tw.sep()
	tw.raw(`{"ph":"` + e.ph + `","name":` + quote(e.name) + `,"cat":` + quote(e.cat) + `,"pid":` + strconv.Itoa(e.pid) +
		`,"tid":` + strconv.Itoa(e.tid) + `,"ts":` + micros(e.ts))
	switch e.ph {
	case "X":
		tw.raw(`,"dur":` + micros(e.dur))
	case "s", "f":
		tw.raw(`,"id":` + strconv.FormatUint(e.id, 10))
		if e.ph == "f" {
			tw.raw(`,"bp":"e"`) // binds to the enclosing slice: the kernel
		}
	}
	if len(e.args) > 0 {
		tw.raw(`,"args":{`)
		tw.args(e.args)
		tw.raw("}")
	}
	tw.raw("}")
}

func (tw *traceWriter) args(args []TraceArg) {
	for i, a := range args {
		if i > 0 {
			tw.raw(",")
		}
		tw.raw(quote(a.Key) + ":" + argValue(a.Value))
	}
}

// argValue writes v as JSON: numbers as numbers, anything else through
// encoding/json (a value it cannot write becomes its printed form).
func argValue(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return quote(fmt.Sprint(x)) // JSON has no NaN
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return quote(fmt.Sprint(v))
	}
	return string(b)
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

func micros(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 3, 64) }

// DimArg is a grid or block as Kineto writes it: [x, y, z].
func DimArg(d Dim3) []int { return []int{d.X, d.Y, d.Z} }
