//go:build cuda

package cuda

/*
#include "gs.h"
*/
import "C"

import (
	"time"

	"github.com/gpusched/gpusched/device"
)

// Trace lanes: host threads (pid 1), streams (pid 2) and the driver's
// callback thread (pid 4, the simulator's number for it).
const (
	pidHost     = 1
	pidStreams  = 2
	pidCallback = 4
)

// callbackRun is one host callback's run on the driver's callback thread.
type callbackRun struct {
	stream   int // launched on; -1 for a graph's host node
	from, to time.Duration
}

// traceCallback records a callback's run; it is called on the driver's
// callback thread.
func (r *run) traceCallback(stream int, from, to time.Duration) {
	r.mu.Lock()
	r.cbRuns = append(r.cbRuns, callbackRun{stream: stream, from: from, to: to})
	r.mu.Unlock()
}

// tracePoint is a command being traced: its start event is recorded on the
// stream just before the command, and the host call's start time.
type tracePoint struct {
	on      bool
	hostAt  time.Duration
	evStart C.CUevent
}

// traceOp is one traced command, resolved to times after the run.
type traceOp struct {
	name, cat      string
	stream         int
	host           int
	hostAt, hostTo time.Duration
	evStart, evEnd C.CUevent
	args           []device.TraceArg
	hostOnly       bool // a call with no command on a stream: no events
}

// callStart is when a host call began, for traceCall: the clock only when
// tracing (a deferred traceCall evaluates it on entry).
func (h *host) callStart() time.Duration {
	if !h.r.tracing {
		return 0
	}
	return h.r.now()
}

// traceCall records, when tracing, a host call that puts no command on a
// stream (instantiate, capture, node updates, queries, synchronizes, a
// queue's Get): its host lane only, so that a GPU trace can be compared with
// the simulator's call by call.
func (h *host) traceCall(name string, at time.Duration) {
	if !h.r.tracing {
		return
	}
	h.trace = append(h.trace, traceOp{name: name, cat: device.CatRuntime, host: h.id, hostAt: at, hostTo: h.r.now(), hostOnly: true})
}

func (h *host) traceBegin(st *stream) (tracePoint, error) {
	tp := tracePoint{on: true, hostAt: h.r.now()}
	if err := check("cuEventCreate", C.cuEventCreate(&tp.evStart, C.CU_EVENT_DEFAULT)); err != nil {
		return tracePoint{}, err
	}
	if err := check("cuEventRecord", C.cuEventRecord(tp.evStart, st.s)); err != nil {
		C.cuEventDestroy(tp.evStart)
		return tracePoint{}, err
	}
	return tp, nil
}

func (h *host) traceEnd(st *stream, tp tracePoint, name, cat string, args ...device.TraceArg) error {
	hostTo := h.r.now()
	var end C.CUevent
	if err := check("cuEventCreate", C.cuEventCreate(&end, C.CU_EVENT_DEFAULT)); err != nil {
		C.cuEventDestroy(tp.evStart)
		return err
	}
	if err := check("cuEventRecord", C.cuEventRecord(end, st.s)); err != nil {
		C.cuEventDestroy(tp.evStart)
		C.cuEventDestroy(end)
		return err
	}
	h.trace = append(h.trace, traceOp{name: name, cat: cat, stream: st.id, host: h.id,
		hostAt: tp.hostAt, hostTo: hostTo, evStart: tp.evStart, evEnd: end, args: args})
	return nil
}

// timeline resolves the traced commands once the device is idle: each
// command's stream span from its two events, measured from the base event,
// and its host call on its host thread's lane.
func (r *run) timeline() *device.Timeline {
	tl := &device.Timeline{
		Processes: []device.TraceProcess{{Pid: pidHost, Name: "host threads", Label: "CPU"}, {Pid: pidStreams, Name: "streams", Label: "GPU 0"}},
		Lanes:     append([]device.TraceLane(nil), r.lanes...),
	}
	var sc C.gs_scratch
	at := func(e C.CUevent) (time.Duration, bool) {
		if C.gs_elapsed(&sc, r.base, e) != C.CUDA_SUCCESS {
			return 0, false
		}
		return r.baseAt + time.Duration(float64(sc.ms)*1e6), true
	}
	for i, op := range r.trace {
		// The call and its command share a correlation id (Kineto's).
		corr := uint64(i + 1)
		tl.Spans = append(tl.Spans, device.TraceSpan{Pid: pidHost, Tid: op.host, Name: op.name, Cat: device.CatRuntime,
			Start: op.hostAt, Dur: op.hostTo - op.hostAt, Correlation: corr})
		if op.hostOnly {
			continue
		}
		start, ok1 := at(op.evStart)
		end, ok2 := at(op.evEnd)
		if !ok1 || !ok2 {
			continue
		}
		if end < start {
			end = start
		}
		args := append([]device.TraceArg{{Key: "device", Value: 0}, {Key: "stream", Value: op.stream}}, op.args...)
		tl.Spans = append(tl.Spans, device.TraceSpan{Pid: pidStreams, Tid: op.stream, Name: op.name, Cat: op.cat,
			Start: start, Dur: end - start, Args: args, Correlation: corr})
	}
	r.callbackSpans(tl)
	return tl
}

// callbackSpans adds the host callbacks' runs on the callback thread's
// lane, as the simulator draws them ("host function", category callback):
// the driver runs them one at a time on one thread.
func (r *run) callbackSpans(tl *device.Timeline) {
	r.mu.Lock()
	runs := append([]callbackRun(nil), r.cbRuns...)
	r.mu.Unlock()
	if len(runs) == 0 {
		return
	}
	tl.Processes = append(tl.Processes, device.TraceProcess{Pid: pidCallback, Name: "callback thread", Label: "CPU"})
	tl.Lanes = append(tl.Lanes, device.TraceLane{Pid: pidCallback, Tid: 0, Name: "driver callback thread"})
	for _, c := range runs {
		var args []device.TraceArg
		if c.stream >= 0 {
			args = []device.TraceArg{{Key: "launched on stream", Value: c.stream}}
		}
		tl.Spans = append(tl.Spans, device.TraceSpan{Pid: pidCallback, Tid: 0, Name: "host function", Cat: "callback",
			Start: c.from, Dur: c.to - c.from, Args: args})
	}
}
