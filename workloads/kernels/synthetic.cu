// Module "synthetic": the kernel of the synthetic random-DAG workload
// (workloads/synthetic). Every node of the DAG is one launch of synth_node:
// it reads up to four input buffers, mixes them, runs a configurable chain of
// dependent multiply-adds per element, and writes its own output buffer.
//
// Arithmetic uses explicitly rounded operations (__fmul_rn, __fadd_rn) so
// the compiler cannot contract them into FMAs: the Go reference in
// workloads/synthetic reproduces every result bit for bit.

extern "C" __global__ void synth_node(const float* __restrict__ in0, int n0,
                                      const float* __restrict__ in1, int n1,
                                      const float* __restrict__ in2, int n2,
                                      const float* __restrict__ in3, int n3,
                                      int nin, float* __restrict__ out, int n,
                                      int iters) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float acc = 0.0f;
        if (nin > 0) acc = __fadd_rn(acc, in0[i % n0]);
        if (nin > 1) acc = __fadd_rn(acc, __fmul_rn(0.5f, in1[i % n1]));
        if (nin > 2) acc = __fadd_rn(acc, __fmul_rn(0.25f, in2[i % n2]));
        if (nin > 3) acc = __fadd_rn(acc, __fmul_rn(0.125f, in3[i % n3]));
        float x = acc;
        for (int k = 0; k < iters; k++) {
            x = __fadd_rn(__fmul_rn(x, 0.9999f), 0.001f);
        }
        out[i] = x;
    }
}
