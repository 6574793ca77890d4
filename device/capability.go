package device

import (
	"io"
	"time"
)

// DependencyQueue is ACS-HW's hardware dependency queue: a window of slots in
// the GPU front end that holds kernels with their upstream lists and dispatches
// each one, without a host round trip, once its upstream kernels are done. A
// Host that has one implements this interface; find it by type assertion.
type DependencyQueue interface {
	// DQSlots is the window size N.
	DQSlots() int
	// DQSubmit inserts l into the window. deps are ids returned by earlier
	// DQSubmit calls (the host's possibly stale view of the kernels it still
	// considers in flight); the hardware drops those already done. It blocks
	// the host thread while the window is full, and returns l's id.
	DQSubmit(l *Launch, deps []uint64) (id uint64, err error)
	// DQDone reports whether kernel id has completed, as a cheap
	// memory-mapped read of the queue's completion counter.
	DQDone(id uint64) bool
	// DQSynchronize blocks until the window is empty.
	DQSynchronize() error
}

// ColdCacher is a simulated Host that must be told when the host program has
// done work of its own that evicts the driver's data from the CPU's caches
// (a runner's reset and input poisoning before a timed run): a simulator
// does not time Go code, so it cannot see that work, while a GPU's next call
// pays for it (host.cold_call_ns). A real device does not implement it; find
// it by type assertion.
type ColdCacher interface {
	// ColdCaches marks the caches cold: the next call that submits work
	// pays the refill.
	ColdCaches()
}

// Stats summarizes the last Run of a device that can observe itself.
type Stats struct {
	Kernels   int64
	Blocks    int64
	Copies    int64
	Callbacks int64
	Races     int
	// MeasuredLaunches, ProfiledLaunches and EstimatedLaunches count the
	// kernel launches a simulator timed from a kernel profile's measured
	// point (the same launch measured alone), from a profile's fitted
	// model, and from their Work estimate (all 0 on a GPU, which times
	// nothing).
	MeasuredLaunches  int64
	ProfiledLaunches  int64
	EstimatedLaunches int64
	// DeviceTime is from the first command's start to the last command's end.
	DeviceTime time.Duration
	// SMUtilization is the mean fraction of SM capacity (resident warps over
	// maximum warps) in use over DeviceTime.
	SMUtilization float64
	// Utilization samples the same fraction over time.
	Utilization []UtilSample
}

// UtilSample is SM utilization over [T, T+Width).
type UtilSample struct {
	T, Width time.Duration
	Busy     float64 // fraction of SMs with at least one resident block
	Warps    float64 // fraction of warp slots occupied
}

// Observer is a device that reports on its last Run.
type Observer interface {
	Stats() Stats
	Races() []Race
}

// Tracer is a device that records a timeline of its runs.
type Tracer interface {
	// EnableTrace turns recording on or off for following runs.
	EnableTrace(on bool)
	// WriteTrace writes the last run's timeline as Chrome trace event JSON
	// (Perfetto and chrome://tracing open it).
	WriteTrace(w io.Writer) error
}

// OpRef names one command in a race report.
type OpRef struct {
	Name       string
	Stream     int
	Start, End time.Duration
}

// Race is two commands that overlapped in time, or that nothing orders,
// while one wrote bytes the other accessed.
type Race struct {
	A, B   OpRef
	Lo, Hi uint64 // the conflicting device address range
	// Unordered marks a race found by ordering alone: nothing orders A and
	// B (no stream order, event, synchronization, graph edge, dependency
	// or counter), although this run happened to run them apart in time.
	// False for two commands that overlapped in time.
	Unordered bool
}
