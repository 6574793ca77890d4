//go:build cuda

package cuda

/*
#include <cuda.h>
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mumax/3/cuda/cu"

	"github.com/gpusched/gpusched/device"
)

// run is one Device.Run: its host threads and every resource they create,
// all released when the run ends.
type run struct {
	d       *Device
	start   time.Time
	th      *threads
	tracing bool
	wg      sync.WaitGroup
	// Ids count from 0 in creation order, per kind, as on the simulator.
	streamIDs, eventIDs, graphIDs atomic.Int64
	hostIDs                       atomic.Int64

	mu       sync.Mutex // guards what follows
	streams  map[*stream]bool
	events   map[*event]bool
	graphs   map[*graph]bool
	execs    map[*graphExec]bool
	bufs     map[uint64]int64
	hostMem  map[*hostAlloc]bool
	handles  []uintptr // persistent callback handles (graph host nodes)
	errs     []hostErr
	cbErrs   []string
	trace    []traceOp
	cbRuns   []callbackRun // host callbacks' runs, when tracing
	lanes    []device.TraceLane
	base     C.CUevent
	baseAt   time.Duration
	baseStrm C.CUstream
}

type hostErr struct {
	id   int
	name string
	err  error
}

func newRun(d *Device, tracing bool) *run {
	th := newThreads()
	th.spin = d.spin
	return &run{
		d: d, th: th, tracing: tracing,
		streams: map[*stream]bool{}, events: map[*event]bool{}, graphs: map[*graph]bool{},
		execs: map[*graphExec]bool{}, bufs: map[uint64]int64{}, hostMem: map[*hostAlloc]bool{},
	}
}

// begin starts the run clock; when tracing, it also records the base event
// every command's time is measured from.
func (r *run) begin() error {
	r.start = time.Now()
	if !r.tracing {
		return nil
	}
	if err := check("cuStreamCreate", C.cuStreamCreate(&r.baseStrm, C.CU_STREAM_NON_BLOCKING)); err != nil {
		return err
	}
	if err := check("cuEventCreate", C.cuEventCreate(&r.base, C.CU_EVENT_DEFAULT)); err != nil {
		return err
	}
	if err := check("cuEventRecord", C.cuEventRecord(r.base, r.baseStrm)); err != nil {
		return err
	}
	if err := check("cuEventSynchronize", C.cuEventSynchronize(r.base)); err != nil {
		return err
	}
	// The GPU reached the base event no later than now: align the two
	// clocks there (within one synchronize wake-up).
	r.baseAt = time.Since(r.start)
	return nil
}

func (r *run) now() time.Duration { return time.Since(r.start) }

func nextID(c *atomic.Int64) int { return int(c.Add(1)) - 1 }

// spawn starts a host thread: a goroutine locked to its OS thread with the
// context current.
func (r *run) spawn(name string, fn func(h device.Host) error) {
	id := int(r.hostIDs.Add(1)) - 1
	r.th.started()
	r.wg.Add(1)
	r.mu.Lock()
	r.lanes = append(r.lanes, device.TraceLane{Pid: pidHost, Tid: id, Name: name})
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// Deferred, so that a thread ended by runtime.Goexit still counts
		// as gone.
		defer r.th.exited()
		if err := r.hostThread(id, name, fn); err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, hostErr{id, name, err})
			r.mu.Unlock()
		}
	}()
}

func (r *run) hostThread(id int, name string, fn func(h device.Host) error) (err error) {
	if err := check("cuCtxSetCurrent", C.cuCtxSetCurrent(r.d.cctx())); err != nil {
		return err
	}
	defer C.cuCtxSetCurrent(nil)
	h := &host{r: r, id: id, name: name, funcs: map[*device.Kernel]*function{}}
	if h.args, err = newArgScratch(); err != nil {
		return err
	}
	defer func() {
		h.args.free()
		if len(h.trace) > 0 {
			r.mu.Lock()
			r.trace = append(r.trace, h.trace...)
			r.mu.Unlock()
		}
		if p := recover(); p != nil {
			err = fmt.Errorf("host thread %s panicked: %v", name, p)
		}
	}()
	return fn(h)
}

// callbackError records a host callback that panicked.
func (r *run) callbackError(msg string) {
	r.mu.Lock()
	r.cbErrs = append(r.cbErrs, msg)
	r.mu.Unlock()
}

// release destroys everything the run created, in dependency order.
func (r *run) release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, x := range sortedByID(r.execs) {
		keep(check("cuGraphExecDestroy", C.cuGraphExecDestroy(x.x)))
	}
	for _, g := range sortedByID(r.graphs) {
		keep(check("cuGraphDestroy", C.cuGraphDestroy(g.g)))
	}
	for _, e := range sortedByID(r.events) {
		keep(check("cuEventDestroy", C.cuEventDestroy(e.e)))
	}
	for _, s := range sortedByID(r.streams) {
		keep(check("cuStreamDestroy", C.cuStreamDestroy(s.s)))
	}
	for _, op := range r.trace {
		if op.hostOnly {
			continue
		}
		keep(check("cuEventDestroy", C.cuEventDestroy(op.evStart)))
		keep(check("cuEventDestroy", C.cuEventDestroy(op.evEnd)))
	}
	if r.base != nil {
		keep(check("cuEventDestroy", C.cuEventDestroy(r.base)))
	}
	if r.baseStrm != nil {
		keep(check("cuStreamDestroy", C.cuStreamDestroy(r.baseStrm)))
	}
	addrs := make([]uint64, 0, len(r.bufs))
	for a := range r.bufs {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	for _, a := range addrs {
		keep(guard("cuMemFree", func() { cu.MemFree(cu.DevicePtr(uintptr(a))) }))
	}
	for m := range r.hostMem {
		keep(m.free())
	}
	for _, h := range r.handles {
		callbacks.remove(h)
	}
	r.streams, r.events, r.graphs, r.execs = nil, nil, nil, nil
	r.bufs, r.hostMem, r.handles, r.trace, r.cbRuns = nil, nil, nil, nil, nil
	return errors.Join(errs...)
}

// result is Run's error: a deadlock first, then the host threads' errors in
// the order they were started, then callback panics and driver failures.
func (r *run) result(drainErr, relErr error) error {
	var errs []error
	if err := r.th.err(); err != nil {
		errs = append(errs, err)
	}
	sort.Slice(r.errs, func(i, j int) bool { return r.errs[i].id < r.errs[j].id })
	for _, e := range r.errs {
		errs = append(errs, e.err)
	}
	for _, m := range r.cbErrs {
		errs = append(errs, errors.New(m))
	}
	if drainErr != nil {
		errs = append(errs, fmt.Errorf("draining the device after the run: %w", drainErr))
	}
	if relErr != nil {
		errs = append(errs, fmt.Errorf("releasing the run's resources: %w", relErr))
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

type ider interface {
	comparable
	ID() int
}

func sortedByID[T ider](m map[T]bool) []T {
	out := make([]T, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// hostAlloc is host memory from AllocHost: pinned (cuMemAllocHost) or
// pageable (malloc), C memory either way.
type hostAlloc struct {
	r      *run
	ptr    unsafe.Pointer
	size   int64
	pinned bool
	freed  bool
}

func (m *hostAlloc) free() error {
	if m.freed {
		return nil
	}
	m.freed = true
	if m.pinned {
		return guard("cuMemFreeHost", func() { cu.MemFreeHost(m.ptr) })
	}
	C.free(m.ptr)
	return nil
}
