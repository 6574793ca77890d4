// Package cuda is gpusched's real backend: device.Device on the CUDA driver
// API of an NVIDIA GPU. It builds only with the build tag `cuda`; without the
// tag, Open and Devices report that the binary was built without CUDA, so
// every command can call them.
//
// Model (see package device for the stream model it implements):
//
//   - Context, devices, modules and memory go through
//     github.com/mumax/3/cuda/cu, whose calls panic on error; every such call
//     here is wrapped so that a failure comes back as a *device.APIError
//     naming the call and CUDA's error name. What mumax lacks (events,
//     stream flags and priorities, graphs and stream capture, host
//     callbacks) and the hot path (launches, copies, records, waits) are a
//     few lines of cgo against cuda.h in this package.
//   - A CUDA context is current per OS thread. Every host thread (Run's main
//     function and each Host.Go) is a goroutine locked to its OS thread with
//     the device's context made current there.
//   - The launch path allocates nothing: each Host owns C-allocated argument
//     scratch (kernelParams points at per-host values), kernel functions are
//     cached per Host, and device.ValidateLaunch runs before every launch so
//     that a launch CUDA would reject fails with the same words as on the
//     simulator.
//   - Host memory, pinned (cuMemAllocHost) or pageable, is C memory, so the
//     driver may keep pointers to it (asynchronous copies, graph nodes)
//     without breaking cgo's pointer rules.
//   - Host callbacks (cuLaunchHostFunc) reach Go through an exported
//     trampoline and a table of handles; no Go pointer is passed to C.
//   - Queues are a mutex and condition variables (host threads are real
//     threads here). Get polls an empty queue for up to Options.QueueSpin
//     (200 us) before it parks, as cuStreamSynchronize spins before it
//     yields: a parked handoff between two host threads costs a futex
//     wake-up of about 25 us on the VMs we measured, longer than the
//     kernels out-of-order and pipeline schedulers hand over. When every
//     live host thread is blocked in Get and no host callback is pending,
//     nothing can ever Put again: Run ends with a *device.DeadlockError,
//     as on the simulator.
//   - Instantiate uploads the graph exec (cuGraphUpload), so that its first
//     launch, often inside a scheduler's timed region, does not.
//   - Graphs: node i of a captured Graph is the i-th kernel, copy or host
//     callback captured (across every stream in the capture), found through
//     cuStreamGetCaptureInfo right after the command is issued.
//   - Handles behave as on the simulator: stream, event and graph ids count
//     from 0 per kind in creation order; stream priorities are clamped into
//     the device's range, as CUDA does; a copy from pageable memory cannot be
//     captured, and graph copy nodes need pinned memory.
//   - Tracing (device.Tracer): each command is bracketed by two events on its
//     stream; after the run, cuEventElapsedTime against a base event gives
//     its start and end, written as the same Chrome trace JSON as the
//     simulator (device.Timeline). A command's start is when its stream
//     reached it, which can precede its first block by the launch latency.
//
// Without a GPU or driver, Open returns an error wrapping device.ErrNoDevice
// that says why (cuInit's error name, or no devices). The binary links
// libcuda.so.1 (as mumax's package does), so a cuda-tagged binary needs the
// NVIDIA driver's library present to start at all; a binary built without
// the tag runs anywhere.
package cuda
