// Package cudaemu runs nn programs on the CPU by emulating the CUDA kernels
// of workloads/kernels/nn.cu: the CUDA source itself is compiled as C++
// (cgo) with CUDA's built-ins defined by the emulator, and every launch of a
// program is executed from its marshaled arguments (the same 64-bit words
// the CUDA backend passes to cuLaunchKernel). Comparing the outputs with the
// workload's CPU reference (Program.Check) tests the kernels' indexing,
// barriers, warp shuffles and argument order without a GPU.
//
// Blocks run one after another. A kernel without barriers runs its threads
// sequentially; a kernel with __syncthreads or __shfl_xor_sync runs each
// CUDA thread of a block as a fiber (ucontext) and treats a barrier as a
// round in which every live thread advances to its next barrier. This is
// faithful for kernels whose live threads all reach the same barriers, as
// nn.cu's do; it does not model races or memory ordering.
//
// It needs a C++20 compiler, so it builds only with the cudaemu tag:
//
//	go test -tags cudaemu ./workloads/nn/cudaemu
package cudaemu
