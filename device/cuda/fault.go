//go:build cuda

package cuda

// Failure injection, for tests: every driver error path must come back as a
// *device.APIError that names the call, and the only way to reach most of
// them on a healthy GPU is to make the driver "fail". injectFault arms a
// fault: the nth later call of a named driver function reports code instead
// of its result. The call itself has run (and, if it created something, that
// stays created: a test's leak, never a user's); what is tested is that the
// backend turns the failure into an error rather than carrying on. Checked
// at the package's funnels: check and guard (driver.go) and the calls whose
// results are tested in line (cuLaunchKernel, cuMemcpy*Async,
// cuLaunchHostFunc, cuEventQuery, cuStreamQuery in host.go;
// cuStreamEndCapture, cuGraphLaunch in graph.go). With nothing armed it
// costs one atomic load, and allocates nothing.

/*
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type fault struct {
	call string
	nth  int
	seen int
	code C.CUresult
}

var (
	faultsArmed atomic.Bool // fast path: no lock when nothing is armed
	faultMu     sync.Mutex
	faults      []*fault
)

// faultCodes are the CUresults a test may inject, by CUDA's name.
var faultCodes = map[string]C.CUresult{
	"CUDA_ERROR_INVALID_VALUE":        C.CUDA_ERROR_INVALID_VALUE,
	"CUDA_ERROR_OUT_OF_MEMORY":        C.CUDA_ERROR_OUT_OF_MEMORY,
	"CUDA_ERROR_INVALID_HANDLE":       C.CUDA_ERROR_INVALID_HANDLE,
	"CUDA_ERROR_LAUNCH_FAILED":        C.CUDA_ERROR_LAUNCH_FAILED,
	"CUDA_ERROR_ILLEGAL_ADDRESS":      C.CUDA_ERROR_ILLEGAL_ADDRESS,
	"CUDA_ERROR_NOT_PERMITTED":        C.CUDA_ERROR_NOT_PERMITTED,
	"CUDA_ERROR_UNKNOWN":              C.CUDA_ERROR_UNKNOWN,
	"CUDA_ERROR_CONTEXT_IS_DESTROYED": C.CUDA_ERROR_CONTEXT_IS_DESTROYED,
}

// injectFault makes the nth (from 1) later call of the driver function
// named call report the CUresult named code. It returns a function that
// disarms every fault.
func injectFault(call string, nth int, code string) (disarm func(), err error) {
	r, ok := faultCodes[code]
	if !ok {
		return nil, fmt.Errorf("injectFault: unknown code %q", code)
	}
	if nth < 1 {
		return nil, fmt.Errorf("injectFault: nth must be at least 1, got %d", nth)
	}
	faultMu.Lock()
	faults = append(faults, &fault{call: call, nth: nth, code: r})
	faultMu.Unlock()
	faultsArmed.Store(true)
	return func() {
		faultMu.Lock()
		faults = nil
		faultMu.Unlock()
		faultsArmed.Store(false)
	}, nil
}

// injected is r, unless a fault armed for call fires now.
func injected(call string, r C.CUresult) C.CUresult {
	if !faultsArmed.Load() || r != C.CUDA_SUCCESS {
		return r
	}
	faultMu.Lock()
	defer faultMu.Unlock()
	for _, f := range faults {
		if f.call == call {
			if f.seen++; f.seen == f.nth {
				return f.code
			}
		}
	}
	return r
}
