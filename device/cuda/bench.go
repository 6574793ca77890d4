//go:build cuda

package cuda

/*
#include "gs.h"
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/mumax/3/cuda/cu"

	"github.com/gpusched/gpusched/device"
)

// loopTarget is what a launch loop (op) needs from its arguments: the
// backend's host thread, its stream and the kernel's function.
func loopTarget(h device.Host, s device.Stream, k *device.Kernel, op string) (*host, *stream, *function, error) {
	hh, ok := h.(*host)
	if !ok {
		return nil, nil, nil, fmt.Errorf("cuda: %s: %T is not a host thread of this backend", op, h)
	}
	st, err := hh.stream(s, op)
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := hh.fn(k)
	if err != nil {
		return nil, nil, nil, err
	}
	return hh, st, f, nil
}

// LaunchLoopC launches kernel k (which must take no arguments) n times on s
// with grid and block (1,1,1), in a loop written in C against the driver:
// the reference the Go launch path is measured against. It must be called
// from the host thread h. It returns the loop's wall time.
func LaunchLoopC(h device.Host, s device.Stream, k *device.Kernel, n int) (time.Duration, error) {
	hh, st, f, err := loopTarget(h, s, k, "LaunchLoopC")
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := check("cuLaunchKernel", C.gs_launch_loop(f.f, st.s, C.int(n), hh.args.params)); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// LaunchLoopMumax is LaunchLoopC's loop through mumax's cu.LaunchKernel (which
// allocates and frees its argument arrays with malloc on every call), for
// comparison. It must be called from the host thread h.
func LaunchLoopMumax(h device.Host, s device.Stream, k *device.Kernel, n int) (time.Duration, error) {
	_, st, f, err := loopTarget(h, s, k, "LaunchLoopMumax")
	if err != nil {
		return 0, err
	}
	fn := *(*cu.Function)(unsafe.Pointer(&f.f))
	cs := *(*cu.Stream)(unsafe.Pointer(&st.s))
	start := time.Now()
	err = guard("cuLaunchKernel", func() {
		for i := 0; i < n; i++ {
			cu.LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, cs, nil)
		}
	})
	return time.Since(start), err
}

// LaunchLoopCgo is LaunchLoopC's loop written in Go, one cgo call per
// launch and nothing else (no validation, no handle checks): it separates
// the cost of crossing from Go into C from the cost of the Device path.
func LaunchLoopCgo(h device.Host, s device.Stream, k *device.Kernel, n int) (time.Duration, error) {
	hh, st, f, err := loopTarget(h, s, k, "LaunchLoopCgo")
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if r := C.gs_launch(f.f, 1, 1, 1, 1, 1, 1, 0, st.s, hh.args.params); r != C.CUDA_SUCCESS {
			return 0, apiErr("cuLaunchKernel", r)
		}
	}
	return time.Since(start), nil
}
