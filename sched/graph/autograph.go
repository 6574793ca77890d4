package graph

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// SearchOptions configure AutoGraph's search (Zhao et al., "AutoGraph:
// optimizing DNN computation graph for parallel GPU kernel execution",
// AAAI 2023).
type SearchOptions struct {
	// Alpha weighs the critical path against the total cost in the mixed
	// critical-path cost alpha * CP + total.
	Alpha float64
	// MaxStreams bounds the streams a schedule may use.
	MaxStreams int
	// PartSize is the most operations per partition.
	PartSize int
	// TopK candidates are kept per partition; Verify global schedules
	// (the Verify best of the dynamic program) are timed on the device.
	TopK   int
	Verify int
	// Budget bounds the search states explored per partition.
	Budget int
	// WaitCost is what one cross-stream wait adds to the total cost. The
	// schedules run as CUDA graphs, where a wait is an edge resolved on the
	// device, so the default is small (200 ns).
	WaitCost time.Duration
}

// DefaultSearchOptions are the defaults of the autograph scheduler: alpha
// 2, at most 16 streams, partitions of 12, 4 candidates kept per partition,
// the 3 best verified on the device.
func DefaultSearchOptions() SearchOptions {
	return SearchOptions{Alpha: 2, MaxStreams: 16, PartSize: 12, TopK: 4, Verify: 3, Budget: 20000, WaitCost: 200 * time.Nanosecond}
}

func (o SearchOptions) validate() error {
	switch {
	case o.Alpha < 0 || math.IsNaN(o.Alpha) || math.IsInf(o.Alpha, 0):
		return fmt.Errorf("autograph: alpha must be a non-negative number, got %v", o.Alpha)
	case o.MaxStreams < 1 || o.MaxStreams > 64:
		return fmt.Errorf("autograph: max_streams must be in [1, 64], got %d", o.MaxStreams)
	case o.PartSize < 2 || o.PartSize > 24:
		return fmt.Errorf("autograph: partition size must be in [2, 24], got %d", o.PartSize)
	case o.TopK < 1 || o.Verify < 1:
		return fmt.Errorf("autograph: top_k and verify must be at least 1, got %d and %d", o.TopK, o.Verify)
	case o.Budget < 1:
		return fmt.Errorf("autograph: budget must be at least 1, got %d", o.Budget)
	case o.WaitCost < 0:
		return fmt.Errorf("autograph: wait cost must not be negative, got %v", o.WaitCost)
	}
	return nil
}

// Partition cuts the topological order into consecutive segments of at most
// size nodes, each cut (after at least size/2 nodes) placed where the fewest
// edges of d cross it, so partitions meet at the graph's narrow points.
func Partition(d *DAG, size int) ([][]int, error) {
	order, err := d.TopoOrder()
	if err != nil {
		return nil, err
	}
	n := len(order)
	pos := make([]int, n)
	for i, v := range order {
		pos[v] = i
	}
	cross := make([]int, n+1) // cross[i]: edges from positions <= i to > i
	for u := range d.Succ {
		for _, v := range d.Succ[u] {
			cross[pos[u]]++
			cross[pos[v]]--
		}
	}
	for i := 1; i <= n; i++ {
		cross[i] += cross[i-1]
	}
	var parts [][]int
	for start := 0; start < n; {
		end := n // exclusive
		if n-start > size {
			best := -1
			for i := start + max(1, size/2) - 1; i < start+size; i++ {
				if best < 0 || cross[i] < cross[best] {
					best = i
				}
			}
			end = best + 1
		}
		parts = append(parts, append([]int(nil), order[start:end]...))
		start = end
	}
	return parts, nil
}

// state is a schedule of a prefix of the partitions: every node's stream
// (-1 where not yet assigned) and estimated finish time, each stream's end
// time, and the running totals of the mixed cost.
type state struct {
	stream    []int
	finish    []float64
	streamEnd []float64
	used      int
	waits     int
	cp        float64 // latest finish so far
	total     float64 // operations' costs so far
	cost      float64 // alpha*cp + total + waits*WaitCost
}

func (st *state) clone() *state {
	c := *st
	c.stream = append([]int(nil), st.stream...)
	c.finish = append([]float64(nil), st.finish...)
	c.streamEnd = append([]float64(nil), st.streamEnd...)
	return &c
}

// searchPartition is the backtracking search over one partition's stream
// assignments, continuing the prefix schedule from: nodes in topological
// order, each onto a stream already in use or a new one, finish times
// estimated from the measured costs (a node starts when its stream and all
// its predecessors, in this partition or earlier ones, are done), pruned by
// a critical-path lower bound, keeping the TopK completions by mixed cost.
func searchPartition(red *DAG, part []int, cost []float64, o SearchOptions, from *state) ([]*state, int) {
	ps := newPartSearch(red, part, cost, o, from)
	ps.dfs(0, from.used, from.waits, from.cp)
	return ps.top, ps.states
}

// partSearch is one partition's search in progress: the partition's nodes
// and their longest paths to its end, the schedule being extended, and the
// TopK completions found so far.
type partSearch struct {
	red     *DAG
	part    []int
	cost    []float64
	o       SearchOptions
	tailLen []float64 // longest path from node i to the partition's end, including i
	w       float64   // one wait's cost
	total   float64   // operations' costs, this partition's included
	st      *state
	top     []*state
	states  int
}

// choice is one stream a node may go to: its finish there, the waits it
// adds and the mixed cost that orders the choices.
type choice struct {
	s   int
	f   float64
	nw  int
	key float64
}

func newPartSearch(red *DAG, part []int, cost []float64, o SearchOptions, from *state) *partSearch {
	m := len(part)
	local := map[int]int{}
	for i, v := range part {
		local[v] = i
	}
	succs := make([][]int, m)
	partTotal := 0.0
	for i, v := range part {
		partTotal += cost[v]
		for _, u := range red.Pred[v] {
			if j, ok := local[u]; ok {
				succs[j] = append(succs[j], i)
			}
		}
	}
	tailLen := make([]float64, m)
	for i := m - 1; i >= 0; i-- {
		t := 0.0
		for _, j := range succs[i] {
			t = max(t, tailLen[j])
		}
		tailLen[i] = t + cost[part[i]]
	}
	return &partSearch{red: red, part: part, cost: cost, o: o, tailLen: tailLen,
		w: float64(o.WaitCost.Nanoseconds()), total: from.total + partTotal, st: from.clone()}
}

// worst is the mixed cost a completion must beat to be kept.
func (ps *partSearch) worst() float64 {
	if len(ps.top) < ps.o.TopK {
		return math.Inf(1)
	}
	return ps.top[len(ps.top)-1].cost
}

// keep records the completed schedule if it is among the TopK.
func (ps *partSearch) keep(used, waits int, curCP float64) {
	c := ps.o.Alpha*curCP + ps.total + float64(waits)*ps.w
	if c >= ps.worst() {
		return
	}
	done := ps.st.clone()
	done.used, done.waits, done.cp, done.total, done.cost = used, waits, curCP, ps.total, c
	ps.top = append(ps.top, done)
	sort.SliceStable(ps.top, func(a, b int) bool { return ps.top[a].cost < ps.top[b].cost })
	if len(ps.top) > ps.o.TopK {
		ps.top = ps.top[:ps.o.TopK]
	}
}

// bound is a lower bound on the critical path of any completion from node
// i on: every remaining node starts no earlier than its assigned
// predecessors finish.
func (ps *partSearch) bound(i int, curCP float64) float64 {
	lb := curCP
	for j := i; j < len(ps.part); j++ {
		ready := 0.0
		for _, u := range ps.red.Pred[ps.part[j]] {
			if ps.st.stream[u] >= 0 {
				ready = max(ready, ps.st.finish[u])
			}
		}
		lb = max(lb, ready+ps.tailLen[j])
	}
	return lb
}

// choices are the streams to try for node v: every stream in use and one
// new one, cheapest first by the mixed cost of placing v there (so the
// first descent is a greedy list schedule and the bound prunes early).
func (ps *partSearch) choices(v, used int, curCP float64) []choice {
	var out []choice
	for s := 0; s < min(used+1, ps.o.MaxStreams); s++ {
		start, nw := ps.st.streamEnd[s], 0
		for _, u := range ps.red.Pred[v] {
			start = max(start, ps.st.finish[u])
			if ps.st.stream[u] != s {
				nw++
			}
		}
		f := start + ps.cost[v]
		out = append(out, choice{s, f, nw, ps.o.Alpha*max(curCP, f) + float64(nw)*ps.w})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].key < out[b].key })
	return out
}

func (ps *partSearch) dfs(i, used, waits int, curCP float64) {
	ps.states++
	if i == len(ps.part) {
		ps.keep(used, waits, curCP)
		return
	}
	if ps.o.Alpha*ps.bound(i, curCP)+ps.total+float64(waits)*ps.w >= ps.worst() || ps.states > ps.o.Budget {
		return
	}
	v := ps.part[i]
	for _, ch := range ps.choices(v, used, curCP) {
		saved := ps.st.streamEnd[ch.s]
		ps.st.stream[v], ps.st.finish[v], ps.st.streamEnd[ch.s] = ch.s, ch.f, ch.f
		nu := used
		if ch.s == used {
			nu++
		}
		ps.dfs(i+1, nu, waits+ch.nw, max(curCP, ch.f))
		ps.st.streamEnd[ch.s] = saved
		ps.st.stream[v], ps.st.finish[v] = -1, 0
	}
}

// SearchResult is what AutoGraph's search produced.
type SearchResult struct {
	Plans      []*Plan // the Verify best schedules, best estimate first
	Estimates  []float64
	Partitions int
	States     int
	Elapsed    time.Duration // wall-clock time of the search itself
}

// Search runs AutoGraph's search over d with per-node costs.
func Search(d *DAG, cost []time.Duration, o SearchOptions) (*SearchResult, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if len(cost) != d.N() {
		return nil, fmt.Errorf("autograph: %d costs for %d nodes", len(cost), d.N())
	}
	t0 := time.Now()
	red, err := d.TransitiveReduction()
	if err != nil {
		return nil, err
	}
	order, err := d.TopoOrder()
	if err != nil {
		return nil, err
	}
	parts, err := Partition(red, o.PartSize)
	if err != nil {
		return nil, err
	}
	c := make([]float64, len(cost))
	for i, x := range cost {
		c[i] = float64(x.Nanoseconds())
	}
	res := &SearchResult{Partitions: len(parts)}
	if d.N() == 0 {
		return res, nil
	}
	// The k-best dynamic program over partitions: the state passed from
	// one partition to the next is the prefix schedule (its streams' end
	// times and its nodes' finish times), so each partition's search sees
	// what the earlier partitions left running; the TopK best states
	// survive each partition.
	init := &state{stream: make([]int, d.N()), finish: make([]float64, d.N()), streamEnd: make([]float64, o.MaxStreams)}
	for i := range init.stream {
		init.stream[i] = -1
	}
	beam := []*state{init}
	for i, p := range parts {
		var next []*state
		for _, from := range beam {
			got, n := searchPartition(red, p, c, o, from)
			res.States += n
			next = append(next, got...)
		}
		if len(next) == 0 {
			return nil, fmt.Errorf("autograph: partition %d: no schedule within the search budget", i)
		}
		sort.SliceStable(next, func(a, b int) bool { return next[a].cost < next[b].cost })
		beam = next[:min(o.TopK, len(next))]
	}
	for _, st := range beam[:min(o.Verify, len(beam))] {
		plan := newPlan(fmt.Sprintf("autograph(alpha=%g)", o.Alpha), d.N(), st.used)
		copy(plan.Stream, st.stream)
		plan.Order = order
		plan.prune(d)
		if err := plan.Verify(d); err != nil {
			return nil, err
		}
		res.Plans = append(res.Plans, plan)
		res.Estimates = append(res.Estimates, st.cost)
	}
	res.Elapsed = time.Since(t0)
	return res, nil
}

// AutoGraph is the AutoGraph-style scheduler: in Prepare it measures every
// operation's cost on the device (MeasureCosts), searches (Search), then
// captures each of the best schedules, and as seeds Nimble's schedule and
// the one-stream schedule, as a CUDA graph, times it on the device and keeps the fastest
// (Stats: chosen_rank, chosen_seed: 0 searched, 1 Nimble, 2 one stream); Run launches that graph.
type AutoGraph struct {
	opt   SearchOptions
	Reps  int // timed launches per verified candidate
	best  *Scheduler
	plan  *Plan // the last Prepare's choice, kept after Cleanup (Frozen)
	stats map[string]float64
	// LastSearch is the last Prepare's search result (for reports).
	LastSearch *SearchResult
}

// Needs implements sched.Needer: the search plans the whole program.
func (a *AutoGraph) Needs() []sched.Trait { return wholeProgram }

// NewAutoGraph returns an AutoGraph scheduler.
func NewAutoGraph(o SearchOptions) (*AutoGraph, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &AutoGraph{opt: o, Reps: 2}, nil
}

// Name is "autograph(alpha=A,s=S)".
func (a *AutoGraph) Name() string {
	return fmt.Sprintf("autograph(alpha=%g,s=%d)", a.opt.Alpha, a.opt.MaxStreams)
}

// Stats reports the search: partitions, states explored, verify time (host
// time spent timing candidates, ms), the chosen candidate's rank by
// estimate, and its streams and waits. The search's wall-clock time is in
// LastSearch.Elapsed, not here, so results on the simulator stay
// deterministic.
func (a *AutoGraph) Stats() map[string]float64 {
	out := map[string]float64{}
	for k, v := range a.stats {
		out[k] = v
	}
	return out
}

// Prepare measures, searches and verifies.
func (a *AutoGraph) Prepare(h device.Host, in *workloads.Instance) error {
	if a.best != nil {
		if err := a.Cleanup(h); err != nil {
			return err
		}
	}
	cost, err := MeasureCosts(h, in)
	if err != nil {
		return fmt.Errorf("autograph: measure: %w", err)
	}
	d, err := FromInstance(in, 0, in.N())
	if err != nil {
		return err
	}
	res, err := Search(d, cost, a.opt)
	if err != nil {
		return err
	}
	a.LastSearch = res
	// The verified candidates are the search's best and, as the seed any
	// searched schedule must beat on the device, Nimble's minimum path
	// cover (a parallel-launch framework's schedule, which the cost
	// model's estimates can misjudge when kernels are shorter than the
	// launch interval the measurement saw).
	// The unmodified graph (one stream) is a seed too: the search must
	// also beat doing nothing.
	seed, err := Nimble(d)
	if err != nil {
		return err
	}
	one, err := Serial(d)
	if err != nil {
		return err
	}
	candidates := append(append([]*Plan(nil), res.Plans...), seed, one)
	v0 := h.Now()
	bestT := time.Duration(math.MaxInt64)
	rank := 0
	for i, p := range candidates {
		s := withPlan(fmt.Sprintf("%s#%d", a.Name(), i), p, true)
		t, err := timeScheduler(h, in, s, a.Reps)
		if err != nil {
			return errors.Join(err, s.Cleanup(h))
		}
		if t < bestT {
			if a.best != nil {
				if err := a.best.Cleanup(h); err != nil {
					return err
				}
			}
			a.best, bestT, rank = s, t, i
		} else if err := s.Cleanup(h); err != nil {
			return err
		}
	}
	p := candidates[rank]
	a.plan = p
	chosenSeed := 0.0 // 1: Nimble's schedule, 2: one stream
	if rank >= len(res.Plans) {
		chosenSeed = float64(rank - len(res.Plans) + 1)
	}
	a.stats = map[string]float64{"chosen_seed": chosenSeed,
		"partitions": float64(res.Partitions), "states": float64(res.States),
		"verify_ms":   float64((h.Now() - v0).Microseconds()) / 1000,
		"chosen_rank": float64(rank), "streams": float64(p.Streams), "waits": float64(p.NumWaits()),
	}
	return nil
}

// Frozen is a scheduler that runs the schedule the last Prepare chose as a
// graph, without measuring and searching again (nil before a Prepare):
// the search's outcome on a device varies with the timings it measured,
// so a caller that has timed one outcome can keep that one.
func (a *AutoGraph) Frozen() sched.Scheduler {
	if a.plan == nil {
		return nil
	}
	return withPlan(a.Name(), a.plan, true)
}

// timeScheduler prepares s and returns its fastest of reps runs (host
// time around Run). s stays prepared.
func timeScheduler(h device.Host, in *workloads.Instance, s *Scheduler, reps int) (time.Duration, error) {
	if err := s.Prepare(h, in); err != nil {
		return 0, err
	}
	best := time.Duration(math.MaxInt64)
	for r := 0; r < reps; r++ {
		t0 := h.Now()
		if err := s.Run(h, in); err != nil {
			return 0, err
		}
		best = min(best, h.Now()-t0)
	}
	return best, nil
}

// Cleanup releases the chosen graph.
func (a *AutoGraph) Cleanup(h device.Host) error {
	if a.best == nil {
		return nil
	}
	err := a.best.Cleanup(h)
	a.best = nil
	return err
}

// Run launches the chosen schedule.
func (a *AutoGraph) Run(h device.Host, in *workloads.Instance) error {
	if a.best == nil || a.best.inst != in {
		if err := a.Prepare(h, in); err != nil {
			return err
		}
	}
	return a.best.Run(h, in)
}
