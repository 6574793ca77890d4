// Package tiles holds the workloads of cuSync (Jangda et al., "A Framework
// for Fine-Grained Synchronization of Dependent GPU Kernels", CGO 2024,
// arXiv 2305.13450, section V): pairs of dependent tiled kernels whose
// consumer reads what its producer writes, built on the tensor-core kernels
// of workloads/kernels/tiles.cu.
//
//   - GPT-3's MLP as one GPU of an 8-way model-parallel layer runs it:
//     GEMM1 [T x 12288] x [12288 x 6144] with GeLU, then GEMM2
//     [T x 6144] x [6144 x 12288], T = batch x sequence from 1 to 2048.
//   - LLaMA-65B's MLP: GEMM1 [T x 8192] x [8192 x 2d] computing the gate and
//     up projections side by side, then GEMM2 [T x d] x [d x 8192] reading
//     silu(gate) * up (SwiGLU fused into its operand load), d = 2816.
//   - Pairs of 3x3 convolutions (stride 1, padding 1, ReLU) of ResNet-38's
//     and VGG-19's stages, 64 to 512 channels at 56 to 7 pixels, batch 1
//     to 32, as implicit GEMMs [n*h*w x 9*cin] x [9*cin x cout] (NHWC).
//
// A Stage describes one kernel launch (computation, sizes, thread-block
// tile); Stage.Op builds the program operation with null synchronization
// arguments (plain stream-ordered execution) and FromOp recovers the stage
// from an operation, which is how sched/tilesync finds producer/consumer
// pairs and fills in their counters. Stage.Work is the per-block cost the
// simulator charges: the tile's tensor-core arithmetic and its share of the
// launch's device-memory traffic.
//
// Kernels compute fp16 x fp16 products accumulated in fp32 (wmma 16x16x16
// fragments, a two-stage cp.async pipeline, 256 threads as 2 x 4 warps).
// The CPU references (GEMMRow, ConvPixels) accumulate the same fp16 inputs
// in float32 and round the activated result to fp16; Check compares sampled
// rows (or pixels) of both outputs with them within Tolerance (METHOD.md:
// relative error norm about 1e-3 to 1e-2 for 16-bit operands), the second
// kernel from the GPU's own intermediate so each kernel is judged alone,
// and rejects any unwritten element (outputs are NaN-poisoned before a
// run). Inputs are generated from the seed by a counter-based hash, so
// Bind and Check produce the same values without keeping them.
//
// Programs build at any size: the tests run both MLPs and a convolution
// pair at reduced sizes entirely against the CPU reference.
package tiles
