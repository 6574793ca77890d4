// Package nn builds batch-1 DNN inference programs from real CUDA kernels
// (workloads/kernels/nn.cu) and evaluates them on the CPU with float32
// references of the same kernels.
//
// The model. A Net appends operations to a workloads.Program as a network is
// described layer by layer: every layer is one kernel launch (a convolution,
// a GEMM, a pool, an elementwise operation, a softmax, a layer norm ...) with
// its exact access set (each argument names the byte range it reads or
// writes) and its simulator cost (device.Work per block: the layer's flops
// and the bytes it moves, divided evenly among the launch's blocks; its
// scalar arguments, a convolution's Cin, H, W, Cout, Ho, Wo, KH, KW, stride,
// padding, groups and activation, are also the features by which a kernel
// profile times a launch it never measured from the nearest it did,
// docs/SIMULATOR.md "Kernel profiles"). Feature
// maps are NCHW with N = 1: a Tensor is a view of Shape ([C,H,W] for feature
// maps, [rows, cols] for matrices) at an element offset in a program buffer,
// so a channel slice is contiguous and concatenations are precise ranges.
//
// Buffers. Activations get a buffer each, named after the layer, so
// independent layers never share bytes and the dependency graph a scheduler
// derives from access sets is the network's data-flow graph. All weights live
// in one read-only arena buffer ("weights"), each weight a range of it, filled
// at bind time from a deterministic generator (He-scaled uniform values,
// zero mean per output unit, seeded by the net's seed and the weight's
// name), so the same seed gives the same bytes, and a separate net naming
// the same layers (a dynamic network's controller evaluated alone) gets the
// same weights. Buffers are keyed by name: a later step that names a layer again
// reuses its buffers (inputs processed one per step reuse their activations,
// as a framework's allocator would), while a name used twice within one step
// is an error.
//
// Steps. Ops go to the current step; NextStep opens a new one. Dynamic
// networks (dynamic-dnn) build one step per input and decide each step's
// structure from the CPU evaluation of the controller (Value), so the
// program's step structure differs per input exactly as the input dictates.
//
// Checking. Every appended launch has a CPU reference (ref.go); Reference
// evaluates the whole program in order on the CPU and Finish installs
// Program.Check, which compares every output buffer the GPU produced against
// it. An element passes when |gpu - ref| <= 5e-4 * (|ref| + max|ref|), max
// over the buffer: 5e-4 relative, with a floor that absorbs cancellation in
// long sums the GPU adds in another order (tree reductions). nn.cu compiles
// with -fmad=false, so products and sums round as on the CPU; what remains
// is CUDA's transcendental functions (expf, tanhf, erff: up to 2 ulp),
// compounding through deep input-dependent paths (docs/history/nn.md). NaN
// or infinite values always fail. Schedules are held to more: every
// scheduler's outputs must equal the serial schedule's bit for bit.
//
// The kernels themselves are checked without a GPU by workloads/nn/cudaemu,
// which compiles nn.cu as C++ and runs whole programs from their marshaled
// arguments (go test -tags cudaemu ./workloads/nn/cudaemu).
//
// Errors. Builder methods never panic on bad shapes or arguments: the first
// error is kept (Err), later calls return zero Tensors, and Finish reports
// it, naming the layer.
//
// Sources: the kernels follow the textbook definitions (direct convolution
// with groups for depthwise and grouped convolution, tiled GEMM, pooling,
// erf-GELU, softmax, layer norm as in Ba et al. 2016); the networks built on
// it are in workloads/dnn.
package nn
