package graph

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Policy names a stream-assignment policy.
type Policy string

const (
	PolicySerial   Policy = "serial"
	PolicyTaskflow Policy = "taskflow"
	PolicyNimble   Policy = "nimble"
	PolicyKeSCo    Policy = "kesco"
)

// Default stream counts: Taskflow's capture uses 4, KeSCo 8.
const (
	DefaultTaskflowStreams = 4
	DefaultKeSCoStreams    = 8
)

// Options configure a Scheduler.
type Options struct {
	Policy Policy
	// Streams bounds the streams for taskflow and kesco; 0 means the
	// policy's default. Serial uses one stream, Nimble the graph's width.
	Streams int
	// Graph captures the plan into one multi-stream CUDA graph (fork and
	// join through events during stream capture) and launches that,
	// instead of issuing the plan's launches and events directly.
	Graph bool
	// PerStep plans (and, with Graph, captures) each step of the program
	// separately, in program order, as a runtime must when each step's
	// operations are only known when it comes. Otherwise the whole
	// program is one graph, planned (and captured) once in Prepare.
	PerStep bool
	// Strict and NoPrune tune the kesco policy (see KeSCoOptions).
	Strict  bool
	NoPrune bool
	// Prune applies KeSCo's sync pruning to the taskflow or nimble
	// assignment: a node waits only on the last predecessor on each
	// foreign stream that its stream has not already waited past, and
	// only the events waited on are recorded (Nimble records one after
	// every node).
	Prune bool
}

// BuildPlan computes the policy's plan for d.
func BuildPlan(d *DAG, opt Options) (*Plan, error) {
	switch opt.Policy {
	case PolicySerial:
		return Serial(d)
	case PolicyTaskflow, PolicyNimble:
		p, err := assign(d, opt)
		if err != nil || !opt.Prune {
			return p, err
		}
		p.prune(d)
		p.Policy += "+prune"
		return p, nil
	case PolicyKeSCo:
		return KeSCo(d, KeSCoOptions{Streams: opt.streams(), Strict: opt.Strict, NoPrune: opt.NoPrune})
	}
	return nil, fmt.Errorf("graph: unknown policy %q (known: serial, taskflow, nimble, kesco)", opt.Policy)
}

// assign is the taskflow or nimble plan of d, unpruned.
func assign(d *DAG, opt Options) (*Plan, error) {
	if opt.Policy == PolicyNimble {
		return Nimble(d)
	}
	red, err := d.TransitiveReduction()
	if err != nil {
		return nil, err
	}
	return Taskflow(red, opt.streams())
}

func (o Options) streams() int {
	if o.Streams != 0 {
		return o.Streams
	}
	if o.Policy == PolicyTaskflow {
		return DefaultTaskflowStreams
	}
	return DefaultKeSCoStreams
}

// Validate reports bad options.
func (o Options) Validate() error {
	switch o.Policy {
	case PolicySerial, PolicyTaskflow, PolicyNimble, PolicyKeSCo:
	default:
		return fmt.Errorf("graph: unknown policy %q (known: serial, taskflow, nimble, kesco)", o.Policy)
	}
	if o.Streams < 0 {
		return fmt.Errorf("graph: streams must not be negative, got %d", o.Streams)
	}
	if (o.Strict || o.NoPrune) && o.Policy != PolicyKeSCo {
		return fmt.Errorf("graph: strict and no_prune apply only to the kesco policy, not %s", o.Policy)
	}
	if o.Prune && o.Policy != PolicyTaskflow && o.Policy != PolicyNimble {
		return fmt.Errorf("graph: prune applies only to the taskflow and nimble policies (kesco prunes unless no_prune), not %s", o.Policy)
	}
	return nil
}

// Scheduler issues a program by a whole-graph stream assignment. It
// implements sched.Scheduler and sched.Preparer: Prepare builds the DAG,
// the plan, streams and events, and (for a whole-program graph) captures
// and instantiates it; Run only issues or launches.
type Scheduler struct {
	opt Options

	inst    *workloads.Instance
	scopes  []scope
	streams []device.Stream
	events  []device.Event // per flat operation; nil where the plan records none
	barrier []device.Event // per stream, for step barriers and fork/join
	exec    device.GraphExec
	nodes   int
	stats   map[string]float64 // of the last Prepare; kept after Cleanup
	// planner, when set, replaces BuildPlan (searched plans: AutoGraph, IOS).
	planner func(d *DAG) (*Plan, error)
	name    string
}

// scope is a range of flat operations planned together.
type scope struct {
	lo, hi int
	plan   *Plan
}

// Needs implements sched.Needer: a plan of the whole program needs every
// step known ahead; a plan per step needs nothing more than the steps.
func (s *Scheduler) Needs() []sched.Trait {
	if s.opt.PerStep {
		return nil
	}
	return wholeProgram
}

var wholeProgram = []sched.Trait{sched.TraitWholeProgram}

// New returns a scheduler with the given options.
func New(opt Options) (*Scheduler, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	return &Scheduler{opt: opt}, nil
}

// withPlan returns a scheduler that issues a given plan of the whole
// program (one scope), plain or captured.
func withPlan(name string, p *Plan, graph bool) *Scheduler {
	return &Scheduler{opt: Options{Graph: graph}, name: name, planner: func(*DAG) (*Plan, error) { return p, nil }}
}

// Name is the policy with its parameters, e.g. "kesco(s=8)+graph".
func (s *Scheduler) Name() string {
	if s.name != "" {
		return s.name
	}
	var b strings.Builder
	b.WriteString(string(s.opt.Policy))
	switch s.opt.Policy {
	case PolicyTaskflow, PolicyKeSCo:
		fmt.Fprintf(&b, "(s=%d", s.opt.streams())
		if s.opt.Strict {
			b.WriteString(",strict")
		}
		if s.opt.NoPrune {
			b.WriteString(",no-prune")
		}
		b.WriteString(")")
	}
	if s.opt.Prune {
		b.WriteString("+prune")
	}
	if s.opt.Graph {
		b.WriteString("+graph")
	}
	if s.opt.PerStep {
		b.WriteString("/step")
	}
	return b.String()
}

// Plans are the prepared plans, one per scope (the whole program, or each
// step with PerStep). Nil before Prepare.
func (s *Scheduler) Plans() []*Plan {
	out := make([]*Plan, len(s.scopes))
	for i := range s.scopes {
		out[i] = s.scopes[i].plan
	}
	return out
}

// Stats sums the last prepared plans' figures for result tables: streams
// used, event waits issued, waits removed by pruning, cross-stream edges,
// events recorded, and captured graph nodes per launch (whole-program
// graphs). It stays available after Cleanup.
func (s *Scheduler) Stats() map[string]float64 {
	out := make(map[string]float64, len(s.stats))
	for k, v := range s.stats {
		out[k] = v
	}
	return out
}

func (s *Scheduler) computeStats() map[string]float64 {
	st := map[string]float64{}
	streams := 0
	for _, sc := range s.scopes {
		streams = max(streams, sc.plan.Streams)
		st["waits"] += float64(sc.plan.NumWaits())
		st["waits_removed"] += float64(sc.plan.WaitsRemoved)
		st["cross_edges"] += float64(sc.plan.CrossEdges)
		st["events"] += float64(sc.plan.NumRecords())
	}
	st["streams"] = float64(streams)
	if s.exec != nil {
		st["graph_nodes"] = float64(s.nodes)
	}
	return st
}

// Prepare plans the program and creates what Run needs.
func (s *Scheduler) Prepare(h device.Host, in *workloads.Instance) error {
	if s.inst != nil {
		if err := s.Cleanup(h); err != nil {
			return err
		}
	}
	var ranges [][2]int
	if s.opt.PerStep {
		for st := 0; st < in.Steps(); st++ {
			lo, hi := in.StepRange(st)
			ranges = append(ranges, [2]int{lo, hi})
		}
	} else {
		ranges = [][2]int{{0, in.N()}}
	}
	streams := 1
	for _, r := range ranges {
		d, err := FromInstance(in, r[0], r[1])
		if err != nil {
			return err
		}
		var p *Plan
		if s.planner != nil {
			p, err = s.planner(d)
		} else {
			p, err = BuildPlan(d, s.opt)
		}
		if err != nil {
			return fmt.Errorf("%s on %s: %w", s.Name(), in.Prog.Name, err)
		}
		if err := p.Verify(d); err != nil {
			return fmt.Errorf("%s on %s: %w", s.Name(), in.Prog.Name, err)
		}
		s.scopes = append(s.scopes, scope{r[0], r[1], p})
		streams = max(streams, p.Streams)
	}
	s.inst = in
	s.events = make([]device.Event, in.N())
	for i := 0; i < streams; i++ {
		st, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return s.fail(h, err)
		}
		s.streams = append(s.streams, st)
		ev, err := h.NewEvent(device.EventOptions{DisableTiming: true})
		if err != nil {
			return s.fail(h, err)
		}
		s.barrier = append(s.barrier, ev)
	}
	for _, sc := range s.scopes {
		for v, rec := range sc.plan.Record {
			if !rec {
				continue
			}
			ev, err := h.NewEvent(device.EventOptions{DisableTiming: true})
			if err != nil {
				return s.fail(h, err)
			}
			s.events[sc.lo+v] = ev
		}
	}
	if s.opt.Graph && !s.opt.PerStep {
		x, nodes, err := s.capture(h, s.scopes[0])
		if err != nil {
			return s.fail(h, fmt.Errorf("%s: capture: %w", s.Name(), err))
		}
		s.exec, s.nodes = x, nodes
	}
	s.stats = s.computeStats()
	return nil
}

func (s *Scheduler) fail(h device.Host, err error) error {
	return errors.Join(err, s.Cleanup(h))
}

// Cleanup destroys the streams, events and graph Prepare made.
func (s *Scheduler) Cleanup(h device.Host) error {
	var errs []error
	if s.exec != nil {
		errs = append(errs, h.Destroy(s.exec))
	}
	for _, e := range s.events {
		if e != nil {
			errs = append(errs, h.Destroy(e))
		}
	}
	for _, e := range s.barrier {
		errs = append(errs, h.Destroy(e))
	}
	for _, st := range s.streams {
		errs = append(errs, h.Destroy(st))
	}
	*s = Scheduler{opt: s.opt, stats: s.stats, planner: s.planner, name: s.name}
	return errors.Join(errs...)
}

// Run issues the program and waits for it.
func (s *Scheduler) Run(h device.Host, in *workloads.Instance) error {
	if s.inst != in {
		if err := s.Prepare(h, in); err != nil {
			return err
		}
	}
	switch {
	case s.exec != nil:
		if err := h.GraphLaunch(s.exec, s.streams[0]); err != nil {
			return err
		}
		return h.StreamSynchronize(s.streams[0])
	case s.opt.Graph: // a graph per step, captured as the step comes
		var execs []device.GraphExec
		var err error
		for _, sc := range s.scopes {
			var x device.GraphExec
			if x, _, err = s.capture(h, sc); err != nil {
				break
			}
			execs = append(execs, x)
			if err = h.GraphLaunch(x, s.streams[0]); err != nil {
				break
			}
		}
		if err == nil {
			err = h.StreamSynchronize(s.streams[0])
		}
		for _, x := range execs {
			err = errors.Join(err, h.Destroy(x))
		}
		return err
	}
	used := 1
	for i, sc := range s.scopes {
		if i > 0 {
			if err := s.stepBarrier(h, used); err != nil {
				return err
			}
		}
		if err := s.issue(h, sc); err != nil {
			return err
		}
		used = max(used, sc.plan.Streams)
	}
	for _, st := range s.streams[:used] {
		if err := h.StreamSynchronize(st); err != nil {
			return err
		}
	}
	return nil
}

// issue enqueues one scope's plan: waits, the operation, its event.
func (s *Scheduler) issue(h device.Host, sc scope) error {
	p := sc.plan
	for _, v := range p.Order {
		st := s.streams[p.Stream[v]]
		for _, u := range p.Waits[v] {
			if err := h.Wait(st, s.events[sc.lo+u]); err != nil {
				return err
			}
		}
		if err := s.inst.Issue(h, st, sc.lo+v); err != nil {
			return err
		}
		if p.Record[v] {
			if err := h.Record(s.events[sc.lo+v], st); err != nil {
				return err
			}
		}
	}
	return nil
}

// stepBarrier orders everything issued so far on streams [0, used) before
// anything issued later on any stream: join into stream 0, then fork.
func (s *Scheduler) stepBarrier(h device.Host, used int) error {
	return s.joinFork(h, used, len(s.streams))
}

// joinFork makes stream 0 wait for streams [1, join), then streams
// [1, fork) wait for stream 0.
func (s *Scheduler) joinFork(h device.Host, join, fork int) error {
	for i := 1; i < join; i++ {
		if err := h.Record(s.barrier[i], s.streams[i]); err != nil {
			return err
		}
		if err := h.Wait(s.streams[0], s.barrier[i]); err != nil {
			return err
		}
	}
	if fork <= 1 {
		return nil
	}
	if err := h.Record(s.barrier[0], s.streams[0]); err != nil {
		return err
	}
	for i := 1; i < fork; i++ {
		if err := h.Wait(s.streams[i], s.barrier[0]); err != nil {
			return err
		}
	}
	return nil
}

// capture records one scope's plan into a graph on stream 0: the other
// streams join the capture by waiting on a fork event recorded in it, and
// are joined back into stream 0 at the end, as CUDA requires.
func (s *Scheduler) capture(h device.Host, sc scope) (device.GraphExec, int, error) {
	origin := s.streams[0]
	if err := h.BeginCapture(origin); err != nil {
		return nil, 0, err
	}
	k := sc.plan.Streams
	err := s.joinFork(h, 0, k)
	if err == nil {
		err = s.issue(h, sc)
	}
	if err == nil {
		err = s.joinFork(h, k, 0)
	}
	g, endErr := h.EndCapture(origin)
	if err = errors.Join(err, endErr); err != nil {
		if g != nil {
			err = errors.Join(err, h.Destroy(g))
		}
		return nil, 0, err
	}
	x, err := h.Instantiate(g)
	nodes := g.Nodes()
	if derr := h.Destroy(g); err == nil {
		err = derr
	}
	if err != nil {
		return nil, 0, err
	}
	return x, nodes, nil
}
