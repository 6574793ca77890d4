package jobs

import (
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// The kernels of workloads/kernels/jobs.cu, with the registers and static
// shared memory nvcc reports (the generated descriptors of `make kernels`).
var (
	kSobel, kSSSPInit, kSSSPRelax, kBPForward, kBPWgrad *device.Kernel
	kGEMM, kKNNDist, kKNNSelect, kHotspot               *device.Kernel

	kernelsOnce sync.Once
	kernelsErr  error
)

// loadKernels looks the descriptors up once; a missing one means the
// generated files are out of date with jobs.cu (run `make kernels`).
func loadKernels() error {
	kernelsOnce.Do(func() {
		for _, k := range []struct {
			dst  **device.Kernel
			name string
		}{
			{&kSobel, "sobel"}, {&kSSSPInit, "sssp_init"}, {&kSSSPRelax, "sssp_relax"},
			{&kBPForward, "bp_forward"}, {&kBPWgrad, "bp_wgrad"}, {&kGEMM, "gemm"},
			{&kKNNDist, "knn_dist"}, {&kKNNSelect, "knn_select"}, {&kHotspot, "hotspot"},
		} {
			var err error
			if *k.dst, err = kernels.Lookup("jobs", k.name); err != nil {
				kernelsErr = err
				return
			}
		}
	})
	return kernelsErr
}

// Compile-time constants shared with jobs.cu.
const (
	sobelTile  = 16
	gemmTile   = 16
	knnThreads = 256
	knnMaxK    = 8
)
