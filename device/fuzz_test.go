package device_test

import (
	"errors"
	"testing"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// FuzzValidateLaunch: whatever the launch, ValidateLaunch never panics; it
// rejects with a *device.LaunchError that names a CUresult and a rule, and
// what it accepts respects every limit it checks.
func FuzzValidateLaunch(f *testing.F) {
	cfg, err := sim.LoadConfig("h100")
	if err != nil {
		f.Fatal(err)
	}
	info := cfg.Info
	f.Add(128, 1, 1, 256, 1, 1, 0, 0, 32, uint8(1), int64(0), int64(0), int64(4096), 4)
	f.Add(1, 1, 1, 1024, 1, 1, 4096, 1024, 255, uint8(3), int64(16), int64(64), int64(128), 8)
	f.Add(0, 1, 1, 32, 1, 1, 0, 0, 32, uint8(2), int64(0), int64(0), int64(16), 4)
	f.Add(1<<31-1, 65535, 65535, 1025, 2, 1, -1, 1<<20, 300, uint8(0), int64(-1), int64(-5), int64(0), 3)
	f.Fuzz(func(t *testing.T, gx, gy, gz, bx, by, bz, shared, static, regs int, mode uint8, off, n, size int64, scalar int) {
		k := &device.Kernel{Module: "fuzz", Name: "k", Regs: regs, StaticShared: static}
		buf := device.Buffer{Addr: 1 << 40, Size: size}
		l := &device.Launch{Kernel: k, Grid: device.Dim3{X: gx, Y: gy, Z: gz}, Block: device.Dim3{X: bx, Y: by, Z: bz}, SharedMem: shared,
			Args: []device.Arg{{Kind: device.ArgBuffer, Buf: buf, Mode: device.Access(mode), Off: off, Len: n}, {Kind: device.ArgScalar, Size: scalar}}}
		err := device.ValidateLaunch(&info, l)
		if err != nil {
			var le *device.LaunchError
			if !errors.As(err, &le) || le.Code == "" || le.Rule == "" || le.Launch == "" {
				t.Fatalf("rejection is not a complete *device.LaunchError: %#v", err)
			}
			return
		}
		if l.Grid.X <= 0 || l.Grid.Y <= 0 || l.Grid.Z <= 0 || l.Grid.X > info.MaxGridDim.X || l.Grid.Y > info.MaxGridDim.Y || l.Grid.Z > info.MaxGridDim.Z {
			t.Fatalf("accepted grid %v", l.Grid)
		}
		if n := l.Block.Count(); n <= 0 || n > info.MaxThreadsPerBlock {
			t.Fatalf("accepted block %v", l.Block)
		}
		if l.SharedMem < 0 || l.SharedMem+static > info.MaxSharedPerBlock || regs > info.MaxRegsPerThread {
			t.Fatalf("accepted shared %d+%d, regs %d", l.SharedMem, static, regs)
		}
		lo, hi := l.Args[0].Range()
		if off < 0 || n < 0 || hi < lo || lo < buf.Addr || hi > buf.Addr+uint64(buf.Size) {
			t.Fatalf("accepted range [%d, %d) of a %d-byte buffer at %d (off %d, len %d)", lo, hi, buf.Size, buf.Addr, off, n)
		}
		if blocks, _ := info.Occupancy(l); blocks < 1 {
			t.Fatalf("accepted a launch of which no block fits an SM (%d)", blocks)
		}
	})
}

// FuzzValidateCopy: ValidateCopy never panics, and what it accepts stays
// inside its buffers and its host memory.
func FuzzValidateCopy(f *testing.F) {
	f.Add(uint8(0), int64(0), int64(0), int64(0), int64(64), int64(64), int64(64), 64)
	f.Add(uint8(1), int64(8), int64(0), int64(8), int64(56), int64(64), int64(64), 64)
	f.Add(uint8(2), int64(-1), int64(3), int64(0), int64(1<<62), int64(16), int64(0), 0)
	f.Add(uint8(7), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), 0)
	f.Fuzz(func(t *testing.T, kind uint8, dstOff, srcOff, hostOff, bytes, dstSize, srcSize int64, hostLen int) {
		if hostLen < 0 || hostLen > 1<<16 {
			hostLen = 0
		}
		dst := device.Buffer{Addr: 1 << 40, Size: dstSize}
		src := device.Buffer{Addr: 1 << 41, Size: srcSize}
		host := &device.HostMem{Data: make([]byte, hostLen), Pinned: true}
		c := &device.Copy{Kind: device.CopyKind(kind), Dst: dst, DstOff: dstOff, Src: src, SrcOff: srcOff, Host: host, HostOff: hostOff, Bytes: bytes, Label: "fuzz"}
		if err := device.ValidateCopy(c); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		in := func(off, size int64) bool { return off >= 0 && bytes >= 0 && off <= size && bytes <= size-off }
		ok := bytes >= 0
		switch c.Kind {
		case device.HostToDevice:
			ok = ok && in(hostOff, int64(hostLen)) && in(dstOff, dstSize)
		case device.DeviceToHost:
			ok = ok && in(hostOff, int64(hostLen)) && in(srcOff, srcSize)
		case device.DeviceToDevice:
			ok = ok && in(srcOff, srcSize) && in(dstOff, dstSize)
		default:
			ok = false
		}
		if !ok {
			t.Fatalf("accepted an out-of-range copy: %+v (host %d bytes)", *c, hostLen)
		}
	})
}
