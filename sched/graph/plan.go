package graph

import (
	"fmt"
	"sort"
)

// Plan is a stream assignment of a DAG with the synchronization that makes
// it correct: nodes are issued in Order, node v on stream Stream[v]; before
// v its stream waits on the completion events of the nodes in Waits[v]; an
// event is recorded after every node with Record set.
type Plan struct {
	Policy  string
	Streams int
	Stream  []int
	Order   []int
	Waits   [][]int
	Record  []bool
	// CrossEdges counts dependency edges (in the graph the policy
	// synchronizes) whose ends are on different streams; WaitsRemoved is
	// how many of them needed no event wait (KeSCo's sync pruning).
	CrossEdges   int
	WaitsRemoved int
}

// NumWaits is the number of event waits the plan issues.
func (p *Plan) NumWaits() int {
	n := 0
	for _, w := range p.Waits {
		n += len(w)
	}
	return n
}

// NumRecords is the number of events the plan records.
func (p *Plan) NumRecords() int {
	n := 0
	for _, r := range p.Record {
		if r {
			n++
		}
	}
	return n
}

// Verify checks that executing p respects every edge of d: for each edge
// u -> v, u completes before v starts, through stream order and event
// waits (a vector clock per stream tracks what each stream has
// transitively waited for). It also checks the plan's shape.
func (p *Plan) Verify(d *DAG) error {
	n := d.N()
	if len(p.Stream) != n || len(p.Order) != n || len(p.Waits) != n || len(p.Record) != n {
		return fmt.Errorf("plan %s: sized for %d/%d/%d/%d nodes, graph has %d", p.Policy, len(p.Stream), len(p.Order), len(p.Waits), len(p.Record), n)
	}
	pos := make([]int, n)     // position of node in its stream, 1-based
	issued := make([]bool, n) // issued so far
	tail := make([]int, p.Streams)
	know := make([][]int, p.Streams) // know[s][t]: stream s's next command runs after the first know[s][t] commands of t
	for s := range know {
		know[s] = make([]int, p.Streams)
	}
	snap := make([][]int, n)
	for _, v := range p.Order {
		if v < 0 || v >= n || issued[v] {
			return fmt.Errorf("plan %s: order lists node %d twice or out of range", p.Policy, v)
		}
		s := p.Stream[v]
		if s < 0 || s >= p.Streams {
			return fmt.Errorf("plan %s: node %d on stream %d of %d", p.Policy, v, s, p.Streams)
		}
		for _, u := range p.Waits[v] {
			if !issued[u] || !p.Record[u] {
				return fmt.Errorf("plan %s: node %d waits on node %d, which has no recorded event yet", p.Policy, v, u)
			}
			for t := range know[s] {
				know[s][t] = max(know[s][t], snap[u][t])
			}
		}
		tail[s]++
		pos[v] = tail[s]
		know[s][s] = tail[s]
		snap[v] = append([]int(nil), know[s]...)
		issued[v] = true
		for _, u := range d.Pred[v] {
			if !issued[u] {
				return fmt.Errorf("plan %s: node %d issued before its predecessor %d", p.Policy, v, u)
			}
			if snap[v][p.Stream[u]] < pos[u] {
				return fmt.Errorf("plan %s: edge %d -> %d (streams %d -> %d) is not synchronized", p.Policy, u, v, p.Stream[u], s)
			}
		}
	}
	return nil
}

func newPlan(policy string, n, streams int) *Plan {
	return &Plan{Policy: policy, Streams: streams, Stream: make([]int, n), Waits: make([][]int, n), Record: make([]bool, n)}
}

// waitAllCross makes every cross-stream edge of d a wait (no pruning), and
// records an event after each node with a successor on another stream.
func (p *Plan) waitAllCross(d *DAG) {
	for v := range d.Pred {
		for _, u := range d.Pred[v] {
			if p.Stream[u] != p.Stream[v] {
				p.Waits[v] = append(p.Waits[v], u)
				p.Record[u] = true
				p.CrossEdges++
			}
		}
	}
}

// Serial puts every node on one stream in topological order.
func Serial(d *DAG) (*Plan, error) {
	order, err := d.TopoOrder()
	if err != nil {
		return nil, err
	}
	p := newPlan("serial", d.N(), 1)
	p.Order = order
	return p, nil
}

// Taskflow is Taskflow's round-robin capture: levelize by BFS, put the i-th
// node of each level on stream i mod streams, issue level by level, and
// record and wait on events only where a successor is on another stream.
// It synchronizes the graph it is given; pass the transitive reduction (the
// graph a Taskflow user would write).
func Taskflow(d *DAG, streams int) (*Plan, error) {
	if streams < 1 {
		return nil, fmt.Errorf("taskflow: streams must be at least 1, got %d", streams)
	}
	levels, err := d.Levels()
	if err != nil {
		return nil, err
	}
	p := newPlan(fmt.Sprintf("taskflow(s=%d)", streams), d.N(), streams)
	for _, lv := range levels {
		for i, v := range lv {
			p.Stream[v] = i % streams
			p.Order = append(p.Order, v)
		}
	}
	p.waitAllCross(d)
	return p, nil
}

// Nimble is Nimble's assignment (Kwon et al., NeurIPS 2020, section 4.3):
// the transitive reduction (minimum equivalent graph), a maximum bipartite
// matching over its edges giving a minimum cover by paths, one stream per
// path, an event recorded after every node, and a wait on each parent (in
// the reduction) that is on another stream. The number of streams is the
// number of paths: the graph's width when no hub forces more.
func Nimble(d *DAG) (*Plan, error) {
	red, err := d.TransitiveReduction()
	if err != nil {
		return nil, err
	}
	chains := red.MinPathCover()
	p := newPlan("nimble", d.N(), max(1, len(chains)))
	for ci, c := range chains {
		for _, v := range c {
			p.Stream[v] = ci
		}
	}
	if p.Order, err = d.TopoOrder(); err != nil {
		return nil, err
	}
	p.waitAllCross(red)
	for v := range p.Record {
		p.Record[v] = true
	}
	return p, nil
}

// KeSCoOptions are the distributor's parameters.
type KeSCoOptions struct {
	// Streams is the most streams to use (8 in KeSCo); the distributor
	// uses min(Streams, width of the graph).
	Streams int
	// Strict applies the paper's rules literally: a node with one
	// predecessor always joins its stream, so the children of a fork
	// serialize behind it, and a node with several takes the stream of the
	// one with the fewest unscheduled successors, ties to the first in
	// program order. Otherwise (gpusched's refinement) a node only takes a
	// parent's stream that no other node of its level took: a child whose
	// only parent's stream is taken, or whose parents' streams all are,
	// goes to the next stream round-robin that the level has not used yet;
	// among several eligible parents, ties in unscheduled successors go to
	// the deepest parent, so two chains that exchange data (HITS) keep
	// their streams.
	Strict bool
	// NoPrune turns sync pruning off (every cross-stream edge waits).
	NoPrune bool
}

// KeSCo is KeSCo's distributor with its sync pruning (Lin et al., ICCD
// 2023, section III), with gpusched's refinements unless opt.Strict. Streams are assigned over the levels of the
// transitive reduction of full: a node without predecessors takes the next
// stream round-robin; with one, its predecessor's stream; with several, the
// stream of the predecessor that has the fewest successors not yet
// assigned. Synchronization starts from every cross-stream edge of full
// (the data-flow graph from the kernels' arguments) and prunes: for each
// foreign stream only the last predecessor there is waited on, and not
// even that one when an earlier node of the same stream already waited on
// it or on a later node of that stream.
func KeSCo(full *DAG, opt KeSCoOptions) (*Plan, error) {
	if opt.Streams < 1 {
		return nil, fmt.Errorf("kesco: streams must be at least 1, got %d", opt.Streams)
	}
	red, err := full.TransitiveReduction()
	if err != nil {
		return nil, err
	}
	width, err := full.Width()
	if err != nil {
		return nil, err
	}
	streams := max(1, min(opt.Streams, width))
	levels, err := red.Levels()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("kesco(s=%d)", streams)
	if opt.Strict {
		name = fmt.Sprintf("kesco-strict(s=%d)", streams)
	}
	k := newDistributor(newPlan(name, full.N(), streams), red, levels, opt.Strict)
	for _, lv := range levels {
		clear(k.usedInLevel)
		for _, v := range lv {
			k.place(v)
		}
	}
	if opt.NoPrune {
		k.p.waitAllCross(full)
		return k.p, nil
	}
	k.p.prune(full)
	return k.p, nil
}

// distributor is KeSCo's stream assignment in progress, level by level.
type distributor struct {
	p              *Plan
	red            *DAG
	strict         bool
	unassignedSucc []int  // per node, successors not yet placed
	level          []int  // per node, its BFS level
	rr             int    // the next stream round-robin
	usedInLevel    []bool // streams the current level has taken
}

func newDistributor(p *Plan, red *DAG, levels [][]int, strict bool) *distributor {
	k := &distributor{p: p, red: red, strict: strict, unassignedSucc: make([]int, red.N()),
		level: make([]int, red.N()), usedInLevel: make([]bool, p.Streams)}
	for v := range red.Succ {
		k.unassignedSucc[v] = len(red.Succ[v])
	}
	for l, lv := range levels {
		for _, v := range lv {
			k.level[v] = l
		}
	}
	return k
}

// nextFree is the next stream round-robin that the level has not used
// (any, round-robin, if it used them all).
func (k *distributor) nextFree() int {
	streams := k.p.Streams
	for i := 0; i < streams; i++ {
		s := (k.rr + i) % streams
		if !k.usedInLevel[s] {
			k.rr = s + 1
			return s
		}
	}
	s := k.rr % streams
	k.rr++
	return s
}

// place puts node v on its stream and issues it.
func (k *distributor) place(v int) {
	preds := k.red.Pred[v]
	var s int
	switch len(preds) {
	case 0:
		s = k.rr % k.p.Streams
		k.rr++
	case 1:
		s = k.p.Stream[preds[0]]
		if !k.strict && k.usedInLevel[s] {
			s = k.nextFree()
		}
	default:
		s = k.fromParents(preds)
	}
	k.p.Stream[v] = s
	k.usedInLevel[s] = true
	for _, u := range preds {
		k.unassignedSucc[u]--
	}
	k.p.Order = append(k.p.Order, v)
}

// fromParents is the stream of a node with several parents: strictly, the
// parent's with the fewest unscheduled successors (ties to the first);
// otherwise, among the parents whose stream this level has not used yet,
// the fewest unscheduled successors, then the deepest (the parent on the
// longest path, so chains keep their stream), then program order; or the
// next free stream if the level used every parent's.
func (k *distributor) fromParents(preds []int) int {
	if k.strict {
		best := preds[0]
		for _, u := range preds[1:] {
			if k.unassignedSucc[u] < k.unassignedSucc[best] {
				best = u
			}
		}
		return k.p.Stream[best]
	}
	best := -1
	for _, u := range preds {
		if k.usedInLevel[k.p.Stream[u]] {
			continue
		}
		if best < 0 || k.unassignedSucc[u] < k.unassignedSucc[best] ||
			(k.unassignedSucc[u] == k.unassignedSucc[best] && k.level[u] > k.level[best]) {
			best = u
		}
	}
	if best < 0 {
		return k.nextFree()
	}
	return k.p.Stream[best]
}

// prune sets the plan's waits from the cross-stream edges of full with
// KeSCo's sync pruning: over the issue order, a node waits only on the last
// of its predecessors on each foreign stream, and not even on that one when
// its stream already waited on that node or a later one of that stream.
func (p *Plan) prune(full *DAG) {
	p.CrossEdges = 0
	for v := range p.Waits {
		p.Waits[v] = nil
		p.Record[v] = false
	}
	streams := p.Streams
	pos := make([]int, full.N())
	tail := make([]int, streams)
	waited := make([][]int, streams) // waited[s][t]: highest position on t that s has waited for
	for s := range waited {
		waited[s] = make([]int, streams)
	}
	lastOn := make([]int, streams)
	for _, v := range p.Order {
		s := p.Stream[v]
		for t := range lastOn {
			lastOn[t] = -1
		}
		for _, u := range full.Pred[v] {
			t := p.Stream[u]
			if t == s {
				continue
			}
			p.CrossEdges++
			if lastOn[t] == -1 || pos[u] > pos[lastOn[t]] {
				lastOn[t] = u
			}
		}
		for t, u := range lastOn {
			if u == -1 || waited[s][t] >= pos[u] {
				continue
			}
			waited[s][t] = pos[u]
			p.Waits[v] = append(p.Waits[v], u)
			p.Record[u] = true
		}
		sort.Ints(p.Waits[v])
		tail[s]++
		pos[v] = tail[s]
	}
	p.WaitsRemoved = p.CrossEdges - p.NumWaits()
}
