// Host shim: compiles workloads/kernels/rl.cu as plain C++ so that a test
// can run the kernels on the CPU, thread by thread, and compare them with
// the Go reference without a GPU. The rounding intrinsics map to single
// IEEE operations (compiled with -ffp-contract=off, so nothing is fused),
// which is what the GPU's __fmul_rn, __fdiv_rn and __fsqrt_rn compute.
#include <cmath>
#include <cstdint>

struct shim_dim3 { unsigned x, y, z; };
extern shim_dim3 blockIdx, threadIdx, blockDim;

#define __global__
#define __device__
#define __forceinline__ inline

static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fsqrt_rn(float a) { return std::sqrt(a); }
