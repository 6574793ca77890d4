// Declarations of gs.c, shared by every cgo file of package cuda.
#ifndef GPUSCHED_GS_H
#define GPUSCHED_GS_H

#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>

// Per-host scratch for results, so the hot path passes no Go pointers.
typedef struct {
	float ms;
	CUgraphNode node;
	size_t ndeps;
	CUstreamCaptureStatus status;
} gs_scratch;

CUresult gs_launch_host_func(CUstream s, uintptr_t handle);
CUresult gs_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shm, CUstream s, void **params);
CUresult gs_launch_loop(CUfunction f, CUstream s, int n, void **params);
CUresult gs_htod(CUdeviceptr dst, uintptr_t src, size_t n, CUstream s);
CUresult gs_dtoh(uintptr_t dst, CUdeviceptr src, size_t n, CUstream s);
CUresult gs_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult gs_elapsed(gs_scratch *sc, CUevent a, CUevent b);
CUresult gs_capture_last(gs_scratch *sc, CUstream s);
CUresult gs_set_kernel_node(CUgraphExec x, CUgraphNode n, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shm, void **params);
CUresult gs_set_copy_node(CUgraphExec x, CUgraphNode n, CUcontext ctx, int kind, CUdeviceptr dst, CUdeviceptr src, uintptr_t host, size_t bytes);
CUresult gs_stream_create(CUstream *s, unsigned flags, int prio);
const char *gs_error_name(CUresult r);
void **gs_params_alloc(int n, uint64_t **vals);

#endif
