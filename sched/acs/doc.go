// Package acs is ACS, out-of-order kernel scheduling for input-dependent
// kernel graphs (Durvasula et al., "ACS: Concurrent Kernel Execution on
// Irregular, Input-Dependent Computational Graphs", arXiv 2401.12377, also
// ACE at PACT 2024), in its software form on any device and in its hardware
// form on a device with a hardware dependency queue (the simulator).
//
// ACS-SW. Every operation declares the byte
// ranges it reads and writes (its buffer arguments). Operations enter an
// input FIFO in program order, then a window of N slots (N = 32 by
// default). On insertion an operation's ranges are compared with those of
// every operation in the window: each read-after-write, write-after-read or
// write-after-write overlap puts the older operation on its upstream list.
// States go pending -> ready (upstream list empty) -> executing -> done;
// completion removes the operation from the window and from every upstream
// list. One window thread owns the window; K scheduler threads each own one
// stream and run at most one kernel at a time: take a ready kernel, launch
// it, synchronize the stream, report the completion. The window thread is
// charged the CPU cost of each insertion's dependency check with
// Host.Spend, interpolated from the paper's measurements (CheckCost).
//
// Beyond the paper, each a selectable variant (Params):
//
//   - completion "event": record an event after each launch and wait on
//     that event; "callback": enqueue a host function (cuLaunchHostFunc)
//     after each launch that posts the completion to the window thread, so
//     a scheduler thread never blocks on the device.
//   - inflight > 1: a pending kernel whose unfinished upstream kernels are
//     all already issued to one stream is issued behind them on that
//     stream, up to inflight kernels per stream: stream order enforces the
//     dependency, and the launch latency overlaps the upstream's run.
//   - waits (with inflight > 1): a pending kernel whose unfinished upstream
//     kernels have all been launched, on any streams, is launched at once
//     behind cuStreamWaitEvent on the event recorded after the last-issued
//     upstream kernel of each other stream, instead of after their
//     completions reach the host: the GPU resolves the dependency, as the
//     hardware queue of ACS-HW does, at the price of a record per launch
//     and a wait per cross-stream dependency.
//   - dispatch "shared": no window thread. The K scheduler threads share
//     the window under a lock (a queue holding one token): a thread that
//     learns of its kernel's completion takes the lock, retires the
//     kernel, inserts what the freed slots admit (paying the check), takes
//     its own next kernels and launches them, with no handoff between
//     host threads. A thread that finds the lock taken never waits for
//     it: it leaves its news in an inbox and the holder, acting as the
//     window thread for it, applies the news and sends it its next
//     kernels. Composes with completion, inflight and waits (not batch).
//   - handoff "batched": the window thread sends every kernel one
//     dispatch pass gives a thread in one message (a chain of jobs), and
//     under completion sync a thread reports every kernel one stream
//     synchronization finished in one message. Which kernels run where,
//     and when the window thread learns of their completion, is as with
//     one message per kernel (a thread launches every job waiting in its
//     queue before synchronizing; the window thread retires every
//     completion waiting in its queue before dispatching); only the queue
//     operations, each a lock and possibly a wake-up on a GPU's host,
//     become fewer: on rl-physics with inflight 4 and 8 threads, 1.15
//     messages per kernel instead of 2 (event completion: 1.86).
//   - batch > 1: an idle thread takes a short run of kernels and launches
//     it as one CUDA graph: a ready kernel, the pending kernels whose
//     unfinished upstream kernels are all in the run (a chain, ordered by
//     capture), and, while more kernels are ready than threads are idle,
//     further ready ones. The graph is captured on the thread's stream and
//     instantiated at their real (or, on the simulator, modelled) cost;
//     with graph_cache, an instantiated graph of the same kernel sequence
//     is reused with its nodes' parameters updated.
//   - dispatch "graph": one host thread, one stream, no completion
//     tracking. Kernels enter the window in program order; a kernel is
//     ready once every upstream kernel in the window has been launched
//     (not finished), and each dispatch launches every ready kernel as
//     ONE graph of independent kernel nodes on the stream. The ready
//     kernels are an antichain (a kernel that conflicts with an older one
//     in the window is not ready), and stream order finishes every
//     earlier graph before a later one starts, so a kernel leaves the
//     window as soon as it is launched and the host never waits for the
//     GPU until the run's one final synchronize. Copies are issued on the
//     stream directly. Why: on the H100 VM (batch G4,
//     TestHostPrimitiveCosts) the rl-physics kernels last 2-3 us and one
//     stream is bound by the host's 4.3 us per cuLaunchKernel; every
//     threaded variant adds driver calls per kernel and gains only from
//     launching on several threads, which the driver scales
//     sub-linearly (best 1.49x geomean on rl-physics). A one-kernel graph
//     launches back to back at 2.5 us against 5.6 us on a stream, and a
//     node update costs 0.6-1.3 us, idle or in flight, so a batch of w
//     kernels costs one graph launch and w node updates on one thread,
//     and its kernels run concurrently on the GPU. Measured since on an
//     H100 (device/cuda TestKernelNodeUpdateCosts), a graph launch costs
//     about 1.2 us per node even with no update, an update 0.7-1.0 us
//     when the node keeps its kernel and 1.5-1.8 us, with a launch dearer
//     by about 1.3 us per such node, when its kernel changes: 2-4 us per
//     kernel on the host, against 4.3-5.1 us per stream launch. With
//     graph_key "width" (the default) one graph per width w (w
//     independent nodes) is instantiated by Prepare for w = 1..N, from
//     calibrate's cal_empty (the shapes do not depend on the program, so
//     this uses no knowledge of it), and every batch updates each node to
//     its kernel's launch (SetKernelNode may change the kernel) before
//     launching; a batch's kernels go to the nodes that already launch
//     the same kernel where they can (about half the updates still change
//     the kernel on rl-physics; keeping several graphs per width and
//     picking the best-matching one cut that to a tenth without a
//     measurable gain on the H100, so it was not kept). An exec may
//     be updated while an earlier launch of it is still queued: CUDA
//     applies an update to later launches only ("already enqueued or
//     running launches are not affected"), as the simulator does. With
//     "kernels" the graphs are keyed by the batch's kernels (sorted by
//     name, then program order), captured and instantiated inside Run on
//     a miss, for drivers that refuse to change a node's kernel. The
//     batches depend only on the program and N, not on timing. N = 1 is
//     serial through one-node graphs: what the launch path alone gives,
//     without concurrency. Stats reports instantiations, cache hits, node
//     updates, batches and their mean width. Lanes k captures each batch
//     graph as min(k, w) chains of consecutive nodes instead of w
//     branches: batch J on the H100 (device/cuda
//     TestGraphTopologyLaunchCosts) found the "1.2 us per node" above to
//     be per parallel branch (16 kernel nodes: 1.70 us as one chain, 3.73
//     us on 4 branches, 14.17 us on 16), so fewer lanes cut the launch's
//     host cost at the price of running a batch's kernels k at a time.
//
// The window thread's real cost. On a GPU the window thread is one host
// thread that checks, hands off and retires every kernel, so its CPU time
// per kernel bounds ACS-SW's throughput whatever K is. The window keeps
// its memory across Runs and allocates nothing per kernel; each
// allocation's ranges are split into writes and reads, so a range that
// only reads is compared with the writes alone. BenchmarkSWHostCost runs
// the scheduler on a host-only device whose driver calls spin for their
// measured cost (a launch 4 us) and reports the window thread's time per
// kernel outside Queue.Get.
//
// ACS-HW. The window lives in the GPU's front end
// (device.DependencyQueue, found by type assertion on the Host). The CPU
// keeps a possibly stale list of the last M kernels it submitted, computes
// each new kernel's upstream ids against that list (charged like ACS-SW's
// check) and submits it; the hardware drops upstream ids already done,
// refuses inserts while a kernel more than M submissions old is unfinished,
// and dispatches ready kernels without a host round trip. On a device
// without the queue ACS-HW returns an error wrapping device.ErrUnsupported.
// One host thread checking and submitting every kernel is capped at one
// kernel per check plus submit (about 2 us), which short kernels (the
// rl-physics ones last about 1 us) do not hide; with HWParams.Checkers,
// C checker threads compute the upstream lists ahead (the list of the last
// M is fixed by program order, so kernel k's can be computed by any
// thread) and the submitting thread only submits, still in program order.
//
// Host threads coordinate only through device.Queue values and host
// callbacks, never through Go locks or channels: on the simulator host
// threads are coroutines in simulated time.
package acs
