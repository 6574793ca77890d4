package experiments

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/acs"
	"github.com/gpusched/gpusched/sched/graph"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kesco"
)

// graphParams are the parameters every whole-graph scheduler shares.
type graphParams struct {
	Streams int  `yaml:"streams"`
	Graph   bool `yaml:"graph"`
	PerStep bool `yaml:"per_step"`
	Strict  bool `yaml:"strict"`
	NoPrune bool `yaml:"no_prune"`
	Prune   bool `yaml:"prune"`
}

func graphFactory(policy graph.Policy, streams bool, kescoOpts bool) SchedulerFactory {
	return func(params *yaml.Node) (sched.Scheduler, error) {
		var p graphParams
		if err := DecodeParams(params, &p); err != nil {
			return nil, err
		}
		if !streams && p.Streams != 0 {
			return nil, fmt.Errorf("%s takes no streams parameter: its stream count follows from the policy", policy)
		}
		if !kescoOpts && (p.Strict || p.NoPrune) {
			return nil, fmt.Errorf("strict and no_prune apply only to kesco")
		}
		if p.Prune && policy != graph.PolicyTaskflow && policy != graph.PolicyNimble {
			return nil, fmt.Errorf("prune applies only to taskflow and nimble (kesco prunes unless no_prune)")
		}
		return graph.New(graph.Options{Policy: policy, Streams: p.Streams, Graph: p.Graph, PerStep: p.PerStep, Strict: p.Strict, NoPrune: p.NoPrune, Prune: p.Prune})
	}
}

func init() {
	RegisterScheduler("taskflow", "Taskflow round-robin by BFS level over the transitive reduction, events only across streams (params: streams=4, graph, per_step, prune: KeSCo's sync pruning)",
		graphFactory(graph.PolicyTaskflow, true, false))
	RegisterScheduler("nimble", "Nimble: one stream per path of a minimum path cover of the transitive reduction, an event after every node (params: graph, per_step, prune: KeSCo's sync pruning, events only where waited on)",
		graphFactory(graph.PolicyNimble, false, false))
	RegisterScheduler("kesco", "KeSCo distributor with sync pruning, streams capped at the graph width (params: streams=8, graph, per_step, strict, no_prune)",
		graphFactory(graph.PolicyKeSCo, true, true))
	RegisterScheduler("serial-graph", "the whole program on one stream in program order, through sched/graph (params: graph, per_step)",
		graphFactory(graph.PolicySerial, false, false))
	RegisterScheduler("grsched", "GrCUDA-like runtime: ACS-SW's window scheduler (sched/acs) with an unbounded window, every kernel entering at once (params: threads=8, completion=sync, inflight=1, check_cost=true)",
		grschedScheduler)
	RegisterScheduler("grcuda", "GrCUDA's stream policy in sched/graph: kernels discovered in order (unbounded window), a child reuses its first parent's stream, others take a free stream (params: max_streams=16, dep_cost_ns=510)",
		grcudaScheduler)
	RegisterScheduler("multiprocess", "KeSCo's multi-process mode: each step (task) on its own host thread with its own inner scheduler (params: processes=0 (one per task), inner=serial|taskflow|nimble|kesco, streams, graph)",
		multiprocessScheduler)

	RegisterScheduler("autograph", "AutoGraph: per-operation costs measured on the device, partitioned backtracking search over stream assignments by alpha*critical path + total cost, k-best DP over partitions, the best candidates timed as multi-stream CUDA graphs (params: alpha=2, max_streams=8, part_size=12, top_k=4, verify=3, budget=20000, wait_cost_ns=2000)",
		autographScheduler)
	RegisterScheduler("ios", "IOS: per-operation costs measured on the device, DP over stages of at most max_groups concurrent groups of at most max_group_ops operations, a barrier between stages (params: part_size=12, max_groups=8, max_group_ops=3, stage_cost_ns=5000, graph=true)",
		iosScheduler)

	RegisterWorkload("kesco", "one KeSCo/GrCUDA benchmark: VEC, BS, ML, HITS, IMG, DL, M1 or M2 (params: bench, scale=1, blocks=16)",
		kescoWorkload)
	RegisterWorkload("kesco-mix", "KeSCo multi-task mix: tasks drawn from the large (M1, M2, BS, IMG) and small (VEC, ML, DL) sets, one step per task (params: tasks=16, large=1, small=1, scale=0.25, blocks=16)",
		kescoMixWorkload)
}

func grschedScheduler(params *yaml.Node) (sched.Scheduler, error) {
	d := acs.DefaultParams()
	p := struct {
		Threads    int            `yaml:"threads"`
		Completion acs.Completion `yaml:"completion"`
		InFlight   int            `yaml:"inflight"`
		CheckCost  bool           `yaml:"check_cost"`
	}{Threads: 8, Completion: d.Completion, InFlight: d.InFlight, CheckCost: d.CheckCost}
	if err := DecodeParams(params, &p); err != nil {
		return nil, err
	}
	return acs.NewSW(acs.Params{Window: 0, Threads: p.Threads, Completion: p.Completion, InFlight: p.InFlight, CheckCost: p.CheckCost})
}

func grcudaScheduler(params *yaml.Node) (sched.Scheduler, error) {
	p := struct {
		MaxStreams int     `yaml:"max_streams"`
		DepCostNS  float64 `yaml:"dep_cost_ns"`
	}{MaxStreams: 16, DepCostNS: float64(graph.DefaultGrCUDADepCost.Nanoseconds())}
	if err := DecodeParams(params, &p); err != nil {
		return nil, err
	}
	return graph.NewGrCUDA(p.MaxStreams, time.Duration(p.DepCostNS*float64(time.Nanosecond)))
}

func multiprocessScheduler(params *yaml.Node) (sched.Scheduler, error) {
	p := struct {
		Processes int    `yaml:"processes"`
		Inner     string `yaml:"inner"`
		Streams   int    `yaml:"streams"`
		Graph     bool   `yaml:"graph"`
	}{Inner: "kesco"}
	if err := DecodeParams(params, &p); err != nil {
		return nil, err
	}
	opt := graph.Options{Policy: graph.Policy(p.Inner), Streams: p.Streams, Graph: p.Graph}
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("inner: %w", err)
	}
	name := p.Inner
	if p.Graph {
		name += "+graph"
	}
	return graph.NewMultiProcess(p.Processes, name, func() (sched.Scheduler, error) { return graph.New(opt) })
}

func autographScheduler(params *yaml.Node) (sched.Scheduler, error) {
	d := graph.DefaultSearchOptions()
	p := struct {
		Alpha      float64 `yaml:"alpha"`
		MaxStreams int     `yaml:"max_streams"`
		PartSize   int     `yaml:"part_size"`
		TopK       int     `yaml:"top_k"`
		Verify     int     `yaml:"verify"`
		Budget     int     `yaml:"budget"`
		WaitCostNS float64 `yaml:"wait_cost_ns"`
	}{d.Alpha, d.MaxStreams, d.PartSize, d.TopK, d.Verify, d.Budget, float64(d.WaitCost.Nanoseconds())}
	if err := DecodeParams(params, &p); err != nil {
		return nil, err
	}
	return graph.NewAutoGraph(graph.SearchOptions{Alpha: p.Alpha, MaxStreams: p.MaxStreams, PartSize: p.PartSize, TopK: p.TopK,
		Verify: p.Verify, Budget: p.Budget, WaitCost: time.Duration(p.WaitCostNS * float64(time.Nanosecond))})
}

func iosScheduler(params *yaml.Node) (sched.Scheduler, error) {
	d := graph.DefaultIOSOptions()
	p := struct {
		PartSize    int     `yaml:"part_size"`
		MaxGroups   int     `yaml:"max_groups"`
		MaxGroupOps int     `yaml:"max_group_ops"`
		StageCostNS float64 `yaml:"stage_cost_ns"`
		Graph       bool    `yaml:"graph"`
	}{d.PartSize, d.MaxGroups, d.MaxGroupOps, float64(d.StageCost.Nanoseconds()), d.Graph}
	if err := DecodeParams(params, &p); err != nil {
		return nil, err
	}
	return graph.NewIOS(graph.IOSOptions{PartSize: p.PartSize, MaxGroups: p.MaxGroups, MaxGroupOps: p.MaxGroupOps,
		StageCost: time.Duration(p.StageCostNS * float64(time.Nanosecond)), Graph: p.Graph})
}

func kescoWorkload(params *yaml.Node, seed int64) (*workloads.Program, error) {
	p := struct {
		Bench  string  `yaml:"bench"`
		Scale  float64 `yaml:"scale"`
		Blocks int     `yaml:"blocks"`
	}{Scale: 1}
	if err := DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Bench == "" {
		return nil, fmt.Errorf("bench is required (one of %v)", kesco.Names)
	}
	return kesco.New(p.Bench, kesco.Params{Scale: p.Scale, Blocks: p.Blocks}, seed)
}

func kescoMixWorkload(params *yaml.Node, seed int64) (*workloads.Program, error) {
	p := kesco.MixParams{Tasks: 16, Large: 1, Small: 1, Scale: 0.25}
	if err := DecodeParams(params, &p); err != nil {
		return nil, err
	}
	return kesco.Mix(p, seed)
}
