// Package kineto imports PyTorch profiler traces as workload files
// (workloads/file): `gpusched import kineto TRACE.json [--et ET.json]`.
//
// TRACE.json is the Chrome trace torch.profiler exports (Kineto): kernel
// events carry grid, block, registers per thread, shared memory, duration,
// stream and the correlation id of the runtime call that launched them;
// memcpy and memset events their bytes; ProfilerStep#N ranges mark
// iterations, one of which is imported (the last by default), as one step.
//
// Dependencies. With ET.json, the execution trace of the same run
// (torch.profiler.ExecutionTraceObserver), each operation gets the data
// accesses of the operator that launched it (kernel -> runtime call by
// correlation id -> innermost enclosing aten operator -> execution-trace
// node by record function id -> its input and output tensors), so the
// model's independent branches become independent. Storages are renamed
// on every new write, since the execution trace names a storage by its
// data pointer, which the caching allocator reuses. Kernels of one
// operator keep their launch order. Without ET.json (or where an operation
// has no operator), operations keep their stream's order, and streams are
// joined where the trace records cudaStreamWaitEvent (Kineto's
// synchronization events); a multi-stream trace without those is ordered
// conservatively (each operation after what had finished on the other
// streams when it started). Kernels launched by a CUDA graph launch are
// ordered by what the recording shows ran after what.
//
// The device's figures come from the trace's deviceProperties, except the
// SM clock and per-architecture limits, which the caller supplies
// (gpusched import takes them from the matching device config).
//
// Sources: the Kineto trace fields (pytorch/kineto, libkineto
// MetadataFieldCatalog.h and CuptiActivity.h) and the execution trace
// layout (pytorch, torch/csrc/profiler/standalone/execution_trace_observer.cpp).
package kineto
