//go:build cuda

package cuda

// The driver calls mumax's package lacks, and the hot path. Every helper
// returns the CUresult; Go turns a failure into a *device.APIError.

/*
#cgo LDFLAGS: -lcuda
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -L/usr/lib/x86_64-linux-gnu
#cgo CFLAGS: -I/usr/local/cuda/include -I/usr/include
#include "gs.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/mumax/3/cuda/cu"

	"github.com/gpusched/gpusched/device"
)

// errorName is CUDA's name for r ("CUDA_ERROR_INVALID_VALUE").
func errorName(r C.CUresult) string {
	if s := C.gs_error_name(r); s != nil {
		return C.GoString(s)
	}
	return fmt.Sprintf("CUresult(%d)", int(r))
}

// apiErr is the error of a failed driver call.
func apiErr(call string, r C.CUresult) error {
	return &device.APIError{Call: call, Code: errorName(r)}
}

// check turns a CUresult into an error naming call.
func check(call string, r C.CUresult) error {
	if r = injected(call, r); r == C.CUDA_SUCCESS {
		return nil
	}
	return apiErr(call, r)
}

// guard runs a mumax call, turning its panic into an error naming call and
// CUDA's error name. No mumax panic leaves this package.
func guard(call string, f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if res, ok := p.(cu.Result); ok {
				err = apiErr(call, C.CUresult(res))
				return
			}
			err = &device.APIError{Call: call, Code: "panic", Msg: fmt.Sprint(p)}
		}
	}()
	f()
	if r := injected(call, C.CUDA_SUCCESS); r != C.CUDA_SUCCESS {
		return apiErr(call, r)
	}
	return nil
}

// maxArgs bounds a launch's arguments (CUDA's limit is 4 KB of parameters,
// 512 pointers; no gpusched kernel comes near 64).
const maxArgs = 64

// argScratch is a host thread's kernelParams: params[i] points at vals[i],
// both in C memory, allocated once per host thread.
type argScratch struct {
	params *unsafe.Pointer
	vals   *[maxArgs]C.uint64_t
	sc     *C.gs_scratch
}

func newArgScratch() (argScratch, error) {
	var vals *C.uint64_t
	p := C.gs_params_alloc(maxArgs, &vals)
	sc := (*C.gs_scratch)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gs_scratch{}))))
	if p == nil || sc == nil {
		C.free(unsafe.Pointer(p))
		C.free(unsafe.Pointer(vals))
		C.free(unsafe.Pointer(sc))
		return argScratch{}, fmt.Errorf("cuda: out of host memory for launch argument scratch")
	}
	return argScratch{params: p, vals: (*[maxArgs]C.uint64_t)(unsafe.Pointer(vals)), sc: sc}, nil
}

func (a *argScratch) free() {
	if a.params == nil {
		return
	}
	C.free(unsafe.Pointer(a.vals))
	C.free(unsafe.Pointer(a.params))
	C.free(unsafe.Pointer(a.sc))
	*a = argScratch{}
}

// marshal writes l's arguments into the scratch values.
func (a *argScratch) marshal(l *device.Launch) error {
	if len(l.Args) > maxArgs {
		return &device.LaunchError{Launch: l.Name(), Code: "CUDA_ERROR_INVALID_VALUE",
			Rule: fmt.Sprintf("%d arguments; this backend passes at most %d", len(l.Args), maxArgs)}
	}
	for i := range l.Args {
		arg := &l.Args[i]
		if arg.Kind == device.ArgBuffer {
			a.vals[i] = C.uint64_t(arg.Buf.Addr + uint64(arg.Off))
		} else {
			a.vals[i] = C.uint64_t(arg.Bits)
		}
	}
	return nil
}
