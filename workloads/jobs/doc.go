// Package jobs generates the pipeline workloads of SET (Li, Huang and Ogras,
// "stream-event-triggered CUDA-graph pipelines", arXiv 2606.05495, Euro-Par
// 2026; see the SET section of docs/REFERENCES.md): many independent jobs of one
// shape, each of which copies its input in from pinned host memory, runs one
// or a few kernels, and copies its result out into its own slot of a pinned
// host output buffer.
//
// The six workloads are the paper's: Sobel (edge magnitude of an image), SSSP
// (Bellman-Ford relaxation iterations on a random graph), BP (one
// back-propagation layer: forward pass and weight gradient), GEMM (tiled
// matrix multiply), KNN (distances, then selection of the k nearest) and
// Hotspot (Rodinia's thermal stencil, iterated). Their kernels are real CUDA C
// in workloads/kernels/jobs.cu; every job has a CPU reference in Go that
// Program.Check compares against, and every job gets its own seeded input.
//
// Program layout, which sched/pipeline relies on:
//
//   - Step j is job j. Its operations are: one HostToDevice copy of the job's
//     input slot of the host buffer "in" into the job's device buffer
//     "in[j]", the kernels, and one DeviceToHost copy from the job's device
//     buffer "out[j]" into slot j of the host buffer "out" (the Output).
//   - Every job has its own device buffers (in[j], out[j] and scratch ones),
//     all without initial contents: a job defines every byte it reads, so a
//     scheduler may retarget a job to other buffers of the same sizes.
//   - All jobs have the same shape: the same operations, kernels, grids and
//     sizes, differing only in buffers and host offsets, so one instantiated
//     CUDA graph serves every job once its node parameters are updated.
//
// Inputs are chosen so the references are exact where they can be: Sobel,
// SSSP, GEMM and KNN use small integer values held in float32, whose sums and
// products are exact in any order, so the GPU's results must match bit for
// bit; BP (sigmoid) and Hotspot (a real-valued stencil) are compared with a
// relative tolerance.
package jobs
