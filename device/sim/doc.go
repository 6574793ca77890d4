// Package sim is gpusched's discrete-event GPU simulator: a device.Device
// that runs the CUDA stream model in simulated time, at thread-block
// granularity, deterministically.
//
// # Model
//
// Engine. Time is an integer number of picoseconds (Time). One binary heap of
// value events ordered by (time, sequence) drives everything; equal-time
// events run first-in first-out, so a run is bit-for-bit repeatable.
//
// Host threads. Each host thread (the main function given to Run, and every
// function started with Host.Go) is a goroutine, but only one goroutine (the
// engine or one host thread) runs at a time, handing control over channels:
// host threads are coroutines in simulated time. Every Host call charges its
// cost (Config.Host) to the calling thread's clock; the last
// host.driver_lock_fraction of it is spent holding a driver lock shared by
// all host threads, so launch throughput grows with threads up to
// 1/(fraction x launch_ns), as measured on an H200. Commands take effect at the host
// timestamp the call ends at. A thread that is the only one alive runs ahead
// of the engine without yielding (its commands enter the event heap at their
// timestamps); with several threads, each acts only when no event and no
// other thread comes before its clock, so all host actions happen in global
// time order. Blocking calls (synchronize, Queue Get, a full dependency
// queue, a pageable copy) park the thread until the engine wakes it; a
// woken thread pays Host.WakeupNs.
//
// Front end. Streams map onto the hardware queues (connections) round-robin
// in creation order (stream id mod hardware_queues). Each queue processes
// its commands strictly in arrival order: a command whose stream
// predecessor still runs, whose event is not yet recorded, or that finds no
// free resident-grid slot (max_resident_grids) blocks every command behind
// it, whatever their stream: the false dependencies of real GPUs. A kernel's
// first block starts at max(arrival + launch_latency_ns, dispatch +
// back_to_back_ns).
//
// Block scheduler. Resident kernels with blocks left to place are ordered
// by a BlockPolicy (default PriorityLeftover: stream priority, then arrival);
// each scheduling pass lets every kernel place as many blocks as fit, within
// every per-SM limit of device.Info.Resources (threads, warps, blocks,
// registers per warp in allocation units, shared memory with its per-block
// reserve), spreading a grid breadth-first over SMs. Later kernels fill what
// is left. Blocks of one kernel placed on one SM at one instant form one
// batch with one completion event; a pass considers only SMs freed since the
// last pass (plus every SM for kernels that just arrived). With
// front_end.block_dispatch_ns > 0 the blocks placed at one instant start one
// after another, that far apart (a GPU-wide block distributor).
//
// Block duration, fixed when the block starts: the largest of Work.Cycles
// at the SM clock; Work.Flops at the block's share of its SM's rate
// (sm.flops_per_cycle x clock x its warps / max(resident warps on the SM,
// sm.saturation_warps)); Work.Bytes at its memory bandwidth; and at least
// front_end.min_block_ns. The bandwidth is the smaller of two shares, among
// the memory-moving warps (blocks with Bytes, not spinning): of its SM's
// sm.max_sm_bandwidth, its warps / max(memory warps on the SM,
// sm.sm_mem_saturation_warps), since one SM keeps only so many requests in
// flight; and of the device's mem_bandwidth, its warps / the memory warps
// on the whole GPU. A lone block is thus bound by its SM (a 4-warp block on
// the H100 config draws 25 GB/s, not 4/4224 of HBM), a full GPU by HBM.
// Shares are taken after every block placed at the same instant, and are
// not revised when co-runners finish (a documented simplification).
//
// Copies. Host-to-device and device-to-host copies use one engine each
// (one shared engine when copy_engines is 1), first come first served,
// latency plus bytes over the pinned bandwidth of their direction. Pageable
// copies run at pageable_gbps and block the calling host thread until done,
// as CUDA's staged copies do. Device-to-device copies read and write every
// byte at mem_bandwidth, on their own queue.
//
// Events, callbacks, queues. Record completes when its stream reaches it.
// Each record is numbered and its completion tracked on its own: a Wait,
// EventSynchronize or Query binds to the last record issued before the call
// and is satisfied exactly when that record completes, as in CUDA, so an
// event re-recorded on another stream whose record completes first releases
// nothing bound to the earlier record (a wait on an event never recorded
// binds to its first record: on CUDA it would silently do nothing, which
// hides an ordering bug; here the run ends in a DeadlockError naming the
// event if that record never comes). Elapsed uses each event's latest
// record. Host callbacks run one at a time on
// the driver's callback thread (callback_ns each), in engine context; they
// may Put to Queues, which wake host threads parked in Get.
//
// Graphs. Stream capture records kernels, copies and host functions as nodes
// (node indices count those commands in capture order; records and waits
// become edges). A stream joins a capture by waiting on an event recorded in
// it (fork) and must be joined back into the origin stream before
// EndCapture, or EndCapture fails with CUDA_ERROR_STREAM_CAPTURE_UNJOINED.
// Synchronizing a capturing stream fails with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture. A graph
// launch runs its nodes as their edges allow (not in stream order): roots
// start graph_launch_latency_ns after dispatch, every other node
// graph_node_ns after its last predecessor. Launches of one exec run one at
// a time; SetKernelNode and SetCopyNode affect later launches only, and
// SetKernelNode may change the node's kernel (as CUDA 12 allows): the node
// then runs the new launch, with its cost and its accesses. Host costs of
// graphs: cuGraphLaunch charges graph_launch_ns, plus
// graph_launch_branch_ns per parallel branch of the exec (the width of its
// node DAG: the fewest chains that cover its nodes, by Dilworth the most
// nodes no path orders, computed once at instantiation; a chain is one
// branch, w independent nodes w), plus graph_launch_node_ns per kernel or
// host-function node and graph_launch_copy_node_ns per copy node, plus
// graph_launch_kernel_change_ns per kernel node whose kernel (module and
// function) is not the one it ran at the exec's previous launch (or was
// instantiated with); SetKernelNode and SetCopyNode charge set_node_ns,
// plus set_node_kernel_change_ns when SetKernelNode changes the node's
// kernel. Those five fields are optional and 0 when a config leaves them
// out, which makes a graph launch cost graph_launch_ns whatever it holds
// (the model before they existed), and one that leaves only
// graph_launch_branch_ns out charges per node, whatever the graph's shape
// (the model before that field). The H100 and H200 configs set them from
// measurements on an H100, where the cost grows with branches and copy
// nodes, hardly with kernels along a branch (about 0.74 us + 0.81 us per
// branch + 1.43 us per copy node).
//
// ACS-HW. When dependency_queue.enabled, every Host also implements
// device.DependencyQueue: a window of N slots in the front end (Durvasula et
// al., arXiv 2401.12377). DQSubmit blocks while the window is full (or its
// oldest kernel is more than stale_list submissions old), costs
// insert_cycles of the queue's unit, drops upstream ids already done, and
// ready kernels go to the block scheduler dispatch_ns later with no host
// round trip; each completion costs complete_cycles.
//
// Spinning blocks. A block of a launch with Sync waits (holding its SM
// resources) until its counters reach their targets, increments its start
// counters (when Sync implements device.StartPoster), runs its Work, then
// increments its Post counters. If spinning blocks take the SMs their
// producers need, nothing progresses and Run returns a *device.DeadlockError
// naming the spinning kernels and counters, as the hardware would hang.
//
// Outputs. Stats (kernels, blocks, copies, callbacks, device time, SM
// utilization and its time series), Races, and a Chrome trace (WriteTrace).
// Races are of two kinds (WithRaceMode): every pair of kernels or copies
// that overlapped in time while one wrote bytes the other accessed, found by
// a per-buffer sweep, O(n log n); and every such pair that nothing orders,
// whenever it ran (Race.Unordered), found by vector clocks over streams and
// pooled agents (hb.go: stream order, event records, host synchronization,
// Go, queues, callbacks, graph edges, the dependency queue, cuSync
// counters), so a broken schedule is reported even when this run's timing
// kept the two commands apart. A
// launch whose Sync implements device.BlockAccess is checked block by
// block: each block's own byte ranges over the time it does its work
// (after its waits), against every other command, never against blocks of
// its own launch; so tile-synchronized kernels that overlap without
// touching unfinished bytes do not race, and a consumer block that reads a
// producer block's rows while they are written does (reported once per
// pair of commands, naming the blocks). When work
// remains and nothing can progress, Run returns a *device.DeadlockError
// naming the waiting streams, events, host threads and spinning kernels.
//
// # Limits
//
// What the model leaves out, knowingly: the front end dispatches any number
// of kernels per instant (no dispatch-rate limit beyond the latencies);
// block durations are fixed at placement (a block does not speed up when its
// co-runners finish); no caches (L2 is described, not modelled), no
// clock boosting or throttling; copies do not take memory bandwidth from
// kernels; device-to-device copies use no SMs; the simulator moves no data
// (kernels compute nothing, copies copy nothing: Program.Check is for GPUs);
// graph launches do not contend with stream commands for hardware queues;
// host costs are fixed per call, or per call, graph branch and graph node
// for graph launches (no cache or contention effects beyond the shared
// driver lock). Most host and front-end figures in configs/devices
// are estimates, marked as such; `gpusched calibrate` measures them on a
// real GPU.
//
// Sources: the CUDA C Programming Guide (streams, events, graphs, hardware
// queues, occupancy); /work/shared/REFERENCES.md for the device figures and
// the ACS and cuSync models; Akita/MGPUSim for the (time, sequence) engine.
package sim
