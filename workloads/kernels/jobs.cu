// Kernels of the SET pipeline workloads (workloads/jobs): Sobel, SSSP, BP,
// GEMM, KNN and Hotspot. Each job of a workload runs one or a few of these on
// its own buffers. Where the Go reference must match bit for bit, the kernels
// use explicitly rounded operations (__fadd_rn, __fmul_rn) so the compiler
// cannot contract them into fused multiply-adds.

#define SOBEL_TILE 16
#define GEMM_TILE 16
#define KNN_THREADS 256
#define KNN_MAXK 8

// sobel writes the gradient magnitude sqrt(gx^2 + gy^2) of a w x h image
// under the 3x3 Sobel operators; border pixels are 0.
extern "C" __global__ void sobel(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= h) return;
	if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
		out[y * w + x] = 0.0f;
		return;
	}
	const float* p = in + (y - 1) * w + (x - 1);
	float a00 = p[0], a01 = p[1], a02 = p[2];
	float a10 = p[w], a12 = p[w + 2];
	float a20 = p[2 * w], a21 = p[2 * w + 1], a22 = p[2 * w + 2];
	float gx = __fsub_rn(__fadd_rn(__fadd_rn(a02, __fmul_rn(2.0f, a12)), a22), __fadd_rn(__fadd_rn(a00, __fmul_rn(2.0f, a10)), a20));
	float gy = __fsub_rn(__fadd_rn(__fadd_rn(a20, __fmul_rn(2.0f, a21)), a22), __fadd_rn(__fadd_rn(a00, __fmul_rn(2.0f, a01)), a02));
	out[y * w + x] = sqrtf(__fadd_rn(__fmul_rn(gx, gx), __fmul_rn(gy, gy)));
}

// sssp_init sets dist[v] to +inf, and dist[src] to 0.
extern "C" __global__ void sssp_init(float* __restrict__ dist, int n, int src) {
	int v = blockIdx.x * blockDim.x + threadIdx.x;
	if (v >= n) return;
	dist[v] = v == src ? 0.0f : __int_as_float(0x7f800000);
}

// sssp_relax is one Bellman-Ford iteration in pull form (Jacobi): for each
// vertex v, dout[v] = min(din[v], min over in-edges (u, v, w) of din[u] + w).
// The graph is in CSR by destination: the in-edges of v are
// rowptr[v] .. rowptr[v+1]-1, with sources col[] and weights wt[].
extern "C" __global__ void sssp_relax(const int* __restrict__ rowptr, const int* __restrict__ col,
                                      const float* __restrict__ wt, const float* __restrict__ din,
                                      float* __restrict__ dout, int n) {
	int v = blockIdx.x * blockDim.x + threadIdx.x;
	if (v >= n) return;
	float best = din[v];
	for (int e = rowptr[v]; e < rowptr[v + 1]; e++) {
		float c = __fadd_rn(din[col[e]], wt[e]);
		if (c < best) best = c;
	}
	dout[v] = best;
}

// bp_forward computes the hidden layer h = sigmoid(x W) for a batch of b
// inputs of size nin and nhid hidden units (row-major x: b x nin, W: nin x
// nhid, h: b x nhid). One thread per output.
extern "C" __global__ void bp_forward(const float* __restrict__ x, const float* __restrict__ W,
                                      float* __restrict__ h, int b, int nin, int nhid) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int r = blockIdx.y;
	if (j >= nhid || r >= b) return;
	float s = 0.0f;
	for (int i = 0; i < nin; i++) s += x[r * nin + i] * W[i * nhid + j];
	h[r * nhid + j] = 1.0f / (1.0f + expf(-s));
}

// bp_wgrad computes the weight gradient G = x^T (delta .* h .* (1 - h)), the
// error signal of a sigmoid layer back-propagated to its weights (nin x nhid).
extern "C" __global__ void bp_wgrad(const float* __restrict__ x, const float* __restrict__ h,
                                    const float* __restrict__ delta, float* __restrict__ G,
                                    int b, int nin, int nhid) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y;
	if (j >= nhid || i >= nin) return;
	float s = 0.0f;
	for (int r = 0; r < b; r++) {
		float hv = h[r * nhid + j];
		s += x[r * nin + i] * (delta[r * nhid + j] * hv * (1.0f - hv));
	}
	G[i * nhid + j] = s;
}

// gemm computes C = A B for n x n row-major matrices, n a multiple of
// GEMM_TILE, with shared-memory tiles.
extern "C" __global__ void gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
	__shared__ float as[GEMM_TILE][GEMM_TILE];
	__shared__ float bs[GEMM_TILE][GEMM_TILE];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * GEMM_TILE + ty, colx = blockIdx.x * GEMM_TILE + tx;
	float s = 0.0f;
	for (int t = 0; t < n; t += GEMM_TILE) {
		as[ty][tx] = A[row * n + t + tx];
		bs[ty][tx] = B[(t + ty) * n + colx];
		__syncthreads();
		for (int k = 0; k < GEMM_TILE; k++) s = __fadd_rn(s, __fmul_rn(as[ty][k], bs[k][tx]));
		__syncthreads();
	}
	C[row * n + colx] = s;
}

// knn_dist computes squared Euclidean distances dist[q][i] between nq
// queries and n reference points of d dimensions (row-major).
extern "C" __global__ void knn_dist(const float* __restrict__ ref, const float* __restrict__ qry,
                                    float* __restrict__ dist, int n, int nq, int d) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int q = blockIdx.y;
	if (i >= n || q >= nq) return;
	float s = 0.0f;
	for (int k = 0; k < d; k++) {
		float t = __fsub_rn(ref[i * d + k], qry[q * d + k]);
		s = __fadd_rn(s, __fmul_rn(t, t));
	}
	dist[q * n + i] = s;
}

// knnLess orders candidates by distance, then by index, so the selection is
// deterministic when distances tie.
__device__ __forceinline__ bool knnLess(float da, int ia, float db, int ib) {
	return da < db || (da == db && ia < ib);
}

// knn_select writes, for query blockIdx.x, the indices and distances of its
// k nearest reference points in increasing order (k <= KNN_MAXK). Each thread
// keeps a sorted top-k of a strided share of the points; then k rounds of a
// block-wide minimum over the threads' list heads pick the winners.
extern "C" __global__ void knn_select(const float* __restrict__ dist, int* __restrict__ outIdx,
                                      float* __restrict__ outDist, int n, int k) {
	__shared__ float rd[KNN_THREADS];
	__shared__ int ri[KNN_THREADS];
	__shared__ int rt[KNN_THREADS];
	int q = blockIdx.x, t = threadIdx.x;
	const float* dq = dist + (size_t)q * n;
	float ld[KNN_MAXK];
	int li[KNN_MAXK];
	int cnt = 0;
	for (int i = t; i < n; i += KNN_THREADS) {
		float dv = dq[i];
		if (cnt == k && !knnLess(dv, i, ld[k - 1], li[k - 1])) continue;
		int p = cnt < k ? cnt++ : k - 1;
		while (p > 0 && knnLess(dv, i, ld[p - 1], li[p - 1])) {
			ld[p] = ld[p - 1];
			li[p] = li[p - 1];
			p--;
		}
		ld[p] = dv;
		li[p] = i;
	}
	int head = 0;
	for (int r = 0; r < k; r++) {
		bool has = head < cnt;
		rd[t] = has ? ld[head] : __int_as_float(0x7f800000);
		ri[t] = has ? li[head] : 0x7fffffff;
		rt[t] = t;
		__syncthreads();
		for (int s = KNN_THREADS / 2; s > 0; s >>= 1) {
			if (t < s && knnLess(rd[t + s], ri[t + s], rd[t], ri[t])) {
				rd[t] = rd[t + s];
				ri[t] = ri[t + s];
				rt[t] = rt[t + s];
			}
			__syncthreads();
		}
		if (t == 0) {
			outIdx[q * k + r] = ri[0];
			outDist[q * k + r] = rd[0];
		}
		if (t == rt[0]) head++;
		__syncthreads();
	}
}

// hotspot is one step of Rodinia's thermal simulation on a rows x cols grid:
// each cell moves toward its neighbours' temperatures, the ambient
// temperature and its power input (replicated boundary).
extern "C" __global__ void hotspot(const float* __restrict__ power, const float* __restrict__ tin,
                                   float* __restrict__ tout, int rows, int cols, float stepDivCap,
                                   float rx1, float ry1, float rz1, float amb) {
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	int r = blockIdx.y * blockDim.y + threadIdx.y;
	if (r >= rows || c >= cols) return;
	int n = r > 0 ? r - 1 : 0, s = r < rows - 1 ? r + 1 : rows - 1;
	int w = c > 0 ? c - 1 : 0, e = c < cols - 1 ? c + 1 : cols - 1;
	float t = tin[r * cols + c];
	float d = stepDivCap * (power[r * cols + c] + (tin[s * cols + c] + tin[n * cols + c] - 2.0f * t) * ry1 +
	                        (tin[r * cols + e] + tin[r * cols + w] - 2.0f * t) * rx1 + (amb - t) * rz1);
	tout[r * cols + c] = t + d;
}
