package device

import "fmt"

// LaunchError is a launch CUDA would reject, with the rule it breaks and the
// values that break it. Code is the CUresult name CUDA returns for it.
type LaunchError struct {
	Launch string // kernel or label
	Code   string // e.g. CUDA_ERROR_INVALID_VALUE
	Rule   string
}

func (e *LaunchError) Error() string {
	return fmt.Sprintf("launch %s rejected (%s): %s", e.Launch, e.Code, e.Rule)
}

// ValidateLaunch applies CUDA's launch rules to l on a device described by
// in. Every backend calls it before doing anything, so an invalid launch
// fails the same way, with the same words, on the simulator and on a GPU.
func ValidateLaunch(in *Info, l *Launch) error {
	if l == nil {
		return &LaunchError{Launch: "<nil>", Code: "CUDA_ERROR_INVALID_VALUE", Rule: "launch is nil"}
	}
	name := l.Name()
	bad := func(code, format string, a ...any) error {
		return &LaunchError{Launch: name, Code: code, Rule: fmt.Sprintf(format, a...)}
	}
	if l.Kernel == nil {
		return bad("CUDA_ERROR_INVALID_HANDLE", "no kernel")
	}
	g, b := l.Grid, l.Block
	if g.X <= 0 || g.Y <= 0 || g.Z <= 0 {
		return bad("CUDA_ERROR_INVALID_VALUE", "grid %v has a zero or negative dimension", g)
	}
	if b.X <= 0 || b.Y <= 0 || b.Z <= 0 {
		return bad("CUDA_ERROR_INVALID_VALUE", "block %v has a zero or negative dimension", b)
	}
	if g.X > in.MaxGridDim.X || g.Y > in.MaxGridDim.Y || g.Z > in.MaxGridDim.Z {
		return bad("CUDA_ERROR_INVALID_VALUE", "grid %v exceeds the maximum grid dimensions %v", g, in.MaxGridDim)
	}
	if b.X > in.MaxBlockDim.X || b.Y > in.MaxBlockDim.Y || b.Z > in.MaxBlockDim.Z {
		return bad("CUDA_ERROR_INVALID_VALUE", "block %v exceeds the maximum block dimensions %v", b, in.MaxBlockDim)
	}
	if t := b.Count(); t > in.MaxThreadsPerBlock {
		return bad("CUDA_ERROR_INVALID_VALUE", "block %v has %d threads; the maximum is %d", b, t, in.MaxThreadsPerBlock)
	}
	if l.SharedMem < 0 {
		return bad("CUDA_ERROR_INVALID_VALUE", "dynamic shared memory %d is negative", l.SharedMem)
	}
	if sh := l.SharedMem + l.Kernel.StaticShared; sh > in.MaxSharedPerBlock {
		return bad("CUDA_ERROR_INVALID_VALUE", "shared memory %d bytes per block (static %d + dynamic %d) exceeds the per-block limit %d",
			sh, l.Kernel.StaticShared, l.SharedMem, in.MaxSharedPerBlock)
	}
	if l.Kernel.Regs > in.MaxRegsPerThread {
		return bad("CUDA_ERROR_INVALID_VALUE", "kernel uses %d registers per thread; the maximum is %d", l.Kernel.Regs, in.MaxRegsPerThread)
	}
	r := in.Resources(l)
	if r.Registers > in.MaxRegsPerBlock || r.Registers > in.RegistersPerSM {
		return bad("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "block needs %d registers (%d per thread x %d threads, allocated per warp in units of %d); the limit is %d",
			r.Registers, l.Kernel.Regs, r.Threads, in.RegAllocUnit, min(in.MaxRegsPerBlock, in.RegistersPerSM))
	}
	for i, a := range l.Args {
		switch a.Kind {
		case ArgBuffer:
			if a.Buf.IsNil() {
				return bad("CUDA_ERROR_INVALID_VALUE", "argument %d is a nil buffer", i)
			}
			if a.Mode == 0 || a.Mode&^ReadWrite != 0 {
				return bad("CUDA_ERROR_INVALID_VALUE", "argument %d has no valid access mode (%v)", i, a.Mode)
			}
			// Off <= Size and Len <= Size-Off: Off+Len could overflow for a huge Len.
			if a.Off < 0 || a.Len < 0 || a.Off > a.Buf.Size || a.Len > a.Buf.Size-a.Off {
				return bad("CUDA_ERROR_INVALID_VALUE", "argument %d range [%d, %d+%d) lies outside its %d-byte buffer", i, a.Off, a.Off, a.Len, a.Buf.Size)
			}
		case ArgScalar:
			if a.Size != 4 && a.Size != 8 {
				return bad("CUDA_ERROR_INVALID_VALUE", "argument %d is a %d-byte scalar; only 4 and 8 are supported", i, a.Size)
			}
		default:
			return bad("CUDA_ERROR_INVALID_VALUE", "argument %d has unknown kind %d", i, a.Kind)
		}
	}
	return nil
}

// ValidateCopy checks a copy's direction, buffers and ranges.
func ValidateCopy(c *Copy) error {
	if c == nil {
		return fmt.Errorf("copy is nil: CUDA_ERROR_INVALID_VALUE")
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("copy %s %s rejected (CUDA_ERROR_INVALID_VALUE): %s", c.Kind, c.Label, fmt.Sprintf(format, a...))
	}
	if c.Bytes < 0 {
		return bad("negative size %d", c.Bytes)
	}
	inBuf := func(what string, b Buffer, off int64) error {
		if b.IsNil() {
			return bad("%s buffer is nil", what)
		}
		if off < 0 || off > b.Size || c.Bytes > b.Size-off {
			return bad("%s range [%d, %d+%d) lies outside its %d-byte buffer", what, off, off, c.Bytes, b.Size)
		}
		return nil
	}
	inHost := func() error {
		if c.Host == nil {
			return bad("host memory is nil")
		}
		if n := int64(len(c.Host.Data)); c.HostOff < 0 || c.HostOff > n || c.Bytes > n-c.HostOff {
			return bad("host range [%d, %d+%d) lies outside its %d-byte allocation", c.HostOff, c.HostOff, c.Bytes, len(c.Host.Data))
		}
		return nil
	}
	var err error
	switch c.Kind {
	case HostToDevice:
		if err = inHost(); err == nil {
			err = inBuf("destination", c.Dst, c.DstOff)
		}
	case DeviceToHost:
		if err = inHost(); err == nil {
			err = inBuf("source", c.Src, c.SrcOff)
		}
	case DeviceToDevice:
		if err = inBuf("source", c.Src, c.SrcOff); err == nil {
			err = inBuf("destination", c.Dst, c.DstOff)
		}
	default:
		err = bad("unknown direction %d", c.Kind)
	}
	return err
}
