package sim

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/gpusched/gpusched/device"
)

type trackKind uint8

const (
	trackHost trackKind = iota
	trackStream
	trackCopy
	trackCallback
	trackDQ
	trackSM
)

// Trace processes, as device.Timeline groups lanes. Host threads and
// streams use the same pids as the CUDA backend's timelines (1 and 2), so
// the two backends' traces of one program line up.
var trackProc = [...]string{"host threads", "streams", "copy engines", "host callbacks", "dependency queue", "SMs (resident kernels per SM group)"}

// trackLabel is each process's Kineto label: where it runs.
var trackLabel = [...]string{"CPU", "GPU 0", "GPU 0", "CPU", "GPU 0", "GPU 0"}

// dqStream is the stream id that dependency-queue kernels carry in traces:
// they run on no stream, but tools tell device work from host work by a
// stream id.
const dqStream = 9999

// span is one slice of the timeline.
type span struct {
	kind       trackKind
	id         int32
	name, cat  string
	start, end Time
	args       []device.TraceArg
	corr       uint64
}

type smKey struct {
	seq   uint64
	group int32
}

// traceRec records the timeline of one Run.
type traceRec struct {
	on      bool
	spans   []span
	threads []string
	// launches maps the sequence number the next command will get to the
	// host call that may create it (a launch, a copy ...); the command's
	// span takes the call's correlation id when their kinds agree.
	launches map[uint64]int
	smGroup  int           // SMs per group
	nSMs     int           //
	smOpen   map[smKey]int // (kernel, SM group) -> its span, while the kernel runs
}

// hostCall records a host API call on thread id; next is the sequence
// number of the next command, which the call may create.
func (t *traceRec) hostCall(id int, call string, start, end Time, next uint64) {
	if launcherOf[call] {
		if t.launches == nil {
			t.launches = map[uint64]int{}
		}
		t.launches[next] = len(t.spans)
	}
	t.spans = append(t.spans, span{kind: trackHost, id: int32(id), name: call, cat: device.CatRuntime, start: start, end: end})
}

// blocked records a host thread waiting (parked) in a call.
func (t *traceRec) blocked(id int, what string, start, end Time) {
	t.spans = append(t.spans, span{kind: trackHost, id: int32(id), name: "blocked in " + what, cat: "host_blocked", start: start, end: end})
}

// launcherOf lists the host calls that create a command the trace shows.
var launcherOf = map[string]bool{"cuLaunchKernel": true, "cuMemcpyAsync": true, "cuLaunchHostFunc": true, "cuGraphLaunch": true, "DQSubmit": true}

// correlate links command k's span to the host call that launched it
// (for a graph's node, the graph's launch) and returns the shared id, or 0.
func (t *traceRec) correlate(k *command) uint64 {
	seq, want := k.seq, "cuLaunchKernel"
	switch {
	case k.gr != nil && k.gr.cmd != nil:
		seq, want = k.gr.cmd.seq, "cuGraphLaunch"
	case k.dqID != 0:
		want = "DQSubmit"
	case k.kind == cmdCopy:
		want = "cuMemcpyAsync"
	case k.kind == cmdHostFunc:
		want = "cuLaunchHostFunc"
	}
	i, ok := t.launches[seq]
	if !ok || t.spans[i].name != want {
		return 0
	}
	t.spans[i].corr = seq
	return seq
}

func (d *Device) traceOp(k *command, name string) {
	t := &d.tr
	corr := t.correlate(k)
	switch k.kind {
	case cmdCopy:
		t.spans = append(t.spans, span{kind: trackCopy, id: int32(k.engine), name: name, cat: "gpu_memcpy", start: k.start, end: k.end, corr: corr,
			args: []device.TraceArg{{Key: "device", Value: 0}, {Key: "stream", Value: k.streamID()}, {Key: "bytes", Value: k.cp.Bytes}}})
	case cmdHostFunc:
		t.spans = append(t.spans, span{kind: trackCallback, name: name, cat: "callback", start: k.start, end: k.end, corr: corr,
			args: []device.TraceArg{{Key: "launched on stream", Value: k.streamID()}}})
	default:
		kind, id, stream := trackStream, int32(k.streamID()), k.streamID()
		if k.dqID != 0 {
			kind, id, stream = trackDQ, 0, dqStream
		}
		args := []device.TraceArg{{Key: "device", Value: 0}, {Key: "stream", Value: stream},
			{Key: "grid", Value: device.DimArg(k.l.Grid)}, {Key: "block", Value: device.DimArg(k.l.Block)},
			{Key: "blocks", Value: k.total}}
		if k.gr != nil {
			args = append(args, device.TraceArg{Key: "graph node", Value: int(k.node)})
		}
		if k.dqID != 0 {
			args = append(args, device.TraceArg{Key: "dq id", Value: k.dqID})
		}
		t.spans = append(t.spans, span{kind: kind, id: id, name: name, cat: "kernel", start: k.start, end: k.end, args: args, corr: corr})
		t.smClose(k)
	}
}

func (t *traceRec) groupOf(d *Device, s int) int32 {
	if t.smGroup == 0 {
		t.nSMs = len(d.sms)
		t.smGroup = max(1, (t.nSMs+15)/16)
		t.smOpen = map[smKey]int{}
	}
	return int32(s / t.smGroup)
}

// smPlace notes n blocks of k placed on SM s: the kernel's span on the SM
// group's lane starts with its first block there.
func (d *Device) smPlace(k *command, s int) {
	t := &d.tr
	key := smKey{k.seq, t.groupOf(d, s)}
	if _, ok := t.smOpen[key]; !ok {
		t.smOpen[key] = len(t.spans)
		t.spans = append(t.spans, span{kind: trackSM, id: key.group, name: k.l.Name(), cat: "blocks", start: d.now, end: d.now})
	}
}

// smFree notes n blocks of k done on SM s.
func (d *Device) smFree(k *command, s int) {
	t := &d.tr
	key := smKey{k.seq, t.groupOf(d, s)}
	if i, ok := t.smOpen[key]; ok {
		t.spans[i].end = d.now
	}
}

// smClose ends k's spans on the SM groups.
func (t *traceRec) smClose(k *command) {
	for g := 0; t.smGroup > 0 && g*t.smGroup < t.nSMs; g++ {
		key := smKey{k.seq, int32(g)}
		if i, ok := t.smOpen[key]; ok {
			t.spans[i].args = []device.TraceArg{{Key: "kernel stream", Value: k.streamID()}}
			delete(t.smOpen, key)
		}
	}
}

// WriteTrace implements device.Tracer: the last Run's timeline (see
// LastTimeline) as Chrome trace event JSON.
func (d *Device) WriteTrace(w io.Writer) error { return device.WriteLastTimeline(d, w) }

// LastTimeline implements device.TimelineSource: the last Run's timeline,
// in device.Timeline's Kineto-style layout (the same as the CUDA
// backend's), which Perfetto and PyTorch trace tools read. Lanes:
// host threads (their calls and the time they were blocked), streams
// (kernels, with graph nodes), copy engines, the callback thread, the
// dependency queue, and SM groups (which kernels had blocks resident there,
// from their first block to their last). Slices that overlap on one lane
// are spread over numbered extra lanes, so every lane nests properly. The
// timeline is deterministic. Host calls that launched device work share a
// correlation id with it.
func (d *Device) LastTimeline() (*device.Timeline, error) {
	t := &d.lastTrace
	if !t.on {
		return nil, errors.New("sim: no trace recorded: enable it (EnableTrace or WithTrace) before Run")
	}
	tl := &device.Timeline{}
	for p, name := range trackProc {
		tl.Processes = append(tl.Processes, device.TraceProcess{Pid: p + 1, Name: name, Label: trackLabel[p]})
	}
	idx := make([]int, len(t.spans))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := &t.spans[idx[a]], &t.spans[idx[b]]
		if x.kind != y.kind {
			return x.kind < y.kind
		}
		if x.id != y.id {
			return x.id < y.id
		}
		return x.start < y.start
	})
	var laneEnds []Time
	var curKind trackKind
	var curID int32
	for n, i := range idx {
		s := &t.spans[i]
		if n == 0 || s.kind != curKind || s.id != curID {
			curKind, curID = s.kind, s.id
			laneEnds = laneEnds[:0]
		}
		lane := -1
		for l, e := range laneEnds {
			if e <= s.start {
				lane = l
				break
			}
		}
		// Lane l of track id is tid id + l*laneStride, so a backend's
		// numbering (tid = stream id) is kept for the first lane.
		tid := int(s.id) + max(lane, len(laneEnds))*laneStride
		if lane < 0 {
			lane = len(laneEnds)
			laneEnds = append(laneEnds, 0)
			tl.Lanes = append(tl.Lanes, device.TraceLane{Pid: int(s.kind) + 1, Tid: tid, Name: t.trackName(s.kind, int(s.id), lane)})
		} else {
			tid = int(s.id) + lane*laneStride
		}
		laneEnds[lane] = s.end
		tl.Spans = append(tl.Spans, device.TraceSpan{Pid: int(s.kind) + 1, Tid: tid, Name: s.name, Cat: s.cat,
			Start: s.start.Duration(), Dur: (s.end - s.start).Duration(), Args: s.args, Correlation: s.corr})
	}
	return tl, nil
}

const laneStride = 10000

func (t *traceRec) trackName(kind trackKind, id, lane int) string {
	var s string
	switch kind {
	case trackHost:
		s = "host thread " + strconv.Itoa(id)
		if id < len(t.threads) {
			s = t.threads[id]
		}
	case trackStream:
		s = "stream " + strconv.Itoa(id)
	case trackCopy:
		s = [...]string{"copy engine HtoD", "copy engine DtoH", "device-to-device copies"}[id]
	case trackCallback:
		s = "callback thread"
	case trackDQ:
		s = "dependency-queue kernels"
	case trackSM:
		lo := id * t.smGroup
		s = fmt.Sprintf("SM %d-%d", lo, min(lo+t.smGroup, t.nSMs)-1)
	}
	if lane > 0 {
		s += " (" + strconv.Itoa(lane+1) + ")"
	}
	return s
}

// utilTracker integrates SM occupancy over time into buckets whose width
// doubles whenever more than utilBuckets would be needed, so a run of any
// length keeps a bounded, evenly spaced utilization series.
type utilTracker struct {
	sms, maxWarps     int
	width             Time
	busy, warps       []float64 // integrals over each bucket: SM-ps and warp-ps
	last              Time
	curBusy, curWarps int
}

const utilBuckets = 256

func (u *utilTracker) reset(sms, maxWarps int) {
	*u = utilTracker{sms: sms, maxWarps: maxWarps, width: 1000 * 1000, busy: u.busy[:0], warps: u.warps[:0]}
}

func (u *utilTracker) set(busy, warps int) { u.curBusy, u.curWarps = busy, warps }

// advance integrates the current occupancy up to now.
func (u *utilTracker) advance(now Time) {
	for u.last < now {
		b := int(u.last / u.width)
		if b >= utilBuckets {
			u.merge()
			continue
		}
		for len(u.busy) <= b {
			u.busy = append(u.busy, 0)
			u.warps = append(u.warps, 0)
		}
		end := min(now, Time(b+1)*u.width)
		dt := float64(end - u.last)
		u.busy[b] += float64(u.curBusy) * dt
		u.warps[b] += float64(u.curWarps) * dt
		u.last = end
	}
}

func (u *utilTracker) merge() {
	n := (len(u.busy) + 1) / 2
	for i := 0; i < n; i++ {
		b, w := u.busy[2*i], u.warps[2*i]
		if 2*i+1 < len(u.busy) {
			b += u.busy[2*i+1]
			w += u.warps[2*i+1]
		}
		u.busy[i], u.warps[i] = b, w
	}
	u.busy, u.warps = u.busy[:n], u.warps[:n]
	u.width *= 2
}

// samples returns the series up to end.
func (u *utilTracker) samples(end Time) (series []device.UtilSample, warpTime float64) {
	for b := range u.busy {
		t := Time(b) * u.width
		if t >= end {
			break
		}
		w := u.width
		series = append(series, device.UtilSample{
			T: t.Duration(), Width: w.Duration(),
			Busy:  u.busy[b] / (float64(u.sms) * float64(w)),
			Warps: u.warps[b] / (float64(u.sms*u.maxWarps) * float64(w)),
		})
		warpTime += u.warps[b]
	}
	return series, warpTime
}
