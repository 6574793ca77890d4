// Package device is the CUDA stream model in Go: the one interface that every
// scheduler in gpusched programs against, and that two backends implement: a
// discrete-event GPU simulator (device/sim) and the real CUDA driver
// (device/cuda, build tag cuda).
//
// The model is a faithful subset of the CUDA driver API, because what a
// scheduler can do on a GPU is exactly what CUDA lets it do:
//
//   - Work is issued from host threads. A Device runs one main host thread
//     (Device.Run); it may start more (Host.Go). Every Host call costs host
//     time, and a blocking call (stream, event or device synchronize, Get on a
//     Queue) blocks only its own host thread. Host threads coordinate through
//     Queues and host callbacks that the device provides, never through
//     sync.Mutex: on the simulator host threads are coroutines in simulated
//     time, and a Go lock would stall simulated time itself.
//   - Streams (with priority) run their commands in order; events order
//     commands across streams; kernels, copies and host callbacks are
//     commands. Stream capture turns the commands issued to a stream (and to
//     streams that join it through events) into a Graph that can be
//     instantiated once and launched many times.
//   - A Launch names a Kernel, a grid, a block, dynamic shared memory and its
//     arguments. A buffer argument carries its access mode and, optionally, a
//     byte range. That one annotation serves three users: the CUDA backend
//     marshals the pointer, dependency-tracking schedulers (ACS, KeSCo) derive
//     dependencies from it, and the simulator's race checker verifies that no
//     two conflicting commands ever overlap in time.
//
// Launches that CUDA would reject are rejected by ValidateLaunch with the same
// reason, on every backend. Optional capabilities (the simulator's hardware
// dependency queue for ACS-HW, statistics, timelines) are separate small
// interfaces found by type assertion; a strategy that needs one the device
// lacks reports ErrUnsupported rather than faking it.
package device
