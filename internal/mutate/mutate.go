// Package mutate breaks correct schedules on purpose, one named way at a
// time, so that the race checker (device/sim) and output comparison (a GPU)
// can be shown to catch what they exist to catch.
//
// The model. A Scheduler wraps any correct scheduler and hands it a Host that
// forwards every driver call unchanged, except at one site, where it applies
// one Kind of mutation. Because every strategy issues its work through the
// device.Host interface, one wrapper mutates them all without knowing their
// policies:
//
//   - DropWait: the site's cuStreamWaitEvent is not issued (a forgotten
//     cross-stream dependency).
//   - WrongEvent: the site's wait names another event: an older event of the
//     producer's stream recorded before the producer's command (the classic
//     off-by-one in an event table), else a fresh event recorded on the
//     waiting stream itself (a wait that orders nothing).
//   - EarlyReuse: a memory planner's bug: buffer B is given buffer A's
//     storage because A's last use comes before B's first write in program
//     order, but nothing orders A's last readers before B's writer. Every
//     launch and copy argument naming B is retargeted to A; the scheduler
//     still sees B's access sets, so it does not order them either.
//   - SharedStream: two in-flight jobs share a stream and rely on its order
//     (SET's depth > 1, ACS's in-flight issue, round-robin's stream-order
//     dependencies); at the site the stream silently becomes a fresh one for
//     every later command, so what was issued before and what is issued after
//     are no longer ordered.
//   - MissingEdge: inside a stream capture, a wait of a stream already in the
//     capture is dropped, so the instantiated graph lacks that edge.
//
// Sites. A first run with Site < 0 (a probe) forwards everything and records
// the effective sites of the Kind: ordinals of the calls where the mutation
// would remove an ordering that matters. A wait is effective when its event
// has not completed yet (Query) and the next command issued on the waiting
// stream conflicts (device.Conflicts) with one of the last commands issued
// on the event's stream before its record; a command is a SharedStream site
// when it conflicts with its stream's previous command and that command has
// not completed (StreamQuery); an EarlyReuse site is a pair (Pairs) whose
// accesses the program's dependency graph leaves unordered. Because the same
// calls happen in the same order up to the site (the probe and the mutated
// run make the same queries, and the simulator is deterministic), ordinal n
// of the probe is the same call in the mutated run.
//
// On the simulator a mutation is caught when the run reports a race
// (device.Observer); on a GPU when an output differs from the serial
// schedule's. The race checker is a timing checker: it sees conflicting
// commands that overlapped in time, so a removed ordering whose commands
// happen not to overlap is a miss, reported as such.
//
// The wrapper keeps one lock for its own bookkeeping and never holds it
// across a driver call, so it is safe with real host threads (CUDA) and
// never blocks a simulated one. The hardware dependency queue
// (device.DependencyQueue) is not forwarded: ACS-HW cannot be mutated here.
package mutate

import (
	"fmt"
	"sort"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Kind is one way of breaking a schedule.
type Kind string

const (
	DropWait     Kind = "drop-wait"
	WrongEvent   Kind = "wrong-event"
	EarlyReuse   Kind = "early-reuse"
	SharedStream Kind = "shared-stream"
	MissingEdge  Kind = "missing-edge"
)

// Kinds lists every mutation, in report order.
var Kinds = []Kind{DropWait, WrongEvent, EarlyReuse, SharedStream, MissingEdge}

// Describe says in words what a Kind breaks.
func (k Kind) Describe() string {
	switch k {
	case DropWait:
		return "a dropped event wait"
	case WrongEvent:
		return "a wait on the wrong event"
	case EarlyReuse:
		return "a buffer reused too early"
	case SharedStream:
		return "a stream shared by two in-flight jobs, split"
	case MissingEdge:
		return "a graph missing an edge"
	}
	return string(k)
}

// ParseKind returns the Kind named s.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown mutation %q (known: drop-wait, wrong-event, early-reuse, shared-stream, missing-edge)", s)
}

// window is how many of a stream's last commands a wait's event is taken to
// cover when deciding whether the wait matters.
const window = 8

// Scheduler is Inner with one mutation applied at Site (or, with Site < 0,
// Inner unchanged while the effective sites are recorded).
type Scheduler struct {
	Inner sched.Scheduler
	Kind  Kind
	Site  int
	// Jitter, when not zero, stretches every kernel's simulated work by a
	// factor in [1, 4) drawn from a hash of Jitter and the command's
	// ordinal: the same in the probe and the mutated run, different between
	// seeds. Kernels of equal shape otherwise finish together on the
	// simulator, which can order by coincidence what the schedule leaves
	// unordered; jitter breaks the coincidence, as real GPUs' timing
	// noise does. (The work only matters on the simulator.)
	Jitter uint64
	// DelayCommand and DelayFactor stretch the kernel work of one command
	// (by ordinal; Producer names a site's) by DelayFactor: delay
	// injection, as race detectors use, so that the producer whose ordering
	// a mutation removed is still running when its consumer can start, and
	// the race happens rather than staying latent. DelayFactor <= 1: none.
	DelayCommand int
	DelayFactor  float64

	st *state
}

// New wraps inner. site < 0 makes a probe.
func New(inner sched.Scheduler, kind Kind, site int) (*Scheduler, error) {
	if inner == nil {
		return nil, fmt.Errorf("mutate: no scheduler to wrap")
	}
	if _, err := ParseKind(string(kind)); err != nil {
		return nil, err
	}
	return &Scheduler{Inner: inner, Kind: kind, Site: site}, nil
}

func (s *Scheduler) Name() string {
	if s.Site < 0 {
		return fmt.Sprintf("%s+probe(%s)", s.Inner.Name(), s.Kind)
	}
	return fmt.Sprintf("%s+%s@%d", s.Inner.Name(), s.Kind, s.Site)
}

// Sites are the effective site ordinals the last probe (or run) recorded,
// in increasing order.
func (s *Scheduler) Sites() []int {
	if s.st == nil {
		return nil
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	out := append([]int(nil), s.st.sites...)
	sort.Ints(out)
	n := 0
	for i, v := range out {
		if i == 0 || v != out[n-1] {
			out[n] = v
			n++
		}
	}
	return out[:n]
}

// Why says, for a site the last probe recorded, which ordering a mutation
// there removes ("" if unknown).
func (s *Scheduler) Why(site int) string {
	if s.st == nil {
		return ""
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.why[site]
}

// Producer is, for a site the last probe recorded, the command ordinal of
// the producer whose ordering a mutation there removes (-1 if unknown), for
// DelayCommand.
func (s *Scheduler) Producer(site int) int {
	if s.st == nil {
		return -1
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if p, ok := s.st.producer[site]; ok {
		return p
	}
	return -1
}

// Applied is how many times the last run applied its mutation (0: the site
// was never reached, or the mutation had nothing to change there).
func (s *Scheduler) Applied() int {
	if s.st == nil {
		return 0
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.applied
}

// Detail describes where the mutation was applied, for reports.
func (s *Scheduler) Detail() string {
	if s.st == nil {
		return ""
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.detail
}

func (s *Scheduler) begin(in *workloads.Instance) error {
	if s.st != nil {
		return nil
	}
	s.st = newState(s.Kind, s.Site)
	s.st.jitter = s.Jitter
	s.st.delayCmd, s.st.delayFactor = -1, s.DelayFactor
	if s.DelayFactor > 1 {
		s.st.delayCmd = s.DelayCommand
	}
	if s.Kind == EarlyReuse && s.Site >= 0 {
		pairs := Pairs(in)
		if s.Site >= len(pairs) {
			return fmt.Errorf("mutate: early-reuse site %d of %d pairs", s.Site, len(pairs))
		}
		p := pairs[s.Site]
		s.st.aliasFrom, s.st.aliasTo = in.Bufs[p.B], in.Bufs[p.A]
		s.st.detail = fmt.Sprintf("buffer %s given %s's storage", in.Prog.Buffers[p.B].Name, in.Prog.Buffers[p.A].Name)
	}
	if s.Kind == EarlyReuse && s.Site < 0 {
		for i, p := range Pairs(in) {
			b := in.Bufs[p.B].Addr
			s.st.pairsByB[b] = append(s.st.pairsByB[b], pairSite{index: i, a: in.Bufs[p.A].Addr})
		}
	}
	return nil
}

// Prepare forwards to Inner's Prepare through the mutating host: set-up such
// as a graph captured once is where a MissingEdge lives.
func (s *Scheduler) Prepare(h device.Host, in *workloads.Instance) error {
	s.st = nil
	if err := s.begin(in); err != nil {
		return err
	}
	if p, ok := s.Inner.(sched.Preparer); ok {
		return p.Prepare(s.st.wrap(h), in)
	}
	return nil
}

// Cleanup forwards to Inner's Cleanup and releases what the mutation created.
func (s *Scheduler) Cleanup(h device.Host) error {
	var err error
	if p, ok := s.Inner.(sched.Preparer); ok && s.st != nil {
		err = p.Cleanup(s.st.wrap(h))
	}
	if s.st != nil {
		if e := s.st.release(h); err == nil {
			err = e
		}
	}
	return err
}

// Run runs Inner through the mutating host.
func (s *Scheduler) Run(h device.Host, in *workloads.Instance) error {
	prepared := s.st != nil
	if !prepared {
		if err := s.begin(in); err != nil {
			return err
		}
	}
	err := s.Inner.Run(s.st.wrap(h), in)
	if !prepared {
		if e := s.st.release(h); err == nil {
			err = e
		}
	}
	return err
}

// Stats forwards Inner's statistics when it has them.
func (s *Scheduler) Stats() map[string]float64 {
	if st, ok := s.Inner.(interface{ Stats() map[string]float64 }); ok {
		return st.Stats()
	}
	return nil
}

// state is one run's bookkeeping, shared by every host thread of the run.
type state struct {
	mu   sync.Mutex
	kind Kind
	site int

	waits, cmds int // ordinals of Wait calls and of commands
	jitter      uint64
	launches    int // ordinal of Launch calls, for jitter
	sites       []int
	why         map[int]string // per site: the ordering the mutation removes
	producer    map[int]int    // per site: the command ordinal of the producer it unorders
	delayCmd    int            // command ordinal whose kernel work is stretched (-1: none)
	delayFactor float64
	applied     int
	detail      string

	recent  map[device.Stream][]issued // last commands per stream
	count   map[device.Stream]int      // data commands issued per stream
	records map[device.Event]record
	pending map[device.Stream][]pendingWait

	// Capture: streams in a capture map to its origin; a capture's nodes'
	// access sets in node order; graphs and execs keep their nodes'.
	capturing map[device.Stream]device.Stream
	evCapture map[device.Event]device.Stream
	nodes     map[device.Stream][][]device.Arg
	graphs    map[device.Graph][][]device.Arg
	execs     map[device.GraphExec][][]device.Arg

	// SharedStream: streams replaced by fresh ones from the site on.
	replaced map[device.Stream]device.Stream
	// EarlyReuse: arguments naming aliasFrom are retargeted to aliasTo.
	aliasFrom, aliasTo device.Buffer

	// Happens-before (clock.go).
	sids     map[device.Stream]int
	vc       []clock // per stream ordinal
	evClock  map[device.Event]clock
	hosts    []*host
	callback clock // the running host callback's clock, if one runs
	// per buffer address, the commands that touched it (EarlyReuse probe)
	touched map[uint64][]issued
	// per EarlyReuse pair, by B's address
	pairsByB map[uint64][]pairSite

	ownEvents  []device.Event
	ownStreams []device.Stream
}

type record struct {
	stream   device.Stream
	seq      int
	count    int      // data commands issued on the stream before it
	producer []issued // the stream's last commands before the record
	empty    bool     // nothing had been issued on the stream
}

type pendingWait struct {
	ordinal  int
	producer []issued
	shadow   clock // the waiting stream's clock had the mutation been applied
	capture  bool
}

// issued is a command with its access set.
type issued struct {
	ref   cmdRef
	args  []device.Arg
	exec  device.GraphExec // a graph launch's exec, else nil
	label string
	ord   int // command ordinal
}

// pairSite is an EarlyReuse pair as the probe sees it.
type pairSite struct {
	index int
	a     uint64 // A's address
}

func newState(kind Kind, site int) *state {
	return &state{
		kind: kind, site: site,
		recent:    map[device.Stream][]issued{},
		why:       map[int]string{},
		count:     map[device.Stream]int{},
		records:   map[device.Event]record{},
		pending:   map[device.Stream][]pendingWait{},
		capturing: map[device.Stream]device.Stream{},
		evCapture: map[device.Event]device.Stream{},
		nodes:     map[device.Stream][][]device.Arg{},
		graphs:    map[device.Graph][][]device.Arg{},
		execs:     map[device.GraphExec][][]device.Arg{},
		replaced:  map[device.Stream]device.Stream{},
		sids:      map[device.Stream]int{},
		evClock:   map[device.Event]clock{},
		touched:   map[uint64][]issued{},
		producer:  map[int]int{},
		pairsByB:  map[uint64][]pairSite{},
	}
}

func (st *state) release(h device.Host) error {
	st.mu.Lock()
	evs, strs := st.ownEvents, st.ownStreams
	st.ownEvents, st.ownStreams = nil, nil
	st.mu.Unlock()
	var first error
	for _, s := range strs {
		if err := h.Destroy(s); err != nil && first == nil {
			first = err
		}
	}
	for _, e := range evs {
		if err := h.Destroy(e); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// wrap returns the mutating view of h, keeping the optional capabilities
// the mutation can forward.
func (st *state) wrap(h device.Host) device.Host {
	switch h.(type) {
	case *host, *infoHost:
		return h
	}
	st.mu.Lock()
	var base *host
	for _, o := range st.hosts {
		if o.in == h {
			base = o
		}
	}
	if base == nil {
		base = &host{in: h, st: st}
		st.hosts = append(st.hosts, base)
	}
	st.mu.Unlock()
	if ih, ok := h.(device.InfoHost); ok {
		return &infoHost{host: base, info: ih}
	}
	return base
}

type infoHost struct {
	*host
	info device.InfoHost
}

func (h *infoHost) DeviceInfo() device.Info { return h.info.DeviceInfo() }
