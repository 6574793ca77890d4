// Package file reads workload files, gpusched's format for a recorded GPU
// workload (docs/WORKLOADS.md), and turns them into programs that replay
// the recording on a GPU and on the simulator.
//
// A file lists buffers, and steps of operations: kernels (grid, block,
// registers per thread, static and dynamic shared memory, the duration
// measured on the file's device and/or a work estimate, the buffer ranges
// read and written), copies and memsets, each with optional explicit
// dependencies (`after`) and its original stream. Load or Parse decode it
// strictly (unknown fields are errors with their lines) and Check rejects
// what cannot run (negative sizes, a block over the device's limits, an
// unknown buffer, a dependency cycle), naming the operation and its line;
// nothing half-loaded is returned.
//
// Program builds a workloads.Program in which every kernel and memset is a
// launch of the replay kernel (workloads/kernels/replay.cu) with the
// original's grid and block, shared memory padded so that as many blocks
// fit on an SM of the recorded device as did of the original's, each block
// resident for the recorded duration over the original's waves less the
// replay's measured overhead after its spin (the simulator's Cycles, at the
// recorded clock, put that overhead back, and never fall below the replay's
// measured floor), and the recorded accesses as its arguments; copies stay
// copies. Dependencies are what the accesses imply,
// as for every program; `after` edges are realized as accesses too (a
// kernel reads its predecessor's signature). The replay kernel hashes
// sampled bytes of what it reads into what it writes, and the program's
// Check recomputes those bytes on the CPU, so a schedule that breaks a
// dependency shows on a GPU as outputs that differ from the serial
// schedule's.
//
// Experiment files use it as `family: file` with `params: {path: W.yaml}`.
// gpusched import kineto writes such files from PyTorch profiler traces
// (workloads/kineto).
package file
