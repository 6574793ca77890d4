package experiments

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/pipeline"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

// pipelineFamilies are SET's job workloads (workloads/jobs), by family name.
var pipelineFamilies = []struct {
	name, doc string
	build     func(params *yaml.Node, seed int64) (*jobs.Workload, error)
}{
	{"jobs-sobel", "SET pipeline: Sobel edge magnitude per image (params: jobs, size)", func(n *yaml.Node, seed int64) (*jobs.Workload, error) {
		p := jobs.DefaultSobel()
		if err := DecodeParams(n, &p); err != nil {
			return nil, err
		}
		return jobs.Sobel(p, seed)
	}},
	{"jobs-sssp", "SET pipeline: Bellman-Ford rounds on a random graph per job (params: jobs, vertices, degree, iterations)", func(n *yaml.Node, seed int64) (*jobs.Workload, error) {
		p := jobs.DefaultSSSP()
		if err := DecodeParams(n, &p); err != nil {
			return nil, err
		}
		return jobs.SSSP(p, seed)
	}},
	{"jobs-bp", "SET pipeline: back-propagation layer, forward and weight gradient (params: jobs, batch, inputs, hidden)", func(n *yaml.Node, seed int64) (*jobs.Workload, error) {
		p := jobs.DefaultBP()
		if err := DecodeParams(n, &p); err != nil {
			return nil, err
		}
		return jobs.BP(p, seed)
	}},
	{"jobs-gemm", "SET pipeline: tiled GEMM per job (params: jobs, size)", func(n *yaml.Node, seed int64) (*jobs.Workload, error) {
		p := jobs.DefaultGEMM()
		if err := DecodeParams(n, &p); err != nil {
			return nil, err
		}
		return jobs.GEMM(p, seed)
	}},
	{"jobs-knn", "SET pipeline: k nearest neighbours, distances and selection (params: jobs, points, queries, dims, k)", func(n *yaml.Node, seed int64) (*jobs.Workload, error) {
		p := jobs.DefaultKNN()
		if err := DecodeParams(n, &p); err != nil {
			return nil, err
		}
		return jobs.KNN(p, seed)
	}},
	{"jobs-hotspot", "SET pipeline: Rodinia hotspot thermal stencil iterations (params: jobs, size, iterations)", func(n *yaml.Node, seed int64) (*jobs.Workload, error) {
		p := jobs.DefaultHotspot()
		if err := DecodeParams(n, &p); err != nil {
			return nil, err
		}
		return jobs.Hotspot(p, seed)
	}},
}

// PipelineWorkload builds a SET job workload with its throughput unit, for
// reports that count throughput in the workload's own unit.
func PipelineWorkload(family string, params *yaml.Node, seed int64) (*jobs.Workload, error) {
	for _, f := range pipelineFamilies {
		if f.name == family {
			return f.build(params, seed)
		}
	}
	return nil, fmt.Errorf("%q is not a pipeline workload family", family)
}

func init() {
	for _, f := range pipelineFamilies {
		build := f.build
		RegisterWorkload(f.name, f.doc, func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			w, err := build(params, seed)
			if err != nil {
				return nil, err
			}
			return w.Program, nil
		})
	}
	// gaps: true records timing events around every job to measure SET's
	// overhead model (T_ideal, intra- and inter-batch gaps), at the cost of
	// two event records per job.
	type gapsParam struct {
		Gaps bool `yaml:"gaps"`
	}
	type workersParam struct {
		B    int  `yaml:"b"`
		Gaps bool `yaml:"gaps"`
	}
	RegisterScheduler("synchronous", "pipeline baseline: one stream, each job issued then synchronized (params: gaps)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			var p gapsParam
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			s := pipeline.NewSynchronous()
			s.Gaps = p.Gaps
			return s, nil
		})
	RegisterScheduler("graph-per-job", "pipeline baseline: each job captured, instantiated, launched and synchronized as its own CUDA graph (params: gaps)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			var p gapsParam
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			s := pipeline.NewGraph()
			s.Gaps = p.Gaps
			return s, nil
		})
	RegisterScheduler("batching", "pipeline baseline: b jobs round-robin over b streams, one device synchronize per batch (params: b, gaps)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := workersParam{B: 4}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			s, err := pipeline.NewBatching(p.B)
			if err != nil {
				return nil, err
			}
			s.Gaps = p.Gaps
			return s, nil
		})
	RegisterScheduler("queue", "pipeline baseline: b streams, each with a job queue and a host thread synchronizing per job (params: b, gaps)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := workersParam{B: 4}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			s, err := pipeline.NewQueue(p.B)
			if err != nil {
				return nil, err
			}
			s.Gaps = p.Gaps
			return s, nil
		})
	RegisterScheduler("set", "SET: b workers with per-worker graphs updated per job, private buffers, callback-fed free pool and work stealing; depth > 1 keeps that many jobs in flight per worker, threaded gives each worker its own host thread, coalesce n enqueues one callback per n jobs, ring r gives each worker r graph execs updated only once complete, so a dispatch is one graph launch (depth defaults to ring), jobs_per_launch j (with a ring) makes each exec a chain of j jobs launched at once, depth and coalesce then counting launches; copies stream (default graph) puts only the job's kernels in each worker's graph, captured once and never updated, and issues the job's host copies on the worker's stream around its launch (not with a ring or jobs_per_launch); copies batched (with a ring and jobs_per_launch j >= 2) launches chunks of j consecutive jobs, one coalesced copy in and out per chunk over strided host slots and the jobs' kernels as parallel branches over per-worker batch buffers (branches k: in k branches of consecutive jobs, 1 a chain); warm (default true) launches every graph exec once in Prepare and waits for it, so that no exec's first launch falls in the timed run (the runner's warm run reaches only the execs its jobs use; warm: false leaves the others cold) (params: b, depth, ring, threaded, coalesce, jobs_per_launch, copies, branches, warm, gaps)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := struct {
				B         int    `yaml:"b"`
				Depth     *int   `yaml:"depth"`
				Ring      int    `yaml:"ring"`
				Threaded  bool   `yaml:"threaded"`
				Coalesce  int    `yaml:"coalesce"`
				PerLaunch int    `yaml:"jobs_per_launch"`
				Copies    string `yaml:"copies"`
				Warm      bool   `yaml:"warm"`
				Branches  int    `yaml:"branches"`
				Gaps      bool   `yaml:"gaps"`
			}{B: 4, Coalesce: 1, PerLaunch: 1, Copies: "graph", Warm: true}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			if p.Ring < 0 || p.Ring > 8 {
				return nil, fmt.Errorf("ring is %d; it must be between 0 (off) and 8 graph execs per worker", p.Ring)
			}
			// A ring's execs each hold a job in flight unless depth says
			// fewer; without a ring, one job per worker (the paper's SET).
			depth := 1
			if p.Ring > 0 {
				depth = p.Ring
			}
			if p.Depth != nil {
				depth = *p.Depth
			}
			s, err := pipeline.NewSET(p.B, depth)
			if err != nil {
				return nil, err
			}
			if p.Ring > 0 && depth > p.Ring {
				return nil, fmt.Errorf("depth is %d but ring is %d; each job in flight holds its own exec, so depth must be at most ring", depth, p.Ring)
			}
			if p.Coalesce < 1 || p.Coalesce > depth || (p.Coalesce > 1 && !p.Threaded && p.Ring == 0) {
				return nil, fmt.Errorf("coalesce is %d; it must be between 1 and depth (%d), and above 1 only with threaded: true or a ring", p.Coalesce, depth)
			}
			if p.PerLaunch < 1 || p.PerLaunch > 32 {
				return nil, fmt.Errorf("jobs_per_launch is %d; it must be between 1 and 32", p.PerLaunch)
			}
			if p.PerLaunch > 1 && p.Ring == 0 {
				return nil, fmt.Errorf("jobs_per_launch is %d but ring is 0; several jobs per launch need a ring (ring: 1 or more)", p.PerLaunch)
			}
			switch p.Copies {
			case "graph":
			case "stream":
				if p.Ring > 0 || p.PerLaunch > 1 {
					return nil, fmt.Errorf("copies is stream but ring is %d and jobs_per_launch %d; copies on the stream need one kernel graph per worker (ring 0) and one job per launch", p.Ring, p.PerLaunch)
				}
				s.StreamCopies = true
			case "batched":
				if p.Ring == 0 || p.PerLaunch < 2 {
					return nil, fmt.Errorf("copies is batched but ring is %d and jobs_per_launch %d; batched copies need a ring (ring: 1 or more) and chunks of at least 2 jobs (jobs_per_launch: 2 or more)", p.Ring, p.PerLaunch)
				}
				s.BatchedCopies = true
			default:
				return nil, fmt.Errorf("copies is %q; it must be graph (the job's copies are nodes of its graph, updated per job), stream (kernel-only graphs, copies issued on the worker's stream) or batched (one coalesced copy in and out per chunk of jobs_per_launch jobs)", p.Copies)
			}
			if p.Branches != 0 && (!s.BatchedCopies || p.Branches < 1 || p.Branches > p.PerLaunch) {
				return nil, fmt.Errorf("branches is %d; it spreads a chunk's jobs (copies: batched) over that many parallel graph branches, from 1 (one chain) to jobs_per_launch (%d, the default: a branch per job)", p.Branches, p.PerLaunch)
			}
			s.Gaps, s.Threaded, s.Coalesce, s.Ring, s.JobsPerLaunch, s.Warm, s.Branches = p.Gaps, p.Threaded, p.Coalesce, p.Ring, p.PerLaunch, p.Warm, p.Branches
			return s, nil
		})
}
