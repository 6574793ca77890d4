//go:build cuda

package cuda

/*
// The launch neither keeps its pointer arguments (C memory) nor calls back
// into Go.
#cgo noescape gs_launch
#cgo nocallback gs_launch
#include "gs.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mumax/3/cuda/cu"

	"github.com/gpusched/gpusched/device"
)

// host is one host thread's view of the driver (device.Host).
type host struct {
	r     *run
	id    int
	name  string
	args  argScratch
	funcs map[*device.Kernel]*function
	lastK *device.Kernel
	lastF *function
	trace []traceOp
}

// stream is a CUDA stream (device.Stream).
type stream struct {
	device.Base
	id, prio int
	s        C.CUstream
	r        *run
	dead     atomic.Bool
	capture  atomic.Pointer[capture]
}

func (s *stream) ID() int       { return s.id }
func (s *stream) Priority() int { return s.prio }

// event is a CUDA event (device.Event). capture is the capture it was last
// recorded in, if any: a stream that waits on it joins that capture.
type event struct {
	device.Base
	id      int
	e       C.CUevent
	r       *run
	dead    atomic.Bool
	capture atomic.Pointer[capture]
}

func (e *event) ID() int { return e.id }

var _ device.Host = (*host)(nil)

func (h *host) Name() string          { return h.name }
func (h *host) Now() time.Duration    { return h.r.now() }
func (h *host) Spend(d time.Duration) {} // on a GPU the work takes its own time
func (h *host) Go(name string, fn func(h device.Host) error) {
	h.r.spawn(name, fn)
}

func (h *host) stream(s device.Stream, op string) (*stream, error) {
	return resolve[*stream](h, s, op, "a stream", "stream")
}

func (h *host) event(e device.Event, op string) (*event, error) {
	return resolve[*event](h, e, op, "an event", "event")
}

// handle is a resource of a run: owner reports its run (nil for a nil
// handle) and whether it was destroyed.
type handle interface {
	*stream | *event | *graph | *graphExec
	ID() int
	owner() (*run, *atomic.Bool)
}

func (s *stream) owner() (*run, *atomic.Bool) {
	if s == nil {
		return nil, nil
	}
	return s.r, &s.dead
}

func (e *event) owner() (*run, *atomic.Bool) {
	if e == nil {
		return nil, nil
	}
	return e.r, &e.dead
}

// resolve finds the resource behind v, a handle of this run of type T:
// what names T with its article in errors ("a stream"), kind without it.
func resolve[T handle](h *host, v any, op, what, kind string) (T, error) {
	t, ok := v.(T)
	var r *run
	var dead *atomic.Bool
	if ok {
		r, dead = t.owner()
	}
	if r == nil {
		var zero T
		return zero, fmt.Errorf("cuda: %s: %T is not %s of this device", op, v, what)
	}
	if r != h.r || dead.Load() {
		var zero T
		return zero, fmt.Errorf("cuda: %s: %s %d was destroyed or belongs to another run", op, kind, t.ID())
	}
	return t, nil
}

// fn resolves a kernel descriptor: a one-entry cache, then this thread's
// map, then the device (which loads the function the first time).
func (h *host) fn(k *device.Kernel) (*function, error) {
	if k == h.lastK {
		return h.lastF, nil
	}
	f, ok := h.funcs[k]
	if !ok {
		var err error
		if f, err = h.r.d.function(k); err != nil {
			return nil, err
		}
		h.funcs[k] = f
	}
	h.lastK, h.lastF = k, f
	return f, nil
}

// Memory.

func (h *host) Malloc(bytes int64) (device.Buffer, error) {
	defer h.traceCall("cuMemAlloc", h.callStart())
	if bytes <= 0 {
		return device.Buffer{}, &device.APIError{Call: "cuMemAlloc", Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("size %d", bytes)}
	}
	var p cu.DevicePtr
	if err := guard("cuMemAlloc", func() { p = cu.MemAlloc(bytes) }); err != nil {
		return device.Buffer{}, err
	}
	b := device.Buffer{Addr: uint64(p), Size: bytes}
	h.r.mu.Lock()
	h.r.bufs[b.Addr] = bytes
	h.r.mu.Unlock()
	return b, nil
}

func (h *host) Free(b device.Buffer) error {
	defer h.traceCall("cuMemFree", h.callStart())
	h.r.mu.Lock()
	size, ok := h.r.bufs[b.Addr]
	if ok {
		delete(h.r.bufs, b.Addr)
	}
	h.r.mu.Unlock()
	if !ok || size != b.Size {
		return &device.APIError{Call: "cuMemFree", Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("buffer at %#x (%d bytes) is not a live allocation of this run", b.Addr, b.Size)}
	}
	return guard("cuMemFree", func() { cu.MemFree(cu.DevicePtr(uintptr(b.Addr))) })
}

func (h *host) AllocHost(bytes int64, pinned bool) (*device.HostMem, error) {
	if bytes < 0 {
		return nil, &device.APIError{Call: "cuMemAllocHost", Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("size %d", bytes)}
	}
	m := &hostAlloc{r: h.r, size: bytes, pinned: pinned}
	alloc := max(bytes, 1) // a zero-byte allocation still gets a valid pointer
	if pinned {
		if err := guard("cuMemAllocHost", func() { m.ptr = cu.MemAllocHost(alloc) }); err != nil {
			return nil, err
		}
	} else {
		// Pageable, but C memory: the driver may hold pointers to it.
		m.ptr = C.aligned_alloc(4096, C.size_t((alloc+4095)/4096*4096))
		if m.ptr == nil {
			return nil, fmt.Errorf("cuda: AllocHost(%d): out of host memory", bytes)
		}
	}
	data := unsafe.Slice((*byte)(m.ptr), bytes)
	clear(data)
	h.r.mu.Lock()
	h.r.hostMem[m] = true
	h.r.mu.Unlock()
	return &device.HostMem{Data: data, Pinned: pinned, Handle: m}, nil
}

func (h *host) hostAlloc(m *device.HostMem, op string) (*hostAlloc, error) {
	if m == nil {
		return nil, fmt.Errorf("cuda: %s: host memory is nil", op)
	}
	a, ok := m.Handle.(*hostAlloc)
	if !ok || a.r != h.r || a.freed {
		return nil, fmt.Errorf("cuda: %s: host memory was not allocated by AllocHost in this run, or was freed", op)
	}
	return a, nil
}

func (h *host) FreeHost(m *device.HostMem) error {
	a, err := h.hostAlloc(m, "FreeHost")
	if err != nil {
		return err
	}
	h.r.mu.Lock()
	delete(h.r.hostMem, a)
	h.r.mu.Unlock()
	m.Data = nil
	return a.free()
}

// Streams and events.

func (h *host) NewStream(opt device.StreamOptions) (device.Stream, error) {
	in := &h.r.d.info
	// CUDA clamps priorities into the device's range; so does the simulator.
	prio := min(max(opt.Priority, in.StreamPriorityHigh), in.StreamPriorityLowest)
	flags := C.uint(C.CU_STREAM_NON_BLOCKING)
	if opt.Blocking {
		flags = C.CU_STREAM_DEFAULT
	}
	st := &stream{id: nextID(&h.r.streamIDs), prio: prio, r: h.r}
	if err := check("cuStreamCreateWithPriority", C.cuStreamCreateWithPriority(&st.s, flags, C.int(prio))); err != nil {
		return nil, err
	}
	h.r.mu.Lock()
	h.r.streams[st] = true
	h.r.lanes = append(h.r.lanes, device.TraceLane{Pid: pidStreams, Tid: st.id, Name: fmt.Sprintf("stream %d (priority %d)", st.id, st.prio)})
	h.r.mu.Unlock()
	return st, nil
}

func (h *host) NewEvent(opt device.EventOptions) (device.Event, error) {
	flags := C.uint(C.CU_EVENT_DEFAULT)
	if opt.DisableTiming {
		flags = C.CU_EVENT_DISABLE_TIMING
	}
	ev := &event{id: nextID(&h.r.eventIDs), r: h.r}
	if err := check("cuEventCreate", C.cuEventCreate(&ev.e, flags)); err != nil {
		return nil, err
	}
	h.r.mu.Lock()
	h.r.events[ev] = true
	h.r.mu.Unlock()
	return ev, nil
}

func (h *host) Destroy(res device.Resource) error {
	defer h.traceCall("destroy", h.callStart())
	r := h.r
	switch v := res.(type) {
	case *stream:
		if _, err := h.stream(v, "Destroy"); err != nil {
			return err
		}
		// Forget the handle before destroying it: after a failed destroy
		// its state is undefined, and destroying it again at the end of
		// the run could free it twice (a leak is the safer failure).
		v.dead.Store(true)
		r.mu.Lock()
		delete(r.streams, v)
		r.mu.Unlock()
		return check("cuStreamDestroy", C.cuStreamDestroy(v.s))
	case *event:
		if _, err := h.event(v, "Destroy"); err != nil {
			return err
		}
		v.dead.Store(true) // forgotten first, as streams are
		r.mu.Lock()
		delete(r.events, v)
		r.mu.Unlock()
		return check("cuEventDestroy", C.cuEventDestroy(v.e))
	case *graph:
		return h.destroyGraph(v)
	case *graphExec:
		return h.destroyExec(v)
	default:
		return fmt.Errorf("cuda: Destroy: %T is not a resource of this device", res)
	}
}

// Commands.

func (h *host) Launch(s device.Stream, l *device.Launch) error {
	called := h.callStart()
	st, err := h.stream(s, "Launch")
	if err != nil {
		return err
	}
	if err := device.ValidateLaunch(&h.r.d.info, l); err != nil {
		return err
	}
	f, err := h.fn(l.Kernel)
	if err != nil {
		return err
	}
	if err := h.args.marshal(l); err != nil {
		return err
	}
	capt := st.capture.Load()
	var tr tracePoint
	if h.r.tracing && capt == nil {
		if tr, err = h.traceBegin(st); err != nil {
			return err
		}
	}
	if r := injected("cuLaunchKernel", C.gs_launch(f.f, C.uint(l.Grid.X), C.uint(l.Grid.Y), C.uint(l.Grid.Z),
		C.uint(l.Block.X), C.uint(l.Block.Y), C.uint(l.Block.Z), C.uint(l.SharedMem),
		st.s, h.args.params)); r != C.CUDA_SUCCESS {
		return apiErr("cuLaunchKernel", r)
	}
	if capt != nil {
		defer h.traceCall("cuLaunchKernel (capture)", called)
		return h.captured(st, capt, captureNode{kind: nodeKernel, kernel: l.Kernel})
	}
	if tr.on {
		return h.traceEnd(st, tr, l.Name(), "kernel",
			device.TraceArg{Key: "kernel", Value: l.Kernel.String()},
			device.TraceArg{Key: "grid", Value: device.DimArg(l.Grid)},
			device.TraceArg{Key: "block", Value: device.DimArg(l.Block)})
	}
	return nil
}

// copyPointers resolves a validated copy's addresses.
func (h *host) copyPointers(c *device.Copy, op string) (dst, src C.CUdeviceptr, hostPtr C.uintptr_t, err error) {
	if c.Kind != device.DeviceToDevice {
		a, err := h.hostAlloc(c.Host, op)
		if err != nil {
			return 0, 0, 0, err
		}
		hostPtr = C.uintptr_t(uintptr(a.ptr) + uintptr(c.HostOff))
	}
	if c.Kind != device.DeviceToHost {
		dst = C.CUdeviceptr(c.Dst.Addr + uint64(c.DstOff))
	}
	if c.Kind != device.HostToDevice {
		src = C.CUdeviceptr(c.Src.Addr + uint64(c.SrcOff))
	}
	return dst, src, hostPtr, nil
}

func (h *host) Copy(s device.Stream, c *device.Copy) error {
	called := h.callStart()
	st, err := h.stream(s, "Copy")
	if err != nil {
		return err
	}
	if err := device.ValidateCopy(c); err != nil {
		return err
	}
	dst, src, hp, err := h.copyPointers(c, "Copy")
	if err != nil {
		return err
	}
	capt := st.capture.Load()
	if capt != nil && c.Kind != device.DeviceToDevice && !c.Host.Pinned {
		return &device.APIError{Call: "cuMemcpyAsync", Code: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
			Msg: "a copy from pageable host memory synchronizes and cannot be captured"}
	}
	var tr tracePoint
	if h.r.tracing && capt == nil {
		if tr, err = h.traceBegin(st); err != nil {
			return err
		}
	}
	n := C.size_t(c.Bytes)
	var r C.CUresult
	var call string
	switch c.Kind {
	case device.HostToDevice:
		call, r = "cuMemcpyHtoDAsync", C.gs_htod(dst, hp, n, st.s)
	case device.DeviceToHost:
		call, r = "cuMemcpyDtoHAsync", C.gs_dtoh(hp, src, n, st.s)
	default:
		call, r = "cuMemcpyDtoDAsync", C.gs_dtod(dst, src, n, st.s)
	}
	if r = injected(call, r); r != C.CUDA_SUCCESS {
		return apiErr(call, r)
	}
	if capt != nil {
		defer h.traceCall("cuMemcpyAsync (capture)", called)
		return h.captured(st, capt, captureNode{kind: nodeCopy, copyKind: c.Kind})
	}
	if tr.on {
		name := c.Label
		if name == "" {
			name = c.Kind.String()
		}
		return h.traceEnd(st, tr, name, "gpu_memcpy",
			device.TraceArg{Key: "kind", Value: c.Kind.String()},
			device.TraceArg{Key: "bytes", Value: c.Bytes})
	}
	return nil
}

func (h *host) Record(e device.Event, s device.Stream) error {
	defer h.traceCall("cuEventRecord", h.callStart())
	ev, err := h.event(e, "Record")
	if err != nil {
		return err
	}
	st, err := h.stream(s, "Record")
	if err != nil {
		return err
	}
	if err := check("cuEventRecord", C.cuEventRecord(ev.e, st.s)); err != nil {
		return err
	}
	ev.capture.Store(st.capture.Load())
	return nil
}

func (h *host) Wait(s device.Stream, e device.Event) error {
	defer h.traceCall("cuStreamWaitEvent", h.callStart())
	st, err := h.stream(s, "Wait")
	if err != nil {
		return err
	}
	ev, err := h.event(e, "Wait")
	if err != nil {
		return err
	}
	if err := check("cuStreamWaitEvent", C.cuStreamWaitEvent(st.s, ev.e, 0)); err != nil {
		return err
	}
	// Waiting on an event recorded in a capture makes the stream join it.
	if c := ev.capture.Load(); c != nil && st.capture.Load() == nil && c.join(st) {
		st.capture.Store(c)
	}
	return nil
}

func (h *host) HostFunc(s device.Stream, fn func()) error {
	called := h.callStart()
	st, err := h.stream(s, "HostFunc")
	if err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("cuda: HostFunc: fn is nil")
	}
	capt := st.capture.Load()
	launchedOn := st.id
	if capt != nil {
		launchedOn = -1 // a graph's host node runs wherever the graph is launched
	}
	handle := callbacks.add(fn, h.r, capt != nil, launchedOn)
	if capt == nil {
		// Counted before the launch: the callback may run at once.
		h.r.th.callbackQueued(1)
	}
	var tr tracePoint
	if h.r.tracing && capt == nil {
		if tr, err = h.traceBegin(st); err != nil {
			return err
		}
	}
	if r := injected("cuLaunchHostFunc", C.gs_launch_host_func(st.s, C.uintptr_t(handle))); r != C.CUDA_SUCCESS {
		callbacks.remove(handle)
		if capt == nil {
			h.r.th.callbackDone()
		}
		return apiErr("cuLaunchHostFunc", r)
	}
	if capt != nil {
		h.r.mu.Lock()
		h.r.handles = append(h.r.handles, handle)
		h.r.mu.Unlock()
		defer h.traceCall("cuLaunchHostFunc (capture)", called)
		return h.captured(st, capt, captureNode{kind: nodeHost})
	}
	if tr.on {
		return h.traceEnd(st, tr, "host callback", "callback")
	}
	return nil
}

// Queries and synchronization.

func (h *host) Query(e device.Event) (bool, error) {
	defer h.traceCall("cuEventQuery", h.callStart())
	ev, err := h.event(e, "Query")
	if err != nil {
		return false, err
	}
	switch r := injected("cuEventQuery", C.cuEventQuery(ev.e)); r {
	case C.CUDA_SUCCESS:
		return true, nil
	case C.CUDA_ERROR_NOT_READY:
		return false, nil
	default:
		return false, apiErr("cuEventQuery", r)
	}
}

func (h *host) StreamQuery(s device.Stream) (bool, error) {
	defer h.traceCall("cuStreamQuery", h.callStart())
	st, err := h.stream(s, "StreamQuery")
	if err != nil {
		return false, err
	}
	switch r := injected("cuStreamQuery", C.cuStreamQuery(st.s)); r {
	case C.CUDA_SUCCESS:
		return true, nil
	case C.CUDA_ERROR_NOT_READY:
		return false, nil
	default:
		return false, apiErr("cuStreamQuery", r)
	}
}

func (h *host) EventSynchronize(e device.Event) error {
	defer h.traceCall("cuEventSynchronize", h.callStart())
	ev, err := h.event(e, "EventSynchronize")
	if err != nil {
		return err
	}
	return check("cuEventSynchronize", C.cuEventSynchronize(ev.e))
}

func (h *host) StreamSynchronize(s device.Stream) error {
	defer h.traceCall("cuStreamSynchronize", h.callStart())
	st, err := h.stream(s, "StreamSynchronize")
	if err != nil {
		return err
	}
	return check("cuStreamSynchronize", C.cuStreamSynchronize(st.s))
}

func (h *host) Synchronize() error {
	defer h.traceCall("cuCtxSynchronize", h.callStart())
	return check("cuCtxSynchronize", C.cuCtxSynchronize())
}

func (h *host) Elapsed(start, end device.Event) (time.Duration, error) {
	a, err := h.event(start, "Elapsed")
	if err != nil {
		return 0, err
	}
	b, err := h.event(end, "Elapsed")
	if err != nil {
		return 0, err
	}
	if err := check("cuEventElapsedTime", C.gs_elapsed(h.args.sc, a.e, b.e)); err != nil {
		return 0, err
	}
	return time.Duration(float64(h.args.sc.ms) * 1e6), nil
}

// Queues.

func (h *host) NewQueue(name string) device.Queue { return h.r.th.newQueue(name) }

func (h *host) Get(q device.Queue) (any, bool) {
	defer h.traceCall("queue Get", h.callStart())
	qq, ok := q.(*queue)
	if !ok || qq == nil || qq.t != h.r.th {
		// Not one of this run's queues: nothing will ever arrive.
		h.r.callbackError(fmt.Sprintf("host thread %s: Get on a queue (%T) not made by this run's NewQueue", h.name, q))
		return nil, false
	}
	return qq.get(h.id, h.name)
}

// DeviceInfo implements device.InfoHost.
func (h *host) DeviceInfo() device.Info { return h.r.d.info }
