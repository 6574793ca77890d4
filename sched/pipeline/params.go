package pipeline

import (
	"fmt"
	"strings"
)

// Copies is where a SET job's host copies go.
type Copies string

const (
	// CopiesGraph puts the job's copies in its worker's graph as nodes,
	// updated per job (the paper's SET).
	CopiesGraph Copies = "graph"
	// CopiesStream (SET-kgraph, set_kgraph.go) puts only the job's
	// kernels in the worker's graph, captured once over its private
	// buffers and never updated, and issues the copies as stream
	// operations around the graph launch.
	CopiesStream Copies = "stream"
	// CopiesBatched (SET-batch, set_batch.go; needs a ring and
	// JobsPerLaunch J >= 2) launches a chunk of up to J consecutive jobs
	// as one graph with one coalesced copy per host copy of the job and
	// the jobs' kernels as parallel branches over per-worker batch buffers.
	CopiesBatched Copies = "batched"
)

// Limits of the options.
const (
	maxWorkers = 64
	maxDepth   = 8
	maxRing    = 8
	// maxJobsPerLaunch bounds a chain or a SET-batch chunk: with a few
	// operations per job, a chain of up to 130 nodes (a chunk: 2 copies
	// and up to 32 x the job's kernels). Every ring position holds an
	// exec per length from 1 to J, all captured in Prepare: 32 per
	// position at most.
	maxJobsPerLaunch = 32
)

// Params configure SET. DefaultParams is the paper's SET with 4 workers;
// the other settings are gpusched's refinements (see the package doc),
// named in the scheduler's Name.
type Params struct {
	// Workers is B: each worker owns a stream, private buffers and graphs.
	Workers int `yaml:"b"`
	// Depth is how many jobs (with JobsPerLaunch > 1, launches) a worker
	// keeps in flight on its stream, at most Ring with a ring; nil (not
	// given) is Ring with a ring and 1 (the paper) without.
	Depth *int `yaml:"depth"`
	// Ring (0: off) gives every worker that many graph execs, each updated
	// only once its last launch has completed (set_ring.go).
	Ring int `yaml:"ring"`
	// Threaded gives every worker its own host thread instead of one
	// dispatcher for all (set_threaded.go).
	Threaded bool `yaml:"threaded"`
	// Coalesce enqueues one completion callback per that many jobs (or
	// launches) of a worker, at most Depth; above 1 it needs Threaded or a
	// ring. CUDA runs host callbacks on one driver thread, so their rate
	// can bound a pipeline of small jobs.
	Coalesce int `yaml:"coalesce"`
	// JobsPerLaunch (above 1: SET-chain, with a ring; set_multi.go) puts
	// up to that many jobs of a worker in one graph launch.
	JobsPerLaunch int `yaml:"jobs_per_launch"`
	// Copies is graph, stream or batched (see Copies).
	Copies Copies `yaml:"copies"`
	// Branches (copies batched only; 0: one per job) spreads a chunk's n
	// jobs over min(Branches, n) parallel branches of consecutive jobs.
	Branches int `yaml:"branches"`
	// Warm launches every graph exec once in Prepare and waits for it, so
	// first-launch costs fall outside the timed Run (set_warm.go).
	Warm bool `yaml:"warm"`
	// Gaps records a timing event before and after every job to measure
	// the overhead model's terms (gaps.go).
	Gaps bool `yaml:"gaps"`
}

// DefaultParams is the paper's SET: 4 workers, one job in flight each, the
// whole job in one graph per worker; warm, so that no exec's first launch
// falls in the timed run (the runner's untimed warm run, sched.Warm,
// reaches only the execs its jobs use), as in a pipeline that runs for
// long.
func DefaultParams() Params {
	return Params{Workers: 4, Coalesce: 1, JobsPerLaunch: 1, Copies: CopiesGraph, Warm: true}
}

// depth resolves Depth: as given, else as many jobs in flight as the ring
// has execs, or one without a ring.
func (p *Params) depth() int {
	switch {
	case p.Depth != nil:
		return *p.Depth
	case p.Ring > 0:
		return p.Ring
	}
	return 1
}

// Validate reports the first invalid parameter or combination, naming it
// as an experiment file does.
func (p *Params) Validate() error {
	depth := p.depth()
	switch {
	case p.Workers < 1 || p.Workers > maxWorkers:
		return fmt.Errorf("set: workers (b) must be between 1 and %d, got %d", maxWorkers, p.Workers)
	case p.Ring < 0 || p.Ring > maxRing:
		return fmt.Errorf("set: ring is %d; it must be between 0 (off) and %d graph execs per worker", p.Ring, maxRing)
	case depth < 1 || depth > maxDepth:
		return fmt.Errorf("set: depth (jobs in flight per worker) must be between 1 and %d, got %d", maxDepth, depth)
	case p.Ring > 0 && depth > p.Ring:
		return fmt.Errorf("set: depth is %d but ring is %d; each job in flight holds its own exec, so depth must be at most ring", depth, p.Ring)
	case p.Coalesce < 1 || p.Coalesce > depth || (p.Coalesce > 1 && !p.Threaded && p.Ring == 0):
		return fmt.Errorf("set: coalesce is %d; it must be between 1 and depth (%d), and above 1 only with threaded: true or a ring", p.Coalesce, depth)
	case p.JobsPerLaunch < 1 || p.JobsPerLaunch > maxJobsPerLaunch:
		return fmt.Errorf("set: jobs_per_launch is %d; it must be between 1 and %d", p.JobsPerLaunch, maxJobsPerLaunch)
	case p.JobsPerLaunch > 1 && p.Ring == 0:
		return fmt.Errorf("set: jobs_per_launch is %d but ring is 0; several jobs per launch need a ring (ring: 1 or more), since a chain of jobs is prepared only into an exec whose last launch has completed", p.JobsPerLaunch)
	}
	if err := p.validateCopies(); err != nil {
		return err
	}
	if p.Branches != 0 && (p.Copies != CopiesBatched || p.Branches < 1 || p.Branches > p.JobsPerLaunch) {
		return fmt.Errorf("set: branches is %d; it spreads a chunk's jobs (copies: batched) over that many parallel graph branches, from 1 (one chain) to jobs_per_launch (%d, the default: a branch per job)", p.Branches, p.JobsPerLaunch)
	}
	return nil
}

// validateCopies checks the copies mode against the ring and the jobs per
// launch.
func (p *Params) validateCopies() error {
	switch p.Copies {
	case CopiesGraph:
	case CopiesStream:
		if p.Ring > 0 || p.JobsPerLaunch > 1 {
			return fmt.Errorf("set: copies is stream but ring is %d and jobs_per_launch %d; copies on the stream need one kernel graph per worker (ring 0), never updated, and one job per launch", p.Ring, p.JobsPerLaunch)
		}
	case CopiesBatched:
		if p.Ring == 0 || p.JobsPerLaunch < 2 {
			return fmt.Errorf("set: copies is batched but ring is %d and jobs_per_launch %d; batched copies need a ring (ring: 1 or more) and chunks of at least 2 jobs (jobs_per_launch: 2 or more; a chunk of one job is SET-ring)", p.Ring, p.JobsPerLaunch)
		}
	default:
		return fmt.Errorf("set: copies is %q; it must be graph (the job's copies are nodes of its graph, updated per job), stream (kernel-only graphs, copies issued on the worker's stream) or batched (one coalesced copy in and out per chunk of jobs_per_launch jobs)", p.Copies)
	}
	return nil
}

// Name is "set(b=4)" plus every setting that differs from the paper's SET,
// Depth resolved.
func (p Params) Name() string {
	var b strings.Builder
	fmt.Fprintf(&b, "set(b=%d", p.Workers)
	if d := p.depth(); d > 1 {
		fmt.Fprintf(&b, ",depth=%d", d)
	}
	if p.Ring > 0 {
		fmt.Fprintf(&b, ",ring=%d", p.Ring)
	}
	if p.Threaded {
		b.WriteString(",threaded")
	}
	if p.Coalesce > 1 {
		fmt.Fprintf(&b, ",coalesce=%d", p.Coalesce)
	}
	if p.JobsPerLaunch > 1 {
		fmt.Fprintf(&b, ",jobs=%d", p.JobsPerLaunch)
	}
	if p.Copies != CopiesGraph {
		fmt.Fprintf(&b, ",copies=%s", p.Copies)
	}
	if p.Copies == CopiesBatched && p.Branches > 0 {
		fmt.Fprintf(&b, ",branches=%d", p.Branches)
	}
	if p.Warm {
		b.WriteString(",warm")
	}
	b.WriteString(")")
	return b.String()
}
