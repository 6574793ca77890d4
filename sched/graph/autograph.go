package graph

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/gpusched/gpusched/device"
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
	// WaitCost is what one cross-stream wait adds to the total cost (the
	// host's record and wait calls and the device's event handling).
	WaitCost time.Duration
}

// DefaultSearchOptions are the defaults of the autograph scheduler.
func DefaultSearchOptions() SearchOptions {
	return SearchOptions{Alpha: 2, MaxStreams: 8, PartSize: 12, TopK: 4, Verify: 3, Budget: 20000, WaitCost: 2 * time.Microsecond}
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

// candidate is one stream assignment of a partition.
type candidate struct {
	stream []int // per partition node
	cp     float64
	waits  int
	cost   float64 // alpha*cp + total + waits*WaitCost
}

// searchPartition is the backtracking search over one partition's stream
// assignments: nodes in topological order, each onto a stream already in
// use or a new one, finish times simulated with the measured costs, pruned
// by a critical-path lower bound, keeping the TopK by mixed cost.
func searchPartition(red *DAG, part []int, cost []float64, o SearchOptions) ([]candidate, int) {
	m := len(part)
	local := map[int]int{}
	for i, v := range part {
		local[v] = i
	}
	preds := make([][]int, m)
	succs := make([][]int, m)
	total := 0.0
	for i, v := range part {
		total += cost[v]
		for _, u := range red.Pred[v] {
			if j, ok := local[u]; ok {
				preds[i] = append(preds[i], j)
				succs[j] = append(succs[j], i)
			}
		}
	}
	tailLen := make([]float64, m) // longest path from i to the partition's end, including i
	for i := m - 1; i >= 0; i-- {
		t := 0.0
		for _, j := range succs[i] {
			t = max(t, tailLen[j])
		}
		tailLen[i] = t + cost[part[i]]
	}
	w := float64(o.WaitCost.Nanoseconds())
	stream := make([]int, m)
	finish := make([]float64, m)
	streamEnd := make([]float64, o.MaxStreams)
	var top []candidate
	states := 0
	worst := func() float64 {
		if len(top) < o.TopK {
			return math.Inf(1)
		}
		return top[len(top)-1].cost
	}
	var dfs func(i, used, waits int, curCP float64)
	dfs = func(i, used, waits int, curCP float64) {
		states++
		if i == m {
			c := o.Alpha*curCP + total + float64(waits)*w
			if c < worst() {
				top = append(top, candidate{stream: append([]int(nil), stream...), cp: curCP, waits: waits, cost: c})
				sort.SliceStable(top, func(a, b int) bool { return top[a].cost < top[b].cost })
				if len(top) > o.TopK {
					top = top[:o.TopK]
				}
			}
			return
		}
		// Lower bound: every remaining node starts no earlier than its
		// assigned predecessors finish.
		lb := curCP
		for j := i; j < m; j++ {
			ready := 0.0
			for _, p := range preds[j] {
				if p < i {
					ready = max(ready, finish[p])
				}
			}
			lb = max(lb, ready+tailLen[j])
		}
		if o.Alpha*lb+total+float64(waits)*w >= worst() || states > o.Budget {
			return
		}
		// Streams to try: predecessors' streams (latest-finishing first),
		// the other streams in use, then a new one.
		tried := make([]bool, o.MaxStreams+1)
		ps := append([]int(nil), preds[i]...)
		sort.SliceStable(ps, func(a, b int) bool { return finish[ps[a]] > finish[ps[b]] })
		var choices []int
		for _, p := range ps {
			if s := stream[p]; !tried[s] {
				tried[s] = true
				choices = append(choices, s)
			}
		}
		for s := 0; s < used; s++ {
			if !tried[s] {
				tried[s] = true
				choices = append(choices, s)
			}
		}
		if used < o.MaxStreams {
			choices = append(choices, used)
		}
		for _, s := range choices {
			start, nw := streamEnd[s], 0
			for _, p := range preds[i] {
				start = max(start, finish[p])
				if stream[p] != s {
					nw++
				}
			}
			f := start + cost[part[i]]
			saved := streamEnd[s]
			stream[i], finish[i], streamEnd[s] = s, f, f
			nu := used
			if s == used {
				nu++
			}
			dfs(i+1, nu, waits+nw, max(curCP, f))
			streamEnd[s] = saved
		}
	}
	dfs(0, 0, 0, 0)
	return top, states
}

// path is one global schedule from the dynamic program: a candidate index
// per partition.
type path struct {
	pick []int
	cost float64
}

// combine is the dynamic program over partitions: the cost of a sequence of
// choices is the sum of the partitions' mixed costs plus, between
// consecutive partitions, the waits their choices imply (edges from the
// previous partition to this one across streams). It keeps the k best
// sequences ending in each candidate (k-best Viterbi) and returns the k best
// overall.
func combine(red *DAG, parts [][]int, cands [][]candidate, k int, waitCost float64) []path {
	streamOf := func(p, c int) map[int]int {
		m := map[int]int{}
		for i, v := range parts[p] {
			m[v] = cands[p][c].stream[i]
		}
		return m
	}
	trans := func(p, a, b int) float64 {
		prev, cur := streamOf(p-1, a), streamOf(p, b)
		n := 0
		for v, s := range cur {
			for _, u := range red.Pred[v] {
				if t, ok := prev[u]; ok && t != s {
					n++
				}
			}
		}
		return float64(n) * waitCost
	}
	best := make([][]path, len(cands[0]))
	for c := range cands[0] {
		best[c] = []path{{pick: []int{c}, cost: cands[0][c].cost}}
	}
	for p := 1; p < len(parts); p++ {
		next := make([][]path, len(cands[p]))
		for b := range cands[p] {
			var all []path
			for a := range best {
				t := trans(p, a, b)
				for _, q := range best[a] {
					all = append(all, path{pick: append(append([]int(nil), q.pick...), b), cost: q.cost + t + cands[p][b].cost})
				}
			}
			sort.SliceStable(all, func(i, j int) bool { return all[i].cost < all[j].cost })
			next[b] = all[:min(k, len(all))]
		}
		best = next
	}
	var all []path
	for _, ps := range best {
		all = append(all, ps...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].cost < all[j].cost })
	return all[:min(k, len(all))]
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
	cands := make([][]candidate, len(parts))
	for i, p := range parts {
		var st int
		cands[i], st = searchPartition(red, p, c, o)
		res.States += st
		if len(cands[i]) == 0 {
			return nil, fmt.Errorf("autograph: partition %d: no schedule within the search budget", i)
		}
	}
	for _, pth := range combine(red, parts, cands, o.Verify, float64(o.WaitCost.Nanoseconds())) {
		plan := newPlan(fmt.Sprintf("autograph(alpha=%g)", o.Alpha), d.N(), 1)
		for pi, ci := range pth.pick {
			for i, v := range parts[pi] {
				plan.Stream[v] = cands[pi][ci].stream[i]
				plan.Streams = max(plan.Streams, plan.Stream[v]+1)
			}
		}
		plan.Order = order
		plan.prune(d)
		if err := plan.Verify(d); err != nil {
			return nil, err
		}
		res.Plans = append(res.Plans, plan)
		res.Estimates = append(res.Estimates, pth.cost)
	}
	res.Elapsed = time.Since(t0)
	return res, nil
}

// AutoGraph is the AutoGraph-style scheduler: in Prepare it measures every
// operation's cost on the device (MeasureCosts), searches (Search), then
// captures each of the best schedules as a multi-stream CUDA graph, times
// it on the device and keeps the fastest; Run launches that graph.
type AutoGraph struct {
	opt   SearchOptions
	Reps  int // timed launches per verified candidate
	best  *Scheduler
	stats map[string]float64
	// LastSearch is the last Prepare's search result (for reports).
	LastSearch *SearchResult
}

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

// Stats reports the search: partitions, states explored, search time
// (wall clock, ms), verify time (device time spent timing candidates, ms),
// the chosen candidate's rank by estimate, and its streams and waits.
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
	v0 := h.Now()
	bestT := time.Duration(math.MaxInt64)
	rank := 0
	for i, p := range res.Plans {
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
	p := res.Plans[rank]
	a.stats = map[string]float64{
		"partitions": float64(res.Partitions), "states": float64(res.States),
		"search_ms": float64(res.Elapsed.Microseconds()) / 1000, "verify_ms": float64((h.Now() - v0).Microseconds()) / 1000,
		"chosen_rank": float64(rank), "streams": float64(p.Streams), "waits": float64(p.NumWaits()),
	}
	return nil
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
