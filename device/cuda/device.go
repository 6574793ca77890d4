//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mumax/3/cuda/cu"

	"github.com/gpusched/gpusched/device"
)

// Device is one GPU with its own context and the modules of Options.
type Device struct {
	mu      sync.Mutex // one Run at a time; guards closed
	ordinal int
	dev     cu.Device
	ctx     cu.Context
	info    device.Info
	ccMajor int
	ccMinor int
	modules map[string]cu.Module
	closed  bool
	trace   atomic.Bool   // record the next runs' timelines
	spin    time.Duration // Queue.Get's spin before parking (Options.QueueSpin)
	tmu     sync.Mutex    // guards last
	last    *device.Timeline

	fmu   sync.Mutex
	funcs map[string]*function // "module\x00name"
}

// function is a loaded kernel and its resource attributes.
type function struct {
	f            C.CUfunction
	regs, static int
}

var (
	initOnce sync.Once
	initErr  error
)

// initDriver calls cuInit once per process.
func initDriver() error {
	initOnce.Do(func() {
		if err := guard("cuInit", func() { cu.Init(0) }); err != nil {
			reason := err.Error()
			if _, statErr := os.Stat("/proc/driver/nvidia/version"); statErr != nil {
				reason += " (no NVIDIA kernel driver is loaded: /proc/driver/nvidia/version is missing)"
			}
			initErr = fmt.Errorf("%w: %s", device.ErrNoDevice, reason)
		}
	})
	return initErr
}

func deviceCount() (int, error) {
	if err := initDriver(); err != nil {
		return 0, err
	}
	var n int
	if err := guard("cuDeviceGetCount", func() { n = cu.DeviceGetCount() }); err != nil {
		return 0, fmt.Errorf("%w: %v", device.ErrNoDevice, err)
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: the CUDA driver sees no devices", device.ErrNoDevice)
	}
	return n, nil
}

// Devices lists the GPUs the driver sees.
func Devices() ([]Summary, error) {
	n, err := deviceCount()
	if err != nil {
		return nil, err
	}
	var version C.int
	if err := check("cuDriverGetVersion", C.cuDriverGetVersion(&version)); err != nil {
		return nil, err
	}
	out := make([]Summary, 0, n)
	for i := 0; i < n; i++ {
		var s Summary
		err := guard("cuDeviceGet", func() {
			d := cu.DeviceGet(i)
			major, minor := d.ComputeCapability()
			s = Summary{
				Ordinal:           i,
				Name:              d.Name(),
				ComputeCapability: fmt.Sprintf("%d.%d", major, minor),
				SMs:               d.Attribute(cu.MULTIPROCESSOR_COUNT),
				MemoryBytes:       d.TotalMem(),
				DriverVersion:     fmt.Sprintf("%d.%d", int(version)/1000, int(version)%1000/10),
			}
		})
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Open creates a context on GPU opts.Ordinal and loads opts.Modules.
func Open(opts Options) (_ *Device, err error) {
	n, err := deviceCount()
	if err != nil {
		return nil, err
	}
	if opts.Ordinal < 0 || opts.Ordinal >= n {
		return nil, fmt.Errorf("%w: device ordinal %d requested; the driver sees %d device(s)", device.ErrNoDevice, opts.Ordinal, n)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := &Device{ordinal: opts.Ordinal, modules: map[string]cu.Module{}, funcs: map[string]*function{}}
	d.trace.Store(opts.Trace)
	switch {
	case opts.QueueSpin == 0:
		d.spin = DefaultQueueSpin
	case opts.QueueSpin > 0:
		d.spin = opts.QueueSpin
	}
	if err := guard("cuDeviceGet", func() { d.dev = cu.DeviceGet(opts.Ordinal) }); err != nil {
		return nil, err
	}
	if err := guard("cuCtxCreate", func() { d.ctx = cu.CtxCreate(0, d.dev) }); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			err = errors.Join(err, d.Close())
		}
	}()
	if err := d.readInfo(); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(opts.Modules))
	for name := range opts.Modules {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		image := opts.Modules[name]
		if len(image) == 0 {
			return nil, fmt.Errorf("cuda: module %q has an empty image", name)
		}
		var m cu.Module
		if err := guard("cuModuleLoadData", func() { m = cu.ModuleLoadData(string(image)) }); err != nil {
			return nil, fmt.Errorf("cuda: load module %q: %w", name, err)
		}
		d.modules[name] = m
	}
	ok = true
	// The context stays current on no thread: each host thread makes it
	// current for itself.
	C.cuCtxSetCurrent(nil)
	return d, nil
}

func (d *Device) attr(a C.CUdevice_attribute) (int, error) {
	var v int
	err := guard("cuDeviceGetAttribute", func() { v = cu.DeviceGetAttribute(cu.DeviceAttribute(a), d.dev) })
	return v, err
}

// readInfo fills Info from device attributes. Figures CUDA does not report
// are architectural constants of every GPU since Volta: registers are
// allocated per warp in units of 256, a thread may use at most 255, and at
// most 128 grids are resident at once.
func (d *Device) readInfo() error {
	in := &d.info
	if err := guard("cuDeviceGetName", func() { in.Name = d.dev.Name() }); err != nil {
		return err
	}
	if err := guard("cuDeviceComputeCapability", func() { d.ccMajor, d.ccMinor = d.dev.ComputeCapability() }); err != nil {
		return err
	}
	if err := guard("cuDeviceTotalMem", func() { in.MemoryBytes = d.dev.TotalMem() }); err != nil {
		return err
	}
	if err := d.readLimits(); err != nil {
		return err
	}
	if err := d.readMemory(); err != nil {
		return err
	}
	in.MaxWarpsPerSM = in.MaxThreadsPerSM / in.WarpSize
	in.RegAllocUnit = 256
	in.MaxRegsPerThread = 255
	in.MaxResidentGrids = 128
	in.HardwareQueues = 8
	if s := os.Getenv("CUDA_DEVICE_MAX_CONNECTIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 32 {
			return fmt.Errorf("cuda: CUDA_DEVICE_MAX_CONNECTIONS=%q must be an integer from 1 to 32", s)
		}
		in.HardwareQueues = n
	}
	// Priorities need a current context.
	if err := guard("cuCtxSetCurrent", func() { cu.CtxSetCurrent(d.ctx) }); err != nil {
		return err
	}
	var least, greatest C.int
	if err := check("cuCtxGetStreamPriorityRange", C.cuCtxGetStreamPriorityRange(&least, &greatest)); err != nil {
		return err
	}
	in.StreamPriorityLowest, in.StreamPriorityHigh = int(least), int(greatest)
	return in.Check()
}

// readLimits reads the SM, block and grid limits into Info.
func (d *Device) readLimits() error {
	in := &d.info
	attrs := []struct {
		a   C.CUdevice_attribute
		dst *int
	}{
		{C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &in.SMs},
		{C.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &in.MaxThreadsPerSM},
		{C.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, &in.MaxBlocksPerSM},
		{C.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &in.RegistersPerSM},
		{C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &in.SharedPerSM},
		{C.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, &in.SharedReserved},
		{C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &in.MaxSharedPerBlock},
		{C.CU_DEVICE_ATTRIBUTE_WARP_SIZE, &in.WarpSize},
		{C.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &in.MaxThreadsPerBlock},
		{C.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &in.MaxRegsPerBlock},
		{C.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &in.MaxBlockDim.X},
		{C.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &in.MaxBlockDim.Y},
		{C.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &in.MaxBlockDim.Z},
		{C.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &in.MaxGridDim.X},
		{C.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &in.MaxGridDim.Y},
		{C.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &in.MaxGridDim.Z},
		{C.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, &in.CopyEngines},
	}
	for _, a := range attrs {
		v, err := d.attr(a.a)
		if err != nil {
			return err
		}
		*a.dst = v
	}
	return nil
}

// readMemory reads the clock, the memory bandwidth and the L2 size into
// Info.
func (d *Device) readMemory() error {
	in := &d.info
	clockKHz, err := d.attr(C.CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
	if err != nil {
		return err
	}
	in.ClockHz = int64(clockKHz) * 1000
	memKHz, err := d.attr(C.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
	if err != nil {
		return err
	}
	busBits, err := d.attr(C.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
	if err != nil {
		return err
	}
	in.MemBandwidth = 2 * float64(memKHz) * 1e3 * float64(busBits) / 8 // double data rate
	l2, err := d.attr(C.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
	if err != nil {
		return err
	}
	in.L2Bytes = int64(l2)
	return nil
}

// Info implements device.Device.
func (d *Device) Info() device.Info { return d.info }

// ComputeCapability is the GPU's compute capability.
func (d *Device) ComputeCapability() (major, minor int) { return d.ccMajor, d.ccMinor }

// EnableTrace implements device.Tracer.
func (d *Device) EnableTrace(on bool) { d.trace.Store(on) }

// WriteTrace implements device.Tracer: the last traced run's timeline.
func (d *Device) WriteTrace(w io.Writer) error { return device.WriteLastTimeline(d, w) }

// LastTimeline implements device.TimelineSource: a copy of the last traced
// run's timeline.
func (d *Device) LastTimeline() (*device.Timeline, error) {
	d.tmu.Lock()
	defer d.tmu.Unlock()
	if d.last == nil {
		return nil, errors.New("cuda: no traced run (EnableTrace(true) before Run)")
	}
	tl := *d.last
	return &tl, nil
}

// Close unloads the modules and destroys the context. It is safe to call
// twice.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var errs []error
	if err := check("cuCtxSetCurrent", C.cuCtxSetCurrent(d.cctx())); err != nil {
		return err
	}
	names := make([]string, 0, len(d.modules))
	for n := range d.modules {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := d.modules[n]
		if err := check("cuModuleUnload", C.cuModuleUnload(*(*C.CUmodule)(unsafe.Pointer(&m)))); err != nil {
			errs = append(errs, err)
		}
	}
	if err := guard("cuCtxDestroy", func() { cu.CtxDestroy(&d.ctx) }); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// cctx is the context as cgo's type.
func (d *Device) cctx() C.CUcontext {
	// mumax keeps handles as uintptr; reinterpret the bits as the C handle.
	return *(*C.CUcontext)(unsafe.Pointer(&d.ctx))
}

// function loads (once) the function a kernel descriptor names, checks the
// descriptor's resources against the driver's, and lets it use the opt-in
// maximum of dynamic shared memory, so that what ValidateLaunch accepts the
// driver accepts too.
func (d *Device) function(k *device.Kernel) (*function, error) {
	key := k.Module + "\x00" + k.Name
	d.fmu.Lock()
	defer d.fmu.Unlock()
	if f, ok := d.funcs[key]; ok {
		return f, nil
	}
	m, ok := d.modules[k.Module]
	if !ok {
		return nil, fmt.Errorf("cuda: kernel %s: module %q was not loaded (Options.Modules)", k, k.Module)
	}
	var f cu.Function
	if err := guard("cuModuleGetFunction", func() { f = m.GetFunction(k.Name) }); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", k, err)
	}
	fn := &function{f: *(*C.CUfunction)(unsafe.Pointer(&f))}
	var regs, static C.int
	if err := check("cuFuncGetAttribute", C.cuFuncGetAttribute(&regs, C.CU_FUNC_ATTRIBUTE_NUM_REGS, fn.f)); err != nil {
		return nil, err
	}
	if err := check("cuFuncGetAttribute", C.cuFuncGetAttribute(&static, C.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn.f)); err != nil {
		return nil, err
	}
	fn.regs, fn.static = int(regs), int(static)
	// Descriptors record ptxas's figures for sm_90; on that architecture the
	// loaded machine code is that very code, so they must agree.
	if d.ccMajor == 9 && d.ccMinor == 0 && (fn.regs != k.Regs || fn.static != k.StaticShared) {
		return nil, fmt.Errorf("cuda: kernel %s: descriptor says %d registers and %d bytes of static shared memory, the loaded function has %d and %d (regenerate with `make kernels`)",
			k, k.Regs, k.StaticShared, fn.regs, fn.static)
	}
	if dyn := d.info.MaxSharedPerBlock - fn.static; dyn > 0 {
		if err := check("cuFuncSetAttribute", C.cuFuncSetAttribute(fn.f, C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(dyn))); err != nil {
			return nil, err
		}
	}
	d.funcs[key] = fn
	return fn, nil
}

// Run implements device.Device.
func (d *Device) Run(main func(h device.Host) error) error {
	if main == nil {
		return errors.New("cuda: Run: main is nil")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errors.New("cuda: Run on a closed device")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("cuCtxSetCurrent", C.cuCtxSetCurrent(d.cctx())); err != nil {
		return err
	}
	defer C.cuCtxSetCurrent(nil)
	// Start from an idle device.
	if err := check("cuCtxSynchronize", C.cuCtxSynchronize()); err != nil {
		return err
	}
	r := newRun(d, d.trace.Load())
	if err := r.begin(); err != nil {
		return errors.Join(err, r.release())
	}
	r.spawn("main", main)
	r.wg.Wait()
	// Drain whatever the host threads left queued.
	drainErr := check("cuCtxSynchronize", C.cuCtxSynchronize())
	var tl *device.Timeline
	if r.tracing && drainErr == nil {
		tl = r.timeline()
	}
	relErr := r.release()
	if tl != nil {
		d.tmu.Lock()
		d.last = tl
		d.tmu.Unlock()
	}
	return r.result(drainErr, relErr)
}
