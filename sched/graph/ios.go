package graph

import (
	"fmt"
	"math"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// IOSOptions configure the IOS-style stage scheduler (Ding et al., "IOS:
// inter-operator scheduler for CNN acceleration", MLSys 2021).
type IOSOptions struct {
	PartSize    int           // operations per partition searched by the dynamic program
	MaxGroups   int           // concurrent groups per stage (8 in IOS)
	MaxGroupOps int           // operations per group, run in order on one stream (3 in IOS)
	StageCost   time.Duration // the synchronization between stages
	Graph       bool          // capture the stages into one CUDA graph
}

// DefaultIOSOptions are IOS's limits, partitions of 12 and a 5 us stage
// synchronization.
func DefaultIOSOptions() IOSOptions {
	return IOSOptions{PartSize: 12, MaxGroups: 8, MaxGroupOps: 3, StageCost: 5 * time.Microsecond, Graph: true}
}

func (o IOSOptions) validate() error {
	switch {
	case o.PartSize < 2 || o.PartSize > 24:
		return fmt.Errorf("ios: partition size must be in [2, 24], got %d", o.PartSize)
	case o.MaxGroups < 1 || o.MaxGroups > 32:
		return fmt.Errorf("ios: max_groups must be in [1, 32], got %d", o.MaxGroups)
	case o.MaxGroupOps < 1:
		return fmt.Errorf("ios: max_group_ops must be at least 1, got %d", o.MaxGroupOps)
	case o.StageCost < 0:
		return fmt.Errorf("ios: stage cost must not be negative, got %v", o.StageCost)
	}
	return nil
}

// iosReadyLimit bounds the ready operations a stage chooses among, so a
// state's choices stay enumerable (3^8).
const iosReadyLimit = 8

// IOSStages computes IOS's schedule of d: within each partition, a dynamic
// program over the sets of operations already done (downsets) chooses the
// next stage, a set of at most MaxGroups groups, each a chain of at most
// MaxGroupOps operations from a ready one, minimizing the sum of stage
// costs (the longest group's measured cost plus StageCost). It returns the
// stages, each a list of groups in issue order.
func IOSStages(d *DAG, cost []time.Duration, o IOSOptions) ([][][]int, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if len(cost) != d.N() {
		return nil, fmt.Errorf("ios: %d costs for %d nodes", len(cost), d.N())
	}
	red, err := d.TransitiveReduction()
	if err != nil {
		return nil, err
	}
	parts, err := Partition(red, o.PartSize)
	if err != nil {
		return nil, err
	}
	var stages [][][]int
	for _, part := range parts {
		stages = append(stages, iosPartition(red, part, cost, o)...)
	}
	return stages, nil
}

// iosPartition is IOS's dynamic program over one partition: the cheapest
// sequence of stages that completes the partition, memoized by the set of
// operations done.
func iosPartition(red *DAG, part []int, cost []time.Duration, o IOSOptions) [][][]int {
	ip := newIOSPart(red, part, cost, o)
	var stages [][][]int
	for done := uint32(0); done != ip.full; {
		c := ip.best(done)
		var st [][]int
		for _, g := range c.groups {
			var gg []int
			for _, x := range g {
				gg = append(gg, part[x])
				done |= 1 << x
			}
			st = append(st, gg)
		}
		stages = append(stages, st)
	}
	return stages
}

// iosPart is one partition's dynamic program: operations by local index,
// their predecessors as a bit mask, their successors, and the memo.
type iosPart struct {
	part     []int
	cost     []time.Duration
	o        IOSOptions
	predMask []uint32
	succs    [][]int
	full     uint32
	memo     map[uint32]stageChoice
}

// stageChoice is the best completion from a set of done operations: its
// cost and its first stage's groups (local indices).
type stageChoice struct {
	cost   float64
	groups [][]int
}

func newIOSPart(red *DAG, part []int, cost []time.Duration, o IOSOptions) *iosPart {
	m := len(part)
	ip := &iosPart{part: part, cost: cost, o: o, predMask: make([]uint32, m), succs: make([][]int, m),
		full: uint32(1)<<m - 1, memo: map[uint32]stageChoice{}}
	local := map[int]int{}
	for i, v := range part {
		local[v] = i
	}
	for i, v := range part {
		for _, u := range red.Pred[v] {
			if j, ok := local[u]; ok {
				ip.predMask[i] |= 1 << j
				ip.succs[j] = append(ip.succs[j], i)
			}
		}
	}
	return ip
}

// best is the cheapest completion once the operations in done are.
func (ip *iosPart) best(done uint32) stageChoice {
	if done == ip.full {
		return stageChoice{}
	}
	if c, ok := ip.memo[done]; ok {
		return c
	}
	var ready []int
	for i := 0; i < len(ip.part) && len(ready) < iosReadyLimit; i++ {
		if done&(1<<i) == 0 && ip.predMask[i]&^done == 0 {
			ready = append(ready, i)
		}
	}
	chains := make([][]int, len(ready))
	for k, r := range ready {
		chains[k] = ip.chain(r, done)
	}
	st := &stageSearch{ip: ip, done: done, chains: chains, pick: make([]int, len(ready)), res: stageChoice{cost: math.Inf(1)}}
	st.rec(0, 0)
	ip.memo[done] = st.res
	return st.res
}

// chain is the chain a group may grow from ready operation r: each next
// operation the first successor whose predecessors are all done, up to
// MaxGroupOps operations.
func (ip *iosPart) chain(r int, done uint32) []int {
	c := []int{r}
	have := done | 1<<r
	for len(c) < ip.o.MaxGroupOps {
		next := -1
		for _, x := range ip.succs[c[len(c)-1]] {
			if have&(1<<x) == 0 && ip.predMask[x]&^have == 0 {
				next = x
				break
			}
		}
		if next < 0 {
			break
		}
		c = append(c, next)
		have |= 1 << next
	}
	return c
}

// stageSearch enumerates the next stage: each ready operation left out,
// alone, or with its whole chain, at most MaxGroups groups.
type stageSearch struct {
	ip     *iosPart
	done   uint32
	chains [][]int
	pick   []int // 0: not in the stage, 1: alone, 2: its whole chain
	res    stageChoice
}

func (st *stageSearch) rec(k, groups int) {
	if k == len(st.chains) {
		if groups > 0 {
			st.score()
		}
		return
	}
	st.pick[k] = 0
	st.rec(k+1, groups)
	if groups < st.ip.o.MaxGroups {
		st.pick[k] = 1
		st.rec(k+1, groups+1)
		if len(st.chains[k]) > 1 {
			st.pick[k] = 2
			st.rec(k+1, groups+1)
		}
	}
	st.pick[k] = 0
}

// score costs the stage picked: its longest group, the stage's cost and
// the best completion after it.
func (st *stageSearch) score() {
	ip := st.ip
	var gs [][]int
	stageMask := uint32(0)
	longest := 0.0
	for j, p := range st.pick {
		if p == 0 {
			continue
		}
		g := st.chains[j][:1]
		if p == 2 {
			g = st.chains[j]
		}
		t := 0.0
		for _, x := range g {
			t += float64(ip.cost[ip.part[x]].Nanoseconds())
			stageMask |= 1 << x
		}
		longest = max(longest, t)
		gs = append(gs, g)
	}
	c := longest + float64(ip.o.StageCost.Nanoseconds()) + ip.best(st.done|stageMask).cost
	if c < st.res.cost {
		st.res = stageChoice{cost: c, groups: gs}
	}
}

// stagePlan turns stages into a plan: group g of a stage on stream g, and a
// barrier between stages (each group's first operation waits on the last
// operation of every group of the previous stage on another stream).
func stagePlan(d *DAG, stages [][][]int) (*Plan, error) {
	p := newPlan("ios", d.N(), 1)
	var prevLast []int
	for _, st := range stages {
		var last []int
		for g, grp := range st {
			p.Streams = max(p.Streams, g+1)
			for i, v := range grp {
				p.Stream[v] = g
				p.Order = append(p.Order, v)
				if i == 0 {
					for pg, u := range prevLast {
						if pg != g {
							p.Waits[v] = append(p.Waits[v], u)
							p.Record[u] = true
						}
					}
				}
			}
			last = append(last, grp[len(grp)-1])
		}
		prevLast = last
	}
	if len(p.Order) != d.N() {
		return nil, fmt.Errorf("ios: stages cover %d of %d operations", len(p.Order), d.N())
	}
	for v := range p.Waits {
		for _, u := range p.Waits[v] {
			if p.Stream[u] != p.Stream[v] {
				p.CrossEdges++
			}
		}
	}
	return p, p.Verify(d)
}

// IOS is the IOS-style scheduler: Prepare measures every operation's cost
// on the device, computes the stages and issues them (captured into one
// graph by default) with a barrier between stages.
type IOS struct {
	// SearchTime is the last Prepare's wall-clock planning time (kept out
	// of Stats so simulated results stay deterministic).
	SearchTime time.Duration
	opt        IOSOptions
	inner      *Scheduler
	plan       *Plan // the last Prepare's, kept after Cleanup (Frozen)
	stats      map[string]float64
}

// Needs implements sched.Needer: the stages plan the whole program.
func (s *IOS) Needs() []sched.Trait { return wholeProgram }

// NewIOS returns an IOS scheduler.
func NewIOS(o IOSOptions) (*IOS, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &IOS{opt: o}, nil
}

// Name is "ios" or "ios+graph".
func (s *IOS) Name() string {
	if s.opt.Graph {
		return "ios+graph"
	}
	return "ios"
}

// Stats reports stages, streams and waits.
func (s *IOS) Stats() map[string]float64 {
	out := map[string]float64{}
	for k, v := range s.stats {
		out[k] = v
	}
	return out
}

// Prepare measures, plans and prepares the stages.
func (s *IOS) Prepare(h device.Host, in *workloads.Instance) error {
	if s.inner != nil {
		if err := s.Cleanup(h); err != nil {
			return err
		}
	}
	cost, err := MeasureCosts(h, in)
	if err != nil {
		return fmt.Errorf("ios: measure: %w", err)
	}
	d, err := FromInstance(in, 0, in.N())
	if err != nil {
		return err
	}
	t0 := time.Now()
	stages, err := IOSStages(d, cost, s.opt)
	if err != nil {
		return err
	}
	p, err := stagePlan(d, stages)
	if err != nil {
		return err
	}
	search := time.Since(t0)
	s.plan = p
	s.inner = withPlan(s.Name(), p, s.opt.Graph)
	if err := s.inner.Prepare(h, in); err != nil {
		return err
	}
	s.stats = map[string]float64{"stages": float64(len(stages)), "streams": float64(p.Streams), "waits": float64(p.NumWaits())}
	s.SearchTime = search
	return nil
}

// Frozen is a scheduler that issues the stages the last Prepare planned,
// without measuring and planning again (nil before a Prepare), as
// AutoGraph.Frozen.
func (s *IOS) Frozen() sched.Scheduler {
	if s.plan == nil {
		return nil
	}
	return withPlan(s.Name(), s.plan, s.opt.Graph)
}

// Cleanup releases the prepared stages.
func (s *IOS) Cleanup(h device.Host) error {
	if s.inner == nil {
		return nil
	}
	err := s.inner.Cleanup(h)
	s.inner = nil
	return err
}

// Run issues the stages.
func (s *IOS) Run(h device.Host, in *workloads.Instance) error {
	if s.inner == nil || s.inner.inst != in {
		if err := s.Prepare(h, in); err != nil {
			return err
		}
	}
	return s.inner.Run(h, in)
}
