package mutate

import (
	"fmt"
	"sort"
	"time"

	"github.com/gpusched/gpusched/device"
)

// host forwards every call to in, applying st's mutation at its site.
type host struct {
	in    device.Host
	st    *state
	clock clock // guarded by st.mu
}

func (h *host) Name() string          { return h.in.Name() }
func (h *host) Now() time.Duration    { return h.in.Now() }
func (h *host) Spend(d time.Duration) { h.in.Spend(d) }

func (h *host) Go(name string, fn func(device.Host) error) {
	st := h.st
	st.mu.Lock()
	start := h.clock.copy()
	st.mu.Unlock()
	h.in.Go(name, func(child device.Host) error {
		w := st.wrap(child)
		st.mu.Lock()
		unwrap(w).clock = unwrap(w).clock.join(start)
		st.mu.Unlock()
		return fn(w)
	})
}

func (h *host) Malloc(bytes int64) (device.Buffer, error) { return h.in.Malloc(bytes) }
func (h *host) Free(b device.Buffer) error                { return h.in.Free(b) }
func (h *host) AllocHost(bytes int64, pinned bool) (*device.HostMem, error) {
	return h.in.AllocHost(bytes, pinned)
}
func (h *host) FreeHost(m *device.HostMem) error { return h.in.FreeHost(m) }

func (h *host) NewStream(opt device.StreamOptions) (device.Stream, error) {
	return h.in.NewStream(opt)
}
func (h *host) NewEvent(opt device.EventOptions) (device.Event, error) { return h.in.NewEvent(opt) }

func (h *host) Destroy(r device.Resource) error {
	st := h.st
	st.mu.Lock()
	// Graph and GraphExec have the same methods, so a type switch cannot
	// tell them apart: r is deleted from both maps (at most one holds it).
	if g, ok := r.(device.Graph); ok {
		delete(st.graphs, g)
	}
	if x, ok := r.(device.GraphExec); ok {
		delete(st.execs, x)
	}
	st.mu.Unlock()
	return h.in.Destroy(r)
}

// stream is the stream commands for s really go to.
func (st *state) stream(s device.Stream) device.Stream {
	st.mu.Lock()
	defer st.mu.Unlock()
	if r, ok := st.replaced[s]; ok {
		return r
	}
	return s
}

// bufArgs is the buffer arguments of a launch.
func bufArgs(l *device.Launch) []device.Arg {
	var out []device.Arg
	for _, a := range l.Args {
		if a.Kind == device.ArgBuffer {
			out = append(out, a)
		}
	}
	return out
}

func copyArgs(c *device.Copy) []device.Arg {
	r, w := c.DeviceRanges()
	return append(r, w...)
}

func unwrap(h device.Host) *host {
	if ih, ok := h.(*infoHost); ok {
		return ih.host
	}
	return h.(*host)
}

// unorderedBy returns a producer command conflicting with args that clock
// c does not cover, or nil.
func unorderedBy(args []device.Arg, producer []issued, c clock) *issued {
	for i := range producer {
		if !c.covers(producer[i].ref) && device.Conflicts(args, producer[i].args) {
			return &producer[i]
		}
	}
	return nil
}

// command notes a command with access set args about to be issued on s (the
// stream the scheduler named) and returns the stream to issue it on. It
// settles the waits pending on the stream and, for SharedStream, decides and
// applies the mutation.
func (h *host) command(s device.Stream, args []device.Arg, data bool, exec device.GraphExec, label string) (device.Stream, error) {
	st := h.st
	st.mu.Lock()
	orig := s
	if r, ok := st.replaced[s]; ok {
		s = r
	}
	ord := st.cmds
	st.cmds++
	_, capt := st.capturing[s]
	if data {
		for _, pw := range st.pending[s] {
			if p := unorderedBy(args, pw.producer, pw.shadow.join(h.clock)); p != nil {
				if (pw.capture && st.kind == MissingEdge) || (!pw.capture && (st.kind == DropWait || st.kind == WrongEvent)) {
					st.sites = append(st.sites, pw.ordinal)
					st.why[pw.ordinal] = fmt.Sprintf("%s would no longer wait for %s", label, p.label)
					st.producer[pw.ordinal] = p.ord
				}
			}
		}
		delete(st.pending, s)
	}
	var prev []issued
	if r := st.recent[s]; len(r) > 0 && (exec == nil || r[len(r)-1].exec != exec) {
		// (Launches of one graph exec never overlap, whatever their
		// streams, so splitting them apart breaks nothing.)
		prev = r[len(r)-1:]
	}
	// A fresh stream would start from the issuing thread's clock alone.
	splitUnordered := prev != nil && unorderedBy(args, prev, h.clock) != nil
	st.mu.Unlock()

	if st.kind == SharedStream && data && !capt && splitUnordered {
		idle, err := h.in.StreamQuery(s)
		if err != nil {
			return nil, err
		}
		if !idle {
			st.mu.Lock()
			st.sites = append(st.sites, ord)
			st.why[ord] = fmt.Sprintf("%s would no longer follow %s", label, prev[0].label)
			st.producer[ord] = prev[0].ord
			apply := ord == st.site
			st.mu.Unlock()
			if apply {
				f, err := h.in.NewStream(device.StreamOptions{Priority: s.Priority()})
				if err != nil {
					return nil, err
				}
				st.mu.Lock()
				st.replaced[orig] = f
				st.ownStreams = append(st.ownStreams, f)
				st.applied++
				st.detail = fmt.Sprintf("command %d: stream %d replaced by fresh stream %d while its previous, conflicting command ran", ord, s.ID(), f.ID())
				st.mu.Unlock()
				s = f
			}
		}
	}

	st.mu.Lock()
	ref := st.issue(s, h.clock)
	if data {
		if st.kind == EarlyReuse && st.site < 0 {
			st.earlyReuseProbe(args, issued{ref: ref, label: label, ord: ord})
		}
		r := append(st.recent[s], issued{ref, args, exec, label, ord})
		if len(r) > window {
			r = r[len(r)-window:]
		}
		st.recent[s] = r
		st.count[s]++
	}
	if origin, ok := st.capturing[s]; ok {
		st.nodes[origin] = append(st.nodes[origin], args)
	}
	st.mu.Unlock()
	return s, nil
}

// earlyReuseProbe marks the pairs whose B this command writes first while
// some command on A is not ordered before it. Call with st.mu held.
func (st *state) earlyReuseProbe(args []device.Arg, cmd issued) {
	c := st.vc[cmd.ref.stream]
	for _, a := range args {
		addr := a.Buf.Addr
		if _, first := st.touched[addr]; !first {
			for _, p := range st.pairsByB[addr] {
				for _, r := range st.touched[p.a] {
					if !c.covers(r.ref) {
						st.sites = append(st.sites, p.index)
						st.why[p.index] = fmt.Sprintf("%s would no longer wait for %s", cmd.label, r.label)
						st.producer[p.index] = r.ord
						break
					}
				}
			}
		}
	}
	for _, a := range args {
		st.touched[a.Buf.Addr] = append(st.touched[a.Buf.Addr], cmd)
	}
}

// alias retargets buffer arguments naming aliasFrom (EarlyReuse).
func (st *state) aliasArgs(args []device.Arg) ([]device.Arg, bool) {
	if st.aliasFrom.IsNil() {
		return args, false
	}
	var out []device.Arg
	for i, a := range args {
		if a.Kind == device.ArgBuffer && a.Buf.Addr == st.aliasFrom.Addr {
			if out == nil {
				out = append([]device.Arg(nil), args...)
			}
			// A's storage with B's extent: the same bytes B's commands
			// touch, so a whole-buffer argument (Len 0) still covers B's
			// size, not A's.
			out[i].Buf = device.Buffer{Addr: st.aliasTo.Addr, Size: st.aliasFrom.Size}
		}
	}
	if out == nil {
		return args, false
	}
	return out, true
}

func (st *state) aliasLaunch(l *device.Launch) *device.Launch {
	if l == nil {
		return nil
	}
	args, changed := st.aliasArgs(l.Args)
	if !changed {
		return l
	}
	c := *l
	c.Args = args
	st.mu.Lock()
	st.applied++
	st.mu.Unlock()
	return &c
}

func (st *state) aliasCopy(c *device.Copy) *device.Copy {
	if st.aliasFrom.IsNil() || c == nil {
		return c
	}
	n := *c
	changed := false
	to := device.Buffer{Addr: st.aliasTo.Addr, Size: st.aliasFrom.Size}
	if c.Kind != device.HostToDevice && c.Src.Addr == st.aliasFrom.Addr {
		n.Src, changed = to, true
	}
	if c.Kind != device.DeviceToHost && c.Dst.Addr == st.aliasFrom.Addr {
		n.Dst, changed = to, true
	}
	if !changed {
		return c
	}
	st.mu.Lock()
	st.applied++
	st.mu.Unlock()
	return &n
}

// stretch applies Jitter to a launch's work.
func (st *state) stretch(l *device.Launch) *device.Launch {
	if st.jitter == 0 || l == nil {
		return l
	}
	st.mu.Lock()
	n := st.launches
	st.launches++
	st.mu.Unlock()
	// splitmix64 of (seed, ordinal): a fixed, well-spread factor.
	x := st.jitter + uint64(n)*0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	f := 1 + 3*float64(x>>11)/float64(1<<53)
	c := *l
	c.Work = device.Work{Cycles: l.Work.Cycles * f, Flops: l.Work.Flops * f, Bytes: l.Work.Bytes * f}
	return &c
}

// delay stretches the launch about to become command delayCmd.
func (st *state) delay(l *device.Launch) *device.Launch {
	st.mu.Lock()
	hit := st.delayCmd >= 0 && st.cmds == st.delayCmd
	st.mu.Unlock()
	if !hit || l == nil {
		return l
	}
	f := st.delayFactor
	c := *l
	c.Work = device.Work{Cycles: l.Work.Cycles * f, Flops: l.Work.Flops * f, Bytes: l.Work.Bytes * f}
	return &c
}

func (h *host) Launch(s device.Stream, l *device.Launch) error {
	l = h.st.delay(h.st.stretch(h.st.aliasLaunch(l)))
	var args []device.Arg
	label := ""
	if l != nil {
		args, label = bufArgs(l), l.Name()
	}
	s, err := h.command(s, args, true, nil, label)
	if err != nil {
		return err
	}
	return h.in.Launch(s, l)
}

func (h *host) Copy(s device.Stream, c *device.Copy) error {
	c = h.st.aliasCopy(c)
	var args []device.Arg
	label := ""
	if c != nil {
		args, label = copyArgs(c), c.Label
		if label == "" {
			label = "copy " + c.Kind.String()
		}
	}
	s, err := h.command(s, args, true, nil, label)
	if err != nil {
		return err
	}
	return h.in.Copy(s, c)
}

func (h *host) HostFunc(s device.Stream, fn func()) error {
	s, err := h.command(s, nil, false, nil, "host function")
	if err != nil {
		return err
	}
	st := h.st
	st.mu.Lock()
	c := st.streamClock(s).copy()
	st.mu.Unlock()
	return h.in.HostFunc(s, func() {
		st.mu.Lock()
		st.callback = c
		st.mu.Unlock()
		fn()
		st.mu.Lock()
		st.callback = nil
		st.mu.Unlock()
	})
}

func (h *host) Record(e device.Event, s device.Stream) error {
	st := h.st
	s = st.stream(s)
	st.mu.Lock()
	r := st.recent[s]
	st.records[e] = record{stream: s, seq: st.waits + st.cmds, count: st.count[s], producer: append([]issued(nil), r...), empty: len(r) == 0}
	st.evClock[e] = st.streamClock(s).join(h.clock).copy()
	if origin, ok := st.capturing[s]; ok {
		st.evCapture[e] = origin
	} else {
		delete(st.evCapture, e)
	}
	st.mu.Unlock()
	return h.in.Record(e, s)
}

func (h *host) Wait(s device.Stream, e device.Event) error {
	st := h.st
	s = st.stream(s)
	st.mu.Lock()
	ord := st.waits
	st.waits++
	rec, recorded := st.records[e]
	_, capt := st.capturing[s]
	evOrigin, evCapt := st.evCapture[e]
	if !capt && evCapt {
		// A fork: s joins the capture. Not a site: dropping it would
		// leave s out of the graph, not the graph short of an edge.
		st.capturing[s] = evOrigin
		st.waitJoin(s, e, ord)
		st.mu.Unlock()
		return h.in.Wait(s, e)
	}
	kindHere := (!capt && (st.kind == DropWait || st.kind == WrongEvent)) || (capt && st.kind == MissingEdge)
	matters := recorded && rec.stream != s && !rec.empty
	var alt device.Event
	if kindHere && st.kind == WrongEvent && recorded {
		alt = st.olderRecord(e, rec)
	}
	st.mu.Unlock()
	if !kindHere {
		return h.joinWait(s, e, ord)
	}
	if matters {
		if err := h.shadowWait(s, e, ord, rec, alt, capt); err != nil {
			return err
		}
	}
	if ord != st.site {
		return h.joinWait(s, e, ord)
	}
	switch st.kind {
	case DropWait, MissingEdge:
		st.mu.Lock()
		st.applied++
		st.detail = fmt.Sprintf("wait %d: stream %d no longer waits on event %d (recorded on stream %d)", ord, s.ID(), e.ID(), streamID(rec.stream))
		st.mu.Unlock()
		return nil
	}
	return h.waitWrongEvent(s, e, ord, rec, alt)
}

// joinWait is a wait left as it is: s is ordered after e's record.
func (h *host) joinWait(s device.Stream, e device.Event, ord int) error {
	h.st.mu.Lock()
	h.st.waitJoin(s, e, ord)
	h.st.mu.Unlock()
	return h.in.Wait(s, e)
}

// olderRecord is WrongEvent's choice for a wait on e (recorded as rec):
// the newest older record of the producer's stream that precedes at least
// one of the commands e covers, or nil. Call with st.mu held.
func (st *state) olderRecord(e device.Event, rec record) device.Event {
	var alt device.Event
	best := -1
	for ev, r := range st.records {
		if ev == e || r.stream != rec.stream || r.seq > rec.seq || r.count >= rec.count {
			continue
		}
		if r.seq > best || r.seq == best && ev.ID() < alt.ID() {
			best, alt = r.seq, ev
		}
	}
	return alt
}

// shadowWait notes a wait of the mutated kind on e while e is still in
// flight: a pending wait with a shadow clock, s's clock as if the wait were
// dropped (joined with alt's under WrongEvent), against which what s runs
// next is compared with e's producer.
func (h *host) shadowWait(s device.Stream, e device.Event, ord int, rec record, alt device.Event, capt bool) error {
	st := h.st
	inFlight := true
	if !capt {
		done, err := h.in.Query(e)
		if err != nil {
			return err
		}
		inFlight = !done
	}
	if !inFlight {
		return nil
	}
	st.mu.Lock()
	shadow := st.streamClock(s).copy()
	if alt != nil {
		shadow = shadow.join(st.evClock[alt])
	}
	st.pending[s] = append(st.pending[s], pendingWait{ordinal: ord, producer: rec.producer, shadow: shadow, capture: capt})
	st.mu.Unlock()
	return nil
}

// waitWrongEvent applies WrongEvent at its site: s waits on alt, an older
// event of the producer's stream, or, when there is none, on a fresh event
// recorded on s itself.
func (h *host) waitWrongEvent(s device.Stream, e device.Event, ord int, rec record, alt device.Event) error {
	st := h.st
	how := ""
	if alt == nil {
		fresh, err := h.in.NewEvent(device.EventOptions{DisableTiming: true})
		if err != nil {
			return err
		}
		if err := h.Record(fresh, s); err != nil {
			return err
		}
		st.mu.Lock()
		st.ownEvents = append(st.ownEvents, fresh)
		st.mu.Unlock()
		alt, how = fresh, "a fresh event recorded on the waiting stream"
	} else {
		how = fmt.Sprintf("older event %d of the same stream", alt.ID())
	}
	st.mu.Lock()
	st.applied++
	st.detail = fmt.Sprintf("wait %d: stream %d waits on %s instead of event %d (stream %d)", ord, s.ID(), how, e.ID(), streamID(rec.stream))
	st.waitJoin(s, alt, ord)
	st.mu.Unlock()
	return h.in.Wait(s, alt)
}

// waitJoin orders stream s after event e's record, for its clock and for
// the shadow clocks of the waits pending on it. Call with st.mu held.
func (st *state) waitJoin(s device.Stream, e device.Event, ord int) {
	ec := st.evClock[e]
	i := st.sid(s)
	st.vc[i] = st.vc[i].join(ec)
	for k := range st.pending[s] {
		if st.pending[s][k].ordinal != ord {
			st.pending[s][k].shadow = st.pending[s][k].shadow.join(ec)
		}
	}
}

// knows orders this host thread after clock c (it has seen it complete).
func (h *host) knows(c clock) {
	h.st.mu.Lock()
	h.clock = h.clock.join(c)
	h.st.mu.Unlock()
}

func streamID(s device.Stream) int {
	if s == nil {
		return -1
	}
	return s.ID()
}

func (h *host) Query(e device.Event) (bool, error) {
	done, err := h.in.Query(e)
	if done && err == nil {
		h.st.mu.Lock()
		c := h.st.evClock[e]
		h.st.mu.Unlock()
		h.knows(c)
	}
	return done, err
}

func (h *host) StreamQuery(s device.Stream) (bool, error) {
	st := h.st
	st.mu.Lock()
	r, ok := st.replaced[s]
	st.mu.Unlock()
	if ok {
		idle, err := h.in.StreamQuery(r)
		if err != nil || !idle {
			return idle, err
		}
		h.knowsStream(r)
	}
	idle, err := h.in.StreamQuery(s)
	if idle && err == nil {
		h.knowsStream(s)
	}
	return idle, err
}

func (h *host) knowsStream(s device.Stream) {
	h.st.mu.Lock()
	c := h.st.streamClock(s).copy()
	h.st.mu.Unlock()
	h.knows(c)
}

func (h *host) EventSynchronize(e device.Event) error {
	if err := h.in.EventSynchronize(e); err != nil {
		return err
	}
	h.st.mu.Lock()
	c := h.st.evClock[e]
	h.st.mu.Unlock()
	h.knows(c)
	return nil
}

func (h *host) StreamSynchronize(s device.Stream) error {
	st := h.st
	st.mu.Lock()
	r, ok := st.replaced[s]
	st.mu.Unlock()
	if ok {
		if err := h.in.StreamSynchronize(r); err != nil {
			return err
		}
		h.knowsStream(r)
	}
	if err := h.in.StreamSynchronize(s); err != nil {
		return err
	}
	h.knowsStream(s)
	return nil
}

func (h *host) Synchronize() error {
	if err := h.in.Synchronize(); err != nil {
		return err
	}
	h.st.mu.Lock()
	var c clock
	for _, v := range h.st.vc {
		c = c.join(v)
	}
	h.st.mu.Unlock()
	h.knows(c)
	return nil
}

func (h *host) Elapsed(start, end device.Event) (time.Duration, error) {
	return h.in.Elapsed(start, end)
}

func (h *host) BeginCapture(s device.Stream) error {
	st := h.st
	s = st.stream(s)
	if err := h.in.BeginCapture(s); err != nil {
		return err
	}
	st.mu.Lock()
	st.capturing[s] = s
	st.nodes[s] = nil
	st.mu.Unlock()
	return nil
}

func (h *host) EndCapture(s device.Stream) (device.Graph, error) {
	st := h.st
	s = st.stream(s)
	g, err := h.in.EndCapture(s)
	st.mu.Lock()
	defer st.mu.Unlock()
	// The capture ends either way: every stream in it leaves it.
	streams := make([]device.Stream, 0, len(st.capturing))
	for m, o := range st.capturing {
		if o == s {
			streams = append(streams, m)
		}
	}
	sort.Slice(streams, func(i, j int) bool { return streams[i].ID() < streams[j].ID() })
	for _, m := range streams {
		delete(st.capturing, m)
		delete(st.pending, m)
	}
	for e, o := range st.evCapture {
		if o == s {
			delete(st.evCapture, e)
		}
	}
	if err == nil && g != nil {
		st.graphs[g] = st.nodes[s]
	}
	delete(st.nodes, s)
	return g, err
}

func (h *host) Instantiate(g device.Graph) (device.GraphExec, error) {
	x, err := h.in.Instantiate(g)
	if err == nil && x != nil {
		st := h.st
		st.mu.Lock()
		st.execs[x] = append([][]device.Arg(nil), st.graphs[g]...)
		st.mu.Unlock()
	}
	return x, err
}

func (h *host) GraphLaunch(x device.GraphExec, s device.Stream) error {
	st := h.st
	st.mu.Lock()
	var args []device.Arg
	for _, n := range st.execs[x] {
		args = append(args, n...)
	}
	st.mu.Unlock()
	s, err := h.command(s, args, true, x, fmt.Sprintf("graph launch (%d nodes)", x.Nodes()))
	if err != nil {
		return err
	}
	return h.in.GraphLaunch(x, s)
}

func (h *host) SetKernelNode(x device.GraphExec, node int, l *device.Launch) error {
	st := h.st
	l = st.stretch(st.aliasLaunch(l))
	if err := h.in.SetKernelNode(x, node, l); err != nil {
		return err
	}
	st.mu.Lock()
	if n := st.execs[x]; node >= 0 && node < len(n) && l != nil {
		n[node] = bufArgs(l)
	}
	st.mu.Unlock()
	return nil
}

func (h *host) SetCopyNode(x device.GraphExec, node int, c *device.Copy) error {
	st := h.st
	c = st.aliasCopy(c)
	if err := h.in.SetCopyNode(x, node, c); err != nil {
		return err
	}
	st.mu.Lock()
	if n := st.execs[x]; node >= 0 && node < len(n) && c != nil {
		n[node] = copyArgs(c)
	}
	st.mu.Unlock()
	return nil
}

func (h *host) NewQueue(name string) device.Queue {
	return &queue{in: h.in.NewQueue(name), st: h.st}
}

func (h *host) Get(q device.Queue) (any, bool) {
	w, wrapped := q.(*queue)
	if !wrapped {
		return h.in.Get(q)
	}
	v, ok := h.in.Get(w.in)
	if sv, isStamped := v.(stamped); ok && isStamped {
		h.knows(sv.c)
		return sv.v, true
	}
	return v, ok
}

var _ device.Host = (*host)(nil)
var _ device.InfoHost = (*infoHost)(nil)
