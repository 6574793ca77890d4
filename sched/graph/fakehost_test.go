package graph

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// fakeHost is a logical GPU for tests: infinite SMs, every command takes
// opTime once its stream and its waits allow and the host has issued it,
// graphs honour their captured edges, and stream capture follows CUDA's
// rules (streams join by waiting on a captured event; every fork must be
// joined back before EndCapture). It records every command's interval and
// access set so a test can check that no two conflicting commands overlap
// and that the scheduler returned only after everything completed.
type fakeHost struct {
	d    *fakeDev
	name string
}

const opTime = 10 * time.Microsecond

type fakeDev struct {
	now      time.Duration
	nextAddr uint64
	streams  map[int]*fakeStream
	events   map[int]*fakeEvent
	nextID   int
	done     []interval
	launches int
	waits    int
}

type interval struct {
	name       string
	start, end time.Duration
	args       []device.Arg
}

type fakeStream struct {
	device.Base
	id   int
	t    time.Duration
	cap  *capture // non-nil while in a capture
	tail []int    // capture: the nodes the next captured command depends on
}

func (s *fakeStream) ID() int       { return s.id }
func (s *fakeStream) Priority() int { return 0 }

type fakeEvent struct {
	device.Base
	id      int
	t       time.Duration
	cap     *capture
	capDeps []int
}

func (e *fakeEvent) ID() int { return e.id }

type capture struct {
	origin  *fakeStream
	members []*fakeStream
	nodes   []fakeNode
}

type fakeNode struct {
	name string
	deps []int
	args []device.Arg
}

type fakeGraph struct {
	device.Base
	nodes []fakeNode
}

func (g *fakeGraph) Nodes() int { return len(g.nodes) }

func newFakeDev() *fakeDev {
	return &fakeDev{nextAddr: 1 << 20, streams: map[int]*fakeStream{}, events: map[int]*fakeEvent{}}
}

func (d *fakeDev) host() *fakeHost { return &fakeHost{d: d, name: "main"} }

// races lists pairs of conflicting commands whose intervals overlap.
func (d *fakeDev) races() []string {
	var out []string
	for i := range d.done {
		for j := i + 1; j < len(d.done); j++ {
			a, b := d.done[i], d.done[j]
			if a.start < b.end && b.start < a.end && device.Conflicts(a.args, b.args) {
				out = append(out, fmt.Sprintf("%s [%v,%v) overlaps %s [%v,%v)", a.name, a.start, a.end, b.name, b.start, b.end))
			}
		}
	}
	return out
}

// lastEnd is when the last command finished.
func (d *fakeDev) lastEnd() time.Duration {
	var t time.Duration
	for _, iv := range d.done {
		t = max(t, iv.end)
	}
	return t
}

func (h *fakeHost) tick()                  { h.d.now += time.Microsecond }
func (h *fakeHost) Name() string           { return h.name }
func (h *fakeHost) Now() time.Duration     { return h.d.now }
func (h *fakeHost) Spend(dt time.Duration) { h.d.now += dt }
func (h *fakeHost) Go(name string, fn func(h device.Host) error) {
	if err := fn(&fakeHost{d: h.d, name: name}); err != nil {
		panic(fmt.Sprintf("fake host thread %s: %v", name, err))
	}
}
func (h *fakeHost) Malloc(n int64) (device.Buffer, error) {
	b := device.Buffer{Addr: h.d.nextAddr, Size: n}
	h.d.nextAddr += uint64(n+4095)/4096*4096 + 4096
	return b, nil
}
func (h *fakeHost) Free(device.Buffer) error { return nil }
func (h *fakeHost) AllocHost(n int64, pinned bool) (*device.HostMem, error) {
	return &device.HostMem{Data: make([]byte, n), Pinned: pinned}, nil
}
func (h *fakeHost) FreeHost(*device.HostMem) error { return nil }
func (h *fakeHost) NewStream(device.StreamOptions) (device.Stream, error) {
	h.d.nextID++
	s := &fakeStream{id: h.d.nextID}
	h.d.streams[s.id] = s
	return s, nil
}
func (h *fakeHost) NewEvent(device.EventOptions) (device.Event, error) {
	h.d.nextID++
	e := &fakeEvent{id: h.d.nextID}
	h.d.events[e.id] = e
	return e, nil
}
func (h *fakeHost) Destroy(device.Resource) error { return nil }

func (h *fakeHost) command(s device.Stream, name string, args []device.Arg) error {
	h.tick()
	st := s.(*fakeStream)
	if st.cap != nil {
		st.cap.nodes = append(st.cap.nodes, fakeNode{name: name, deps: st.tail, args: args})
		st.tail = []int{len(st.cap.nodes) - 1}
		return nil
	}
	start := max(st.t, h.d.now)
	st.t = start + opTime
	h.d.done = append(h.d.done, interval{name, start, st.t, args})
	return nil
}

func (h *fakeHost) Launch(s device.Stream, l *device.Launch) error {
	h.d.launches++
	var args []device.Arg
	for _, a := range l.Args {
		if a.Kind == device.ArgBuffer {
			args = append(args, a)
		}
	}
	return h.command(s, l.Name(), args)
}
func (h *fakeHost) Copy(s device.Stream, c *device.Copy) error {
	r, w := c.DeviceRanges()
	return h.command(s, c.Label, append(r, w...))
}
func (h *fakeHost) Record(e device.Event, s device.Stream) error {
	h.tick()
	ev, st := e.(*fakeEvent), s.(*fakeStream)
	if st.cap != nil {
		ev.cap, ev.capDeps = st.cap, append([]int(nil), st.tail...)
		return nil
	}
	ev.cap, ev.t = nil, st.t
	return nil
}
func (h *fakeHost) Wait(s device.Stream, e device.Event) error {
	h.tick()
	h.d.waits++
	ev, st := e.(*fakeEvent), s.(*fakeStream)
	if ev.cap != nil {
		if st.cap != nil && st.cap != ev.cap {
			return fmt.Errorf("fake: stream %d is in another capture", st.id)
		}
		if st.cap == nil {
			st.cap = ev.cap
			ev.cap.members = append(ev.cap.members, st)
			st.tail = nil
		}
		st.tail = union(st.tail, ev.capDeps)
		return nil
	}
	if st.cap != nil {
		return fmt.Errorf("fake: captured stream %d waits on an event recorded outside the capture", st.id)
	}
	st.t = max(st.t, ev.t)
	return nil
}
func union(a, b []int) []int {
	out := append([]int(nil), a...)
	for _, x := range b {
		found := false
		for _, y := range out {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}
func (h *fakeHost) HostFunc(device.Stream, func()) error {
	return fmt.Errorf("fake: no host functions")
}
func (h *fakeHost) Query(e device.Event) (bool, error) {
	h.tick()
	return e.(*fakeEvent).t <= h.d.now, nil
}
func (h *fakeHost) StreamQuery(s device.Stream) (bool, error) {
	h.tick()
	return s.(*fakeStream).t <= h.d.now, nil
}
func (h *fakeHost) EventSynchronize(e device.Event) error {
	h.d.now = max(h.d.now, e.(*fakeEvent).t)
	return nil
}
func (h *fakeHost) StreamSynchronize(s device.Stream) error {
	st := s.(*fakeStream)
	if st.cap != nil {
		return fmt.Errorf("fake: synchronize on capturing stream %d", st.id)
	}
	h.d.now = max(h.d.now, st.t)
	return nil
}
func (h *fakeHost) Synchronize() error {
	for _, s := range h.d.streams {
		h.d.now = max(h.d.now, s.t)
	}
	return nil
}
func (h *fakeHost) Elapsed(a, b device.Event) (time.Duration, error) {
	return b.(*fakeEvent).t - a.(*fakeEvent).t, nil
}
func (h *fakeHost) BeginCapture(s device.Stream) error {
	st := s.(*fakeStream)
	if st.cap != nil {
		return fmt.Errorf("fake: stream %d already capturing", st.id)
	}
	st.cap = &capture{origin: st}
	st.cap.members = []*fakeStream{st}
	st.tail = nil
	return nil
}
func (h *fakeHost) EndCapture(s device.Stream) (device.Graph, error) {
	st := s.(*fakeStream)
	c := st.cap
	if c == nil || c.origin != st {
		return nil, fmt.Errorf("fake: stream %d is not a capture origin", st.id)
	}
	// Every captured node must precede the origin's tail (joined back).
	seen := make([]bool, len(c.nodes))
	var mark func(int)
	mark = func(v int) {
		if seen[v] {
			return
		}
		seen[v] = true
		for _, u := range c.nodes[v].deps {
			mark(u)
		}
	}
	for _, v := range st.tail {
		mark(v)
	}
	for _, m := range c.members {
		m.cap, m.tail = nil, nil
	}
	for v, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("fake: capture unjoined: node %d (%s) does not precede the origin's end", v, c.nodes[v].name)
		}
	}
	return &fakeGraph{nodes: c.nodes}, nil
}
func (h *fakeHost) Instantiate(g device.Graph) (device.GraphExec, error) {
	return &fakeGraph{nodes: g.(*fakeGraph).nodes}, nil
}
func (h *fakeHost) GraphLaunch(x device.GraphExec, s device.Stream) error {
	h.tick()
	st := s.(*fakeStream)
	g := x.(*fakeGraph)
	base := max(st.t, h.d.now)
	ends := make([]time.Duration, len(g.nodes))
	last := base
	for v, nd := range g.nodes {
		start := base
		for _, u := range nd.deps {
			start = max(start, ends[u])
		}
		ends[v] = start + opTime
		last = max(last, ends[v])
		h.d.done = append(h.d.done, interval{nd.name, start, ends[v], nd.args})
		h.d.launches++
	}
	st.t = last
	return nil
}
func (h *fakeHost) SetKernelNode(device.GraphExec, int, *device.Launch) error {
	return fmt.Errorf("fake: not supported")
}
func (h *fakeHost) SetCopyNode(device.GraphExec, int, *device.Copy) error {
	return fmt.Errorf("fake: not supported")
}

type fakeQueue struct{ items []any }

func (q *fakeQueue) Put(v any) { q.items = append(q.items, v) }
func (q *fakeQueue) Close()    {}
func (q *fakeQueue) Len() int  { return len(q.items) }
func (h *fakeHost) NewQueue(string) device.Queue {
	return &fakeQueue{}
}
func (h *fakeHost) Get(q device.Queue) (any, bool) {
	fq := q.(*fakeQueue)
	if len(fq.items) == 0 {
		return nil, false
	}
	v := fq.items[0]
	fq.items = fq.items[1:]
	return v, true
}

var _ device.Host = (*fakeHost)(nil)
