// Module tiles: tiled fp16 GEMM and implicit-GEMM 3x3 convolution on tensor
// cores (nvcuda::wmma, fp16 operands, fp32 accumulation; sm_80 and later for
// cp.async), with cuSync's tile synchronization (Jangda et al., CGO 2024):
// a producer tile posts a per-tile counter when its output is in memory
// (one fence and one increment per tile), a consumer tile waits on the
// counters its inputs come from before it loads them (warp 0 polls, with
// backoff, the next 32 counter groups at once: tiles_wait_groups). Counters are never reset: run i of a pair waits for i times the
// number of tiles that post to a counter. sched/tilesync computes every
// counter mapping below from one policy object, the same one it hands the
// simulator through device.Launch.Sync.
//
// Layouts (row-major, fp16): GEMM C[M x N] = A[M x K] * B[K x N] with row
// strides lda, N, N. Convolution: input X[n][h][w][cin] (NHWC), weights
// W[r][s][cin][cout] (a [9*cin x cout] matrix), output Y[n][h][w][cout];
// 3x3, stride 1, padding 1, so the GEMM is [n*h*w x 9*cin] x [9*cin x cout].
//
// A launch has grid (tilesN, tilesM), 256 threads. Block b (linear, x
// fastest) computes tile b, or, with an order counter, the tile at the
// position the counter hands out: the order table's entry, or with no
// table the position itself (custom tile order: tiles are taken in order
// as blocks start, whatever order the hardware starts them in).
#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

using namespace nvcuda;

#define TILES_BK 32
#define TILES_THREADS 256
#define TILES_PAD 8

// Epilogues applied to the fp32 accumulator before rounding to fp16.
#define EPI_NONE 0
#define EPI_GELU 1
#define EPI_RELU 2
// A-operand modes: plain, or SwiGLU (A[i][k] = silu(P[i][k]) * P[i][k+K],
// LLaMA's gate and up halves computed by one producer GEMM).
#define AMODE_PLAIN 0
#define AMODE_SWIGLU 1
// flags bit 0: load the independent operand (B, the weights) of a k-slice
// before waiting for the producer, so its loads are in flight while the
// block spins.
#define FLAG_INDEPENDENT_FIRST 1
// flags bits 16..31: the longest sleep between two polls of a waiting
// block, in nanoseconds (0: poll without sleeping).
#define FLAG_SLEEP_SHIFT 16

struct TileParams {
    const half* A;
    const half* B;
    half* C;
    int M, N, K, lda, amode, epi;
    int conv, nb, H, W, cin;  // convolution geometry (conv != 0)
    unsigned* post;
    int postRowStride, postColMod, postColDiv;
    const unsigned* wait;
    int waitRowStride, waitColMod, waitColDiv, waitTileK;
    unsigned waitPer;
    unsigned iter;
    const int* order;
    unsigned* orderCounter;
    unsigned* startFlag;
    int flags;
};

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int srcBytes) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(srcBytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float silu(float x) { return x / (1.0f + __expf(-x)); }

// Acquire load of a counter at GPU scope: the producer's stores that
// precede its release (fence + atomicAdd) are visible to this thread, and,
// through the __syncthreads that follows every wait, to the whole block.
__device__ __forceinline__ unsigned tiles_ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Waits until counter group g is complete and returns how many groups,
// from g on, are complete (the block may skip waiting for them). Warp 0
// polls: lane l reads group g + l on every producer row tile pm in
// [lo, hi], so one poll answers up to 32 groups and a consumer whose
// producer has run ahead waits once per 32 groups rather than once per
// group. Between polls the warp sleeps with exponential backoff up to
// maxSleepNs (0: spin), so hundreds of waiting blocks do not queue on the
// L2 slice holding the counters ahead of the producer's own loads. The
// other warps wait at __syncthreads; the result is passed through slot,
// a shared word that the caller alternates between waits so that a slow
// warp's read of the last result cannot race the next write.
__device__ __forceinline__ int tiles_wait_groups(const unsigned* counters, int g, int numGroups, int lo, int hi,
                                                 int rowStride, unsigned target, unsigned maxSleepNs, int* slot) {
    if (threadIdx.x < 32) {
        const int mine = g + (int)threadIdx.x;
        unsigned sleepNs = 32;
        int ready;
        for (;;) {
            bool ok = mine < numGroups;
            for (int pm = lo; ok && pm <= hi; pm++) ok = tiles_ld_acquire(counters + (size_t)pm * rowStride + mine) >= target;
            const unsigned missing = __ballot_sync(0xffffffffu, !ok);
            ready = missing == 0 ? 32 : __ffs(missing) - 1;
            if (ready > 0) break;
            if (maxSleepNs != 0) {
                __nanosleep(sleepNs);
                sleepNs = sleepNs * 2 > maxSleepNs ? maxSleepNs : sleepNs * 2;
            }
        }
        if (threadIdx.x == 0) *slot = g + ready;
    }
    __syncthreads();
    return *slot;
}

template <int BM, int BN>
struct TileShape {
    static constexpr int A_STAGE = BM * (TILES_BK + TILES_PAD);  // halves
    static constexpr int B_STAGE = TILES_BK * (BN + TILES_PAD);  // halves
    static constexpr int PIPE_BYTES = 2 * (A_STAGE + B_STAGE) * 2;
    static constexpr int SCRATCH_BYTES = (TILES_THREADS / 32) * 16 * 16 * 4;
    static constexpr int SMEM_BYTES = PIPE_BYTES > SCRATCH_BYTES ? PIPE_BYTES : SCRATCH_BYTES;
};

// Loads the B slice (rows k0..k0+31 of the [K x N] weight matrix) of
// k-iteration into stage buffer sB.
template <int BM, int BN>
__device__ __forceinline__ void tiles_load_b(const TileParams& p, half* sB, int krow0, int n0) {
    constexpr int CHUNKS = TILES_BK * BN / 8;
    for (int c = threadIdx.x; c < CHUNKS; c += TILES_THREADS) {
        int kr = c / (BN / 8), nc = (c % (BN / 8)) * 8;
        int gc = n0 + nc;
        const half* src = p.B + (size_t)(krow0 + kr) * p.N + gc;
        bool ok = gc < p.N;
        cp_async16(sB + kr * (BN + TILES_PAD) + nc, ok ? src : p.B, ok ? 16 : 0);
    }
}

// Loads the A slice of k-iteration (columns c0..c0+31 of A, or of the
// im2col matrix at filter position rs) into stage buffer sA.
template <int BM, int BN>
__device__ __forceinline__ void tiles_load_a(const TileParams& p, half* sA, int m0, int k0, int rs) {
    constexpr int CHUNKS = BM * TILES_BK / 8;
    for (int c = threadIdx.x; c < CHUNKS; c += TILES_THREADS) {
        int row = c / (TILES_BK / 8), kc = (c % (TILES_BK / 8)) * 8;
        int gr = m0 + row;
        half* dst = sA + row * (TILES_BK + TILES_PAD) + kc;
        if (p.conv) {
            bool ok = gr < p.M;
            const half* src = p.A;
            if (ok) {
                int hw = p.H * p.W;
                int b = gr / hw, rem = gr % hw;
                int ih = rem / p.W + rs / 3 - 1, iw = rem % p.W + rs % 3 - 1;
                ok = ih >= 0 && ih < p.H && iw >= 0 && iw < p.W;
                if (ok) src = p.A + (((size_t)b * p.H + ih) * p.W + iw) * p.cin + k0 + kc;
            }
            cp_async16(dst, src, ok ? 16 : 0);
        } else if (p.amode == AMODE_SWIGLU) {
            uint4 out = make_uint4(0, 0, 0, 0);
            if (gr < p.M) {
                const half* g = p.A + (size_t)gr * p.lda + k0 + kc;
                uint4 gv = __ldcg(reinterpret_cast<const uint4*>(g));
                uint4 uv = __ldcg(reinterpret_cast<const uint4*>(g + p.K));
                const half2* g2 = reinterpret_cast<const half2*>(&gv);
                const half2* u2 = reinterpret_cast<const half2*>(&uv);
                half2* o2 = reinterpret_cast<half2*>(&out);
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    float2 gf = __half22float2(g2[i]), uf = __half22float2(u2[i]);
                    o2[i] = __floats2half2_rn(silu(gf.x) * uf.x, silu(gf.y) * uf.y);
                }
            }
            *reinterpret_cast<uint4*>(dst) = out;
        } else {
            bool ok = gr < p.M;
            const half* src = p.A + (size_t)gr * p.lda + k0 + kc;
            cp_async16(dst, ok ? src : p.A, ok ? 16 : 0);
        }
    }
}

template <int BM, int BN>
__device__ __forceinline__ void tiles_body(const TileParams& p) {
    typedef TileShape<BM, BN> S;
    constexpr int WARPS_M = 2, WARPS_N = 4;
    constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;
    constexpr int FM = WTM / 16, FN = WTN / 16;
    static_assert(FM >= 1 && FN >= 1, "tile too small for 2x4 warps of 16x16 fragments");

    __shared__ __align__(128) unsigned char smem[S::SMEM_BYTES];
    __shared__ int sTile;
    __shared__ int sReady[2];
    half* sA = reinterpret_cast<half*>(smem);
    half* sB = sA + 2 * S::A_STAGE;

    const int tilesN = gridDim.x, tilesM = gridDim.y;
    const int numTiles = tilesN * tilesM;

    // The producer's start flag releases the wait kernel on the consumer's
    // stream; the custom order hands out tiles as blocks start.
    if (threadIdx.x == 0) {
        if (p.startFlag != nullptr && *(volatile unsigned*)p.startFlag < p.iter) atomicMax(p.startFlag, p.iter);
        int t = blockIdx.y * gridDim.x + blockIdx.x;
        if (p.orderCounter != nullptr) {
            // The n-th block to start takes position n of the order: the
            // table's tile, or tile n itself (row-major) without a table.
            const unsigned pos = atomicAdd(p.orderCounter, 1u) % (unsigned)numTiles;
            t = p.order != nullptr ? p.order[pos] : (int)pos;
        }
        sTile = t;
    }
    __syncthreads();
    const int tile = sTile;
    const int tm = tile / tilesN, tn = tile % tilesN;
    const int m0 = tm * BM, n0 = tn * BN;

    const int warp = threadIdx.x / 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.0f);

    // k-iterations. GEMM: kt covers A columns kt*32.. Convolution: the
    // reduction runs over channel blocks of cb = BN channels (a producer
    // tile's width when producer and consumer share a tile shape, so each
    // block is waited for once), then the nine filter positions, then the
    // channels of the block, 32 at a time. The order does not depend on
    // whether the kernel waits, so synchronized and stream-ordered runs
    // compute bit-identical results.
    const bool waiting = p.wait != nullptr;
    int cb = 0, perCb = 0, kIters;
    if (p.conv) {
        cb = (p.cin % BN == 0) ? BN : p.cin;
        perCb = 9 * (cb / TILES_BK);
        kIters = (p.cin / cb) * perCb;
    } else {
        kIters = p.K / TILES_BK;
    }
    // Producer row tiles a consumer tile depends on: its own row for a
    // GEMM; for a 3x3 convolution the rows holding every pixel within one
    // image row and one pixel of the tile's pixels (the filter's halo).
    int pmLo = tm, pmHi = tm;
    if (p.conv && waiting) {
        int lo = m0 - (p.W + 1), hi = m0 + BM - 1 + p.W + 1;
        if (lo < 0) lo = 0;
        if (hi > p.M - 1) hi = p.M - 1;
        pmLo = lo / BM;
        pmHi = hi / BM;
    }
    // Counter groups in reduction order: group g covers producer column
    // tiles [g*waitColDiv, (g+1)*waitColDiv) (sched/tilesync checks that the
    // reduction never wraps past waitColMod). Groups below readyGroups are
    // known complete; the block waits only when it reaches one that is not.
    int numGroups = 0, readyGroups = 0, waits = 0;
    const unsigned target = p.iter * p.waitPer;
    const unsigned maxSleepNs = (unsigned)p.flags >> FLAG_SLEEP_SHIFT;
    if (waiting) {
        int cols = (p.conv ? p.cin : p.K) / p.waitTileK;
        if (cols > p.waitColMod) cols = p.waitColMod;
        numGroups = (cols + p.waitColDiv - 1) / p.waitColDiv;
    }

    auto issue = [&](int kt, int stage) {
        int k0, rs = 0, brow, chan;
        if (p.conv) {
            int g = kt / perCb, rem = kt % perCb;
            rs = rem / (cb / TILES_BK);
            chan = g * cb + (rem % (cb / TILES_BK)) * TILES_BK;
            k0 = chan;
            brow = rs * p.cin + chan;
        } else {
            k0 = kt * TILES_BK;
            brow = k0;
            chan = k0;
        }
        half* a = sA + stage * S::A_STAGE;
        half* b = sB + stage * S::B_STAGE;
        // The only difference from a stream-ordered run: before loading a
        // k-slice of a group not yet known complete, wait for it (with the
        // weights' slice already in flight when FLAG_INDEPENDENT_FIRST).
        const int group = waiting ? ((chan / p.waitTileK) % p.waitColMod) / p.waitColDiv : 0;
        if (waiting && group >= readyGroups) {
            const bool indepFirst = (p.flags & FLAG_INDEPENDENT_FIRST) != 0;
            if (indepFirst) tiles_load_b<BM, BN>(p, b, brow, n0);
            readyGroups = tiles_wait_groups(p.wait, group, numGroups, pmLo, pmHi, p.waitRowStride, target, maxSleepNs,
                                            &sReady[waits & 1]);
            waits++;
            if (!indepFirst) tiles_load_b<BM, BN>(p, b, brow, n0);
        } else {
            tiles_load_b<BM, BN>(p, b, brow, n0);
        }
        tiles_load_a<BM, BN>(p, a, m0, k0, rs);
        cp_async_commit();
    };

    issue(0, 0);
    for (int kt = 0; kt < kIters; kt++) {
        if (kt + 1 < kIters) {
            issue(kt + 1, (kt + 1) & 1);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        const half* a = sA + (kt & 1) * S::A_STAGE;
        const half* b = sB + (kt & 1) * S::B_STAGE;
#pragma unroll
        for (int kk = 0; kk < TILES_BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> af[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> bf[FN];
#pragma unroll
            for (int i = 0; i < FM; i++)
                wmma::load_matrix_sync(af[i], a + (wm * WTM + i * 16) * (TILES_BK + TILES_PAD) + kk, TILES_BK + TILES_PAD);
#pragma unroll
            for (int j = 0; j < FN; j++)
                wmma::load_matrix_sync(bf[j], b + kk * (BN + TILES_PAD) + wn * WTN + j * 16, BN + TILES_PAD);
#pragma unroll
            for (int i = 0; i < FM; i++)
#pragma unroll
                for (int j = 0; j < FN; j++) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
        }
        __syncthreads();
    }

    // Epilogue: each warp stages one 16x16 fragment at a time in its own
    // scratch, applies the activation, and writes 8 halves per lane.
    float* scratch = reinterpret_cast<float*>(smem) + warp * 256;
    const int lane = threadIdx.x % 32;
    const int er = lane / 2, ec = (lane % 2) * 8;
#pragma unroll
    for (int i = 0; i < FM; i++) {
#pragma unroll
        for (int j = 0; j < FN; j++) {
            wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            int gr = m0 + wm * WTM + i * 16 + er;
            int gc = n0 + wn * WTN + j * 16 + ec;
            if (gr < p.M && gc < p.N) {
                uint4 out;
                half2* o2 = reinterpret_cast<half2*>(&out);
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float x0 = scratch[er * 16 + ec + 2 * e], x1 = scratch[er * 16 + ec + 2 * e + 1];
                    if (p.epi == EPI_GELU) {
                        x0 = gelu(x0);
                        x1 = gelu(x1);
                    } else if (p.epi == EPI_RELU) {
                        x0 = fmaxf(x0, 0.0f);
                        x1 = fmaxf(x1, 0.0f);
                    }
                    o2[e] = __floats2half2_rn(x0, x1);
                }
                *reinterpret_cast<uint4*>(p.C + (size_t)gr * p.N + gc) = out;
            }
            __syncwarp();
        }
    }

    // Post once per tile: the barrier orders every thread's stores before
    // thread 0's fence, and the fence orders them before the counter's
    // increment (the pattern of cooperative groups' grid sync), so one
    // fence per tile, not one per thread.
    if (p.post != nullptr) {
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            atomicAdd(p.post + (size_t)tm * p.postRowStride + (tn % p.postColMod) / p.postColDiv, 1u);
        }
    }
}

// The synchronization arguments shared by both kernels, after the
// operation's own arguments.
#define TILES_SYNC_PARAMS                                                                                     \
    unsigned *post, int postRowStride, int postColMod, int postColDiv, const unsigned *wait, int waitRowStride, \
        int waitColMod, int waitColDiv, int waitTileK, unsigned waitPer, unsigned iter, const int *order,       \
        unsigned *orderCounter, unsigned *startFlag, int flags

#define TILES_SYNC_ASSIGN                                                                           \
    p.post = post;                                                                                  \
    p.postRowStride = postRowStride;                                                                \
    p.postColMod = postColMod;                                                                      \
    p.postColDiv = postColDiv;                                                                      \
    p.wait = wait;                                                                                  \
    p.waitRowStride = waitRowStride;                                                                \
    p.waitColMod = waitColMod;                                                                      \
    p.waitColDiv = waitColDiv;                                                                      \
    p.waitTileK = waitTileK;                                                                        \
    p.waitPer = waitPer;                                                                            \
    p.iter = iter;                                                                                  \
    p.order = order;                                                                                \
    p.orderCounter = orderCounter;                                                                  \
    p.startFlag = startFlag;                                                                        \
    p.flags = flags;

#define TILES_GEMM(BM, BN, MINB)                                                                                  \
    extern "C" __global__ void __launch_bounds__(TILES_THREADS, MINB) tiles_gemm_##BM##x##BN(                         \
        const half* A, const half* B, half* C, int M, int N, int K, int lda, int amode, int epi, TILES_SYNC_PARAMS) { \
        TileParams p;                                                                                             \
        p.A = A;                                                                                                  \
        p.B = B;                                                                                                  \
        p.C = C;                                                                                                  \
        p.M = M;                                                                                                  \
        p.N = N;                                                                                                  \
        p.K = K;                                                                                                  \
        p.lda = lda;                                                                                              \
        p.amode = amode;                                                                                          \
        p.epi = epi;                                                                                              \
        p.conv = 0;                                                                                               \
        p.nb = p.H = p.W = p.cin = 0;                                                                             \
        TILES_SYNC_ASSIGN                                                                                         \
        tiles_body<BM, BN>(p);                                                                                    \
    }

#define TILES_CONV(BM, BN, MINB)                                                                                  \
    extern "C" __global__ void __launch_bounds__(TILES_THREADS, MINB) tiles_conv_##BM##x##BN(                         \
        const half* X, const half* Wt, half* Y, int nb, int H, int W, int cin, int cout, int epi, TILES_SYNC_PARAMS) { \
        TileParams p;                                                                                             \
        p.A = X;                                                                                                  \
        p.B = Wt;                                                                                                 \
        p.C = Y;                                                                                                  \
        p.M = nb * H * W;                                                                                         \
        p.N = cout;                                                                                               \
        p.K = 9 * cin;                                                                                            \
        p.lda = cin;                                                                                              \
        p.amode = AMODE_PLAIN;                                                                                    \
        p.epi = epi;                                                                                              \
        p.conv = 1;                                                                                               \
        p.nb = nb;                                                                                                \
        p.H = H;                                                                                                  \
        p.W = W;                                                                                                  \
        p.cin = cin;                                                                                              \
        TILES_SYNC_ASSIGN                                                                                         \
        tiles_body<BM, BN>(p);                                                                                    \
    }

// The third argument is the blocks per SM the register budget must allow
// (65536 registers / 256 threads: 128 per thread for 2 blocks, 80 for 3,
// 64 for 4: what each shape reached before the synchronization code grew),
// so that the synchronization code never costs a tile shape a block per SM.
TILES_GEMM(128, 128, 2)
TILES_GEMM(128, 64, 3)
TILES_GEMM(64, 128, 3)
TILES_GEMM(32, 128, 3)
TILES_GEMM(64, 64, 3)
TILES_CONV(128, 128, 2)
TILES_CONV(64, 128, 3)
TILES_CONV(32, 128, 4)
TILES_CONV(64, 64, 4)

// cuSync's wait kernel: one thread on the consumer's stream, ahead of the
// consumer, spins until the producer's first block has started (the
// producer raises *flag to its run number at block start). The consumer
// then cannot occupy SMs before the producer holds some, so its spinning
// blocks can never starve the producer of every SM.
extern "C" __global__ void tiles_wait(const unsigned* flag, unsigned iter) {
    if (threadIdx.x == 0) {
        const volatile unsigned* f = flag;
        while (*f < iter) {
        }
    }
}
