package device

import (
	"fmt"
	"math"
)

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z int }

// D1 is a one-dimensional shape.
func D1(x int) Dim3 { return Dim3{x, 1, 1} }

// D2 is a two-dimensional shape.
func D2(x, y int) Dim3 { return Dim3{x, y, 1} }

// Count is X*Y*Z.
func (d Dim3) Count() int { return d.X * d.Y * d.Z }

func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// Kernel names a compiled function and the resources one thread of it needs.
// Regs and StaticShared are what the compiler reports for the function
// (nvcc --resource-usage); the simulator uses them for occupancy and the CUDA
// backend checks them against cuFuncGetAttribute when it loads the function.
type Kernel struct {
	Module       string // module (fat binary) name, e.g. "synthetic"
	Name         string // function name, extern "C"
	Regs         int    // registers per thread
	StaticShared int    // bytes of static shared memory per block
}

func (k *Kernel) String() string { return k.Module + "." + k.Name }

// Work is what one thread block of a launch costs, for the simulator. Either
// Cycles (a fixed duration in SM cycles) or Flops and Bytes (against the SM's
// arithmetic throughput and the memory system's bandwidth, shared among
// co-resident blocks) or both (the larger time wins). The CUDA backend ignores
// it: the kernel takes the time it takes.
type Work struct {
	Cycles float64 // SM cycles per block, uncontended
	Flops  float64 // floating-point operations per block
	Bytes  float64 // bytes moved to or from device memory per block
}

// Access is how a kernel or copy touches a buffer.
type Access uint8

const (
	Read      Access = 1 << iota // the command reads the bytes
	Write                        // the command writes the bytes
	ReadWrite = Read | Write
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case ReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// Buffer is a device allocation. Addr is a device virtual address: real on
// CUDA, synthetic but non-overlapping on the simulator, so address ranges can
// be compared across buffers on both.
type Buffer struct {
	Addr uint64
	Size int64
}

// IsNil reports whether b is the zero Buffer.
func (b Buffer) IsNil() bool { return b.Addr == 0 }

// HostMem is host memory that copies read or write. Pinned memory is
// page-locked (cuMemAllocHost): copies from it are asynchronous and run at full
// bus bandwidth; pageable copies are staged through a driver buffer and block
// the host, as CUDA does.
type HostMem struct {
	Data   []byte
	Pinned bool
	Handle any // backend-private
}

// ArgKind distinguishes buffer from scalar kernel arguments.
type ArgKind uint8

const (
	ArgScalar ArgKind = iota
	ArgBuffer
)

// Arg is one kernel argument. A buffer argument passes Buf.Addr+Off to the
// kernel as a pointer; the accessed range is [Off, Off+Len) of the buffer,
// or the whole buffer from Off when Len is 0. A scalar argument passes its
// low Size bytes of Bits (4 or 8; little-endian, as CUDA's ABI).
type Arg struct {
	Kind ArgKind
	Buf  Buffer
	Mode Access
	Off  int64
	Len  int64
	Bits uint64
	Size int
}

// In, Out and InOut are buffer arguments over a whole buffer.
func In(b Buffer) Arg    { return Arg{Kind: ArgBuffer, Buf: b, Mode: Read} }
func Out(b Buffer) Arg   { return Arg{Kind: ArgBuffer, Buf: b, Mode: Write} }
func InOut(b Buffer) Arg { return Arg{Kind: ArgBuffer, Buf: b, Mode: ReadWrite} }

// I32, U64 and F32 are scalar arguments.
func I32(v int32) Arg   { return Arg{Kind: ArgScalar, Bits: uint64(uint32(v)), Size: 4} }
func U64(v uint64) Arg  { return Arg{Kind: ArgScalar, Bits: v, Size: 8} }
func F32(v float32) Arg { return Arg{Kind: ArgScalar, Bits: uint64(math.Float32bits(v)), Size: 4} }

// Range is the byte range [Lo, Hi) of device address space the argument
// touches.
func (a Arg) Range() (lo, hi uint64) {
	n := a.Len
	if n == 0 {
		n = a.Buf.Size - a.Off
	}
	lo = a.Buf.Addr + uint64(a.Off)
	return lo, lo + uint64(n)
}

// Launch is one kernel launch. Schedulers may reuse a Launch value between
// calls: backends copy what they keep.
type Launch struct {
	Kernel    *Kernel
	Grid      Dim3
	Block     Dim3
	SharedMem int // dynamic shared memory per block, bytes
	Args      []Arg
	Work      Work   // per block, for the simulator
	Label     string // optional, for traces and race reports

	// Sync, when set, makes blocks of this launch wait on and post to
	// counters in device memory (cuSync's tile synchronization). The
	// simulator models each block spinning on its SM until its counters
	// reach their targets; the CUDA kernel does the same in its code.
	Sync BlockSync
}

// Name is the launch's label, or its kernel's name.
func (l *Launch) Name() string {
	if l.Label != "" {
		return l.Label
	}
	if l.Kernel == nil {
		return "<nil kernel>"
	}
	return l.Kernel.Name
}

// Counter identifies one 32-bit counter in device memory.
type Counter struct {
	Buf   Buffer
	Index int
}

// CounterWait is a block's wait: it spins until the counter reaches Target.
type CounterWait struct {
	Counter Counter
	Target  uint32
}

// BlockSync describes the counters each block of a launch waits on before it
// does its work and increments when it is done. Blocks are numbered in
// dispatch order (linear block index, x fastest). Methods append to buf and
// return it, so the simulator allocates nothing per block.
type BlockSync interface {
	Waits(block int, buf []CounterWait) []CounterWait
	Posts(block int, buf []Counter) []Counter
}

// CopyKind is a copy's direction.
type CopyKind uint8

const (
	HostToDevice CopyKind = iota
	DeviceToHost
	DeviceToDevice
)

func (k CopyKind) String() string {
	switch k {
	case HostToDevice:
		return "HtoD"
	case DeviceToHost:
		return "DtoH"
	case DeviceToDevice:
		return "DtoD"
	}
	return fmt.Sprintf("copy(%d)", uint8(k))
}

// Copy is cuMemcpy*Async. For HostToDevice, Host[HostOff:] is the source
// and Dst the destination; for DeviceToHost, Src is the source and Host the
// destination; DeviceToDevice uses Src and Dst.
type Copy struct {
	Kind    CopyKind
	Dst     Buffer
	DstOff  int64
	Src     Buffer
	SrcOff  int64
	Host    *HostMem
	HostOff int64
	Bytes   int64
	Label   string
}

// DeviceRanges returns the device byte ranges the copy reads and writes, as
// buffer arguments, for dependency tracking and race checking.
func (c *Copy) DeviceRanges() (reads, writes []Arg) {
	switch c.Kind {
	case HostToDevice:
		writes = []Arg{{Kind: ArgBuffer, Buf: c.Dst, Mode: Write, Off: c.DstOff, Len: c.Bytes}}
	case DeviceToHost:
		reads = []Arg{{Kind: ArgBuffer, Buf: c.Src, Mode: Read, Off: c.SrcOff, Len: c.Bytes}}
	case DeviceToDevice:
		reads = []Arg{{Kind: ArgBuffer, Buf: c.Src, Mode: Read, Off: c.SrcOff, Len: c.Bytes}}
		writes = []Arg{{Kind: ArgBuffer, Buf: c.Dst, Mode: Write, Off: c.DstOff, Len: c.Bytes}}
	}
	return reads, writes
}

// Conflicts reports whether two access sets conflict: some write of one
// overlaps any access of the other (RAW, WAR or WAW).
func Conflicts(a, b []Arg) bool {
	for i := range a {
		if a[i].Kind != ArgBuffer {
			continue
		}
		alo, ahi := a[i].Range()
		for j := range b {
			if b[j].Kind != ArgBuffer {
				continue
			}
			if a[i].Mode&Write == 0 && b[j].Mode&Write == 0 {
				continue
			}
			blo, bhi := b[j].Range()
			if alo < bhi && blo < ahi {
				return true
			}
		}
	}
	return false
}
