package graph

import (
	"fmt"
	"math"
	"time"

	"github.com/gpusched/gpusched/device"
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

func iosPartition(red *DAG, part []int, cost []time.Duration, o IOSOptions) [][][]int {
	m := len(part)
	local := map[int]int{}
	for i, v := range part {
		local[v] = i
	}
	predMask := make([]uint32, m)
	succs := make([][]int, m)
	for i, v := range part {
		for _, u := range red.Pred[v] {
			if j, ok := local[u]; ok {
				predMask[i] |= 1 << j
				succs[j] = append(succs[j], i)
			}
		}
	}
	full := uint32(1)<<m - 1
	type choice struct {
		cost   float64
		groups [][]int // local indices
	}
	memo := map[uint32]choice{}
	var best func(done uint32) choice
	best = func(done uint32) choice {
		if done == full {
			return choice{}
		}
		if c, ok := memo[done]; ok {
			return c
		}
		var ready []int
		for i := 0; i < m && len(ready) < iosReadyLimit; i++ {
			if done&(1<<i) == 0 && predMask[i]&^done == 0 {
				ready = append(ready, i)
			}
		}
		// The chain a group may grow from each ready operation.
		chains := make([][]int, len(ready))
		for k, r := range ready {
			c := []int{r}
			have := done | 1<<r
			for len(c) < o.MaxGroupOps {
				next := -1
				for _, x := range succs[c[len(c)-1]] {
					if have&(1<<x) == 0 && predMask[x]&^have == 0 {
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
			chains[k] = c
		}
		res := choice{cost: math.Inf(1)}
		pick := make([]int, len(ready)) // 0: not in the stage, 1: alone, 2: its whole chain
		var rec func(k, groups int)
		rec = func(k, groups int) {
			if k == len(ready) {
				if groups == 0 {
					return
				}
				var gs [][]int
				stageMask := uint32(0)
				longest := 0.0
				for j, p := range pick {
					if p == 0 {
						continue
					}
					g := chains[j][:1]
					if p == 2 {
						g = chains[j]
					}
					t := 0.0
					for _, x := range g {
						t += float64(cost[part[x]].Nanoseconds())
						stageMask |= 1 << x
					}
					longest = max(longest, t)
					gs = append(gs, g)
				}
				c := longest + float64(o.StageCost.Nanoseconds()) + best(done|stageMask).cost
				if c < res.cost {
					res = choice{cost: c, groups: gs}
				}
				return
			}
			pick[k] = 0
			rec(k+1, groups)
			if groups < o.MaxGroups {
				pick[k] = 1
				rec(k+1, groups+1)
				if len(chains[k]) > 1 {
					pick[k] = 2
					rec(k+1, groups+1)
				}
			}
			pick[k] = 0
		}
		rec(0, 0)
		memo[done] = res
		return res
	}
	var stages [][][]int
	for done := uint32(0); done != full; {
		c := best(done)
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
	stats      map[string]float64
}

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
	s.inner = withPlan(s.Name(), p, s.opt.Graph)
	if err := s.inner.Prepare(h, in); err != nil {
		return err
	}
	s.stats = map[string]float64{"stages": float64(len(stages)), "streams": float64(p.Streams), "waits": float64(p.NumWaits())}
	s.SearchTime = search
	return nil
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
