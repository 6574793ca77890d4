package sim

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/configs"
	"github.com/gpusched/gpusched/device"
)

// Config is a simulated device: the hardware description (Info) plus every
// cost the simulator charges. Times are in nanoseconds, bandwidths in
// decimal gigabytes per second. Every field is required in a config file,
// except the few marked optional (their YAML tag has omitempty): those
// default to 0, so a config written before they existed keeps its meaning.
// An unknown or missing field is an error (see ParseConfig).
type Config struct {
	// Name is the config's short name ("h100"), as LoadConfig finds it.
	Name string `yaml:"name"`
	// Info is the hardware: SMs, per-SM limits, queues, engines, clocks.
	Info device.Info `yaml:"info"`
	// Host is what each driver call costs the calling host thread.
	Host HostCosts `yaml:"host"`
	// FrontEnd is the GPU's command processing: latencies from a command
	// to its first block.
	FrontEnd FrontEndCosts `yaml:"front_end"`
	// SM is the arithmetic model of one SM.
	SM SMModel `yaml:"sm"`
	// Copy is the copy engines' model.
	Copy CopyModel `yaml:"copy"`
	// DQ is ACS-HW's hardware dependency queue.
	DQ DQModel `yaml:"dependency_queue"`
	// TileSync (optional) is what posting to and polling tile counters
	// costs a block of a synchronized launch (tilesync.go).
	TileSync TileSyncCosts `yaml:"tile_sync,omitempty"`
	// ProfileName (optional) names the kernel profile that times the
	// kernels it covers: an embedded one (configs/profiles/NAME.yaml) or a
	// .yaml path, relative to the config file. LoadConfig loads it into
	// Profile.
	ProfileName string `yaml:"profile,omitempty"`
	// Profile is the loaded kernel profile (nil: every kernel is timed
	// from its Work estimate). LoadConfig shares one parsed Profile among
	// the configs that name the same file: read it, never change it.
	Profile *Profile `yaml:"-"`
}

// HostCosts are host-side CPU costs per driver call, in nanoseconds. Each
// is charged to the calling host thread; the last DriverLockFraction of it
// is spent holding the driver lock that all host threads share (the CUDA
// driver serializes part of every call on the context), the rest runs in
// parallel with other threads' calls.
type HostCosts struct {
	// DriverLockFraction is the part of every call's cost spent holding the
	// driver lock, 0 to 1. It sets how launch throughput scales with host
	// threads: at most 1/(fraction x launch_ns) launches per second.
	DriverLockFraction float64 `yaml:"driver_lock_fraction"`
	LaunchNs           float64 `yaml:"launch_ns"`       // cuLaunchKernel
	CopyEnqueueNs      float64 `yaml:"copy_enqueue_ns"` // cuMemcpy*Async
	RecordNs           float64 `yaml:"record_ns"`       // cuEventRecord
	WaitNs             float64 `yaml:"wait_ns"`         // cuStreamWaitEvent
	QueryNs            float64 `yaml:"query_ns"`        // cuEventQuery, cuStreamQuery, cuEventElapsedTime
	SyncCallNs         float64 `yaml:"sync_call_ns"`    // entering a stream, event or device synchronize
	WakeupNs           float64 `yaml:"wakeup_ns"`       // a blocked host thread resuming after the GPU signals it
	HostFuncNs         float64 `yaml:"host_func_ns"`    // cuLaunchHostFunc
	// HostFuncAfterGraphNs, when set, is what cuLaunchHostFunc costs
	// instead of HostFuncNs when its stream's last command is a graph
	// launch still pending at the thread's clock (SET's per-job host
	// function, issue #18 session 20: calibrate "SET's job loop" measures
	// 4.2-5.3 us behind a graph launch against 2.7 on an idle stream).
	HostFuncAfterGraphNs float64 `yaml:"host_func_after_graph_ns,omitempty"`
	StreamCreateNs       float64 `yaml:"stream_create_ns"` // cuStreamCreateWithPriority
	EventCreateNs        float64 `yaml:"event_create_ns"`  // cuEventCreate
	DestroyNs            float64 `yaml:"destroy_ns"`       // destroying a stream, event, graph or graph exec
	MallocNs             float64 `yaml:"malloc_ns"`        // cuMemAlloc
	FreeNs               float64 `yaml:"free_ns"`          // cuMemFree
	AllocHostNs          float64 `yaml:"alloc_host_ns"`    // cuMemAllocHost (pageable allocations are charged the same)
	CaptureNs            float64 `yaml:"capture_ns"`       // a command recorded into a graph while capturing
	// ColdCallNs (optional) is what the first call that submits work (a
	// launch, graph launch, copy or event record) pays on top of its own
	// cost after the host's own work has left its caches cold, once: the
	// runner marks that point before every timed run (ColdCaches). On a
	// GPU the first calls of a timed run are that much slower than their
	// twins, and 8 MiB of host writes before a launch slow it alike while
	// none of the reset's CUDA calls does (calibrate "per-run reset",
	// calibration-h100.md session 16). 0 (left out): nothing, as before
	// the field existed.
	ColdCallNs float64 `yaml:"cold_call_ns,omitempty"`
	// GraphLockFraction (optional) is the part of every graph-building
	// call's cost (stream capture begin and end and the commands captured,
	// instantiate, graph and exec destroy; not graph launches or node
	// updates, which scale with threads as launches do) spent holding the
	// driver lock; 0 (left out): driver_lock_fraction, as before the field
	// existed. It sets how graph building scales with host threads (ACS-SW
	// batch > 1 builds graphs on every scheduler thread at once).
	GraphLockFraction float64 `yaml:"graph_lock_fraction,omitempty"`
	// GraphLockHandoffNs (optional) is what a graph-building call that
	// finds the driver lock held by another host thread pays on top of
	// waiting for it (the contended lock's hand-off: on an H100 four
	// threads building graphs at once take longer per graph than one
	// alone); 0 (left out): nothing, as before the field existed.
	GraphLockHandoffNs float64 `yaml:"graph_lock_handoff_ns,omitempty"`
	// CaptureEventNs (optional) is what an event record or a stream wait
	// costs while capturing (a fork or join of the captured streams); 0
	// (left out): capture_ns, as before the field existed.
	CaptureEventNs       float64 `yaml:"capture_event_ns,omitempty"`
	InstantiateBaseNs    float64 `yaml:"instantiate_base_ns"`     // cuGraphInstantiate, fixed part
	InstantiatePerNodeNs float64 `yaml:"instantiate_per_node_ns"` // cuGraphInstantiate, per node
	GraphLaunchNs        float64 `yaml:"graph_launch_ns"`         // cuGraphLaunch, fixed part (all of it when the optional graph_launch_* fields are 0)
	SetNodeNs            float64 `yaml:"set_node_ns"`             // cuGraphExec*NodeSetParams
	ThreadStartNs        float64 `yaml:"thread_start_ns"`         // Host.Go: starting another host thread
	DQSubmitNs           float64 `yaml:"dq_submit_ns"`            // ACS-HW: DQSubmit's host side
	DQPollNs             float64 `yaml:"dq_poll_ns"`              // ACS-HW: DQDone's memory-mapped read

	// HandoffNs (optional) is what a host thread blocked in a Queue Get
	// takes to resume once another host thread or a host callback Puts a
	// value (an operating-system wake-up, not the GPU's); 0 charges
	// WakeupNs, as before the field existed.
	HandoffNs float64 `yaml:"handoff_ns,omitempty"`
	// CallbackHandoffNs (optional) is the same when a host callback Puts
	// (the driver's callback thread wakes the waiting thread); 0: as
	// HandoffNs.
	CallbackHandoffNs float64 `yaml:"callback_handoff_ns,omitempty"`
	// QueueLockNs and QueueLockHandoffNs (optional): every Queue Put, Len
	// and Get (the taking of a value) by a host thread holds one lock all
	// the Run's queues share (device/cuda: one mutex per Run) for
	// QueueLockNs, charged to the thread; one that finds it held by
	// another thread waits for it and pays QueueLockHandoffNs more (the
	// contended mutex's hand-off). Host callbacks' Puts pay nothing. 0
	// (left out): queue calls are free, as before the fields existed.
	QueueLockNs        float64 `yaml:"queue_lock_ns,omitempty"`
	QueueLockHandoffNs float64 `yaml:"queue_lock_handoff_ns,omitempty"`
	// QueueCallNs and QueueCallPerThreadNs (optional): what a host
	// thread's Queue Put or Len takes of its own time, QueueCallNs plus
	// QueueCallPerThreadNs for every other live host thread of the Run
	// (device/cuda's queues share one mutex per Run, whose line the other
	// threads' queue calls and spinning Gets keep moving). No lock is
	// modelled, so the cost does not feed on itself. A Put's value is
	// there once the call ends (a Get waiting for it resumes HandoffNs
	// after: set HandoffNs to the measured ping-pong's hand-off less one
	// Put, so that the ping-pong stays as measured); a Len reads the
	// queue as it begins; host callbacks' Puts pay nothing. 0 (left
	// out): free, as before the fields existed.
	QueueCallNs          float64 `yaml:"queue_call_ns,omitempty"`
	QueueCallPerThreadNs float64 `yaml:"queue_call_per_thread_ns,omitempty"`
	// UntimedRecordNs (optional) is cuEventRecord's cost for an event
	// made with DisableTiming (ACS-SW's events: no timestamp to write);
	// 0 (left out): record_ns, which calibrate measures on a timing
	// event, as before the field existed.
	UntimedRecordNs float64 `yaml:"untimed_record_ns,omitempty"`
	// DriverLockHandoffNs (optional) is what a driver call that is not a
	// graph build (those pay graph_lock_handoff_ns) pays on top of
	// waiting when it finds the driver lock held by another host thread
	// (the woken waiter's hand-off: several scheduler threads, each
	// launching and synchronizing on its own stream, launch slower than
	// one). Meanwhile the lock is idle, and the thread that released it
	// takes it back for a call of its own whose locked part fits there
	// (a mutex's releasing thread re-acquires it before the woken waiter
	// runs: a record right after a launch does not queue behind the other
	// threads' launches). 0 (left out): neither, as before the field
	// existed.
	DriverLockHandoffNs float64 `yaml:"driver_lock_handoff_ns,omitempty"`
	// DriverSwitchNs (optional) is what a driver call (not a graph
	// build) pays for each other host thread that has made a driver call
	// since this thread's last one: several threads taking turns on the
	// driver each launch slower than one thread alone, even when no two
	// calls overlap (session 17, ACS-SW's scheduler threads on the GPU: a
	// launch that began while no other thread was in a launch took 4.8 us
	// with one scheduler thread, 6.0 with two, 6.7 with four, 8.7 with
	// eight). 0 (left out): nothing, as before the field existed.
	DriverSwitchNs float64 `yaml:"driver_switch_ns,omitempty"`
	// DriverSwitchThreads (optional) makes DriverSwitchNs count every
	// other host thread of the Run that has made a driver call (starting
	// a host thread is none) and not returned, whether or not it called
	// since this thread's last call:
	// on the GPU a scheduler thread's launch costs what the number of
	// threads taking turns on the driver gives, however its calls fall
	// between theirs (session 17's call_stats: 6.7 / 6.8 / 7.0 us with 0
	// / 1 / 2 others launching at the time, four threads; inside ACS-SW,
	// where the window thread paces them, as much as in calibrate's
	// "launches over threads", where they never wait; session 20).
	// false (left out): only those that called since, as before the field
	// existed.
	DriverSwitchThreads bool `yaml:"driver_switch_threads,omitempty"`
	// RecordSkipsSwitch (optional): an event record pays no
	// DriverSwitchNs (it still counts as a driver call): on the GPU a
	// record right after the thread's launch costs what it costs alone
	// whatever the threads (calibrate "launches over threads": 523, 541,
	// 596, 758 ns on 1, 2, 4, 8 threads on an H100; session 15). false
	// (left out): records pay it like every driver call, as before the
	// field existed.
	RecordSkipsSwitch bool `yaml:"record_skips_switch,omitempty"`
	// ParkAfterNs and ParkedWakeNs (optional): a host thread that has
	// waited in a Queue Get longer than ParkAfterNs when its value arrives
	// has parked (device/cuda's Get spins, then sleeps in the kernel), and
	// resuming costs it ParkedWakeNs on top of the hand-off. The wait runs
	// from the Get to the value's arrival (the Put plus the hand-off).
	// ParkedWakeNs 0 (left out): no hand-off pays it, as before the fields
	// existed.
	ParkAfterNs  float64 `yaml:"park_after_ns,omitempty"`
	ParkedWakeNs float64 `yaml:"parked_wake_ns,omitempty"`
	// ParkedWakePerDecadeNs (optional) is what a parked Get's wake grows
	// by for every tenfold of its wait beyond 300 us (calibrate "long
	// waits": the sleep deepens), on top of ParkedWakeNs or
	// ParkedCallbackWakeNs. 0 (left out): the wake costs the same however
	// long the wait, as before the field existed.
	ParkedWakePerDecadeNs float64 `yaml:"parked_wake_per_decade_ns,omitempty"`
	// ParkedCallbackWakeNs (optional) is ParkedWakeNs when a host callback
	// Puts (the driver's thread wakes the waiting one); 0: ParkedWakeNs.
	ParkedCallbackWakeNs float64 `yaml:"parked_callback_wake_ns,omitempty"`
	// SyncParkAfterNs and SyncParkedWakeNs (optional) are the same for a
	// host thread blocked in a stream, event or device synchronize (the
	// driver's own spin, then sleep) on top of wakeup_ns; 0: wakeup_ns
	// alone.
	SyncParkAfterNs  float64 `yaml:"sync_park_after_ns,omitempty"`
	SyncParkedWakeNs float64 `yaml:"sync_parked_wake_ns,omitempty"`
	// BusyStreamNs (optional) is what every launch, event record and
	// stream wait costs more per other stream with commands pending (the
	// driver's work grows with the streams in use); 0: nothing, as before
	// the field existed.
	BusyStreamNs float64 `yaml:"busy_stream_ns,omitempty"`

	// The optional fields: 0 when a config leaves them out, which charges
	// cuGraphLaunch graph_launch_ns flat and every node update
	// set_node_ns, as before they existed (and a config that sets the
	// per-node fields but leaves graph_launch_branch_ns out charges
	// per node only, as before that field existed).
	//
	// GraphLaunchBranchNs (optional) is what cuGraphLaunch costs per
	// parallel branch of the graph, on top of GraphLaunchNs: the branches
	// are the width of its node DAG (the fewest chains covering every node,
	// equal to the most nodes no path orders), counted once at
	// instantiation. A chain of kernels is one branch, w independent kernels
	// w. Measured on an H100, the driver's cost grows with branches, hardly
	// with kernels along a branch.
	GraphLaunchBranchNs float64 `yaml:"graph_launch_branch_ns,omitempty"`
	// GraphLaunchOpenEndNs (optional) replaces the per-branch charge of
	// the branches beyond the graph's roots (its width less its nodes
	// without dependencies): with it set, cuGraphLaunch charges each root
	// GraphLaunchBranchNs and each open end (a node without successors)
	// beyond the roots' count this, and branches forked and joined back
	// nothing. The driver's cost follows roots and open ends, not width
	// (calibrate "graph launch of joins", session 27 on an H200: N
	// independent kernels 1.1 us each, a kernel feeding N open one-kernel
	// branches 0.18-0.27 us a branch, the same branches joined into one
	// tail kernel nothing). 0 (left out): every branch of the width
	// GraphLaunchBranchNs, as before the field existed.
	GraphLaunchOpenEndNs float64 `yaml:"graph_launch_open_end_ns,omitempty"`
	// GraphLaunchJoinNs (optional) is what cuGraphLaunch costs per
	// dependency beyond a chain cover of the graph (edges - nodes +
	// branches: the forks and joins between branches, 2 (w - 1) for w
	// branches between a head and a tail node, none in a chain or in
	// independent nodes), on top of the per-branch cost. Fitted on
	// SET-batch's chunk graphs, whose launch calls grow faster with
	// branches than those of independent kernels (graph_launch_branch_ns's
	// probe).
	GraphLaunchJoinNs float64 `yaml:"graph_launch_join_ns,omitempty"`
	// GraphLaunchNodeNs (optional) is what cuGraphLaunch costs per kernel
	// node of the graph, on top of GraphLaunchNs (and of the per-branch
	// cost); host-function nodes are charged the same.
	GraphLaunchNodeNs float64 `yaml:"graph_launch_node_ns,omitempty"`
	// GraphLaunchCopyNodeNs (optional) is what cuGraphLaunch costs per
	// memcpy node of the graph, on top of GraphLaunchNs.
	GraphLaunchCopyNodeNs float64 `yaml:"graph_launch_copy_node_ns,omitempty"`
	// GraphLaunchCopyEdgeNs (optional) is what cuGraphLaunch costs per
	// dependency edge of the graph with a memcpy node at either end, on
	// top of the nodes' costs (issue #18, session 20: calibrate "SET's job
	// loop"'s job shapes, chains of copies and kernels, launch longer the
	// more edges meet a copy; SET's copy-kernel-copy jobs and SET-batch's
	// chunks, whose copies fan out to every job's kernels).
	GraphLaunchCopyEdgeNs float64 `yaml:"graph_launch_copy_edge_ns,omitempty"`
	// GraphLaunchCopyFanEdgeNs (optional) replaces GraphLaunchCopyEdgeNs
	// for a memcpy node's edges out to non-copy nodes past its first
	// (calibrate "graph launch of upload fans", session 27: an upload
	// feeding N one-kernel branches costs the launch 0.4-0.8 us an edge
	// more than a kernel feeding them). 0 (left out):
	// GraphLaunchCopyEdgeNs, as before the field existed.
	GraphLaunchCopyFanEdgeNs float64 `yaml:"graph_launch_copy_fan_edge_ns,omitempty"`
	// GraphLaunchKernelChangeNs (optional) is what cuGraphLaunch costs per
	// kernel node whose kernel (module and function) differs from the one
	// it launched the exec's previous time (or was instantiated with):
	// the driver sets the node up again for the new function.
	GraphLaunchKernelChangeNs float64 `yaml:"graph_launch_kernel_change_ns,omitempty"`
	// GraphLaunchChangedNodeNs (optional) is what cuGraphLaunch costs per
	// kernel node whose launch configuration (kernel, grid, block or
	// dynamic shared memory) differs from the one it launched the exec's
	// previous time (or was instantiated with), on top of
	// GraphLaunchKernelChangeNs for a changed kernel: the driver uploads
	// the node again. A node whose update changed only its arguments costs
	// nothing more. Measured by calibrate's "graph exec updates" (ACS-SW's
	// dispatch graph updates its nodes before every launch).
	GraphLaunchChangedNodeNs float64 `yaml:"graph_launch_changed_node_ns,omitempty"`
	// GraphLaunchStreamAfterNs (optional): a cuGraphLaunch call longer
	// than this hands the device its nodes as it goes, not at its end: the
	// driver submits a big graph in parts, and the device runs the first
	// while the host submits the rest. Node i of n (in capture order)
	// reaches the device this long into the call or i+1/n of the way
	// through it, whichever is later; the last at the call's end. A call
	// up to this long hands everything over at its end, as every call did
	// before the field (calibrate "graph launch beside its first nodes",
	// session 26 on an H200: a 25 us call does not overlap its graph's
	// root; session 29, chunk-graph-gpu on an H200: a whole pipeline's
	// graph finishes 17-80 us after its 550-1,070 us launch call returns
	// where the device alone needs 400 or more). 0 (left out): never.
	GraphLaunchStreamAfterNs float64 `yaml:"graph_launch_stream_after_ns,omitempty"`
	// SetNodeKernelChangeNs (optional) is what a
	// cuGraphExecKernelNodeSetParams that changes the node's kernel costs
	// on top of SetNodeNs.
	SetNodeKernelChangeNs float64 `yaml:"set_node_kernel_change_ns,omitempty"`

	// The host costs of many streams and of graphs built per step
	// (optional: 0, as before they existed).
	//
	// StreamSwitchNs is what a launch, event record or stream wait costs
	// more when the host thread's previous one went to another stream (a
	// round-robin scheduler moves once per kernel; serial never).
	StreamSwitchNs float64 `yaml:"stream_switch_ns,omitempty"`
	// WaitPendingNs is what a stream wait costs more when the event's last
	// record is on another stream and not yet complete (the driver sets up
	// a semaphore wait instead of passing it).
	WaitPendingNs float64 `yaml:"wait_pending_ns,omitempty"`
	// RecordPendingNs is what an event record costs more when the event's
	// previous record is not yet complete (an event recorded again and
	// again, as round-robin's event pool reuses one along a chain).
	RecordPendingNs float64 `yaml:"record_pending_ns,omitempty"`
	// FirstGraphLaunchPerNodeNs is what the first cuGraphLaunch of a
	// graph exec costs more per node than later ones (the driver uploads
	// the fresh exec).
	FirstGraphLaunchPerNodeNs float64 `yaml:"first_graph_launch_per_node_ns,omitempty"`
	// InstantiatePerArgNs is what cuGraphInstantiate costs per argument
	// of each kernel node, on top of instantiate_per_node_ns (measured
	// with an argument-less kernel).
	InstantiatePerArgNs float64 `yaml:"instantiate_per_arg_ns,omitempty"`
	// InstantiatePerCopyNodeNs (optional) is what cuGraphInstantiate
	// costs per copy node instead of instantiate_per_node_ns (measured on
	// kernel nodes): calibrate "small graph builds" instantiates graphs of
	// copies alone and around kernels for about a third of a kernel
	// node's cost per copy. 0 (left out): instantiate_per_node_ns, as
	// before the field existed.
	InstantiatePerCopyNodeNs float64 `yaml:"instantiate_per_copy_node_ns,omitempty"`
	// DestroyExecPerNodeNs is what destroying a graph exec costs per node,
	// on top of destroy_ns.
	DestroyExecPerNodeNs float64 `yaml:"destroy_exec_per_node_ns,omitempty"`
	// InstantiatePerSegmentNs and DestroyExecPerSegmentNs (optional) are
	// what cuGraphInstantiate and destroying the exec cost per segment of
	// the graph, on top of the per-node costs: a segment is a maximal
	// path of the graph's transitive reduction whose nodes are linked one
	// to one (a node with one predecessor that has one successor
	// continues it; every other node begins one), so a chain is one
	// segment and a graph of parallel branches pays for every node that
	// forks, joins or starts a branch. 0 (left out): nothing, as before
	// the fields existed.
	InstantiatePerSegmentNs float64 `yaml:"instantiate_per_segment_ns,omitempty"`
	DestroyExecPerSegmentNs float64 `yaml:"destroy_exec_per_segment_ns,omitempty"`
	// SyncSwitchNs (optional) is what a stream synchronize costs more, on
	// top of sync_call_ns, when the host thread's previous stream
	// synchronize was of another stream (a scheduler's end of run
	// synchronizing every stream it used, in turn); sync_call_ns is
	// measured on one stream again and again.
	SyncSwitchNs float64 `yaml:"sync_switch_ns,omitempty"`
}

// FrontEndCosts are GPU-side latencies, in nanoseconds.
type FrontEndCosts struct {
	// LaunchLatencyNs is from a kernel command reaching the front end (the
	// end of the host's launch call) to its first block on an idle GPU.
	LaunchLatencyNs float64 `yaml:"launch_latency_ns"`
	// BackToBackNs is from a kernel's predecessor completing (in its stream,
	// or ahead of it in its hardware queue) to its first block.
	BackToBackNs float64 `yaml:"back_to_back_ns"`
	// GraphLaunchLatencyNs is from a graph launch being dispatched to the
	// first block of its root nodes.
	GraphLaunchLatencyNs float64 `yaml:"graph_launch_latency_ns"`
	// GraphNodeNs is from a graph node's last predecessor completing to the
	// node's first block: the per-node cost of a graph, lower than
	// BackToBackNs.
	GraphNodeNs float64 `yaml:"graph_node_ns"`
	// GraphCopyNodeNs (optional) is what a memcpy node of a graph adds,
	// on the device, to the delay before it starts (graph_node_ns, or
	// graph_launch_latency_ns for a root): the graph executor sets a
	// copy up on a copy engine more slowly than a kernel. 0 (left out):
	// nothing, as before the field existed.
	GraphCopyNodeNs float64 `yaml:"graph_copy_node_ns,omitempty"`
	// CopyPollNs and KernelPollNs (optional) are how often the GPU looks
	// again at a command that reached it while the work it follows (its
	// stream predecessor, or the work before the record a stream wait
	// before it waited on) still ran on another engine: a copy behind a
	// kernel or behind the other copy engine's copy (CopyPollNs), a
	// kernel behind a copy (KernelPollNs). Such a command starts at the
	// first multiple of the period after its arrival by which that work
	// has ended, a copy then paying copy.idle_latency_ns (waits.go). 0
	// (left out): it starts when the work ends, as before the fields
	// existed.
	CopyPollNs   float64 `yaml:"copy_poll_ns,omitempty"`
	KernelPollNs float64 `yaml:"kernel_poll_ns,omitempty"`
	// EngineWaitNs (optional, with the poll fields): a command that
	// arrived before the work it waits on started starts that long after
	// the work ends, not at a poll (waits.go). 0 (left out): it polls.
	EngineWaitNs float64 `yaml:"engine_wait_ns,omitempty"`
	// GraphDispatchNs (optional) is the device's time per node of a
	// launched graph: its executor releases the launch's nodes one at a
	// time, at least this far apart (a fork's branches, the parallel
	// nodes of a wide graph), in the order they become ready. 0 (left
	// out): all at once, as before the field existed.
	GraphDispatchNs float64 `yaml:"graph_dispatch_ns,omitempty"`
	// GraphBranchQueueNs (optional) is what each branch that OTHER running
	// graph launches run beside their streams adds to the spacing of a
	// launch's releases after each release that begins a branch (a fork's
	// successors, the roots of a graph of several): CUDA runs a graph's
	// concurrent branches on internal streams that share the hardware
	// queues with the user's streams, and a launch of width w holds w-1 of
	// them while it runs. A graph alone, chains, a branch's later nodes and
	// a device of one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1) cost
	// nothing. It is what 16-branch chunk graphs lose on 2-8 streams and
	// not on one stream or one connection (calibrate's "set-batch chunks"
	// and "set-batch deep chunks", sessions 13-14). 0 (left out): none, as
	// before the field existed.
	GraphBranchQueueNs float64 `yaml:"graph_branch_queue_ns,omitempty"`
	// GraphBranchQueueBusy (optional) makes graph_branch_queue_ns count
	// only the branches the other running launches are busy on (those
	// with a node released to the device and not finished) rather than
	// every branch they hold: a graph reached on its stream whose
	// branches wait inside it for their predecessors (a chunk's copy in, a
	// long head) holds nothing up on the GPU (calibrate "reached graphs'
	// waiting branches", session 30). false (left out): every branch, as
	// before the field existed.
	GraphBranchQueueBusy bool `yaml:"graph_branch_queue_busy,omitempty"`
	// EventWaitNs (optional) is what a stream wait on an event recorded on
	// another stream adds to the dependency, on top of the back-to-back
	// gap: the waiting stream passes the wait this long after the record
	// completes. 0 (left out): as soon as it completes, as before the
	// field existed. Measured by calibrate's cross-stream chains.
	EventWaitNs float64 `yaml:"event_wait_ns,omitempty"`
	// EventWaitDoublingNs (optional) makes that wait grow with the streams
	// that have commands pending when the record completes (n, at least
	// 2): event_wait_ns + event_wait_doubling_ns x (log2 n - 2), at least
	// 0, so that event_wait_ns is the wait at 4 streams (the mean of the
	// measurement over 2, 4 and 8). 0 (left out): event_wait_ns flat.
	EventWaitDoublingNs float64 `yaml:"event_wait_doubling_ns,omitempty"`
	// PendingQueueNs (optional) is what each OTHER hardware queue whose
	// head command has arrived but cannot start (a wait on an unfinished
	// record, a command behind its stream's running kernel) adds to a
	// kernel's back-to-back gap, beyond the first such queue, up to
	// PendingQueueMaxNs: the front end serves the queues with work in
	// turn, so a stream's kernels start later while other streams wait
	// (calibrate's "runs over streams", session 17: paths in a chain over
	// 4-64 streams cost 36-127 us more device time than one stream, as
	// much with 2 as with 20 us kernels, saturating with the 8 queues).
	// 0 (left out): none, as before the field existed.
	PendingQueueNs float64 `yaml:"pending_queue_ns,omitempty"`
	// PendingQueueMaxNs bounds PendingQueueNs's sum per kernel (0: no
	// bound).
	PendingQueueMaxNs float64 `yaml:"pending_queue_max_ns,omitempty"`
	// RecordsPassQueue (optional) lets an event record whose stream
	// predecessor still runs leave its hardware queue at once: it
	// completes when that predecessor does, and the commands of other
	// streams behind it on the queue go on. false (left out): the record
	// holds the queue until its stream predecessor ends, as before the
	// field existed. Fitted on calibrate's "records over streams" (one
	// kernel and a record per stream on 2-32 streams released at once).
	RecordsPassQueue bool `yaml:"records_pass_queue,omitempty"`
	// CallbackNs is how long the driver's callback thread takes to run a
	// host callback and release its stream (callbacks run one at a time).
	CallbackNs float64 `yaml:"callback_ns"`
	// CallbackWakeNs (optional) is how much later a host callback starts
	// when the callback thread is idle as its stream reaches it (no
	// callback running or queued): the thread sleeps, and the device's
	// completion has to wake it. A callback queued behind another one
	// (back to back on a stream, or from another stream while one runs)
	// does not pay it. Its stream stays blocked until the callback ends,
	// and what it Puts is handed off after that. 0 (left out): no wake,
	// as before the field existed.
	CallbackWakeNs float64 `yaml:"callback_wake_ns,omitempty"`
	// CallbackReleaseNs (optional) is how long the driver's callback
	// thread takes, after a host callback has run, to release the work
	// already queued behind it on its stream: that stream stays blocked
	// for this long, and a callback that becomes ready meanwhile waits
	// for the release (without a wake); one already waiting when the
	// callback ran starts as it returns (a simplification of one thread
	// doing both). A stream with nothing queued behind the callback, or
	// with another host callback next, pays nothing. What the callback
	// Puts is handed off at once, so a host thread waiting on it does
	// not pay it. 0 (left out): the stream is released as the callback
	// ends, as before the field existed.
	CallbackReleaseNs float64 `yaml:"callback_release_ns,omitempty"`
	// CallbackReleaseHoldsStream (optional): a stream with nothing queued
	// behind a host callback when it ran is still held for
	// callback_release_ns (the callback thread itself is not), so that work
	// the callback's own Put brings, a host thread it wakes launching on
	// the same stream, waits until the function has returned and the
	// stream is released: on an H200 a graph launched once a host
	// function's Put arrived starts within 2 us of one queued behind it
	// (calibrate "graphs behind a host function", session 30). false (left
	// out): such a stream is free at once, as before the field existed.
	CallbackReleaseHoldsStream bool `yaml:"callback_release_holds_stream,omitempty"`
	// CallbackReleaseHostWaitNs (optional): a callback release
	// (callback_release_ns) that begins while a host thread is inside a
	// driver call waits for the call to return and this much more
	// (callbackhostcalls.go). 0 (left out): it does not wait, as before
	// the field existed.
	CallbackReleaseHostWaitNs float64 `yaml:"callback_release_host_wait_ns,omitempty"`
	// CallbackParkAfterNs and CallbackParkedWakeNs (optional): the
	// callback thread, idle longer than CallbackParkAfterNs (from the end
	// of its last callback or release to a callback becoming ready), has
	// parked, and its wake costs CallbackParkedWakeNs on top of
	// CallbackWakeNs: the callback, its stream and what it Puts all wait.
	// A host thread parked in the Get that callback's Put wakes pays only
	// what host.parked_callback_wake_ns adds beyond it (both wake from
	// the same idle machine). CallbackParkedWakeNs 0 (left out): no
	// callback pays it, as before the fields existed.
	CallbackParkAfterNs  float64 `yaml:"callback_park_after_ns,omitempty"`
	CallbackParkedWakeNs float64 `yaml:"callback_parked_wake_ns,omitempty"`
	// CallbackParkedWakePerDecadeNs (optional) is what the parked
	// callback thread's wake grows by for every tenfold of its idle time
	// beyond 300 us, as host.parked_wake_per_decade_ns for a Get; 0 (left
	// out): the same however long the idle, as before the field existed.
	CallbackParkedWakePerDecadeNs float64 `yaml:"callback_parked_wake_per_decade_ns,omitempty"`
	// CallbackCopyDelay (optional, 0 to 1) delays a host callback, as it
	// becomes ready, by this fraction of the pinned host copies' time left
	// then, up to CallbackCopyDelayMaxNs (callbackcopies.go): other
	// streams' copies in flight slow the callback path. 0 (left out): they
	// do not, as before the fields existed.
	CallbackCopyDelay      float64 `yaml:"callback_copy_delay,omitempty"`
	CallbackCopyDelayMaxNs float64 `yaml:"callback_copy_delay_max_ns,omitempty"`
	// MinBlockNs is the shortest duration of a block (an empty kernel's).
	MinBlockNs float64 `yaml:"min_block_ns"`
	// BlockDispatchNs is the GPU-wide block distributor's time per block:
	// the blocks placed at one instant start one after another, this far
	// apart (0: all at once). It bounds the block rate of grids of very
	// short blocks.
	BlockDispatchNs float64 `yaml:"block_dispatch_ns"`
}

// SMModel is the arithmetic model of an SM and the sharing of the memory
// system. A block's compute rate is FlopsPerCycle*clock times its warps over
// max(resident warps on its SM, SaturationWarps). Its memory rate is the
// smaller of MaxSMBandwidth times its warps over max(memory-moving warps on
// its SM, SMMemSaturationWarps) and info.mem_bandwidth times its warps over
// the memory-moving warps on the whole GPU: one SM alone draws at most
// MaxSMBandwidth, many SMs together at most mem_bandwidth. Both rates are
// fixed when the block starts. RetimeThreshold (retime.go) makes a
// profiled kernel's block rate follow its SM's and the GPU's residency.
type SMModel struct {
	FlopsPerCycle   float64 `yaml:"flops_per_cycle"`  // peak flops per cycle of one SM
	SaturationWarps int     `yaml:"saturation_warps"` // resident warps an SM needs to reach its peak rate
	// MaxSMBandwidth is the most device-memory bandwidth one SM draws,
	// bytes per second: the requests its load/store path keeps in flight
	// over the memory latency.
	MaxSMBandwidth float64 `yaml:"max_sm_bandwidth"`
	// SMMemSaturationWarps is the memory-moving warps an SM needs to draw
	// MaxSMBandwidth; fewer warps draw proportionally less.
	SMMemSaturationWarps int `yaml:"sm_mem_saturation_warps"`
	// FlopsFraction and BandwidthFraction (optional, 0 to 1) are the
	// fractions of the peak rates above that kernels achieve, fitted from
	// profiled kernels, for the kernels the Work estimate times; 0 (left
	// out) means 1, the peak, as before the fields existed.
	FlopsFraction     float64 `yaml:"achieved_flops_fraction,omitempty"`
	BandwidthFraction float64 `yaml:"achieved_bandwidth_fraction,omitempty"`
	// RetimeThreshold (optional, 0 to 0.5) turns on the residency rate
	// model (retime.go): a resident block of a profiled kernel is given
	// the end its remaining work takes at the co-residency factor of now
	// whenever its SM's or the GPU's residency moves that factor by more
	// than this fraction. 0 (left out): a block's duration is fixed when
	// it is placed, as before the field existed.
	RetimeThreshold float64 `yaml:"retime_threshold,omitempty"`
	// YoungerKernelWeight (optional, 0 to 1) is how much a resident warp
	// of a kernel activated AFTER a profiled kernel counts in that
	// kernel's co-residency factor, against its own and older kernels'
	// warps counting 1 (mixed.go): on the GPU the warps resident first
	// keep most of the SM. 0 (left out) means 1: every resident warp
	// counts alike, as before the field existed.
	YoungerKernelWeight float64 `yaml:"younger_kernel_weight,omitempty"`
	// LoadBandwidth (optional, bytes per second) turns on the memory-load
	// model (memload.go): a profiled block's bytes take 1 + D/LoadBandwidth
	// times as long at device-memory demand D, relative to the demand its
	// profile time was measured at. 0 (left out): off, as before the
	// field existed. It acts with retime_threshold > 0.
	LoadBandwidth float64 `yaml:"load_bandwidth,omitempty"`
	// SharedCarveoutKB (optional) are the shared-memory capacities an
	// SM's L1/shared split can be set to, in KiB, ascending, the last at
	// most info.shared_per_sm (Hopper: 0 8 16 32 64 100 132 164 196 228).
	// Set, an SM's capacity is chosen by the kernel whose blocks land on
	// it while it is empty (the smallest step holding its occupancy's
	// shared memory) and kept until it empties again (carveout.go). Left
	// out: every SM offers all of shared_per_sm to every kernel.
	SharedCarveoutKB []int `yaml:"shared_carveout_kb,omitempty"`
	// OlderPressureExponent (optional, 0 to 4) is a: a resident warp of a
	// profiled kernel o activated BEFORE a profiled kernel k counts
	// (p_o / p_k)^a in k's co-residency factor, p being each one's issue
	// pressure, its curve's mean rise per warp (mixed.go): a heavy older
	// kernel slows a later one more than the later one's own warps
	// would. 0 (left out): every older warp counts 1.
	OlderPressureExponent float64 `yaml:"older_pressure_exponent,omitempty"`
}

// CopyModel is the copy engines: each copy costs LatencyNs plus its bytes
// over the bandwidth of its direction. Device-to-device copies use the
// memory system (reading and writing each byte at mem_bandwidth).
type CopyModel struct {
	LatencyNs    float64 `yaml:"latency_ns"`
	HtoDGBps     float64 `yaml:"htod_gbps"`     // pinned host memory to device
	DtoHGBps     float64 `yaml:"dtoh_gbps"`     // device to pinned host memory
	PageableGBps float64 `yaml:"pageable_gbps"` // either direction through the driver's staging buffer
	// DtoDContention (optional, 0 to 2) is how much a device-to-device
	// copy and memory-moving kernels beside it slow each other
	// (bandwidth.go): 1 shares the memory bandwidth fully, 0 (left out)
	// not at all, as before the field existed.
	DtoDContention float64 `yaml:"dtod_contention,omitempty"`
	// DuplexSlowdown (optional, 1 to 4) is how much slower a pinned
	// host-to-device and a pinned device-to-host copy move their bytes
	// while both move at once (pcie.go). 0 (left out): each direction at
	// full speed whatever the other does, as before the field existed.
	DuplexSlowdown float64 `yaml:"duplex_slowdown,omitempty"`
	// QueuedLatencyNs (optional) replaces LatencyNs for a pinned or
	// pageable copy issued on a stream that waited for its host engine
	// behind another stream's copy, and BackToBackLatencyNs for one that
	// follows its own stream's copy on the engine without the engine
	// going idle between them (hostcopies.go). 0 (left out): LatencyNs,
	// as before the fields existed. Device-to-device copies always pay
	// LatencyNs (not measured).
	QueuedLatencyNs float64 `yaml:"queued_latency_ns,omitempty"`
	// IdleLatencyNs (optional) replaces LatencyNs for a pinned or
	// pageable copy that starts on a free engine the instant it reaches
	// the device, or at the poll that finds the kernel before it on its
	// stream ended (front_end.copy_poll_ns): it waited on nothing of its
	// own engine (hostcopies.go). 0 (left out): LatencyNs.
	IdleLatencyNs       float64 `yaml:"idle_latency_ns,omitempty"`
	BackToBackLatencyNs float64 `yaml:"back_to_back_latency_ns,omitempty"`
	// GraphLatencyNs (optional) replaces LatencyNs for a graph's pinned
	// or pageable copy node that follows a copy of the same launch on its
	// engine, chained or side by side, and was ready by the time that
	// copy ended (hostcopies.go). 0 (left out): LatencyNs, as before the
	// field existed.
	GraphLatencyNs float64 `yaml:"graph_latency_ns,omitempty"`
	// StreamRuns (optional): a host engine whose copy ends serves a copy
	// its stream issues at that instant before the copies queued from
	// other streams, and that copy pays BackToBackLatencyNs (hostcopies.go).
	// Only with DuplexSlowdown > 1 and two engines (pcie.go), where copies
	// queue on their engine; without, each copy is timed as it is issued.
	StreamRuns bool `yaml:"stream_runs,omitempty"`
}

// DQModel is ACS-HW's hardware dependency queue (Durvasula et al., arXiv
// 2401.12377): a window of Slots kernels in the front end.
type DQModel struct {
	Enabled        bool    `yaml:"enabled"`
	Slots          int     `yaml:"slots"`           // N, the window size
	StaleList      int     `yaml:"stale_list"`      // M: inserts wait while the oldest kernel in the window is more than M submissions old
	InsertCycles   int     `yaml:"insert_cycles"`   // front-end cycles per insertion (N in the paper)
	CompleteCycles int     `yaml:"complete_cycles"` // front-end cycles per completion update (N-1)
	DispatchNs     float64 `yaml:"dispatch_ns"`     // a ready kernel to its first block
}

// maxSMs is the most SMs a simulated device may have.
const maxSMs = 1 << 16

// ParseConfig decodes a device config strictly: every field must be
// present (except the optional ones, tagged omitempty, which default to
// 0), no unknown field may appear, and the values must be consistent
// and in range (Config.check, configcheck.go). Errors name source, line
// and field.
func ParseConfig(data []byte, source string) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		return nil, fmt.Errorf("%s: empty device config", source)
	}
	lines := map[string]int{}
	if err := checkFields(root.Content[0], reflect.TypeOf(Config{}), "", source, lines); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := c.check(); err != nil {
		if line := errorLine(err, lines); line > 0 {
			return nil, fmt.Errorf("%s:%d: %w", source, line, err)
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return &c, nil
}

// checkFields walks a YAML mapping against a struct type (or a sequence
// against a slice of structs): every field the struct declares must be
// present, unless its tag has omitempty (an optional field, 0 when
// absent), and every key must be a field. It records the line of every
// value under its dotted path in lines.
func checkFields(n *yaml.Node, t reflect.Type, path, source string, lines map[string]int) error {
	if path != "" {
		lines[path] = n.Line
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s:%d: %s must be a list", source, n.Line, path)
		}
		for i, item := range n.Content {
			if err := checkFields(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), source, lines); err != nil {
				return err
			}
		}
		return nil
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	where := path
	if where == "" {
		where = "the document"
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: %s must be a mapping", source, n.Line, where)
	}
	present := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		present[n.Content[i].Value] = n.Content[i+1]
	}
	known := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := strings.Split(f.Tag.Get("yaml"), ",")
		key := tag[0]
		if key == "-" {
			continue
		}
		if key == "" {
			key = strings.ToLower(f.Name)
		}
		known[key] = true
		full := key
		if path != "" {
			full = path + "." + key
		}
		v, ok := present[key]
		if !ok {
			if slices.Contains(tag[1:], "omitempty") {
				continue
			}
			return fmt.Errorf("%s:%d: missing field %s", source, n.Line, full)
		}
		if err := checkFields(v, f.Type, full, source, lines); err != nil {
			return err
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !known[k.Value] {
			full := k.Value
			if path != "" {
				full = path + "." + k.Value
			}
			return fmt.Errorf("%s:%d: unknown field %s", source, k.Line, full)
		}
	}
	return nil
}

// Marshal writes c as YAML that ParseConfig reads back (without the
// comments of the embedded files).
func (c *Config) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ConfigNames lists the embedded device configs, sorted ("a100", "h100" ...).
func ConfigNames() []string {
	ents, err := fs.ReadDir(configs.FS, "devices")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// DefaultConfig is the name of the default device config.
const DefaultConfig = "h100"

// LoadConfig loads an embedded config by name ("h100") or a file by path
// (anything ending in .yaml or .yml).
func LoadConfig(nameOrPath string) (*Config, error) {
	if strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml") {
		data, err := os.ReadFile(nameOrPath)
		if err != nil {
			return nil, fmt.Errorf("device config: %w", err)
		}
		c, err := ParseConfig(data, nameOrPath)
		if err != nil {
			return nil, err
		}
		return c, c.loadProfile(filepath.Dir(nameOrPath))
	}
	data, err := configs.FS.ReadFile("devices/" + nameOrPath + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("device config %q: no such embedded config (have %s) and not a .yaml path",
			nameOrPath, strings.Join(ConfigNames(), ", "))
	}
	c, err := ParseConfig(data, "configs/devices/"+nameOrPath+".yaml")
	if err != nil {
		return nil, err
	}
	return c, c.loadProfile("")
}
