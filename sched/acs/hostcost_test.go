package acs

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpusched/gpusched/device"
)

// hostCostDevice is a test-only device.Device that runs no kernels but
// costs real host time: each driver call spins for a fixed time on the
// calling goroutine, as cuLaunchKernel through cgo costs 3.9-4.2 us on the
// H100's host (docs/results/acs.md, "Reading the results"), and each
// operation "runs" for a fixed real duration after the previous one on its
// stream (and after the events it waits on) ends. It measures what the
// simulator cannot: the real CPU time of a scheduler's host threads around
// the driver calls (ACS-SW's window thread: the check, the handoffs
// through Queues, the bookkeeping), with no GPU.
//
// Host threads are goroutines and every wait polls with runtime.Gosched,
// so that the benchmark means something on a machine with fewer cores
// than host threads: a goroutine keeps its core only while it works. Time
// a host thread spends blocked in Get is counted per host (blockedInGet),
// so the rest of a thread's wall time is its own work.
//
// Every operation's run interval is logged; conflicts checks that no two
// conflicting operations' intervals overlap in the wrong order, so a
// schedule that ignores a dependency is caught as on the simulator.
type hostCostDevice struct {
	launchCost time.Duration // a Launch or Copy: the host time of cuLaunchKernel
	callCost   time.Duration // Record, Wait, Query, HostFunc and each synchronize's call
	kernel     time.Duration // how long each operation runs once it may start
	locked     time.Duration // the part of each call made under one device-wide lock
	queueSpin  time.Duration // Get polls an empty queue this long before parking (device/cuda: 200 us)

	r *hostCostRun // the last Run's state, for its log
}

func (d *hostCostDevice) Info() device.Info { return device.Info{Name: "host-cost"} }
func (d *hostCostDevice) Close() error      { return nil }

// hostCostRun is one Run's shared state.
type hostCostRun struct {
	d     *hostCostDevice
	start time.Time

	mu      sync.Mutex
	driver  sync.Mutex // held for the locked part of each driver call
	queues  sync.Mutex // every Queue's lock, as device/cuda's run has one
	nextBuf uint64
	log     []interval // every operation's run interval
	streams []*hcStream
	errs    []error

	wg        sync.WaitGroup
	callbacks chan hcCallback
}

// interval is one operation's run on the device: [start, end) in ns since
// the run's start.
type interval struct {
	launch     *device.Launch
	copy       *device.Copy
	start, end int64
}

type hcCallback struct {
	at int64
	fn func()
}

type hcStream struct {
	device.Base
	id   int
	mu   sync.Mutex
	tail int64 // when the last operation enqueued on it ends
}

func (s *hcStream) ID() int       { return s.id }
func (s *hcStream) Priority() int { return 0 }

type hcEvent struct {
	device.Base
	id int
	at atomic.Int64 // when the work before its last record ends; 0 if never recorded
}

func (e *hcEvent) ID() int { return e.id }

func (d *hostCostDevice) Run(main func(h device.Host) error) error {
	r := &hostCostRun{d: d, start: time.Now(), nextBuf: 1 << 20, callbacks: make(chan hcCallback, 1<<16)}
	d.r = r
	done := make(chan struct{})
	go r.callbackThread(done)
	err := r.hostThread("main", main)
	r.wg.Wait()
	close(r.callbacks)
	<-done
	if err != nil {
		return err
	}
	return errors.Join(r.errs...)
}

func (r *hostCostRun) now() int64 { return int64(time.Since(r.start)) }

// spinUntil polls the clock until t, yielding the core between polls.
func (r *hostCostRun) spinUntil(t int64) {
	for r.now() < t {
		runtime.Gosched()
	}
}

// work spins for d of real CPU time: the driver's own work, which keeps
// its core; the device's locked part of it under the driver lock.
func (r *hostCostRun) work(d time.Duration) {
	locked := min(r.d.locked, d)
	spin := func(d time.Duration) {
		end := r.now() + int64(d)
		for r.now() < end {
		}
	}
	spin(d - locked)
	if locked > 0 {
		r.driver.Lock()
		spin(locked)
		r.driver.Unlock()
	}
}

// callbackThread runs host functions, in enqueue order, once their stream
// reaches them: CUDA runs them on one driver thread.
func (r *hostCostRun) callbackThread(done chan struct{}) {
	defer close(done)
	for c := range r.callbacks {
		r.spinUntil(c.at)
		c.fn()
	}
}

func (r *hostCostRun) hostThread(name string, fn func(h device.Host) error) error {
	h := &hcHost{r: r, name: name}
	return fn(h)
}

// hcHost is one host thread's view.
type hcHost struct {
	r            *hostCostRun
	name         string
	blockedInGet time.Duration
}

var _ device.Host = (*hcHost)(nil)

func (h *hcHost) Name() string          { return h.name }
func (h *hcHost) Now() time.Duration    { return time.Duration(h.r.now()) }
func (h *hcHost) Spend(_ time.Duration) {} // as on a GPU: the work itself takes the time

func (h *hcHost) Go(name string, fn func(h device.Host) error) {
	r := h.r
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := r.hostThread(name, fn); err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, fmt.Errorf("host thread %s: %w", name, err))
			r.mu.Unlock()
		}
	}()
}

func (h *hcHost) Malloc(bytes int64) (device.Buffer, error) {
	if bytes <= 0 {
		return device.Buffer{}, fmt.Errorf("host-cost: malloc of %d bytes", bytes)
	}
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	b := device.Buffer{Addr: r.nextBuf, Size: bytes}
	r.nextBuf += (uint64(bytes) + 255) &^ 255
	return b, nil
}

func (h *hcHost) Free(device.Buffer) error { return nil }
func (h *hcHost) AllocHost(bytes int64, pinned bool) (*device.HostMem, error) {
	return &device.HostMem{Data: make([]byte, bytes), Pinned: pinned}, nil
}
func (h *hcHost) FreeHost(*device.HostMem) error { return nil }

func (h *hcHost) NewStream(device.StreamOptions) (device.Stream, error) {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &hcStream{id: len(r.streams)}
	r.streams = append(r.streams, s)
	return s, nil
}

var hcEvents atomic.Int64

func (h *hcHost) NewEvent(device.EventOptions) (device.Event, error) {
	return &hcEvent{id: int(hcEvents.Add(1))}, nil
}

func (h *hcHost) Destroy(device.Resource) error { return nil }

func stream(s device.Stream) (*hcStream, error) {
	st, ok := s.(*hcStream)
	if !ok || st == nil {
		return nil, fmt.Errorf("host-cost: %T is not a stream of this device", s)
	}
	return st, nil
}

func event(e device.Event) (*hcEvent, error) {
	ev, ok := e.(*hcEvent)
	if !ok || ev == nil {
		return nil, fmt.Errorf("host-cost: %T is not an event of this device", e)
	}
	return ev, nil
}

// enqueue appends an operation to s: it starts when s's previous work
// ends, or now, and runs for the device's kernel time.
func (h *hcHost) enqueue(s device.Stream, iv interval) error {
	st, err := stream(s)
	if err != nil {
		return err
	}
	h.r.work(h.r.d.launchCost)
	st.mu.Lock()
	iv.start = max(st.tail, h.r.now())
	iv.end = iv.start + int64(h.r.d.kernel)
	st.tail = iv.end
	st.mu.Unlock()
	h.r.mu.Lock()
	h.r.log = append(h.r.log, iv)
	h.r.mu.Unlock()
	return nil
}

func (h *hcHost) Launch(s device.Stream, l *device.Launch) error {
	return h.enqueue(s, interval{launch: l})
}

func (h *hcHost) Copy(s device.Stream, c *device.Copy) error {
	return h.enqueue(s, interval{copy: c})
}

func (h *hcHost) Record(e device.Event, s device.Stream) error {
	ev, err := event(e)
	if err != nil {
		return err
	}
	st, err := stream(s)
	if err != nil {
		return err
	}
	h.r.work(h.r.d.callCost)
	st.mu.Lock()
	ev.at.Store(max(st.tail, 1))
	st.mu.Unlock()
	return nil
}

func (h *hcHost) Wait(s device.Stream, e device.Event) error {
	ev, err := event(e)
	if err != nil {
		return err
	}
	st, err := stream(s)
	if err != nil {
		return err
	}
	h.r.work(h.r.d.callCost)
	st.mu.Lock()
	st.tail = max(st.tail, ev.at.Load())
	st.mu.Unlock()
	return nil
}

func (h *hcHost) HostFunc(s device.Stream, fn func()) error {
	st, err := stream(s)
	if err != nil {
		return err
	}
	h.r.work(h.r.d.callCost)
	st.mu.Lock()
	at := st.tail
	st.mu.Unlock()
	h.r.callbacks <- hcCallback{at: at, fn: fn}
	return nil
}

func (h *hcHost) Query(e device.Event) (bool, error) {
	ev, err := event(e)
	if err != nil {
		return false, err
	}
	h.r.work(h.r.d.callCost)
	return h.r.now() >= ev.at.Load(), nil
}

func (h *hcHost) tail(s device.Stream) (int64, error) {
	st, err := stream(s)
	if err != nil {
		return 0, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tail, nil
}

func (h *hcHost) StreamQuery(s device.Stream) (bool, error) {
	t, err := h.tail(s)
	if err != nil {
		return false, err
	}
	h.r.work(h.r.d.callCost)
	return h.r.now() >= t, nil
}

func (h *hcHost) EventSynchronize(e device.Event) error {
	ev, err := event(e)
	if err != nil {
		return err
	}
	h.r.work(h.r.d.callCost)
	h.r.spinUntil(ev.at.Load())
	return nil
}

func (h *hcHost) StreamSynchronize(s device.Stream) error {
	t, err := h.tail(s)
	if err != nil {
		return err
	}
	h.r.work(h.r.d.callCost)
	h.r.spinUntil(t)
	return nil
}

func (h *hcHost) Synchronize() error {
	h.r.mu.Lock()
	streams := append([]*hcStream(nil), h.r.streams...)
	h.r.mu.Unlock()
	for _, s := range streams {
		if err := h.StreamSynchronize(s); err != nil {
			return err
		}
	}
	return nil
}

func (h *hcHost) Elapsed(start, end device.Event) (time.Duration, error) {
	a, err := event(start)
	if err != nil {
		return 0, err
	}
	b, err := event(end)
	if err != nil {
		return 0, err
	}
	return time.Duration(b.at.Load() - a.at.Load()), nil
}

var errNoGraphs = fmt.Errorf("host-cost device: graphs: %w", device.ErrUnsupported)

func (h *hcHost) BeginCapture(device.Stream) error                          { return errNoGraphs }
func (h *hcHost) EndCapture(device.Stream) (device.Graph, error)            { return nil, errNoGraphs }
func (h *hcHost) Instantiate(device.Graph) (device.GraphExec, error)        { return nil, errNoGraphs }
func (h *hcHost) GraphLaunch(device.GraphExec, device.Stream) error         { return errNoGraphs }
func (h *hcHost) SetKernelNode(device.GraphExec, int, *device.Launch) error { return errNoGraphs }
func (h *hcHost) SetCopyNode(device.GraphExec, int, *device.Copy) error     { return errNoGraphs }

func (h *hcHost) NewQueue(name string) device.Queue {
	q := &hcQueue{name: name, mu: &h.r.queues}
	q.cond = sync.NewCond(q.mu)
	return q
}

// Get spins (yielding) for the device's queueSpin, then parks, as
// device/cuda's Queue does; the time until a value arrives is this
// host's blockedInGet, the time to take it is not.
func (h *hcHost) Get(q device.Queue) (any, bool) {
	qq, ok := q.(*hcQueue)
	if !ok {
		h.r.mu.Lock()
		h.r.errs = append(h.r.errs, fmt.Errorf("host thread %s: Get on a %T", h.name, q))
		h.r.mu.Unlock()
		return nil, false
	}
	if !qq.ready.Load() {
		t0 := h.r.now()
		deadline := t0 + int64(h.r.d.queueSpin)
		for !qq.ready.Load() && h.r.now() < deadline {
			runtime.Gosched()
		}
		qq.mu.Lock()
		for len(qq.buf) == 0 && !qq.closed {
			qq.cond.Wait()
		}
		qq.mu.Unlock()
		// Waiting counts as blocked; taking the value below is this
		// thread's own work.
		h.blockedInGet += time.Duration(h.r.now() - t0)
	}
	qq.mu.Lock()
	for len(qq.buf) == 0 && !qq.closed {
		qq.cond.Wait() // another Get took the value: not in ACS-SW, where each queue has one reader
	}
	var v any
	ok = len(qq.buf) > 0
	if ok {
		v = qq.buf[0]
		qq.buf[0] = nil
		qq.buf = qq.buf[1:]
	}
	qq.ready.Store(len(qq.buf) > 0 || qq.closed)
	qq.mu.Unlock()
	return v, ok
}

// hcQueue is a FIFO with a lock-free readiness flag for Get's spin, under
// a mutex that every queue of the run shares, like device/cuda's queue.
type hcQueue struct {
	name   string
	mu     *sync.Mutex
	cond   *sync.Cond
	buf    []any
	closed bool
	ready  atomic.Bool
}

func (q *hcQueue) Put(v any) {
	q.mu.Lock()
	if !q.closed {
		q.buf = append(q.buf, v)
	}
	q.ready.Store(true)
	q.cond.Signal()
	q.mu.Unlock()
}

func (q *hcQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.ready.Store(true)
	q.cond.Broadcast()
	q.mu.Unlock()
}

func (q *hcQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.buf)
}

// conflicts reports the pairs of logged operations, as indices into ops,
// that conflict (device.Conflicts on their access sets) and whose run
// intervals overlap: each of them a race the schedule let happen.
func (r *hostCostRun) conflicts(access func(iv interval) []device.Arg) [][2]int {
	var bad [][2]int
	for i := range r.log {
		for j := i + 1; j < len(r.log); j++ {
			a, b := r.log[i], r.log[j]
			if a.start < b.end && b.start < a.end && device.Conflicts(access(a), access(b)) {
				bad = append(bad, [2]int{i, j})
			}
		}
	}
	return bad
}
