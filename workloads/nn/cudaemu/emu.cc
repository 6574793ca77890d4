//go:build cudaemu

// CPU emulation of workloads/kernels/nn.cu: the CUDA source itself is
// compiled as C++ with CUDA's built-ins defined here. Kernels without
// barriers run their threads one after another; kernels with barriers or
// warp shuffles run each CUDA thread of a block as a fiber (see launch).
// Kernel arguments arrive as the 64-bit words the CUDA backend marshals
// (pointers, 32-bit integers and floats in the low bits, 64-bit integers).
#include <cmath>
#include <vector>
#include <memory>
#include <functional>
#include <cstdint>
#include <cstring>
#include <string>

struct dim3 { unsigned x = 1, y = 1, z = 1; };
static dim3 blockIdx;
static std::vector<dim3> tidx(1024);
static int cur;
#define threadIdx (tidx[cur])
static dim3 blockDim, gridDim;
// Fibers: every CUDA thread of a block is a ucontext coroutine of one OS
// thread; a barrier yields to the block's scheduler, which resumes every
// live thread once per round, so a round ends with all live threads at the
// same barrier (threads that returned no longer take part, as on a GPU).
// A warp shuffle is two such rounds: write, then read the partner's value.
#include <ucontext.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
static ucontext_t schedCtx;
static std::vector<ucontext_t> fibers;
static std::vector<std::vector<char>> stacks;
static std::vector<char> finished;
static float shflSlots[1024];
static std::function<void()> kernelFn;

static void yieldToScheduler() { swapcontext(&fibers[cur], &schedCtx); }
static inline void __syncthreads() { yieldToScheduler(); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline float __shfl_xor_sync(unsigned, float v, int off) {
	int tid = threadIdx.x + threadIdx.y * blockDim.x;
	shflSlots[tid] = v;
	yieldToScheduler();
	float r = shflSlots[tid ^ off];
	yieldToScheduler();
	return r;
}

#include "../../kernels/nn.cu"

static void fiberEntry() {
	int t = cur;
	tidx[t] = dim3{(unsigned)(t % blockDim.x), (unsigned)((t / blockDim.x) % blockDim.y), (unsigned)(t / (blockDim.x * blockDim.y))};
	kernelFn();
	finished[t] = 1;
	swapcontext(&fibers[t], &schedCtx);
}

// launch runs a grid whose kernel synchronizes (barriers, shuffles) with
// one fiber per CUDA thread.
static void launch(dim3 g, dim3 b, std::function<void()> k) {
	gridDim = g; blockDim = b;
	kernelFn = k;
	int n = b.x * b.y * b.z;
	fibers.assign(n, ucontext_t{});
	stacks.resize(n);
	for (auto& st : stacks) st.resize(64 << 10);
	for (unsigned bz = 0; bz < g.z; bz++) for (unsigned by = 0; by < g.y; by++) for (unsigned bx = 0; bx < g.x; bx++) {
		blockIdx = dim3{bx, by, bz};
		finished.assign(n, 0);
		for (int t = 0; t < n; t++) {
			getcontext(&fibers[t]);
			fibers[t].uc_stack.ss_sp = stacks[t].data();
			fibers[t].uc_stack.ss_size = stacks[t].size();
			fibers[t].uc_link = nullptr;
			makecontext(&fibers[t], fiberEntry, 0);
		}
		for (;;) {
			bool live = false;
			for (int t = 0; t < n; t++) {
				if (finished[t]) continue;
				cur = t;
				swapcontext(&schedCtx, &fibers[t]);
				live = live || !finished[t];
			}
			if (!live) break;
		}
	}
}

static void launchSeq(dim3 g, dim3 b, std::function<void()> k) {
	gridDim = g; blockDim = b;
	for (unsigned bz = 0; bz < g.z; bz++) for (unsigned by = 0; by < g.y; by++) for (unsigned bx = 0; bx < g.x; bx++)
		for (unsigned t = 0; t < b.x * b.y * b.z; t++) {
			blockIdx = dim3{bx, by, bz};
			cur = 0;
			tidx[0] = dim3{t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
			k();
		}
}

static float* P(uint64_t v) { return (float*)(uintptr_t)v; }
static int I(uint64_t v) { return (int)(int32_t)(uint32_t)v; }
static float F(uint64_t v) { uint32_t u = (uint32_t)v; float f; memcpy(&f, &u, 4); return f; }

extern "C" int emu_launch(const char* name, int gx, int gy, int gz, int bx, int by, int bz, const uint64_t* a, int n) {
	dim3 g{(unsigned)gx, (unsigned)gy, (unsigned)gz}, b{(unsigned)bx, (unsigned)by, (unsigned)bz};
	std::string k(name);
	if (k == "nn_conv2d" && n == 17) launchSeq(g, b, [=] { nn_conv2d(P(a[0]), P(a[1]), P(a[2]), P(a[3]), I(a[4]), I(a[5]), I(a[6]), I(a[7]), I(a[8]), I(a[9]), I(a[10]), I(a[11]), I(a[12]), I(a[13]), I(a[14]), I(a[15]), I(a[16])); });
	else if (k == "nn_gemm" && n == 18) launch(g, b, [=] { nn_gemm(P(a[0]), P(a[1]), P(a[2]), P(a[3]), I(a[4]), I(a[5]), I(a[6]), I(a[7]), I(a[8]), I(a[9]), I(a[10]), I(a[11]), (long long)a[12], (long long)a[13], (long long)a[14], I(a[15]), I(a[16]), F(a[17])); });
	else if (k == "nn_gemv" && n == 7) launch(g, b, [=] { nn_gemv(P(a[0]), P(a[1]), P(a[2]), P(a[3]), I(a[4]), I(a[5]), I(a[6])); });
	else if (k == "nn_pool2d" && n == 11) launchSeq(g, b, [=] { nn_pool2d(P(a[0]), P(a[1]), I(a[2]), I(a[3]), I(a[4]), I(a[5]), I(a[6]), I(a[7]), I(a[8]), I(a[9]), I(a[10])); });
	else if (k == "nn_global_avgpool" && n == 4) launch(g, b, [=] { nn_global_avgpool(P(a[0]), P(a[1]), I(a[2]), I(a[3])); });
	else if (k == "nn_unary" && n == 4) launchSeq(g, b, [=] { nn_unary(P(a[0]), P(a[1]), I(a[2]), I(a[3])); });
	else if (k == "nn_binary" && n == 6) launchSeq(g, b, [=] { nn_binary(P(a[0]), P(a[1]), P(a[2]), I(a[3]), I(a[4]), I(a[5])); });
	else if (k == "nn_channel_affine" && n == 7) launchSeq(g, b, [=] { nn_channel_affine(P(a[0]), P(a[1]), P(a[2]), P(a[3]), I(a[4]), I(a[5]), I(a[6])); });
	else if (k == "nn_sum" && n == 21) launchSeq(g, b, [=] { nn_sum(P(a[0]), I(a[1]), I(a[2]), F(a[3]), I(a[4]), P(a[5]), P(a[6]), P(a[7]), P(a[8]), P(a[9]), P(a[10]), P(a[11]), P(a[12]), P(a[13]), P(a[14]), P(a[15]), P(a[16]), P(a[17]), P(a[18]), P(a[19]), P(a[20])); });
	else if (k == "nn_concat" && n == 19) launchSeq(g, b, [=] { nn_concat(P(a[0]), I(a[1]), I(a[2]), P(a[3]), P(a[4]), P(a[5]), P(a[6]), P(a[7]), P(a[8]), P(a[9]), P(a[10]), I(a[11]), I(a[12]), I(a[13]), I(a[14]), I(a[15]), I(a[16]), I(a[17]), I(a[18])); });
	else if (k == "nn_upsample2x" && n == 5) launchSeq(g, b, [=] { nn_upsample2x(P(a[0]), P(a[1]), I(a[2]), I(a[3]), I(a[4])); });
	else if (k == "nn_mix" && n == 5) launchSeq(g, b, [=] { nn_mix(P(a[0]), P(a[1]), P(a[2]), I(a[3]), I(a[4])); });
	else if (k == "nn_softmax" && n == 5) launch(g, b, [=] { nn_softmax(P(a[0]), P(a[1]), I(a[2]), I(a[3]), F(a[4])); });
	else if (k == "nn_layernorm" && n == 7) launch(g, b, [=] { nn_layernorm(P(a[0]), P(a[1]), P(a[2]), P(a[3]), I(a[4]), I(a[5]), F(a[6])); });
	else return -1;
	return 0;
}
