// Kernels of the KeSCo / GrCUDA multi-task benchmarks (workloads/kesco):
// VEC, B&S, ML, HITS, IMG, DL, M1 and M2. They are launched with
// deliberately few blocks, as in GrCUDA's benchmark suite, so that one
// kernel leaves most SMs idle and independent kernels can share the GPU;
// element-wise kernels therefore loop over their data with a grid stride.
// Reductions are deterministic: each block reduces a fixed share in a fixed
// tree and writes one partial; a later kernel combines the partials in
// index order. Outputs are checked against Go references with tolerances.

#define KESCO_THREADS 256

__device__ __forceinline__ int gtid() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int gstride() { return gridDim.x * blockDim.x; }

// block_sum reduces v over the block (KESCO_THREADS threads) in a fixed
// tree; thread 0 gets the sum.
__device__ float block_sum(float v, float* sh) {
	sh[threadIdx.x] = v;
	__syncthreads();
	for (int s = KESCO_THREADS / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
		__syncthreads();
	}
	return sh[0];
}

// ---- VEC: y1 = x^2, y2 = y^2, sum(y1 - y2) -------------------------------

extern "C" __global__ void kesco_square(const float* __restrict__ x, float* __restrict__ y, int n) {
	for (int i = gtid(); i < n; i += gstride()) y[i] = x[i] * x[i];
}

// kesco_diff_partial writes partial[blockIdx.x] = sum over the block's share
// of (a[i] - b[i]).
extern "C" __global__ void kesco_diff_partial(const float* __restrict__ a, const float* __restrict__ b,
                                              float* __restrict__ partial, int n) {
	__shared__ float sh[KESCO_THREADS];
	float s = 0.0f;
	for (int i = gtid(); i < n; i += gstride()) s += a[i] - b[i];
	float t = block_sum(s, sh);
	if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

// kesco_sum_final sums m partials into out[0]; one block.
extern "C" __global__ void kesco_sum_final(const float* __restrict__ partial, float* __restrict__ out, int m) {
	__shared__ float sh[KESCO_THREADS];
	float s = 0.0f;
	for (int i = threadIdx.x; i < m; i += KESCO_THREADS) s += partial[i];
	float t = block_sum(s, sh);
	if (threadIdx.x == 0) out[0] = t;
}

// ---- B&S: European call prices ------------------------------------------

__device__ __forceinline__ float cnd(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }

extern "C" __global__ void kesco_black_scholes(const float* __restrict__ spot, float* __restrict__ call, int n,
                                               float strike, float rate, float vol, float t) {
	float sq = vol * sqrtf(t);
	float disc = strike * expf(-rate * t);
	for (int i = gtid(); i < n; i += gstride()) {
		float s = spot[i];
		float d1 = (logf(s / strike) + (rate + 0.5f * vol * vol) * t) / sq;
		float d2 = d1 - sq;
		call[i] = s * cnd(d1) - disc * cnd(d2);
	}
}

// ---- ML: ridge regression and naive Bayes, joined by argmax -------------

// kesco_row_zscore normalizes each row of X (rows x f) to zero mean and
// unit variance.
extern "C" __global__ void kesco_row_zscore(const float* __restrict__ x, float* __restrict__ z, int rows, int f) {
	for (int r = gtid(); r < rows; r += gstride()) {
		const float* row = x + (long)r * f;
		float mean = 0.0f;
		for (int j = 0; j < f; j++) mean += row[j];
		mean /= f;
		float var = 0.0f;
		for (int j = 0; j < f; j++) {
			float d = row[j] - mean;
			var += d * d;
		}
		float inv = rsqrtf(var / f + 1e-6f);
		for (int j = 0; j < f; j++) z[(long)r * f + j] = (row[j] - mean) * inv;
	}
}

// kesco_matmul_bias computes out = x W + b for x (rows x f), W (f x c),
// b (c); one thread per output element.
extern "C" __global__ void kesco_matmul_bias(const float* __restrict__ x, const float* __restrict__ w,
                                             const float* __restrict__ b, float* __restrict__ out,
                                             int rows, int f, int c) {
	long total = (long)rows * c;
	for (long i = gtid(); i < total; i += gstride()) {
		int r = i / c, k = i % c;
		float s = b[k];
		for (int j = 0; j < f; j++) s += x[(long)r * f + j] * w[j * c + k];
		out[i] = s;
	}
}

// kesco_softmax_rows applies a numerically stable softmax to each row.
extern "C" __global__ void kesco_softmax_rows(const float* __restrict__ in, float* __restrict__ out, int rows, int c) {
	for (int r = gtid(); r < rows; r += gstride()) {
		const float* row = in + (long)r * c;
		float m = row[0];
		for (int k = 1; k < c; k++) m = fmaxf(m, row[k]);
		float s = 0.0f;
		for (int k = 0; k < c; k++) s += expf(row[k] - m);
		for (int k = 0; k < c; k++) out[(long)r * c + k] = expf(row[k] - m) / s;
	}
}

// kesco_argmax_sum writes sum = a + b and, per row, the index of its
// largest entry (the first on ties).
extern "C" __global__ void kesco_argmax_sum(const float* __restrict__ a, const float* __restrict__ b,
                                            float* __restrict__ sum, int* __restrict__ label, int rows, int c) {
	for (int r = gtid(); r < rows; r += gstride()) {
		int best = 0;
		float bv = -1e30f;
		for (int k = 0; k < c; k++) {
			float v = a[(long)r * c + k] + b[(long)r * c + k];
			sum[(long)r * c + k] = v;
			if (v > bv) {
				bv = v;
				best = k;
			}
		}
		label[r] = best;
	}
}

// ---- HITS: sparse matrix-vector products and normalization --------------

// kesco_spmv computes y = A x for A in CSR (n rows).
extern "C" __global__ void kesco_spmv(const int* __restrict__ rowptr, const int* __restrict__ col,
                                      const float* __restrict__ val, const float* __restrict__ x,
                                      float* __restrict__ y, int n) {
	for (int r = gtid(); r < n; r += gstride()) {
		float s = 0.0f;
		for (int e = rowptr[r]; e < rowptr[r + 1]; e++) s += val[e] * x[col[e]];
		y[r] = s;
	}
}

// kesco_sum_partial writes partial[blockIdx.x] = sum of the block's share of a.
extern "C" __global__ void kesco_sum_partial(const float* __restrict__ a, float* __restrict__ partial, int n) {
	__shared__ float sh[KESCO_THREADS];
	float s = 0.0f;
	for (int i = gtid(); i < n; i += gstride()) s += a[i];
	float t = block_sum(s, sh);
	if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

// kesco_divide_by_sum writes out = a / (sum of the m partials); every
// thread adds the partials in index order, so all agree on the sum.
extern "C" __global__ void kesco_divide_by_sum(const float* __restrict__ a, const float* __restrict__ partial, int m,
                                               float* __restrict__ out, int n) {
	float s = 0.0f;
	for (int j = 0; j < m; j++) s += partial[j];
	for (int i = gtid(); i < n; i += gstride()) out[i] = a[i] / s;
}

// ---- IMG: blurs, Sobel, min/max, unsharpen, combine ----------------------

// kesco_blur convolves a w x h image with a (2r+1)^2 kernel, clamping
// coordinates at the border.
extern "C" __global__ void kesco_blur(const float* __restrict__ in, const float* __restrict__ k,
                                      float* __restrict__ out, int w, int h, int r) {
	int d = 2 * r + 1;
	for (int i = gtid(); i < w * h; i += gstride()) {
		int x = i % w, y = i / w;
		float s = 0.0f;
		for (int dy = -r; dy <= r; dy++) {
			int yy = min(max(y + dy, 0), h - 1);
			for (int dx = -r; dx <= r; dx++) {
				int xx = min(max(x + dx, 0), w - 1);
				s += k[(dy + r) * d + (dx + r)] * in[yy * w + xx];
			}
		}
		out[i] = s;
	}
}

// kesco_sobel writes the Sobel gradient magnitude, clamping at the border.
extern "C" __global__ void kesco_sobel(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
	for (int i = gtid(); i < w * h; i += gstride()) {
		int x = i % w, y = i / w;
		int xm = max(x - 1, 0), xp = min(x + 1, w - 1), ym = max(y - 1, 0), yp = min(y + 1, h - 1);
		float a00 = in[ym * w + xm], a01 = in[ym * w + x], a02 = in[ym * w + xp];
		float a10 = in[y * w + xm], a12 = in[y * w + xp];
		float a20 = in[yp * w + xm], a21 = in[yp * w + x], a22 = in[yp * w + xp];
		float gx = (a02 + 2.0f * a12 + a22) - (a00 + 2.0f * a10 + a20);
		float gy = (a20 + 2.0f * a21 + a22) - (a00 + 2.0f * a01 + a02);
		out[i] = sqrtf(gx * gx + gy * gy);
	}
}

// kesco_minmax_partial writes partial[2b] = min and partial[2b+1] = max of
// block b's share of a.
extern "C" __global__ void kesco_minmax_partial(const float* __restrict__ a, float* __restrict__ partial, int n) {
	__shared__ float lo[KESCO_THREADS], hi[KESCO_THREADS];
	float mn = 3.0e38f, mx = -3.0e38f;
	for (int i = gtid(); i < n; i += gstride()) {
		mn = fminf(mn, a[i]);
		mx = fmaxf(mx, a[i]);
	}
	lo[threadIdx.x] = mn;
	hi[threadIdx.x] = mx;
	__syncthreads();
	for (int s = KESCO_THREADS / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			lo[threadIdx.x] = fminf(lo[threadIdx.x], lo[threadIdx.x + s]);
			hi[threadIdx.x] = fmaxf(hi[threadIdx.x], hi[threadIdx.x + s]);
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		partial[2 * blockIdx.x] = lo[0];
		partial[2 * blockIdx.x + 1] = hi[0];
	}
}

// kesco_extend stretches a to [0, 1] with the min and max of m partials.
extern "C" __global__ void kesco_extend(const float* __restrict__ a, const float* __restrict__ partial, int m,
                                        float* __restrict__ out, int n) {
	float mn = partial[0], mx = partial[1];
	for (int j = 1; j < m; j++) {
		mn = fminf(mn, partial[2 * j]);
		mx = fmaxf(mx, partial[2 * j + 1]);
	}
	float inv = mx > mn ? 1.0f / (mx - mn) : 0.0f;
	for (int i = gtid(); i < n; i += gstride()) out[i] = (a[i] - mn) * inv;
}

// kesco_unsharpen sharpens img against its blur, clamped to [0, 1].
extern "C" __global__ void kesco_unsharpen(const float* __restrict__ img, const float* __restrict__ blur,
                                           float* __restrict__ out, float amount, int n) {
	for (int i = gtid(); i < n; i += gstride())
		out[i] = fminf(fmaxf(img[i] * (1.0f + amount) - blur[i] * amount, 0.0f), 1.0f);
}

// kesco_combine blends a and b by mask: a*mask + b*(1-mask).
extern "C" __global__ void kesco_combine(const float* __restrict__ a, const float* __restrict__ b,
                                         const float* __restrict__ mask, float* __restrict__ out, int n) {
	for (int i = gtid(); i < n; i += gstride()) out[i] = a[i] * mask[i] + b[i] * (1.0f - mask[i]);
}

// ---- DL: convolutions, pooling, concatenation, dense ---------------------

// kesco_conv3x3_relu: out[co][y][x] = relu(b[co] + sum_ci sum_3x3
// w[co][ci][ky][kx] * in[ci][y+ky-1][x+kx-1]), zero padding.
extern "C" __global__ void kesco_conv3x3_relu(const float* __restrict__ in, const float* __restrict__ w,
                                              const float* __restrict__ b, float* __restrict__ out,
                                              int cin, int cout, int h, int wd) {
	int total = cout * h * wd;
	for (int i = gtid(); i < total; i += gstride()) {
		int x = i % wd, y = (i / wd) % h, co = i / (wd * h);
		float s = b[co];
		for (int ci = 0; ci < cin; ci++)
			for (int ky = 0; ky < 3; ky++) {
				int yy = y + ky - 1;
				if (yy < 0 || yy >= h) continue;
				for (int kx = 0; kx < 3; kx++) {
					int xx = x + kx - 1;
					if (xx < 0 || xx >= wd) continue;
					s += w[((co * cin + ci) * 3 + ky) * 3 + kx] * in[(ci * h + yy) * wd + xx];
				}
			}
		out[i] = fmaxf(s, 0.0f);
	}
}

// kesco_maxpool2 halves each spatial dimension of c channels (h, w even).
extern "C" __global__ void kesco_maxpool2(const float* __restrict__ in, float* __restrict__ out, int c, int h, int wd) {
	int ho = h / 2, wo = wd / 2, total = c * ho * wo;
	for (int i = gtid(); i < total; i += gstride()) {
		int x = i % wo, y = (i / wo) % ho, ch = i / (wo * ho);
		const float* p = in + (ch * h + 2 * y) * wd + 2 * x;
		out[i] = fmaxf(fmaxf(p[0], p[1]), fmaxf(p[wd], p[wd + 1]));
	}
}

// kesco_concat writes out = [a, b].
extern "C" __global__ void kesco_concat(const float* __restrict__ a, int na, const float* __restrict__ b, int nb,
                                        float* __restrict__ out) {
	for (int i = gtid(); i < na + nb; i += gstride()) out[i] = i < na ? a[i] : b[i - na];
}

// kesco_dense: out[j] = b[j] + sum_i w[j][i] x[i]; one block per output.
extern "C" __global__ void kesco_dense(const float* __restrict__ x, const float* __restrict__ w,
                                       const float* __restrict__ b, float* __restrict__ out, int n) {
	__shared__ float sh[KESCO_THREADS];
	int j = blockIdx.x;
	float s = 0.0f;
	for (int i = threadIdx.x; i < n; i += KESCO_THREADS) s += w[(long)j * n + i] * x[i];
	float t = block_sum(s, sh);
	if (threadIdx.x == 0) out[j] = t + b[j];
}

// ---- M1, M2: fused bias + activation layers -----------------------------

__device__ __forceinline__ float gelu(float x) {
	return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

// The bias has nb entries, broadcast over the data (bias[i % nb]).
extern "C" __global__ void kesco_bias_gelu(const float* __restrict__ in, const float* __restrict__ bias,
                                           float* __restrict__ out, int n, int nb) {
	for (int i = gtid(); i < n; i += gstride()) out[i] = gelu(in[i] + bias[i % nb]);
}

extern "C" __global__ void kesco_bias_silu(const float* __restrict__ in, const float* __restrict__ bias,
                                           float* __restrict__ out, int n, int nb) {
	for (int i = gtid(); i < n; i += gstride()) {
		float v = in[i] + bias[i % nb];
		out[i] = v / (1.0f + expf(-v));
	}
}

// kesco_bias_gated_relu: out = relu(in + bias) * gate.
extern "C" __global__ void kesco_bias_gated_relu(const float* __restrict__ in, const float* __restrict__ gate,
                                                 const float* __restrict__ bias, float* __restrict__ out, int n, int nb) {
	for (int i = gtid(); i < n; i += gstride()) out[i] = fmaxf(in[i] + bias[i % nb], 0.0f) * gate[i];
}

// kesco_bias_residual: out = a + b + bias.
extern "C" __global__ void kesco_bias_residual(const float* __restrict__ a, const float* __restrict__ b,
                                               const float* __restrict__ bias, float* __restrict__ out, int n, int nb) {
	for (int i = gtid(); i < n; i += gstride()) out[i] = a[i] + b[i] + bias[i % nb];
}

// kesco_bias_residual3: out = a + b + c + bias.
extern "C" __global__ void kesco_bias_residual3(const float* __restrict__ a, const float* __restrict__ b,
                                                const float* __restrict__ c, const float* __restrict__ bias,
                                                float* __restrict__ out, int n, int nb) {
	for (int i = gtid(); i < n; i += gstride()) out[i] = a[i] + b[i] + c[i] + bias[i % nb];
}

// kesco_sum4: out = a + b + c + d (M1's final reduction over its branches).
extern "C" __global__ void kesco_sum4(const float* __restrict__ a, const float* __restrict__ b,
                                      const float* __restrict__ c, const float* __restrict__ d,
                                      float* __restrict__ out, int n) {
	for (int i = gtid(); i < n; i += gstride()) out[i] = (a[i] + b[i]) + (c[i] + d[i]);
}
