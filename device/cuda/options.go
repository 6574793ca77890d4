package cuda

import "time"

// Options configure Open.
type Options struct {
	// Ordinal is the GPU to open (0 is the first).
	Ordinal int
	// Modules maps module names to CUDA images (fat binaries, cubins or
	// PTX), as workloads/kernels.Images() returns them. A device.Kernel's
	// Module names one of them. This package does not import workloads, so
	// the caller passes them in.
	Modules map[string][]byte
	// Trace turns timeline recording on from the start (device.Tracer's
	// EnableTrace turns it on and off later).
	Trace bool
	// QueueSpin is how long a host thread's Queue.Get polls an empty queue
	// before it parks (0 means DefaultQueueSpin, negative parks at once).
	// Handing work between host threads through a parked thread costs a
	// futex wake-up (tens of microseconds; docs/results/gpu-runs.md);
	// spinning costs a core.
	QueueSpin time.Duration
}

// Summary describes one GPU the driver sees, for listings such as
// `gpusched devices`.
type Summary struct {
	Ordinal           int
	Name              string
	ComputeCapability string // "9.0"
	SMs               int
	MemoryBytes       int64
	DriverVersion     string // CUDA version the driver supports, "13.0"
}
