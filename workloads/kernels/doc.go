// Package kernels holds gpusched's CUDA C kernels and their compiled images.
//
// Convention:
//
//   - One module per file: workloads/kernels/<module>.cu is module <module>
//     (a lower-case identifier). Every kernel is an extern "C" __global__
//     function, so its name in the image is the name in the source; the
//     generator refuses C++-mangled entry points.
//   - `make kernels` (go run ./workloads/kernels/gen) compiles every .cu with
//     nvcc into <module>.fatbin, holding SASS for sm_80 and sm_90 and
//     compute_80 PTX that the driver JIT-compiles on other GPUs, and writes
//     zz_<module>.go: one device.Kernel per function with the registers per
//     thread and static shared memory that ptxas reports for sm_90, the
//     SHA-256 of each source and image, and the nvcc release used.
//   - Images and zz_*.go files are committed, so building and testing need
//     no CUDA toolkit. The package's tests check that every source still
//     hashes to what its image was built from; CI (.ci/cuda-check.sh) also
//     recompiles with the recorded nvcc release and compares the images byte
//     for byte (nvcc's fat binaries are deterministic when built from the
//     same relative file name, which the generator ensures).
//
// To add a kernel: write it as extern "C" __global__ in an existing module or
// a new <module>.cu, run `make kernels` (`make cuda-deps` first if nvcc is
// missing), commit the .cu, the .fatbin and zz_<module>.go together, and
// look it up with Lookup(module, name). Schedulers reach kernels only through
// these descriptors; the CUDA backend loads Images() as modules (device/cuda
// takes them in its Options so that it does not import workloads), and the
// simulator uses Regs and StaticShared for occupancy.
package kernels
