// Module calibrate: the kernels package calibrate times a GPU with. They do
// as little as possible, so what is measured is the machinery around them
// (launch, dispatch, synchronization), not their work.

// Does nothing: launch cost, launch latency and back-to-back gaps.
extern "C" __global__ void cal_empty() {}

// Spins for `ns` nanoseconds of the GPU's global timer in every block, then
// counts the block in *done: a kernel of known duration for block-dispatch
// rate and overlap measurements. The count lets the host check that every
// block ran.
extern "C" __global__ void cal_spin(unsigned long long ns, unsigned int* done) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long now = start;
    while (now - start < ns) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        atomicAdd(done, 1u);
    }
}
