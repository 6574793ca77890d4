package device

import (
	"time"
)

// Device is one GPU behind the CUDA stream model.
type Device interface {
	// Info describes the hardware: SMs, per-SM limits, queues, engines, clocks.
	Info() Info

	// Run executes main as the main host thread and returns once main and
	// every host thread it started have returned. Work still queued on the
	// device when they return is drained before Run returns, so a schedule
	// that forgets to synchronize still completes; its makespan is whatever
	// the host measured. A deadlock (work remains, nothing can progress) is
	// returned as a *DeadlockError. Run may be called more than once; each call
	// starts from an idle device with no streams, events or buffers.
	Run(main func(h Host) error) error

	// Close releases the device (contexts, modules). It is safe to call twice.
	Close() error
}

// Host is the driver API as one host thread sees it. A Host must only be used
// by the host thread it was given to (the main function, or a function
// started by Go); its methods are not safe for concurrent use.
type Host interface {
	// Name is the host thread's name, used in traces and deadlock reports.
	Name() string

	// Now is the host thread's clock: time since Run started.
	Now() time.Duration

	// Spend charges d of host-side bookkeeping to this host thread (a
	// scheduler's dependency check, say). On the simulator it advances the
	// thread's clock; on a real GPU the work itself takes the time, so it is
	// a no-op.
	Spend(d time.Duration)

	// Go starts another host thread running fn. Run waits for it. An error it
	// returns becomes Run's error.
	Go(name string, fn func(h Host) error)

	// Memory.
	Malloc(bytes int64) (Buffer, error)
	Free(b Buffer) error
	AllocHost(bytes int64, pinned bool) (*HostMem, error)
	FreeHost(m *HostMem) error

	// Streams and events.
	NewStream(opt StreamOptions) (Stream, error)
	NewEvent(opt EventOptions) (Event, error)
	// Destroy releases a Stream, Event, Graph or GraphExec, as CUDA's
	// cuStreamDestroy and friends do.
	Destroy(r Resource) error

	// Commands, asynchronous with respect to the host.
	Launch(s Stream, l *Launch) error
	Copy(s Stream, c *Copy) error
	Record(e Event, s Stream) error
	Wait(s Stream, e Event) error
	// HostFunc enqueues fn to run on a driver thread once the commands
	// before it on s have completed (cuLaunchHostFunc). fn must not call the
	// Host; it may Put to Queues.
	HostFunc(s Stream, fn func()) error

	// Queries and blocking synchronization.
	Query(e Event) (done bool, err error)
	StreamQuery(s Stream) (idle bool, err error)
	EventSynchronize(e Event) error
	StreamSynchronize(s Stream) error
	Synchronize() error
	// Elapsed is the time between two recorded, completed events.
	Elapsed(start, end Event) (time.Duration, error)

	// Graphs. Between BeginCapture and EndCapture, commands issued to s (and
	// to streams that join the capture by waiting on an event recorded in
	// it) are recorded into a graph instead of run. Node indices in a Graph
	// follow capture order, counting every captured command.
	BeginCapture(s Stream) error
	EndCapture(s Stream) (Graph, error)
	Instantiate(g Graph) (GraphExec, error)
	GraphLaunch(x GraphExec, s Stream) error
	// SetKernelNode replaces kernel node i of an instantiated graph with
	// launch l (cuGraphExecKernelNodeSetParams). As cuda.h documents it
	// (11.8 and 12: "all nodeParams fields may change", the function's
	// owning context not), l may launch another kernel than the node's current one, from
	// any module loaded on the same device, with any grid, block and
	// shared memory that pass launch validation; an invalid launch is
	// rejected and leaves the node as it was. The update affects later
	// launches of x only: launches already enqueued or running keep the
	// node's previous launch.
	SetKernelNode(x GraphExec, node int, l *Launch) error
	// SetCopyNode replaces the parameters of copy node i of an instantiated
	// graph (cuGraphExecMemcpyNodeSetParams); the direction must not change.
	SetCopyNode(x GraphExec, node int, c *Copy) error

	// Queues between host threads and from callbacks to host threads.
	NewQueue(name string) Queue
	// Get blocks this host thread until q has a value (ok) or is closed
	// and empty (!ok).
	Get(q Queue) (v any, ok bool)
}

// Queue is a first-in first-out mailbox. Put and Close never block and may
// be called from host threads and from host callbacks.
type Queue interface {
	Put(v any)
	Close()
	Len() int
}

// Resource is anything Host.Destroy releases.
type Resource interface{ resource() }

// Stream is an in-order queue of commands.
type Stream interface {
	Resource
	ID() int
	Priority() int
}

// Event marks a point in a stream.
type Event interface {
	Resource
	ID() int
}

// Graph is a captured, not yet instantiated, graph of commands.
type Graph interface {
	Resource
	Nodes() int
}

// GraphExec is an instantiated graph, ready to launch.
type GraphExec interface {
	Resource
	Nodes() int
}

// StreamOptions are cuStreamCreateWithPriority's arguments. Priority follows
// CUDA: lower numbers are higher priority; 0 is the default and the lowest.
type StreamOptions struct {
	Priority int
	// Blocking streams synchronize with the legacy default stream; gpusched
	// never uses the default stream, so all streams are non-blocking unless
	// this is set. It is recorded for fidelity only.
	Blocking bool
}

// EventOptions are cuEventCreate's flags.
type EventOptions struct {
	DisableTiming bool
}

// Base is embedded by backend handle types to satisfy Resource.
type Base struct{}

func (Base) resource() {}
