//go:build cuda

// The C side of package cuda: the driver calls mumax lacks and the hot
// path, each returning its CUresult.
#include <string.h>

#include "gs.h"

// Implemented in Go (callback.go).
extern void gpuschedHostFunc(uintptr_t handle);

static void CUDA_CB gs_host_trampoline(void *data) { gpuschedHostFunc((uintptr_t)data); }

CUresult gs_launch_host_func(CUstream s, uintptr_t handle) {
	return cuLaunchHostFunc(s, gs_host_trampoline, (void *)handle);
}

CUresult gs_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, unsigned shm,
                          CUstream s, void **params) {
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, s, params, NULL);
}

// The same launch loop as the Go path, in C: the benchmark's reference.
CUresult gs_launch_loop(CUfunction f, CUstream s, int n, void **params) {
	for (int i = 0; i < n; i++) {
		CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
		if (r != CUDA_SUCCESS) return r;
	}
	return CUDA_SUCCESS;
}

CUresult gs_htod(CUdeviceptr dst, uintptr_t src, size_t n, CUstream s) {
	return cuMemcpyHtoDAsync(dst, (const void *)src, n, s);
}
CUresult gs_dtoh(uintptr_t dst, CUdeviceptr src, size_t n, CUstream s) {
	return cuMemcpyDtoHAsync((void *)dst, src, n, s);
}
CUresult gs_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
	return cuMemcpyDtoDAsync(dst, src, n, s);
}



CUresult gs_elapsed(gs_scratch *sc, CUevent a, CUevent b) {
	return cuEventElapsedTime(&sc->ms, a, b);
}

// The node a capturing stream's last command added: right after a command
// is captured, the stream's dependency set is exactly that node.
CUresult gs_capture_last(gs_scratch *sc, CUstream s) {
	cuuint64_t id;
	CUgraph g;
	const CUgraphNode *deps = NULL;
	size_t n = 0;
	CUresult r = cuStreamGetCaptureInfo_v2(s, &sc->status, &id, &g, &deps, &n);
	sc->ndeps = n;
	sc->node = (n == 1) ? deps[0] : NULL;
	return r;
}

CUresult gs_set_kernel_node(CUgraphExec x, CUgraphNode n, CUfunction f,
                                   unsigned gx, unsigned gy, unsigned gz,
                                   unsigned bx, unsigned by, unsigned bz,
                                   unsigned shm, void **params) {
	CUDA_KERNEL_NODE_PARAMS p;
	memset(&p, 0, sizeof p);
	p.func = f;
	p.gridDimX = gx; p.gridDimY = gy; p.gridDimZ = gz;
	p.blockDimX = bx; p.blockDimY = by; p.blockDimZ = bz;
	p.sharedMemBytes = shm;
	p.kernelParams = params;
	return cuGraphExecKernelNodeSetParams(x, n, &p);
}

// kind: 0 host to device, 1 device to host, 2 device to device.
CUresult gs_set_copy_node(CUgraphExec x, CUgraphNode n, CUcontext ctx, int kind,
                                 CUdeviceptr dst, CUdeviceptr src, uintptr_t host, size_t bytes) {
	CUDA_MEMCPY3D p;
	memset(&p, 0, sizeof p);
	switch (kind) {
	case 0:
		p.srcMemoryType = CU_MEMORYTYPE_HOST; p.srcHost = (const void *)host;
		p.dstMemoryType = CU_MEMORYTYPE_DEVICE; p.dstDevice = dst;
		break;
	case 1:
		p.srcMemoryType = CU_MEMORYTYPE_DEVICE; p.srcDevice = src;
		p.dstMemoryType = CU_MEMORYTYPE_HOST; p.dstHost = (void *)host;
		break;
	default:
		p.srcMemoryType = CU_MEMORYTYPE_DEVICE; p.srcDevice = src;
		p.dstMemoryType = CU_MEMORYTYPE_DEVICE; p.dstDevice = dst;
	}
	p.WidthInBytes = bytes;
	p.Height = 1;
	p.Depth = 1;
	return cuGraphExecMemcpyNodeSetParams(x, n, &p, ctx);
}

CUresult gs_stream_create(CUstream *s, unsigned flags, int prio) {
	return cuStreamCreateWithPriority(s, flags, prio);
}

const char *gs_error_name(CUresult r) {
	const char *s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL) return NULL;
	return s;
}

void **gs_params_alloc(int n, uint64_t **vals) {
	void **p = (void **)calloc((size_t)n, sizeof(void *));
	uint64_t *v = (uint64_t *)calloc((size_t)n, sizeof(uint64_t));
	if (!p || !v) { free(p); free(v); return NULL; }
	for (int i = 0; i < n; i++) p[i] = &v[i];
	*vals = v;
	return p;
}
