// Module devicetest: the kernels of the device conformance suite
// (device/devicetest), which checks that a backend runs the CUDA stream
// model faithfully: ordering, overlap, occupancy, graphs, callbacks.

// Every block spins for `cycles` SM clock cycles (clock64), then its thread
// (0,0,0) writes the block's start and end on the GPU's global timer
// (nanoseconds) to stamps[2*b] and stamps[2*b+1], b being the linear block
// index (x fastest). The stamps let the suite see on the GPU itself whether
// two kernels' blocks overlapped.
extern "C" __global__ void spin(long long cycles, unsigned long long* stamps) {
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    while (clock64() - c0 < cycles) {
    }
    __syncthreads();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        unsigned long long b = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
        stamps[2 * b] = t0;
        stamps[2 * b + 1] = t1;
    }
}
