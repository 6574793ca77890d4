// Module replay: the kernel that replays a recorded kernel (workloads/file).
//
// One launch stands for one kernel of a recorded workload: it runs with the
// original's grid and block, with dynamic shared memory padded so that as
// many of its blocks fit on an SM as did the original's, and every block
// stays resident until its wave's share of the recorded duration has
// passed on the GPU's global timer, counted from the kernel's start
// (spin_ns a wave: the recorded duration divided among the original's
// waves, less the replay's own cost after its spin; replay_wave_end), its
// first warp watching the timer while the others wait at a barrier. It
// touches the recorded buffers so that a schedule that breaks a dependency
// changes the outputs. One block, the
// last of the grid (GPUs hand blocks out in index order in practice, so it
// starts in the last wave), does it with its first warp, lane r taking
// range r (and r+32, ... where a block has fewer threads than ranges):
//
//   - at its start, every lane reads up to 16 sampled bytes of its range
//     (if the range is hashed; every byte up to 16, else 16 spread evenly),
//     all loads in flight together, and folds them (FNV-1a from a basis of
//     the seed and the range's index); the warp adds the lanes' values
//     into h;
//   - after its spin, every lane writes bytes derived from h to the sampled
//     positions of its range if the kernel writes it, all ranges at once
//     (where two written ranges of the kernel overlap, range after range,
//     so that the later one's bytes win as in the reference), and lane 0
//     writes h to *sig (the kernel's signature, which `after` dependencies
//     read).
//
// desc (read-only) is this kernel's descriptor: desc[0] the seed, desc[1]
// the number n of ranges it touches (at most 24, in a0..a23; bit 31 set
// where two written ranges overlap), then for each range i: desc[2+2i] its
// mode (bit 0: hash its bytes, bit 1: write them) and desc[3+2i] its length
// in bytes. The kernel reads these words from its parameters d0..d24
// (after a0..a23: d0 = {0, desc[1]}, d(1+i) = range i's pair), which the
// constant cache serves, and only the seed from desc, its load in flight
// with the sampled bytes', so that one global round trip (the sampled
// loads) stands between its start and its spin. Every lane keeps its
// range's pair and pointer across the spin, so that the writes wait for
// nothing. No block waits for another and nothing is atomic:
// TestGPUReplayProbe measures the cost per kernel and per range. A reader
// that overlaps its writer reads bytes the writer has not written yet, so
// its h, its outputs and everything downstream differ from the serial
// schedule's. workloads/file computes the same bytes on the CPU
// (Reference). state is the kernel's own 32 bytes: the first block's start
// (byte 16) and the last block's end after its writes (byte 24) on the
// global timer. sig is its own 4 bytes of output.
// __launch_bounds__(1024, 2) keeps it within 32 registers per thread, so
// that registers never limit its blocks per SM below what threads allow:
// the padding alone sets occupancy.
//
// replay_v8 (below) is the eighth version, which reads the whole
// descriptor from desc (every lane its pair with the head: one more global
// round trip before the sampled loads); TestGPUReplay and
// TestGPUReplayProbe measure it beside replay. The earlier versions
// (docs/results/imported-notes.md) are in git: the fourth (replay_v4,
// every block spinning spin_ns from its own start), the sixth (replay_v6,
// every warp watching the timer) and the seventh (replay_v7, the lead's 24
// pointers loaded with the head) until 9c28089; the fifth (no local
// memory) at 22ea7f6.
// replay_timer measures the global timer's step and the SM clock's rate.

#define REPLAY_MAX_ARGS 24
#define REPLAY_SAMPLES 16
#define REPLAY_FNV_OFFSET 2166136261u
#define REPLAY_FNV_PRIME 16777619u
#define REPLAY_ORDERED (1u << 31)
#define REPLAY_OVER_SHIFT 8
#define REPLAY_OVER_MASK 0x7fffffu
#define REPLAY_WAVES_MIN 512ull

__device__ __forceinline__ unsigned long long replay_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void replay_spin(unsigned long long t0, unsigned long long spin_ns) {
    while (replay_now() - t0 < spin_ns) {
    }
}

__device__ __forceinline__ void replay_until(unsigned long long due) {
    while (replay_now() < due) {
    }
}

// replay_wave_end is when replay's block that started at t0 ends its
// spin: stamps is {the kernel's start (block 0's stamp), the previous
// launch's end}, count the descriptor's count word (overhead_ns in bits
// 8-30). A wave lasts period = spin_ns + overhead_ns (the recorded
// duration's share) and wave w's blocks spin until first + (w+1)*period -
// overhead_ns, so wave w+1's blocks start from first + (w+1)*period -
// overhead_ns on: a block's wave is counted from there (where the
// turnaround between waves is shorter than overhead_ns, counting from
// first + w*period put the next wave's blocks in the one before, which
// then spun not at all). Never longer than spin_ns from the block's own
// start. Without this launch's stamp (not newer than
// the previous end, or later than t0) it spins spin_ns from t0.
__device__ __forceinline__ unsigned long long replay_wave_end(ulonglong2 stamps, unsigned count, unsigned long long t0,
                                                              unsigned long long spin_ns) {
    unsigned long long own = t0 + spin_ns, first = stamps.x;
    unsigned over = (count >> REPLAY_OVER_SHIFT) & REPLAY_OVER_MASK;
    if (first <= stamps.y || first > t0 || t0 - first >= (1ull << 31) || spin_ns >= (1ull << 31)) return own;
    unsigned period = (unsigned)spin_ns + over;
    unsigned wave = ((unsigned)(t0 - first) + over) / period;
    unsigned long long due = first + (unsigned long long)(wave + 1) * period - over;
    return due < own ? due : own;
}

// The j-th sampled byte position of a range of n bytes: every byte up to
// 16, else 16 spread evenly (j*n/16).
__device__ __forceinline__ unsigned long long replay_pos(unsigned long long n, unsigned j) {
    return n <= REPLAY_SAMPLES ? j : ((unsigned long long)j * n) >> 4;
}

// replay_hash is range i's contribution to h: its sampled bytes folded from
// a basis of the seed and i, the loads issued before any is used.
__device__ __forceinline__ unsigned replay_hash(const unsigned char* p, unsigned long long len, unsigned seed, unsigned i) {
    unsigned char b[REPLAY_SAMPLES];
#pragma unroll
    for (unsigned j = 0; j < REPLAY_SAMPLES; j++) {
        b[j] = j < len ? __ldcg(p + replay_pos(len, j)) : 0;
    }
    unsigned x = REPLAY_FNV_OFFSET ^ seed ^ (i << 24);
#pragma unroll
    for (unsigned j = 0; j < REPLAY_SAMPLES; j++) {
        if (j < len) x = (x ^ b[j]) * REPLAY_FNV_PRIME;
    }
    return x;
}

// replay_put writes range i's sampled bytes (len, from p), derived from h.
__device__ __forceinline__ void replay_put(unsigned char* p, unsigned long long len, unsigned h, unsigned i) {
#pragma unroll
    for (unsigned j = 0; j < REPLAY_SAMPLES; j++) {
        if (j < len) __stcg(p + replay_pos(len, j), (unsigned char)(((h ^ (i << 8) ^ j) * REPLAY_FNV_PRIME) >> 24));
    }
}

// replay_word is a descriptor's pair at d: from global memory, or
// with PD (replay) from the kernel's parameters d0..d24, which the
// constant cache serves.
template <bool PD>
__device__ __forceinline__ uint2 replay_word(const uint2* d) {
    if (PD) return *d;
    return __ldg(d);
}

// replay_lead is the last block's first warp: it reads, spins and writes.
// It issues the descriptor's loads first (the head and its own range's
// pair, one round trip) and takes its range's pointer straight from the
// launch's parameters (a is the address of a0: an indexed constant load,
// only for lanes that have a range), so that nothing stands between the
// kernel's start and its data loads but those two loads.
template <bool PD>
__device__ __forceinline__ void replay_lead(const uint2* __restrict__ desc, unsigned* state, unsigned* sig, unsigned long long t0,
                                            unsigned long long spin_ns, const unsigned char* const* a, unsigned lane, unsigned width,
                                            const unsigned* __restrict__ seedp) {
    uint2 head = replay_word<PD>(desc), mine = PD ? make_uint2(0, 0) : __ldg(desc + 1 + lane);
    // PD: the seed is first needed when the sampled bytes arrive, so it
    // comes from replay.desc, its load in flight with theirs.
    unsigned seed = PD ? __ldg(seedp) : head.x;
    ulonglong2 stamps = make_ulonglong2(0, 0);
    if (spin_ns >= REPLAY_WAVES_MIN) stamps = __ldcg((const ulonglong2*)(state + 4));
    unsigned mask = width == 32 ? 0xffffffffu : (1u << width) - 1;
    unsigned n = head.y & 0xffu;
    // PD (replay): only the lanes that have a range load their pair
    // (the parameters hold no padding past d24).
    if (PD && lane < n) mine = desc[1 + lane];
    // Only the lanes that have a range load their pointer, after the head
    // (the seventh version loaded all 24 with it: the constant cache serves
    // them one address after another, ~200 ns more floor).
    unsigned char* p = lane < n ? (unsigned char*)a[lane] : 0;
    unsigned part = 0;
    if (lane < n && (mine.x & 1u)) part = replay_hash(p, mine.y, seed, lane);
    for (unsigned i = lane + width; i < n; i += width) {
        uint2 e = replay_word<PD>(desc + 1 + i);
        if (e.x & 1u) part += replay_hash(a[i], e.y, seed, i);
    }
    unsigned h = (REPLAY_FNV_OFFSET ^ seed) + __reduce_add_sync(mask, part);
    replay_until(spin_ns >= REPLAY_WAVES_MIN ? replay_wave_end(stamps, head.y, t0, spin_ns) : t0 + spin_ns);
    if (!(head.y & REPLAY_ORDERED)) {
        // No two written ranges overlap: every lane writes its own at once.
        if (lane < n && (mine.x & 2u)) replay_put(p, mine.y, h, lane);
        for (unsigned i = lane + width; i < n; i += width) {
            uint2 e = replay_word<PD>(desc + 1 + i);
            if (e.x & 2u) replay_put((unsigned char*)a[i], e.y, h, i);
        }
    } else {
        // Range by range, lane j writing sample j, so that where two
        // ranges overlap the later one's bytes win, as in the reference.
        for (unsigned i = 0; i < n; i++) {
            uint2 e;
            if (i < width) {
                e.x = __shfl_sync(mask, mine.x, i);
                e.y = __shfl_sync(mask, mine.y, i);
            } else {
                e = replay_word<PD>(desc + 1 + i);
            }
            if (!(e.x & 2u)) continue;
            unsigned char* q = (unsigned char*)a[i];
            for (unsigned j = lane; j < REPLAY_SAMPLES && j < e.y; j += width) {
                __stcg(q + replay_pos(e.y, j), (unsigned char)(((h ^ (i << 8) ^ j) * REPLAY_FNV_PRIME) >> 24));
            }
            __syncwarp(mask);
        }
    }
    __syncwarp(mask);
    if (lane == 0) {
        __stcg(sig, h);
        __stcg((unsigned long long*)(state + 6), replay_now());
    }
}

// replay_run is a replay kernel's body (a is the address of a0): block 0
// stamps its start first and every block spins until its wave's end
// counted from that stamp (replay_wave_end). Only a block's first warp
// spins (and loads the stamp); its other warps wait for it at a barrier,
// so that at 64 warps an SM 16 rather than 64 warps poll the timer (every
// warp polling made a kernel end 1.2 us beyond its spin in one wave, 2.8
// us a wave in three; 0.4 us with one warp a block). With PD (replay) the
// descriptor's words come from the kernel's parameters (replay_word).
template <bool PD = false>
__device__ __forceinline__ void replay_run(const unsigned* __restrict__ desc, unsigned* state, unsigned* sig, unsigned long long spin_ns,
                                           const unsigned char* const* a, const unsigned* __restrict__ seedp = 0) {
    unsigned long long t0 = replay_now();
    unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    if (block == 0 && thread == 0) {
        __stcg((unsigned long long*)(state + 4), t0);
    }
    if (block == blocks - 1 && thread < 32) {
        replay_lead<PD>((const uint2*)desc, state, sig, t0, spin_ns, a, thread, threads < 32 ? threads : 32, seedp);
    } else if (thread >= 32) {
        // waits for the first warp at the barrier below
    } else if (spin_ns >= REPLAY_WAVES_MIN) {
        ulonglong2 stamps = __ldcg((const ulonglong2*)(state + 4));
        replay_until(replay_wave_end(stamps, PD ? desc[1] : __ldg(desc + 1), t0, spin_ns));
    } else {
        replay_spin(t0, spin_ns);
    }
    __syncthreads();
}

// REPLAY_GC marks a0..a23 __grid_constant__: the kernel reads them where
// the launch put them, by address (a[i] is a0 + i, the parameters lying
// one after another), rather than from a copy in local memory.
#define REPLAY_GC const __grid_constant__

// REPLAY_BUFFERS is the replay kernels' 24 buffer parameters, a0..a23, in
// the order workloads/file passes a kernel's ranges.
#define REPLAY_BUF(i) REPLAY_GC unsigned char* const a##i
#define REPLAY_BUFFERS                                                                                                   \
    REPLAY_BUF(0), REPLAY_BUF(1), REPLAY_BUF(2), REPLAY_BUF(3), REPLAY_BUF(4), REPLAY_BUF(5), REPLAY_BUF(6), REPLAY_BUF(7), \
        REPLAY_BUF(8), REPLAY_BUF(9), REPLAY_BUF(10), REPLAY_BUF(11), REPLAY_BUF(12), REPLAY_BUF(13), REPLAY_BUF(14),       \
        REPLAY_BUF(15), REPLAY_BUF(16), REPLAY_BUF(17), REPLAY_BUF(18), REPLAY_BUF(19), REPLAY_BUF(20), REPLAY_BUF(21),     \
        REPLAY_BUF(22), REPLAY_BUF(23)

// replay_bare has replay's parameters and stamps but reads and writes
// nothing: TestGPUReplayProbe's lower bound on what any kernel that stamps
// its start and end costs (its outputs are not the reference's).
extern "C" __global__ void replay_bare(const unsigned* __restrict__ desc, unsigned* state, unsigned* sig, unsigned long long spin_ns) {
    unsigned long long t0 = replay_now();
    unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    replay_spin(t0, spin_ns);
    if (block == blocks - 1 && thread == 0) {
        __stcg((unsigned long long*)(state + 6), replay_now());
    }
    if (block == 0 && thread == 0) {
        __stcg((unsigned long long*)(state + 4), t0);
    }
}

// replay_v8 is the eighth version (the replay kernel in session 8 from
// its call 4 until the ninth): replay reading its descriptor from desc
// rather than from its parameters.
extern "C" __global__ void __launch_bounds__(1024, 2) replay_v8(const unsigned* __restrict__ desc, unsigned* state, unsigned* sig, unsigned long long spin_ns, REPLAY_BUFFERS) {
    replay_run<false>(desc, state, sig, spin_ns, &a0);
}

// REPLAY_DESC is replay's copy of its descriptor (the words replay.desc
// holds for it: d0 = {0, count}, d(1+i) = range i's {mode, length}, zeros
// past its ranges), passed after a0..a23. The seed stays in replay.desc
// (desc[0]), so that kernels of the same shape and ranges pass the same
// parameters (one profile point, as for the eighth).
#define REPLAY_D(i) const __grid_constant__ unsigned long long d##i
#define REPLAY_DESC                                                                                                  \
    REPLAY_D(0), REPLAY_D(1), REPLAY_D(2), REPLAY_D(3), REPLAY_D(4), REPLAY_D(5), REPLAY_D(6), REPLAY_D(7), REPLAY_D(8), \
        REPLAY_D(9), REPLAY_D(10), REPLAY_D(11), REPLAY_D(12), REPLAY_D(13), REPLAY_D(14), REPLAY_D(15), REPLAY_D(16),   \
        REPLAY_D(17), REPLAY_D(18), REPLAY_D(19), REPLAY_D(20), REPLAY_D(21), REPLAY_D(22), REPLAY_D(23), REPLAY_D(24)

// replay is the ninth version: the eighth (replay_v8) reading its
// descriptor from its parameters rather than from replay.desc, so that the
// lead's first global round trip (the head and its range's pair) becomes
// constant-cache loads and only the sampled loads stand between its start
// and its spin. desc stays its first parameter, read for the seed only.
extern "C" __global__ void __launch_bounds__(1024, 2) replay(const unsigned* __restrict__ desc, unsigned* state, unsigned* sig, unsigned long long spin_ns, REPLAY_BUFFERS,
                                                                REPLAY_DESC) {
    replay_run<true>((const unsigned*)&d0, state, sig, spin_ns, &a0, desc);
}

// replay_timer: one thread watches the global timer and the SM's clock for
// window_ns of the timer. out[0] the smallest step the timer took, out[1]
// the largest, out[2] how many steps, out[3] the timer's elapsed ns, out[4]
// the clock's elapsed cycles.
extern "C" __global__ void replay_timer(unsigned long long* out, unsigned long long window_ns) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned long long t0 = replay_now(), c0 = clock64(), prev = t0, now = t0;
    unsigned long long least = ~0ull, most = 0, steps = 0;
    for (unsigned long long reads = 0; now - t0 < window_ns && reads < (1ull << 26); reads++) {
        now = replay_now();
        if (now != prev) {
            least = min(least, now - prev);
            most = max(most, now - prev);
            steps++;
            prev = now;
        }
    }
    unsigned long long c1 = clock64();
    out[0] = least;
    out[1] = most;
    out[2] = steps;
    out[3] = now - t0;
    out[4] = c1 - c0;
}
