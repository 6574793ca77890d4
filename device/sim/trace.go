package sim

import (
	"bufio"
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
)

var trackProc = [...]string{"host threads", "streams", "copy engines", "host callbacks", "dependency queue"}

// span is one slice of the timeline.
type span struct {
	kind       trackKind
	id         int32
	name       string
	start, end Time
}

// smPoint is the resident warps of one SM group from time t on.
type smPoint struct {
	t     Time
	group int32
	warps int32
}

// traceRec records the timeline of one Run.
type traceRec struct {
	on      bool
	spans   []span
	points  []smPoint
	group   []int32 // current warps per SM group
	smDirty bool
	threads []string
	streams []int
	smGroup int // SMs per group
	nSMs    int
}

func (t *traceRec) span(kind trackKind, id int, name string, start, end Time) {
	t.spans = append(t.spans, span{kind: kind, id: int32(id), name: name, start: start, end: end})
}

func (d *Device) traceOp(k *command, name string) {
	switch {
	case k.kind == cmdCopy:
		d.tr.span(trackCopy, k.engine, name, k.start, k.end)
	case k.kind == cmdHostFunc:
		d.tr.span(trackCallback, 0, name, k.start, k.end)
	case k.dqID != 0:
		d.tr.span(trackDQ, 0, name, k.start, k.end)
	default:
		d.tr.span(trackStream, k.st.id, name, k.start, k.end)
	}
}

// smSample records the resident warps of every SM group that changed.
func (t *traceRec) smSample(d *Device) {
	if t.smGroup == 0 {
		t.nSMs = len(d.sms)
		t.smGroup = max(1, (t.nSMs+15)/16)
		t.group = make([]int32, (t.nSMs+t.smGroup-1)/t.smGroup)
	}
	for g := range t.group {
		w := 0
		for s := g * t.smGroup; s < min((g+1)*t.smGroup, t.nSMs); s++ {
			w += d.sms[s].resWarps
		}
		if int32(w) == t.group[g] {
			continue
		}
		t.group[g] = int32(w)
		if n := len(t.points); n > 0 && t.points[n-1].t == d.now && t.points[n-1].group == int32(g) {
			t.points[n-1].warps = int32(w)
			continue
		}
		t.points = append(t.points, smPoint{t: d.now, group: int32(g), warps: int32(w)})
	}
	t.smDirty = false
}

// WriteTrace implements device.Tracer: the last Run's timeline as Chrome
// trace event JSON ({"traceEvents": [...]}, "X" slices and "C" counters,
// with process and thread names), which Perfetto and chrome://tracing open.
// Slices that overlap on one track (kernels of a graph, say) are spread
// over numbered lanes, so every track nests properly. Times are in
// microseconds with picosecond precision; the output is deterministic.
func (d *Device) WriteTrace(w io.Writer) error {
	t := &d.lastTrace
	if !t.on {
		return errors.New("sim: no trace recorded: enable it (EnableTrace or WithTrace) before Run")
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	first := true
	emit := func(s string) {
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		bw.WriteString(s)
	}
	for p, name := range trackProc {
		emit(fmt.Sprintf(`{"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":%s}}`, p+1, strconv.Quote(name)))
		emit(fmt.Sprintf(`{"name":"process_sort_index","ph":"M","pid":%d,"tid":0,"args":{"sort_index":%d}}`, p+1, p+1))
	}
	smPid := len(trackProc) + 1
	emit(fmt.Sprintf(`{"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"SMs (resident warps per group)"}}`, smPid))

	// Lanes: sort spans per track by start, then place each on the first
	// lane free at its start.
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
	type trackKey struct {
		kind trackKind
		id   int32
	}
	var laneEnds []Time
	var cur trackKey
	tidBase := 0
	tids := 0
	for n, i := range idx {
		s := &t.spans[i]
		key := trackKey{s.kind, s.id}
		if n == 0 || key != cur {
			cur = key
			laneEnds = laneEnds[:0]
			tidBase = tids
		}
		lane := -1
		for l, e := range laneEnds {
			if e <= s.start {
				lane = l
				break
			}
		}
		if lane < 0 {
			lane = len(laneEnds)
			laneEnds = append(laneEnds, 0)
			tids++
			emit(fmt.Sprintf(`{"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":%s}}`,
				int(s.kind)+1, tidBase+lane, strconv.Quote(t.trackName(s.kind, int(s.id), lane))))
			emit(fmt.Sprintf(`{"name":"thread_sort_index","ph":"M","pid":%d,"tid":%d,"args":{"sort_index":%d}}`,
				int(s.kind)+1, tidBase+lane, tidBase+lane))
		}
		laneEnds[lane] = s.end
		emit(fmt.Sprintf(`{"name":%s,"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s}`,
			strconv.Quote(s.name), int(s.kind)+1, tidBase+lane, usec(s.start), usec(s.end-s.start)))
	}
	for _, p := range t.points {
		lo := int(p.group) * t.smGroup
		hi := min(lo+t.smGroup, t.nSMs) - 1
		emit(fmt.Sprintf(`{"name":"SM %d-%d","ph":"C","pid":%d,"tid":0,"ts":%s,"args":{"warps":%d}}`, lo, hi, smPid, usec(p.t), p.warps))
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

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
	}
	if lane > 0 {
		s += " (" + strconv.Itoa(lane+1) + ")"
	}
	return s
}

// usec formats picoseconds as microseconds with six decimals.
func usec(t Time) string {
	neg := t < 0
	if neg {
		t = -t
	}
	s := strconv.FormatInt(int64(t/1000000), 10) + "." + fmt.Sprintf("%06d", int64(t%1000000))
	if neg {
		s = "-" + s
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
