// nn: fp32 kernels of batch-1 DNN inference (workloads/nn builds networks of
// them). Feature maps are NCHW with N = 1, so a feature map is [C][H][W] and a
// channel slice is contiguous. Every kernel is deterministic (no atomics, a
// fixed reduction order), so any schedule of the same program computes
// bit-identical outputs. Grids are what batch-1 inference gives: one thread
// per output element for convolutions, pools and elementwise operations, a
// 32x32 output tile per block for GEMM, one block per row for softmax and
// layer norm.
//
// Activation codes (act arguments), shared with workloads/nn:
//   0 none, 1 relu, 2 relu6, 3 gelu (erf form), 4 sigmoid, 5 swish (x*sigmoid(x)),
//   6 tanh-relu (max(0, tanh(x)), the soft gate of dynamic routing).
//
// gpusched:nvcc -fmad=false
// (no multiply-add contraction: every product and sum rounds as in the Go
// reference, so outputs track workloads/nn's CPU evaluation closely)

#define NN_ACT_NONE 0
#define NN_ACT_RELU 1
#define NN_ACT_RELU6 2
#define NN_ACT_GELU 3
#define NN_ACT_SIGMOID 4
#define NN_ACT_SWISH 5
#define NN_ACT_TANHRELU 6

__device__ __forceinline__ float nn_act(float v, int act)
{
	switch (act) {
	case NN_ACT_RELU:
		return v > 0.f ? v : 0.f;
	case NN_ACT_RELU6:
		return fminf(fmaxf(v, 0.f), 6.f);
	case NN_ACT_GELU:
		return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
	case NN_ACT_SIGMOID:
		return 1.f / (1.f + expf(-v));
	case NN_ACT_SWISH:
		return v / (1.f + expf(-v));
	case NN_ACT_TANHRELU:
		return fmaxf(tanhf(v), 0.f);
	}
	return v;
}

// nn_conv2d: direct convolution, one thread per output element.
// x [cin][h][w], w [cout][cin/groups][kh][kw], b [cout] (folded batch norm),
// y [cout][ho][wo]. Padding may be negative (a shifted sampling grid, as the
// second path of NASNet's factorized reduction uses).
extern "C" __global__ void nn_conv2d(const float* __restrict__ x, const float* __restrict__ w,
	const float* __restrict__ b, float* __restrict__ y, int cin, int h, int wd, int cout, int ho,
	int wo, int kh, int kw, int stride, int ph, int pw, int groups, int act)
{
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= cout * ho * wo)
		return;
	int ox = idx % wo;
	int oy = (idx / wo) % ho;
	int oc = idx / (wo * ho);
	int cinG = cin / groups;
	int g = oc / (cout / groups);
	const float* wp = w + (size_t)oc * cinG * kh * kw;
	float acc = b[oc];
	for (int ic = 0; ic < cinG; ic++) {
		const float* xp = x + (size_t)(g * cinG + ic) * h * wd;
		const float* wq = wp + ic * kh * kw;
		for (int ky = 0; ky < kh; ky++) {
			int iy = oy * stride - ph + ky;
			if (iy < 0 || iy >= h)
				continue;
			for (int kx = 0; kx < kw; kx++) {
				int ix = ox * stride - pw + kx;
				if (ix < 0 || ix >= wd)
					continue;
				acc += xp[iy * wd + ix] * wq[ky * kw + kx];
			}
		}
	}
	y[idx] = nn_act(acc, act);
}

// nn_gemm: C = act(alpha * op(A) op(B) + bias), batched over blockIdx.z with
// element strides. op(A) is M x K (A[r*lda+k], or A[k*lda+r] when transA),
// op(B) is K x N (B[k*ldb+c], or B[c*ldb+k] when transB). biasMode 0: none,
// 1: bias[r] per row (a 1x1 convolution), 2: bias[c] per column (a linear
// layer on row vectors). Block 32x8 threads computes a 32x32 tile, each
// thread four rows of one column.
#define NN_TS 32
extern "C" __global__ void nn_gemm(const float* __restrict__ A, const float* __restrict__ B,
	const float* __restrict__ bias, float* __restrict__ C, int M, int N, int K, int lda, int ldb,
	int ldc, int transA, int transB, long long strideA, long long strideB, long long strideC,
	int biasMode, int act, float alpha)
{
	__shared__ float As[NN_TS][NN_TS + 1];
	__shared__ float Bs[NN_TS][NN_TS + 1];
	int z = blockIdx.z;
	A += z * strideA;
	B += z * strideB;
	C += z * strideC;
	int tx = threadIdx.x, ty = threadIdx.y;
	int row0 = blockIdx.y * NN_TS, col0 = blockIdx.x * NN_TS;
	float acc[4] = {0.f, 0.f, 0.f, 0.f};
	for (int k0 = 0; k0 < K; k0 += NN_TS) {
		for (int i = ty; i < NN_TS; i += 8) {
			int r = row0 + i, k = k0 + tx;
			As[i][tx] = (r < M && k < K) ? (transA ? A[(size_t)k * lda + r] : A[(size_t)r * lda + k]) : 0.f;
			int kk = k0 + i, c = col0 + tx;
			Bs[i][tx] = (kk < K && c < N) ? (transB ? B[(size_t)c * ldb + kk] : B[(size_t)kk * ldb + c]) : 0.f;
		}
		__syncthreads();
		for (int k = 0; k < NN_TS; k++) {
			float bv = Bs[k][tx];
#pragma unroll
			for (int j = 0; j < 4; j++)
				acc[j] += As[ty + 8 * j][k] * bv;
		}
		__syncthreads();
	}
#pragma unroll
	for (int j = 0; j < 4; j++) {
		int r = row0 + ty + 8 * j, c = col0 + tx;
		if (r < M && c < N) {
			float v = alpha * acc[j];
			if (biasMode == 1)
				v += bias[r];
			else if (biasMode == 2)
				v += bias[c];
			C[(size_t)r * ldc + c] = nn_act(v, act);
		}
	}
}

// nn_gemv: y[m] = act(sum_k W[m*K+k] x[k] + b[m]), one warp per row (a
// linear layer at batch 1). Lanes sum strided partial sums, then a fixed
// butterfly reduction.
extern "C" __global__ void nn_gemv(const float* __restrict__ W, const float* __restrict__ x,
	const float* __restrict__ b, float* __restrict__ y, int M, int K, int act)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	if (row >= M)
		return;
	const float* wr = W + (size_t)row * K;
	float acc = 0.f;
	for (int k = lane; k < K; k += 32)
		acc += wr[k] * x[k];
	for (int off = 16; off > 0; off /= 2)
		acc += __shfl_xor_sync(0xffffffffu, acc, off);
	if (lane == 0)
		y[row] = nn_act(acc + b[row], act);
}

// nn_pool2d: max (mode 0) or average (mode 1, over the window's in-bounds
// elements) pooling, one thread per output element.
extern "C" __global__ void nn_pool2d(const float* __restrict__ x, float* __restrict__ y, int c,
	int h, int wd, int ho, int wo, int k, int stride, int pad, int mode)
{
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= c * ho * wo)
		return;
	int ox = idx % wo;
	int oy = (idx / wo) % ho;
	int ch = idx / (wo * ho);
	const float* xp = x + (size_t)ch * h * wd;
	float acc = mode == 0 ? -3.402823466e38f : 0.f;
	int n = 0;
	for (int ky = 0; ky < k; ky++) {
		int iy = oy * stride - pad + ky;
		if (iy < 0 || iy >= h)
			continue;
		for (int kx = 0; kx < k; kx++) {
			int ix = ox * stride - pad + kx;
			if (ix < 0 || ix >= wd)
				continue;
			float v = xp[iy * wd + ix];
			if (mode == 0)
				acc = fmaxf(acc, v);
			else
				acc += v;
			n++;
		}
	}
	if (mode == 1)
		acc = n > 0 ? acc / (float)n : 0.f;
	else if (n == 0)
		acc = 0.f;
	y[idx] = acc;
}

// nn_global_avgpool: y[ch] = mean of x[ch][*], one warp per channel.
extern "C" __global__ void nn_global_avgpool(const float* __restrict__ x, float* __restrict__ y,
	int c, int hw)
{
	int ch = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	if (ch >= c)
		return;
	const float* xp = x + (size_t)ch * hw;
	float acc = 0.f;
	for (int i = lane; i < hw; i += 32)
		acc += xp[i];
	for (int off = 16; off > 0; off /= 2)
		acc += __shfl_xor_sync(0xffffffffu, acc, off);
	if (lane == 0)
		y[ch] = acc / (float)hw;
}

// nn_unary: y = act(x) elementwise (act 0 is a copy).
extern "C" __global__ void nn_unary(const float* __restrict__ x, float* __restrict__ y, int n, int act)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = nn_act(x[i], act);
}

// nn_binary: y = act(a op b) elementwise; op 0 add, 1 mul.
extern "C" __global__ void nn_binary(const float* __restrict__ a, const float* __restrict__ b,
	float* __restrict__ y, int n, int op, int act)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = nn_act(op == 0 ? a[i] + b[i] : a[i] * b[i], act);
}

// nn_channel_affine: y[c][i] = act(x[c][i] * scale[c] + bias[c]) (a batch norm
// in inference form, or a per-channel scale).
extern "C" __global__ void nn_channel_affine(const float* __restrict__ x,
	const float* __restrict__ scale, const float* __restrict__ bias, float* __restrict__ y, int c,
	int hw, int act)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= c * hw)
		return;
	int ch = i / hw;
	y[i] = nn_act(x[i] * scale[ch] + bias[ch], act);
}

// nn_sum: y = act(scale * sum_j coef_j * x_j) over k <= 8 inputs of n
// elements. coef_j is read from device memory (a gate or an aggregation
// weight computed or stored on the GPU); a null coef_j means 1.
extern "C" __global__ void nn_sum(float* __restrict__ y, int n, int k, float scale, int act,
	const float* x0, const float* x1, const float* x2, const float* x3, const float* x4,
	const float* x5, const float* x6, const float* x7, const float* c0, const float* c1,
	const float* c2, const float* c3, const float* c4, const float* c5, const float* c6,
	const float* c7)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const float* xs[8] = {x0, x1, x2, x3, x4, x5, x6, x7};
	const float* cs[8] = {c0, c1, c2, c3, c4, c5, c6, c7};
	float acc = 0.f;
	for (int j = 0; j < k; j++) {
		float v = xs[j][i];
		if (cs[j])
			v *= cs[j][0];
		acc += v;
	}
	y[i] = nn_act(scale * acc, act);
}

// nn_concat: y = concatenation along channels of k <= 8 feature maps with
// c_j channels of hw elements each, one thread per output element.
extern "C" __global__ void nn_concat(float* __restrict__ y, int hw, int k, const float* x0,
	const float* x1, const float* x2, const float* x3, const float* x4, const float* x5,
	const float* x6, const float* x7, int c0, int c1, int c2, int c3, int c4, int c5, int c6,
	int c7)
{
	const float* xs[8] = {x0, x1, x2, x3, x4, x5, x6, x7};
	int cs[8] = {c0, c1, c2, c3, c4, c5, c6, c7};
	int total = 0;
	for (int j = 0; j < k; j++)
		total += cs[j];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= total * hw)
		return;
	int ch = i / hw, r = i % hw;
	int j = 0;
	while (ch >= cs[j]) {
		ch -= cs[j];
		j++;
	}
	y[i] = xs[j][(size_t)ch * hw + r];
}

// nn_upsample2x: nearest-neighbour 2x upsampling, y [c][2h][2w].
extern "C" __global__ void nn_upsample2x(const float* __restrict__ x, float* __restrict__ y, int c,
	int h, int wd)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int ho = 2 * h, wo = 2 * wd;
	if (i >= c * ho * wo)
		return;
	int ox = i % wo, oy = (i / wo) % ho, ch = i / (wo * ho);
	y[i] = x[((size_t)ch * h + oy / 2) * wd + ox / 2];
}

// nn_mix: y[i] = sum_e coef[e] * src[e*n + i] (CondConv: the input's kernel
// as the routing-weighted sum of E expert kernels).
extern "C" __global__ void nn_mix(const float* __restrict__ src, const float* __restrict__ coef,
	float* __restrict__ y, int e, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float acc = 0.f;
	for (int j = 0; j < e; j++)
		acc += coef[j] * src[(size_t)j * n + i];
	y[i] = acc;
}

// Block reductions over 128 threads in a fixed order.
#define NN_RB 128
__device__ __forceinline__ float nn_block_sum(float v, float* sh)
{
	sh[threadIdx.x] = v;
	__syncthreads();
	for (int s = NN_RB / 2; s > 0; s /= 2) {
		if (threadIdx.x < s)
			sh[threadIdx.x] += sh[threadIdx.x + s];
		__syncthreads();
	}
	float r = sh[0];
	__syncthreads();
	return r;
}

__device__ __forceinline__ float nn_block_max(float v, float* sh)
{
	sh[threadIdx.x] = v;
	__syncthreads();
	for (int s = NN_RB / 2; s > 0; s /= 2) {
		if (threadIdx.x < s)
			sh[threadIdx.x] = fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]);
		__syncthreads();
	}
	float r = sh[0];
	__syncthreads();
	return r;
}

// nn_softmax: y[r] = softmax(scale * x[r]) over rows of cols, one block of
// 128 threads per row.
extern "C" __global__ void nn_softmax(const float* __restrict__ x, float* __restrict__ y, int rows,
	int cols, float scale)
{
	__shared__ float sh[NN_RB];
	int r = blockIdx.x;
	if (r >= rows)
		return;
	const float* xr = x + (size_t)r * cols;
	float* yr = y + (size_t)r * cols;
	float m = -3.402823466e38f;
	for (int i = threadIdx.x; i < cols; i += NN_RB)
		m = fmaxf(m, scale * xr[i]);
	m = nn_block_max(m, sh);
	float s = 0.f;
	for (int i = threadIdx.x; i < cols; i += NN_RB)
		s += expf(scale * xr[i] - m);
	s = nn_block_sum(s, sh);
	float inv = 1.f / s;
	for (int i = threadIdx.x; i < cols; i += NN_RB)
		yr[i] = expf(scale * xr[i] - m) * inv;
}

// nn_layernorm: y[r] = (x[r] - mean) / sqrt(var + eps) * gamma + beta over
// rows of cols, one block of 128 threads per row.
extern "C" __global__ void nn_layernorm(const float* __restrict__ x, const float* __restrict__ gamma,
	const float* __restrict__ beta, float* __restrict__ y, int rows, int cols, float eps)
{
	__shared__ float sh[NN_RB];
	int r = blockIdx.x;
	if (r >= rows)
		return;
	const float* xr = x + (size_t)r * cols;
	float* yr = y + (size_t)r * cols;
	float s = 0.f;
	for (int i = threadIdx.x; i < cols; i += NN_RB)
		s += xr[i];
	float mean = nn_block_sum(s, sh) / (float)cols;
	float v = 0.f;
	for (int i = threadIdx.x; i < cols; i += NN_RB) {
		float d = xr[i] - mean;
		v += d * d;
	}
	float var = nn_block_sum(v, sh) / (float)cols;
	float inv = rsqrtf(var + eps);
	for (int i = threadIdx.x; i < cols; i += NN_RB)
		yr[i] = (xr[i] - mean) * inv * gamma[i] + beta[i];
}
