// Package pipeline schedules pipelines of many independent jobs, each of
// which copies its input in from pinned host memory, runs one or a few
// kernels, and copies its result out (workloads/jobs builds such programs:
// step j is job j). It holds SET, the stream-event-triggered CUDA-graph
// pipeline of Li, Huang and Ogras (arXiv 2606.05495, Euro-Par 2026), and the
// four baselines that paper measures it against:
//
//   - Synchronous: one stream; issue a job, synchronize, repeat.
//   - Graph: capture each job into a CUDA graph, instantiate, launch,
//     synchronize, destroy: a graph per job.
//   - Batching: B jobs round-robin over B streams, one device synchronize
//     per batch, so every batch waits for its slowest job (inter-batch gaps).
//   - Queue: B streams, each with a queue of jobs and a host thread that
//     issues one job and synchronizes its stream before the next.
//
// SET keeps the GPU fed without host round trips between a job and the next:
// B workers each own a stream, private device buffers and a graph of the job
// shape captured and instantiated once; per job the dispatcher only updates
// the graph nodes whose parameters change, launches the graph and enqueues a
// host callback that returns the worker to a free pool (a device.Queue, so
// nothing polls). Idle workers steal from peers' queues round-robin and
// retarget the stolen job to their own buffers; a worker's buffers are
// reused only after its callback has fired, so jobs in flight never share
// memory (the simulator's race checker verifies it, and on a GPU every job's
// output is compared with its CPU reference).
//
// gpusched's refinements of SET, each an option (the paper's SET is
// NewSET(b, 1) with none): Depth keeps several jobs in flight per worker,
// in order on its stream, so the GPU does not idle for the callback's host
// round trip (a graph update affects only later launches, and stream order
// keeps a buffer from being reused before its previous job is done);
// Threaded gives each worker its own host thread, so host-side issue runs in
// parallel up to the driver lock; Coalesce enqueues one completion callback
// per few jobs, because CUDA runs host callbacks on a single driver thread.
// Node updates are skipped when a node already holds the job's parameters.
//
// Ring (SET-ring) takes the graph updates off the dispatch path, as the
// paper's "per-worker queues of prepared jobs" suggest: each worker owns a
// ring of Ring instantiated graphs of the job shape, all over its private
// buffers and on its one stream. An exec is updated for the worker's next
// job (prepared) only once the completion callbacks report its previous
// launch complete, so no update ever touches an exec still in flight; a
// prepared job is dispatched with one graph launch (and one callback per
// Coalesce jobs, which a ring allows with one dispatcher too). Why: with
// Depth > 1 and one exec per worker, the exec is rewritten while earlier
// launches of it are queued, which the CUDA driver may serialize or stall
// on (an H200 run spent 38 to 187 us of host call time per SET+ job at
// b = 4 and 8, against Queue's 15 to 59 us), and the dispatcher pays every
// update between a completion and the next launch. Stream order still keeps a buffer from being reused before its
// job is done (a test launching the execs on separate streams is caught by
// the race checker), and a stolen job is retargeted into the thief's
// buffers and prepared in one of its execs. A worker steals only for a job
// it can launch at once, never to fill a spare exec (Ring > Depth).
// Threaded with Ring gives each worker a host thread that prepares and
// launches only its own execs. The simulator charges an update the same
// whether its exec is in flight or not, so there a ring costs what Depth
// alone does; its gain is for a GPU to show.
//
// JobsPerLaunch (SET-chain, with a ring) puts up to J jobs of a worker in
// one graph launch: each exec of the ring is a chain of J job slots over
// the worker's private buffers, captured as J consecutive jobs on the
// worker's stream, so slot i+1's copy-in runs after slot i's copy-out and
// the slots share the buffers safely (a test capturing the slots unordered
// is caught by the race checker). A dispatch takes up to J jobs (its own
// queue's front, or up to J stolen from one peer's queue and retargeted),
// updates the chain's changed nodes (usually two copy nodes per job, every
// update counted in node_updates) and launches it once; Depth and Coalesce
// count launches. A tail of n < J jobs runs in an n-slot chain: every
// ring position holds chains of 1 to J slots, all captured in Prepare.
// Why: measured on the H100 host (docs/results/raw/gpu-batch-e2-probe-
// spin200.tgz, r/primitives.txt; device/cuda/primitives_test.go), a
// cuGraphLaunch of a one-job graph (copy in, kernel, copy out) costs 7.1 us
// of host time, and back-to-back launches of it take 16.5 us per job on
// the GPU against 11.7 us for the same job as three stream operations
// (8.6 us of host calls); a copy-node update costs 0.6 to 0.7 us, in
// flight or not; several host threads reach 54k (1), 114k (2), 179k (4)
// and 192k (8) graph launches per second, while Queue already runs 72k to
// 152k jobs/s on sobel-256 at b = 2 to 8. With one job per launch SET is
// bound by the launch's host and device cost and cannot reach 1.44x over
// Queue at b = 8; J jobs per launch pay it once per J jobs. This is
// gpusched's refinement, not the paper's SET (its rows are labelled so).
//
// StreamCopies (SET-kgraph, option copies: stream) keeps graphs for the
// kernels only (set_kgraph.go): each worker's graph holds the job's kernels,
// captured once on the worker's stream over its private buffers, so its
// parameters never change and no node is ever updated; a job is dispatched
// as three operations on the worker's stream: a host-to-device copy into
// the worker's input buffer, a launch of the kernel graph, a device-to-host
// copy from the worker's output buffer into the job's host slot. Completion
// callbacks (coalesced as with Coalesce) feed the free pool as in SET, a
// stolen job is rebound to the thief's buffers (only its copies change),
// and Depth jobs of a worker share its buffers in stream order. It combines
// with Threaded, Depth, Coalesce and the single dispatcher, not with Ring
// or JobsPerLaunch. Why: the job graph's copy nodes are what makes it slow
// on a GPU. Measured on the H100 (docs/results/raw/gpu-batch-g4-h100-
// cusync-confirm-primitives.tgz, r/primitives.txt): a graph holding only
// the job's kernel runs back to back at 2.5 us per launch (the same kernel
// launched on a stream: 5.6 us of host call), but a graph holding only the
// job's two copies (pinned host to and from device) takes 10.7 us per
// launch on the GPU against 6.7 us for the same two copies issued as
// stream operations. This too is gpusched's refinement, not the paper's
// SET (which puts the whole job, copies included, in the graph); its rows
// are named set(...,copies=stream). Metrics: node_updates is 0 and
// t_schedule counts the host time of the copies as well as the launch.
//
// BatchedCopies (SET-batch, option copies: batched, with a ring and
// JobsPerLaunch J >= 2; set_batch.go) launches a chunk of up to J
// consecutive jobs as one graph with one copy in and one copy out per host
// copy of the job, whatever J is. It relies on the jobs' host slots being
// evenly strided (workloads/jobs puts job j's input at j x stride of the
// pinned input buffer and its output likewise; Prepare checks it and names
// a copy that is not): the inputs of jobs f to f+n-1 are then one range of
// the host buffer, copied into one per-worker batch buffer that holds slot
// i of the chunk at i x stride. The chunk's jobs run their kernels as
// parallel branches of the graph, slot i's over slot i's ranges of the
// batch buffers, between the coalesced copy in and the coalesced copy out
// (or, with Branches k, in k branches of consecutive slots, each branch's
// slots one after another: fewer branches, fewer nodes the launch must
// fork and join). Chunks are dealt round-robin and stolen whole; a dispatch updates only
// the copy nodes whose host offsets (or, for a short last chunk, lengths)
// change, at most one per host copy of the job, and launches once. A
// worker's ring positions share its batch buffers in the order of its one
// stream, as in SET-chain (tests launching them on separate streams, or
// sharing batch buffers among workers, are caught by the race checker).
// Why: on the H100 the copy nodes are the job graph's costly part (a graph
// of only a job's two 64 KB copies between pinned host memory and the
// device takes 10.7 us per launch on the GPU, the same copies on a stream
// 6.7 us), and SET-chain, which pays the launch once per J jobs, still ran
// J x 2 copy nodes serially in each chain and updated them all, reaching
// 0.91x of Queue. SET-batch runs 2 copy nodes per chunk, updates at most 2,
// and lets the chunk's kernels overlap. This too is gpusched's refinement,
// not the paper's SET; its rows are named set(...,copies=batched).
//
// Warm (option warm: true, any SET variant; set_warm.go) launches every
// graph exec of every worker once in Prepare, on the stream Run launches it
// on, and waits for those launches (SET-kgraph: one whole job per worker,
// its copies around the kernel graph). Why: a SET pipeline instantiates its
// worker graphs once and then runs thousands of jobs, so the steady state
// is what the paper measures; an experiment that makes a fresh scheduler
// per repetition of 256 jobs launches each exec only once or a few times
// inside its timed Run (a SET-batch exec per ring position and chunk
// length, once or twice), so one-time costs of an exec's or a fresh
// stream's first launches land in the measurement (on the H100, SET-batch
// spent about 72 us of host time per chunk launch in set-gpu-v5 where a
// warm launch of a 10-node graph costs 10-15 us; device/cuda's
// TestFirstLaunchCosts measures first launches). The warm-up launches run
// the jobs the execs were captured with, into the workers' buffers and
// those jobs' host output slots, which Run then writes again with the same
// results; so a runner that checks outputs must poison them after Prepare
// (experiments/set does). They are synchronized before Prepare returns, so
// on the simulator they cannot change the race checker's verdicts, and
// Run's simulated makespan stays within 2 ns of the cold run's (a test
// checks every variant). Off in NewSET; the experiments registry turns it
// on by default, since the runner's warm run (sched.Warm) reaches only the
// execs its jobs use. Its rows are named set(...,warm).
//
// Every scheduler reports Metrics() (a map by name): the makespan
// T_measured, throughput in jobs per second, t_schedule (host time inside
// scheduling calls, measured with the host thread's clock around them),
// t_wait (host time blocked in synchronization), and the scheduling share
// t_schedule / T_measured of SET's overhead model
// T_measured = T_ideal + intra-batch gaps + inter-batch gaps
// (with several host threads, t_schedule / (T_measured x threads)). With
// the Gaps option, a timing event before and after every job measures the
// model's terms on the device's clock: T_ideal (the time at least one job
// was in flight), intra-batch and inter-batch gaps.
//
// A program is accepted as a pipeline when every job has the same shape
// (operations, kernels, grids, sizes) and the device buffers each job writes
// are its own and have no initial contents; buffers no job writes are shared
// constants and are never retargeted.
package pipeline
