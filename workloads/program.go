// Package workloads defines what schedulers run: a Program is an ordered list
// of operations (kernel launches with their buffer access sets, and copies),
// grouped in steps, over named device and host buffers. A step's operations
// may differ from the previous step's (input-dependent graphs, as in deep-RL
// physics and dynamic DNNs); pipeline workloads are many independent jobs,
// one step each.
//
// Every kernel is real: on a GPU it computes something checkable, and every
// scheduler's outputs must equal the serial schedule's. The generators of the
// papers' workloads live in subpackages (workloads/synthetic, ...); the CUDA C
// sources of their kernels and the compiled images live in workloads/kernels.
//
// A Program is device-independent. Bind allocates it on a device through a
// Host, uploads its inputs and prebuilds every launch, so that the scheduler's
// issue path (Instance.Issue) allocates nothing.
package workloads

import (
	"fmt"
	"sync"

	"github.com/gpusched/gpusched/device"
)

// OpKind says what an operation is.
type OpKind uint8

const (
	OpKernel OpKind = iota
	OpCopy
)

// BufferSpec is a device allocation of a program.
type BufferSpec struct {
	Name  string
	Bytes int64
	// Init fills the buffer's initial contents (uploaded by Bind before the
	// timed region). Nil leaves it zeroed.
	Init func(data []byte)
	// Output marks buffers whose final contents are compared between
	// schedulers and against references.
	Output bool
}

// HostSpec is a host allocation that copy operations read or write.
type HostSpec struct {
	Name   string
	Bytes  int64
	Pinned bool
	Init   func(data []byte)
	Output bool
}

// ArgSpec is a kernel argument. Buf >= 0 names a device buffer of the
// program (accessed with Mode over [Off, Off+Len), Len 0 = to the end);
// Buf < 0 is a scalar of Size bytes holding Bits.
type ArgSpec struct {
	Buf  int
	Mode device.Access
	Off  int64
	Len  int64
	Bits uint64
	Size int
}

// BufArg, Scalar32, Scalar64 and F32Arg build ArgSpecs.
func BufArg(buf int, mode device.Access) ArgSpec { return ArgSpec{Buf: buf, Mode: mode} }
func BufRange(buf int, mode device.Access, off, n int64) ArgSpec {
	return ArgSpec{Buf: buf, Mode: mode, Off: off, Len: n}
}
func Scalar32(v int32) ArgSpec { a := device.I32(v); return ArgSpec{Buf: -1, Bits: a.Bits, Size: 4} }
func Scalar64(v uint64) ArgSpec {
	return ArgSpec{Buf: -1, Bits: v, Size: 8}
}
func F32Arg(v float32) ArgSpec { a := device.F32(v); return ArgSpec{Buf: -1, Bits: a.Bits, Size: 4} }

// CopySpec is a copy operation between program buffers. Host is an index
// into Program.Host; Dst and Src index Program.Buffers.
type CopySpec struct {
	Kind    device.CopyKind
	Dst     int
	DstOff  int64
	Src     int
	SrcOff  int64
	Host    int
	HostOff int64
	Bytes   int64
}

// Op is one operation of a program.
type Op struct {
	Name string
	Kind OpKind
	// Kernel operations.
	Kernel    *device.Kernel
	Grid      device.Dim3
	Block     device.Dim3
	SharedMem int
	Args      []ArgSpec
	Work      device.Work
	// Copy operations.
	Copy CopySpec
}

// Step is a group of operations issued together (a physics step, one
// input's inference, one job).
type Step struct {
	Ops []Op
}

// Program is a workload ready to bind to a device.
type Program struct {
	Name    string
	Buffers []BufferSpec
	Host    []HostSpec
	Steps   []Step
	// Check, if set, verifies the outputs (device buffers marked Output,
	// by name) against a CPU reference. It is only meaningful on a device
	// that computes (a GPU); the simulator moves no data.
	Check func(outputs map[string][]byte) error
	// Dynamic marks a program whose steps are chosen at run time from
	// earlier steps' results (the contact kernels of a physics step, the
	// branch an input takes): it is recorded whole, but a runtime could
	// plan only the step at hand, so strategies that plan or capture the
	// whole program ahead do not apply (sched.TraitWholeProgram).
	Dynamic bool

	// initMu guards inits: each device buffer's initial contents, made by
	// its Init once per program and reused by every Bind and Reset (a
	// large model's weights take seconds to generate; Init is
	// deterministic, so the bytes are the same).
	initMu sync.Mutex
	inits  [][]byte
}

// initial fills data with device buffer i's initial contents.
func (p *Program) initial(i int, data []byte) {
	b := &p.Buffers[i]
	if b.Init == nil {
		clear(data)
		return
	}
	p.initMu.Lock()
	defer p.initMu.Unlock()
	if p.inits == nil {
		p.inits = make([][]byte, len(p.Buffers))
	}
	if p.inits[i] == nil {
		p.inits[i] = make([]byte, b.Bytes)
		b.Init(p.inits[i])
	}
	copy(data, p.inits[i])
}

// NumOps is the number of operations over all steps.
func (p *Program) NumOps() int {
	n := 0
	for i := range p.Steps {
		n += len(p.Steps[i].Ops)
	}
	return n
}

// Validate checks the program against the limits (limits.go) and that
// every operation refers to existing buffers within their sizes. It does
// not apply device limits (device.ValidateLaunch does).
func (p *Program) Validate() error {
	if len(p.Steps) == 0 {
		return fmt.Errorf("program %q has no steps", p.Name)
	}
	if err := p.checkLimits(); err != nil {
		return err
	}
	for i, b := range p.Buffers {
		if b.Bytes <= 0 {
			return fmt.Errorf("program %q: buffer %d (%s) has size %d", p.Name, i, b.Name, b.Bytes)
		}
	}
	for i, b := range p.Host {
		if b.Bytes <= 0 {
			return fmt.Errorf("program %q: host buffer %d (%s) has size %d", p.Name, i, b.Name, b.Bytes)
		}
	}
	for si, s := range p.Steps {
		for oi, op := range s.Ops {
			where := fmt.Sprintf("program %q step %d op %d (%s)", p.Name, si, oi, op.Name)
			var err error
			switch op.Kind {
			case OpKernel:
				err = p.validateKernel(where, &op)
			case OpCopy:
				err = p.validateCopy(where, &op.Copy)
			default:
				err = fmt.Errorf("%s: unknown op kind %d", where, op.Kind)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// validateKernel checks a kernel operation's kernel and arguments.
func (p *Program) validateKernel(where string, op *Op) error {
	if op.Kernel == nil {
		return fmt.Errorf("%s: no kernel", where)
	}
	for ai, a := range op.Args {
		if a.Buf < 0 {
			if a.Size != 4 && a.Size != 8 {
				return fmt.Errorf("%s: scalar argument %d has size %d", where, ai, a.Size)
			}
			continue
		}
		if a.Buf >= len(p.Buffers) {
			return fmt.Errorf("%s: argument %d names buffer %d of %d", where, ai, a.Buf, len(p.Buffers))
		}
		if a.Mode == 0 {
			return fmt.Errorf("%s: argument %d has no access mode", where, ai)
		}
		size := p.Buffers[a.Buf].Bytes
		// Off < size and Len <= size-Off: Off+Len could overflow for a huge Len.
		if a.Off < 0 || a.Len < 0 || a.Off >= size || a.Len > size-a.Off {
			return fmt.Errorf("%s: argument %d range [%d,+%d) outside buffer %s of %d bytes", where, ai, a.Off, a.Len, p.Buffers[a.Buf].Name, size)
		}
	}
	return nil
}

// validateCopy checks a copy's buffers and ranges.
func (p *Program) validateCopy(where string, c *CopySpec) error {
	dev := func(idx int, off int64, what string) error {
		if idx < 0 || idx >= len(p.Buffers) {
			return fmt.Errorf("%s: copy %s names buffer %d of %d", where, what, idx, len(p.Buffers))
		}
		if size := p.Buffers[idx].Bytes; c.Bytes < 0 || off < 0 || off > size || c.Bytes > size-off {
			return fmt.Errorf("%s: copy %s range [%d,+%d) outside buffer %s", where, what, off, c.Bytes, p.Buffers[idx].Name)
		}
		return nil
	}
	host := func() error {
		if c.Host < 0 || c.Host >= len(p.Host) {
			return fmt.Errorf("%s: copy names host buffer %d of %d", where, c.Host, len(p.Host))
		}
		if size := p.Host[c.Host].Bytes; c.Bytes < 0 || c.HostOff < 0 || c.HostOff > size || c.Bytes > size-c.HostOff {
			return fmt.Errorf("%s: copy host range [%d,+%d) outside host buffer %s", where, c.HostOff, c.Bytes, p.Host[c.Host].Name)
		}
		return nil
	}
	switch c.Kind {
	case device.HostToDevice:
		if err := host(); err != nil {
			return err
		}
		return dev(c.Dst, c.DstOff, "destination")
	case device.DeviceToHost:
		if err := host(); err != nil {
			return err
		}
		return dev(c.Src, c.SrcOff, "source")
	case device.DeviceToDevice:
		if err := dev(c.Src, c.SrcOff, "source"); err != nil {
			return err
		}
		return dev(c.Dst, c.DstOff, "destination")
	}
	return fmt.Errorf("%s: unknown copy kind %d", where, c.Kind)
}
