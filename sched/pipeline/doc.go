// Package pipeline schedules pipelines of many independent jobs, each of
// which copies its input in from pinned host memory, runs one or a few
// kernels, and copies its result out (workloads/jobs builds such programs:
// step j is job j). It holds SET, the stream-event-triggered CUDA-graph
// pipeline of Li, Huang and Ogras (arXiv 2606.05495, Euro-Par 2026), and the
// four baselines that paper measures it against:
//
//   - Synchronous: one stream; issue a job, synchronize, repeat.
//   - Graph: a CUDA graph per job: capture, instantiate, launch,
//     synchronize, destroy.
//   - Batching: B jobs round-robin over B streams, one device synchronize
//     per batch, so every batch waits for its slowest job.
//   - Queue: B streams, each with a queue of jobs and a host thread that
//     issues one job and synchronizes its stream before the next.
//
// SET keeps the GPU fed without host round trips between jobs: B workers
// each own a stream, private device buffers and a graph of the job shape
// captured once; per job the dispatcher updates only the graph nodes whose
// parameters change, launches the graph and enqueues a host callback that
// returns the worker to a free pool (a device.Queue: nothing polls). Idle
// workers steal queued jobs from peers and retarget them to their own
// buffers; a worker's buffers are reused only after its callback has fired,
// so jobs in flight never share memory (the simulator's race checker
// verifies it; on a GPU every job's output is compared with its CPU
// reference).
//
// Params configures SET. DefaultParams is the paper's SET; the other
// settings are gpusched's refinements, named in the scheduler's Name: Depth
// jobs in flight per worker, Threaded (a host thread per worker), Coalesce
// (one callback per few jobs), Ring (several graph execs per worker, each
// updated only once complete), JobsPerLaunch (a chain of jobs per graph
// launch), Copies stream (kernel-only graphs, copies on the stream) or
// batched (a chunk of consecutive jobs per launch with one coalesced copy
// each way, Branches parallel branches), Warm (every exec launched once in
// Prepare) and Gaps (timing events that measure the paper's overhead
// model). Params.Validate names every bad combination.
//
// ChunkGraph (gpusched's, chunk_graph.go) runs the whole pipeline as one
// graph: SET-batch's coalesced chunks, pipelined inside it.
//
// Use: New(p) returns a SET that is a sched.Preparer: Prepare analyzes the
// program (every job of one shape, each job's written buffers its own and
// without initial contents; buffers no job writes are shared constants),
// allocates and captures outside the timed run; Run dispatches; Cleanup
// releases. Every scheduler here reports Metrics(): the makespan, jobs per
// second, t_schedule (host time in scheduling calls), t_wait and the
// scheduling share of SET's model T_measured = T_ideal + intra-batch gaps +
// inter-batch gaps. In an experiment file:
//
//	schedulers:
//	  - kind: queue
//	    params: {b: 8}
//	  - kind: set                   # the paper's SET
//	    params: {b: 8}
//	  - kind: set                   # SET-batch
//	    params: {b: 4, ring: 2, jobs_per_launch: 16, copies: batched, warm: true}
//
// Why each refinement exists and what the GPU runs showed:
// docs/history/set.md; the paper's claims: docs/REFERENCES.md.
package pipeline
