package portfolio

import (
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/acs"
	"github.com/gpusched/gpusched/sched/graph"
	"github.com/gpusched/gpusched/sched/pipeline"
	"github.com/gpusched/gpusched/sched/tilesync"
	"github.com/gpusched/gpusched/workloads"
)

// candidate is one schedule the portfolio may pick: built afresh by build
// for every estimate and for the device, so that no state is shared.
type candidate struct {
	name   string
	family string // familyOf: the device check covers each family's best
	build  func() (sched.Scheduler, error)
	// frozen: build makes the schedule one search found on the device,
	// not the search (keep).
	frozen bool
}

// Candidates lists the schedules the portfolio considers for p on a device
// offering dev (sched.DeviceTraits), in a fixed order: the strategies that
// apply (sched.Missing) at several sizes, and their combinations.
func Candidates(p *workloads.Program, dev []sched.Trait) []string {
	var names []string
	for _, c := range candidates(p, dev) {
		names = append(names, c.name)
	}
	return names
}

func candidates(p *workloads.Program, dev []sched.Trait) []candidate {
	offers := append(sched.ProgramTraits(p), dev...)
	if tilesync.HasPairs(p) {
		offers = append(offers, sched.TraitTilePairs)
	}
	var out []candidate
	seen := map[string]bool{}
	add := func(s sched.Scheduler, err error, build func() (sched.Scheduler, error)) {
		if err != nil || len(sched.Missing(s, offers)) > 0 || seen[s.Name()] {
			return
		}
		seen[s.Name()] = true
		out = append(out, candidate{name: s.Name(), family: familyOf(s), build: build})
	}
	for _, b := range builders(len(p.Steps), jobs(p)) {
		s, err := b()
		add(s, err, b)
	}
	return out
}

// familyOf groups a candidate with those that issue work the same way:
// one stream, several streams issued directly, a captured graph, a search,
// a runtime that discovers dependencies, processes, a job pipeline, a job
// pipeline in one graph, tile synchronization, a hardware dependency
// queue. A cost model tends to err alike within a family, so the device
// check takes each family's best prediction.
func familyOf(s sched.Scheduler) string {
	switch s := s.(type) {
	case *sched.Serial:
		return "one stream"
	case *sched.RoundRobin:
		return "streams"
	case *sched.GraphOnce, *sched.GraphPerStep:
		return "graph"
	case *graph.Scheduler:
		if strings.Contains(s.Name(), "+graph") {
			return "graph"
		}
		return "streams"
	case *graph.AutoGraph, *graph.IOS:
		return "search"
	case *graph.MultiProcess:
		return "processes"
	case *tilesync.Scheduler:
		return "tiles"
	case *pipeline.Synchronous, *pipeline.Graph, *pipeline.Batching, *pipeline.Queue, *pipeline.SET:
		return "pipeline"
	case *pipeline.ChunkGraph:
		return "pipeline graph"
	case *acs.HW:
		return "hardware queue"
	}
	return "runtime" // ACS-SW, GrCUDA
}

// jobs is the number of steps, which a pipeline runs as jobs.
func jobs(p *workloads.Program) int { return len(p.Steps) }

type builder = func() (sched.Scheduler, error)

// builders lists every candidate's constructor; candidates keeps those that
// apply. steps and njobs size the per-step and pipeline candidates.
func builders(steps, njobs int) []builder {
	var bs []builder
	bs = append(bs, func() (sched.Scheduler, error) { return sched.NewSerial(), nil })
	for _, k := range []int{2, 4, 8} {
		bs = append(bs, func() (sched.Scheduler, error) { return sched.NewRoundRobin(k) })
	}
	bs = append(bs, dagBuilders(steps)...)
	bs = append(bs, runtimeBuilders()...)
	bs = append(bs, pipelineBuilders(njobs)...)
	bs = append(bs, tileBuilders()...)
	return bs
}

// dagBuilders are the whole-graph strategies (sched/graph) issued plainly
// and captured into one multi-stream graph, at several stream counts, with
// and without KeSCo's sync pruning on the other assignments; per step for
// programs of several steps; and the searches.
func dagBuilders(steps int) []builder {
	g := func(o graph.Options) builder {
		return func() (sched.Scheduler, error) { return graph.New(o) }
	}
	bs := []builder{
		g(graph.Options{Policy: graph.PolicySerial, Graph: true}),
		g(graph.Options{Policy: graph.PolicyNimble}),
		g(graph.Options{Policy: graph.PolicyNimble, Graph: true}),
		g(graph.Options{Policy: graph.PolicyNimble, Graph: true, Prune: true}),
		g(graph.Options{Policy: graph.PolicyTaskflow, Streams: 4}),
		g(graph.Options{Policy: graph.PolicyTaskflow, Streams: 4, Graph: true}),
	}
	for _, s := range []int{2, 4, 8} {
		bs = append(bs, g(graph.Options{Policy: graph.PolicyTaskflow, Streams: s, Graph: true, Prune: true}))
	}
	for _, s := range []int{4, 8} {
		bs = append(bs, g(graph.Options{Policy: graph.PolicyKeSCo, Streams: s}))
	}
	for _, s := range []int{2, 4, 8, 16} {
		bs = append(bs, g(graph.Options{Policy: graph.PolicyKeSCo, Streams: s, Graph: true}))
	}
	if steps > 1 {
		bs = append(bs,
			g(graph.Options{Policy: graph.PolicyKeSCo, Streams: 8, PerStep: true}),
			g(graph.Options{Policy: graph.PolicyKeSCo, Streams: 8, Graph: true, PerStep: true}),
			g(graph.Options{Policy: graph.PolicyNimble, Graph: true, Prune: true, PerStep: true}),
			func() (sched.Scheduler, error) { return sched.NewGraphPerStep(4) })
		for _, k := range []int{4, 8} {
			bs = append(bs, func() (sched.Scheduler, error) { return sched.NewGraphOnce(k) })
		}
		bs = append(bs, func() (sched.Scheduler, error) {
			return graph.NewMultiProcess(0, "kesco+graph", func() (sched.Scheduler, error) {
				return graph.New(graph.Options{Policy: graph.PolicyKeSCo, Graph: true})
			})
		})
	}
	bs = append(bs,
		func() (sched.Scheduler, error) { return graph.NewAutoGraph(graph.DefaultSearchOptions()) },
		func() (sched.Scheduler, error) { return graph.NewIOS(graph.DefaultIOSOptions()) })
	return bs
}

// runtimeBuilders are the strategies that discover dependencies as they
// issue (ACS's window, GrCUDA's streams, ACS-HW's queue).
func runtimeBuilders() []builder {
	return []builder{
		func() (sched.Scheduler, error) { return acs.New(acs.DefaultParams()) },
		func() (sched.Scheduler, error) {
			p := acs.DefaultParams()
			p.Dispatch, p.Threads, p.Lanes = acs.DispatchGraph, 1, 4
			return acs.New(p)
		},
		func() (sched.Scheduler, error) { return graph.NewGrCUDA(16, graph.DefaultGrCUDADepCost) },
		func() (sched.Scheduler, error) { return acs.NewHW(acs.DefaultHWParams()) },
	}
}

// pipelineBuilders are SET and its baselines at several worker counts, and
// SET-batch and chunk-graph where there are jobs enough for two chunks.
func pipelineBuilders(njobs int) []builder {
	bs := []builder{
		func() (sched.Scheduler, error) { return pipeline.NewSynchronous(), nil },
		func() (sched.Scheduler, error) { return pipeline.NewBatching(8) },
		func() (sched.Scheduler, error) { return pipeline.NewQueue(4) },
	}
	set := func(b, ring, perLaunch int, threaded bool) builder {
		return func() (sched.Scheduler, error) {
			p := pipeline.DefaultParams() // warm
			depth := max(1, ring)
			p.Workers, p.Depth, p.Ring, p.JobsPerLaunch, p.Threaded = b, &depth, ring, perLaunch, threaded
			if perLaunch > 1 {
				p.Copies, p.Branches = pipeline.CopiesBatched, 4
			}
			return pipeline.New(p)
		}
	}
	for _, b := range []int{4, 8} {
		bs = append(bs, set(b, 0, 1, false), set(b, 2, 1, false))
	}
	for _, j := range []int{8, 16} {
		if njobs >= 2*j {
			bs = append(bs, set(2, 2, j, false), set(2, 2, j, true))
		}
	}
	for _, c := range [][2]int{{16, 16}, {32, 16}, {32, 32}} {
		if njobs >= 2*c[0] {
			bs = append(bs, func() (sched.Scheduler, error) { return pipeline.NewChunkGraph(c[0], c[1]) })
		}
	}
	return bs
}

// tileBuilders are cuSync's tile synchronization and its baseline.
func tileBuilders() []builder {
	t := func(policy string) builder {
		return func() (sched.Scheduler, error) {
			o := tilesync.Defaults()
			o.Policy = policy
			return tilesync.New(o)
		}
	}
	return []builder{t("stream"), t("auto"), t("row")}
}

// Build makes the candidate named name (as Picked reports it) for p on a
// device offering dev, bare: the schedule the portfolio runs when it picks
// name, without the portfolio around it.
func Build(p *workloads.Program, dev []sched.Trait, name string) (sched.Scheduler, error) {
	for _, c := range candidates(p, dev) {
		if c.name == name {
			return c.build()
		}
	}
	return nil, fmt.Errorf("portfolio: no candidate %q for %s (candidates: %s)", name, p.Name, strings.Join(Candidates(p, dev), ", "))
}
