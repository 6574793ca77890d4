//go:build cudaemu

package cudaemu

/*
#cgo CXXFLAGS: -std=c++20 -O2 -Wno-unknown-pragmas
#include <stdint.h>
#include <stdlib.h>
int emu_launch(const char* name, int gx, int gy, int gz, int bx, int by, int bz, const uint64_t* a, int n);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/gpusched/gpusched/workloads"
)

// maxArgs bounds a launch's argument count (nn_sum has 21).
const maxArgs = 32

// Run executes p's kernel launches in program order on the emulator and
// returns its output buffers by name, as workloads.Instance.Outputs does.
func Run(p *workloads.Program) (map[string][]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	mem := make([]unsafe.Pointer, len(p.Buffers))
	defer func() {
		for _, m := range mem {
			C.free(m)
		}
	}()
	for i, b := range p.Buffers {
		mem[i] = C.calloc(C.size_t(b.Bytes), 1)
		if mem[i] == nil {
			return nil, fmt.Errorf("cudaemu: allocate %s (%d bytes)", b.Name, b.Bytes)
		}
		if b.Init != nil {
			b.Init(unsafe.Slice((*byte)(mem[i]), b.Bytes))
		}
	}
	args := (*C.uint64_t)(C.malloc(8 * maxArgs))
	defer C.free(unsafe.Pointer(args))
	words := unsafe.Slice((*uint64)(unsafe.Pointer(args)), maxArgs)
	for si, s := range p.Steps {
		for _, op := range s.Ops {
			if op.Kind != workloads.OpKernel {
				return nil, fmt.Errorf("cudaemu: step %d op %s is not a kernel launch", si, op.Name)
			}
			if len(op.Args) > maxArgs {
				return nil, fmt.Errorf("cudaemu: op %s has %d arguments", op.Name, len(op.Args))
			}
			for i, a := range op.Args {
				switch {
				case a.Buf >= 0:
					words[i] = uint64(uintptr(mem[a.Buf])) + uint64(a.Off)
				case a.Size == 4:
					words[i] = a.Bits & 0xffffffff
				default:
					words[i] = a.Bits
				}
			}
			name := C.CString(op.Kernel.Name)
			rc := C.emu_launch(name, C.int(op.Grid.X), C.int(op.Grid.Y), C.int(op.Grid.Z),
				C.int(op.Block.X), C.int(op.Block.Y), C.int(op.Block.Z), args, C.int(len(op.Args)))
			C.free(unsafe.Pointer(name))
			if rc != 0 {
				return nil, fmt.Errorf("cudaemu: op %s: kernel %s with %d arguments is not emulated", op.Name, op.Kernel.Name, len(op.Args))
			}
		}
	}
	out := map[string][]byte{}
	for i, b := range p.Buffers {
		if b.Output {
			out[b.Name] = append([]byte(nil), unsafe.Slice((*byte)(mem[i]), b.Bytes)...)
		}
	}
	return out, nil
}
