package device

import (
	"bufio"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"time"
)

// Timeline is a run's timeline in a backend-neutral form, written as Chrome
// trace event JSON (the format Perfetto and chrome://tracing open). Both
// backends build one, so their traces read the same: processes group lanes
// (host threads, streams, SMs, copy engines), each lane is a thread, and
// each command or host call is a complete ("X") event on its lane.
type Timeline struct {
	Processes []TraceProcess
	Lanes     []TraceLane
	Spans     []TraceSpan
}

// TraceProcess names a group of lanes.
type TraceProcess struct {
	Pid  int
	Name string
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
	Cat        string // "kernel", "copy", "host", "callback" ...
	Start, Dur time.Duration
	Args       []TraceArg // shown in the viewer's details pane, in this order
}

// TraceArg is one key/value detail of a span.
type TraceArg struct{ Key, Value string }

// WriteJSON writes the timeline as Chrome trace event JSON. Output is
// deterministic: metadata first (sorted by pid, tid), then spans sorted by
// start, pid, tid and name. Times are microseconds with nanosecond
// precision.
func (t *Timeline) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	procs := append([]TraceProcess(nil), t.Processes...)
	sort.SliceStable(procs, func(i, j int) bool { return procs[i].Pid < procs[j].Pid })
	lanes := append([]TraceLane(nil), t.Lanes...)
	sort.SliceStable(lanes, func(i, j int) bool {
		if lanes[i].Pid != lanes[j].Pid {
			return lanes[i].Pid < lanes[j].Pid
		}
		return lanes[i].Tid < lanes[j].Tid
	})
	spans := append([]TraceSpan(nil), t.Spans...)
	sort.SliceStable(spans, func(i, j int) bool {
		a, b := &spans[i], &spans[j]
		switch {
		case a.Start != b.Start:
			return a.Start < b.Start
		case a.Pid != b.Pid:
			return a.Pid < b.Pid
		case a.Tid != b.Tid:
			return a.Tid < b.Tid
		}
		return a.Name < b.Name
	})
	first := true
	sep := func() {
		if first {
			first = false
			bw.WriteString("\n")
		} else {
			bw.WriteString(",\n")
		}
	}
	str := func(s string) {
		b, _ := json.Marshal(s)
		bw.Write(b)
	}
	us := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/1e3, 'f', 3, 64)
	}
	bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	for _, p := range procs {
		sep()
		bw.WriteString(`{"ph":"M","name":"process_name","pid":` + strconv.Itoa(p.Pid) + `,"tid":0,"args":{"name":`)
		str(p.Name)
		bw.WriteString(`}}`)
	}
	for _, l := range lanes {
		sep()
		bw.WriteString(`{"ph":"M","name":"thread_name","pid":` + strconv.Itoa(l.Pid) + `,"tid":` + strconv.Itoa(l.Tid) + `,"args":{"name":`)
		str(l.Name)
		bw.WriteString(`}}`)
	}
	for _, s := range spans {
		sep()
		bw.WriteString(`{"ph":"X","name":`)
		str(s.Name)
		bw.WriteString(`,"cat":`)
		str(s.Cat)
		bw.WriteString(`,"pid":` + strconv.Itoa(s.Pid) + `,"tid":` + strconv.Itoa(s.Tid) +
			`,"ts":` + us(s.Start) + `,"dur":` + us(s.Dur))
		if len(s.Args) > 0 {
			bw.WriteString(`,"args":{`)
			for i, a := range s.Args {
				if i > 0 {
					bw.WriteString(",")
				}
				str(a.Key)
				bw.WriteString(":")
				str(a.Value)
			}
			bw.WriteString("}")
		}
		bw.WriteString("}")
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}
