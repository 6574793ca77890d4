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
	RegisterScheduler("queue", "pipeline baseline: b streams, each with a job queue and a host thread synchronizing per job; per_run_threads ends the threads at every run's end, so that the next run prepares inside its timing, as Queue did before session 21 (for results measured then) (params: b, per_run_threads, gaps)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := struct {
				B             int  `yaml:"b"`
				PerRunThreads bool `yaml:"per_run_threads"`
				Gaps          bool `yaml:"gaps"`
			}{B: 4}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			s, err := pipeline.NewQueue(p.B)
			if err != nil {
				return nil, err
			}
			s.Gaps, s.PerRunThreads = p.Gaps, p.PerRunThreads
			return s, nil
		})
	RegisterScheduler("set", "SET: b workers with per-worker graphs updated per job, private buffers, callback-fed free pool and work stealing; depth > 1 keeps that many jobs in flight per worker, threaded gives each worker its own host thread, coalesce n enqueues one callback per n jobs, ring r gives each worker r graph execs updated only once complete, so a dispatch is one graph launch (depth defaults to ring), jobs_per_launch j (with a ring) makes each exec a chain of j jobs launched at once, depth and coalesce then counting launches; copies stream (default graph) puts only the job's kernels in each worker's graph, captured once and never updated, and issues the job's host copies on the worker's stream around its launch (not with a ring or jobs_per_launch); copies batched (with a ring and jobs_per_launch j >= 2) launches chunks of j consecutive jobs, one coalesced copy in and out per chunk over strided host slots and the jobs' kernels as parallel branches over per-worker batch buffers (branches k: in k branches of consecutive jobs, 1 a chain); warm (default true) launches every graph exec once in Prepare and waits for it, so that no exec's first launch falls in the timed run (the runner's warm run reaches only the execs its jobs use; warm: false leaves the others cold) (params: b, depth, ring, threaded, coalesce, jobs_per_launch, copies, branches, warm, gaps)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := pipeline.DefaultParams()
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return pipeline.New(p)
		})
}

// chunk-graph is gpusched's own job pipeline (sched/pipeline, ChunkGraph).
func init() {
	RegisterScheduler("chunk-graph", "gpusched's: the whole job pipeline as one CUDA graph launched once, chunks of j consecutive jobs each copied in and out with one coalesced copy (as SET-batch), pipelined inside the graph: copy-ins in chunk order on one lane, each job on one of lanes kernel lanes after its chunk's copy-in, copy-outs on another lane after their chunk's jobs (params: j, lanes)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := struct {
				J     int `yaml:"j"`
				Lanes int `yaml:"lanes"`
			}{J: 16, Lanes: 16}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return pipeline.NewChunkGraph(p.J, p.Lanes)
		})
}
