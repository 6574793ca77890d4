package file

import (
	"fmt"
	"math"
	"strings"
)

// CUDA's fixed launch limits (every architecture gpusched targets).
const (
	maxBlockXY = 1024
	maxBlockZ  = 64
	maxGridX   = 1<<31 - 1
	maxGridYZ  = 65535
)

// Check validates the whole file: the device figures, unique buffer and
// operation names, every operation's fields against its kind and the
// device's limits, every access against its buffer, every `after` name, and
// that the dependencies (buffer conflicts in file order plus `after`) have no
// cycle. Errors name the operation and its line.
func (f *File) Check() error {
	if f.Format != Format {
		return lineErrorf(1, "field format must be %q, got %q", Format, f.Format)
	}
	if f.Name == "" {
		return lineErrorf(1, "missing field name")
	}
	if err := f.Device.check(); err != nil {
		return err
	}
	sizes := map[string]int64{}
	for i, b := range f.Buffers {
		switch {
		case b.Name == "":
			return lineErrorf(0, "buffer %d has no name", i)
		case sizes[b.Name] != 0:
			return lineErrorf(0, "buffer %q is declared twice", b.Name)
		case b.Bytes <= 0:
			return lineErrorf(0, "buffer %q has size %d; sizes must be positive", b.Name, b.Bytes)
		}
		sizes[b.Name] = b.Bytes
	}
	if len(f.Steps) == 0 {
		return lineErrorf(0, "the file has no steps")
	}
	stepOf := map[string]int{}
	for si := range f.Steps {
		if len(f.Steps[si].Ops) == 0 {
			return lineErrorf(0, "step %d has no operations", si)
		}
		for oi := range f.Steps[si].Ops {
			o := &f.Steps[si].Ops[oi]
			if err := f.checkOp(o, sizes); err != nil {
				return opError(o, si, oi, err)
			}
			if _, dup := stepOf[o.Name()]; dup {
				return opError(o, si, oi, fmt.Errorf("the name is used by an earlier operation; names must be unique"))
			}
			stepOf[o.Name()] = si
		}
	}
	for si := range f.Steps {
		for oi := range f.Steps[si].Ops {
			o := &f.Steps[si].Ops[oi]
			for _, a := range o.After {
				s, ok := stepOf[a]
				switch {
				case !ok:
					return opError(o, si, oi, fmt.Errorf("after names %q, which is no operation of the file", a))
				case a == o.Name():
					return opError(o, si, oi, fmt.Errorf("after names the operation itself"))
				case s > si:
					return opError(o, si, oi, fmt.Errorf("after names %q of the later step %d; an operation can follow only its own or earlier steps", a, s))
				}
			}
		}
	}
	_, err := f.Order()
	return err
}

func opError(o *Op, si, oi int, err error) error {
	what := fmt.Sprintf("step %d op %d", si, oi)
	if o.Name() != "" {
		what = fmt.Sprintf("%s %q (%s)", o.Kind(), o.Name(), what)
	}
	return lineErrorf(o.line, "%s: %v", what, err)
}

func (d *Device) check() error {
	pos := []struct {
		v    int64
		name string
	}{
		{int64(d.SMs), "sms"}, {d.ClockHz, "clock_hz"}, {int64(d.MaxThreadsPerSM), "max_threads_per_sm"},
		{int64(d.MaxBlocksPerSM), "max_blocks_per_sm"}, {int64(d.RegistersPerSM), "registers_per_sm"},
		{int64(d.RegAllocUnit), "reg_alloc_unit"}, {int64(d.SharedPerSM), "shared_per_sm"},
		{int64(d.MaxSharedPerBlock), "max_shared_per_block"}, {int64(d.MaxThreadsPerBlock), "max_threads_per_block"},
		{int64(d.MaxRegsPerThread), "max_regs_per_thread"}, {int64(d.WarpSize), "warp_size"},
	}
	for _, p := range pos {
		if p.v <= 0 {
			return lineErrorf(0, "device: %s must be positive, got %d", p.name, p.v)
		}
	}
	if d.SharedReserved < 0 || d.SharedReserved+d.MaxSharedPerBlock > d.SharedPerSM {
		return lineErrorf(0, "device: shared_reserved_per_block %d plus max_shared_per_block %d must lie within shared_per_sm %d",
			d.SharedReserved, d.MaxSharedPerBlock, d.SharedPerSM)
	}
	for _, v := range []struct {
		x    float64
		name string
	}{{d.MemBandwidth, "mem_bandwidth"}, {d.Flops, "flops"}} {
		if v.x < 0 || math.IsNaN(v.x) || math.IsInf(v.x, 0) {
			return lineErrorf(0, "device: %s must be a finite non-negative number, got %g", v.name, v.x)
		}
	}
	return nil
}

func (f *File) checkOp(o *Op, sizes map[string]int64) error {
	set := 0
	for _, n := range []string{o.Kernel, o.Copy, o.Memset} {
		if n != "" {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("an operation is exactly one of kernel: NAME, copy: NAME or memset: NAME")
	}
	if o.DurationNS < 0 {
		return fmt.Errorf("duration_ns %d is negative", o.DurationNS)
	}
	for _, list := range [][]Access{o.Reads, o.Writes} {
		for _, a := range list {
			if err := checkAccess(a, sizes); err != nil {
				return err
			}
		}
	}
	switch o.Kind() {
	case "kernel":
		return f.checkKernel(o)
	case "copy":
		return checkCopy(o, sizes)
	}
	return f.checkMemset(o, sizes)
}

func checkAccess(a Access, sizes map[string]int64) error {
	size, ok := sizes[a.Buffer]
	switch {
	case !ok:
		return fmt.Errorf("unknown buffer %q (declare it under buffers)", a.Buffer)
	case a.Offset < 0 || a.Bytes < 0:
		return fmt.Errorf("access to %q has a negative offset or size (%d, %d)", a.Buffer, a.Offset, a.Bytes)
	case a.Offset >= size || a.Bytes > size-a.Offset:
		return fmt.Errorf("access [%d, +%d) lies outside buffer %q of %d bytes", a.Offset, a.Bytes, a.Buffer, size)
	}
	return nil
}

// span is the number of bytes an access covers.
func span(a Access, sizes map[string]int64) int64 {
	if a.Bytes == 0 {
		return sizes[a.Buffer] - a.Offset
	}
	return a.Bytes
}

func (f *File) checkKernel(o *Op) error {
	if o.Direction != "" || o.Pageable || o.Bytes != 0 {
		return fmt.Errorf("direction, pageable and bytes are for copies and memsets, not kernels")
	}
	g, b := o.Grid, o.Block
	switch {
	case g.IsZero() || b.IsZero():
		return fmt.Errorf("a kernel needs grid and block")
	case g.X < 1 || g.Y < 1 || g.Z < 1 || b.X < 1 || b.Y < 1 || b.Z < 1:
		return fmt.Errorf("grid %v and block %v must have positive dimensions", g, b)
	case g.X > maxGridX || g.Y > maxGridYZ || g.Z > maxGridYZ:
		return fmt.Errorf("grid %v exceeds CUDA's limits (%d, %d, %d)", g, maxGridX, maxGridYZ, maxGridYZ)
	case b.X > maxBlockXY || b.Y > maxBlockXY || b.Z > maxBlockZ:
		return fmt.Errorf("block %v exceeds CUDA's limits (%d, %d, %d)", b, maxBlockXY, maxBlockXY, maxBlockZ)
	case b.Count() > f.Device.MaxThreadsPerBlock:
		return fmt.Errorf("block %v has %d threads; the device allows %d", b, b.Count(), f.Device.MaxThreadsPerBlock)
	case o.Registers < 0 || o.Registers > f.Device.MaxRegsPerThread:
		return fmt.Errorf("registers %d outside [0, %d]", o.Registers, f.Device.MaxRegsPerThread)
	case o.StaticShared < 0 || o.DynamicShared < 0:
		return fmt.Errorf("shared memory sizes must not be negative (static %d, dynamic %d)", o.StaticShared, o.DynamicShared)
	case o.StaticShared+o.DynamicShared > f.Device.MaxSharedPerBlock:
		return fmt.Errorf("shared memory %d bytes per block exceeds the device's %d", o.StaticShared+o.DynamicShared, f.Device.MaxSharedPerBlock)
	}
	if per, limit := f.Device.blocksPerSM(b.Count(), o.Registers, o.StaticShared+o.DynamicShared); per < 1 {
		return fmt.Errorf("one block does not fit on an SM of %s (%s)", f.Device.Name, limit)
	}
	if o.Work != nil {
		w := o.Work
		if w.Flops < 0 || w.Bytes < 0 || math.IsNaN(w.Flops+w.Bytes) || math.IsInf(w.Flops+w.Bytes, 0) {
			return fmt.Errorf("work must be finite and non-negative, got flops %g bytes %g", w.Flops, w.Bytes)
		}
	}
	if o.DurationNS == 0 {
		if o.Work == nil || o.Work.Flops+o.Work.Bytes == 0 {
			return fmt.Errorf("a kernel needs duration_ns (measured on the device) or a work estimate")
		}
		if (o.Work.Bytes > 0 && f.Device.MemBandwidth == 0) || (o.Work.Flops > 0 && f.Device.Flops == 0) {
			return fmt.Errorf("without duration_ns its work is timed at the device's mem_bandwidth and flops, which the device section does not give")
		}
	}
	return nil
}

func checkCopy(o *Op, sizes map[string]int64) error {
	if err := notKernel(o, "copies"); err != nil {
		return err
	}
	var nr, nw int
	switch o.Direction {
	case "HtoD":
		nw = 1
	case "DtoH":
		nr = 1
	case "DtoD":
		nr, nw = 1, 1
	default:
		return fmt.Errorf("direction must be HtoD, DtoH or DtoD, got %q", o.Direction)
	}
	if len(o.Reads) != nr || len(o.Writes) != nw {
		return fmt.Errorf("a %s copy reads %d and writes %d device ranges, got %d reads and %d writes", o.Direction, nr, nw, len(o.Reads), len(o.Writes))
	}
	if o.Pageable && o.Direction == "DtoD" {
		return fmt.Errorf("pageable is for copies to or from the host")
	}
	return checkBytes(o, sizes)
}

func (f *File) checkMemset(o *Op, sizes map[string]int64) error {
	if err := notKernel(o, "memsets"); err != nil {
		return err
	}
	if o.Direction != "" || o.Pageable {
		return fmt.Errorf("direction and pageable are for copies")
	}
	if len(o.Reads) != 0 || len(o.Writes) != 1 {
		return fmt.Errorf("a memset writes one device range and reads none, got %d reads and %d writes", len(o.Reads), len(o.Writes))
	}
	if o.DurationNS == 0 && f.Device.MemBandwidth == 0 {
		return fmt.Errorf("a memset needs duration_ns, or a device mem_bandwidth to time its bytes")
	}
	return checkBytes(o, sizes)
}

func notKernel(o *Op, what string) error {
	var bad []string
	if !o.Grid.IsZero() {
		bad = append(bad, "grid")
	}
	if !o.Block.IsZero() {
		bad = append(bad, "block")
	}
	if o.Registers != 0 || o.StaticShared != 0 || o.DynamicShared != 0 {
		bad = append(bad, "registers/shared memory")
	}
	if o.Work != nil {
		bad = append(bad, "work")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s are for kernels, not %s", strings.Join(bad, ", "), what)
	}
	return nil
}

func checkBytes(o *Op, sizes map[string]int64) error {
	if o.Bytes < 0 {
		return fmt.Errorf("bytes %d is negative", o.Bytes)
	}
	for _, a := range append(append([]Access(nil), o.Reads...), o.Writes...) {
		if n := span(a, sizes); o.Bytes > n {
			return fmt.Errorf("bytes %d exceed the %d-byte range of %q", o.Bytes, n, a.Buffer)
		}
	}
	return nil
}
