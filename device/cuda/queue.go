package cuda

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpusched/gpusched/device"
)

// threads is what a run knows about its host threads and pending host
// callbacks, for Queues and deadlock detection. Every queue of a run shares
// its mutex, so "every live host thread is blocked in Get and no callback is
// pending" is checked atomically: then nothing can ever Put again, and the
// run is deadlocked.
//
// The type is plain Go (no cgo), so it is tested without a GPU.
type threads struct {
	mu       sync.Mutex
	live     int            // host threads that have not returned
	blocked  map[int]waiter // host thread id -> what it waits on in Get
	pending  int            // host callbacks enqueued and not yet run
	queues   []*queue       // every queue of the run, to wake on deadlock
	deadlock *device.DeadlockError
	misuse   []string // Puts after Close, reported as Run's error
	// spin is how long Get polls an empty queue before parking the thread
	// (0: park at once). Parking and waking a thread is a futex round trip,
	// tens of microseconds where spinning takes one or two
	// (TestHostPrimitiveCosts; measured in docs/results/gpu-runs.md). That
	// is longer than the kernels whose schedulers hand work between threads
	// (ACS-SW's window and scheduler threads, SET's callbacks). A host
	// thread waits like cuStreamSynchronize does under the default
	// CU_CTX_SCHED_AUTO: it spins first, then yields.
	spin time.Duration
}

// DefaultQueueSpin is Options.QueueSpin's default. It must outlast one
// park-and-wake of the other side (about 25 us measured): with a 50 us
// spin, a thread that had parked once made its peer's spin expire too, and
// the pair kept parking (45 us per round trip instead of 1-2 us). Short
// enough that an idle thread still parks and leaves its core.
const DefaultQueueSpin = 200 * time.Microsecond

// waiter is a host thread blocked in Get.
type waiter struct {
	name string
	q    *queue
}

func newThreads() *threads {
	return &threads{blocked: map[int]waiter{}, spin: DefaultQueueSpin}
}

// started and exited bracket a host thread's life.
func (t *threads) started() {
	t.mu.Lock()
	t.live++
	t.mu.Unlock()
}

func (t *threads) exited() {
	t.mu.Lock()
	t.live--
	t.checkLocked()
	t.mu.Unlock()
}

// callbackQueued and callbackDone bracket a host callback between enqueue
// and completion: while one is pending it may still Put.
func (t *threads) callbackQueued(n int) {
	t.mu.Lock()
	t.pending += n
	t.mu.Unlock()
}

func (t *threads) callbackDone() {
	t.mu.Lock()
	t.pending--
	t.checkLocked()
	t.mu.Unlock()
}

// checkLocked declares a deadlock when nothing can make progress, and wakes
// every waiter so that Get returns and the run can end.
func (t *threads) checkLocked() {
	if t.deadlock != nil || t.live == 0 || len(t.blocked) != t.live || t.pending > 0 {
		return
	}
	// A waiter whose queue has a value (or was closed) is about to wake.
	for _, w := range t.blocked {
		if w.q.n > 0 || w.q.closed {
			return
		}
	}
	ids := make([]int, 0, len(t.blocked))
	for id := range t.blocked {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	waiting := make([]string, 0, len(ids))
	for _, id := range ids {
		w := t.blocked[id]
		waiting = append(waiting, fmt.Sprintf("host thread %s blocked in Get(queue %s), which is empty and not closed, and no host callback is pending", w.name, w.q.name))
	}
	t.deadlock = &device.DeadlockError{At: "wall clock", Waiting: waiting}
	for _, q := range t.queues {
		q.cond.Broadcast()
	}
}

// err is the run's queue-level error, if any.
func (t *threads) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deadlock != nil {
		return t.deadlock
	}
	if len(t.misuse) > 0 {
		return fmt.Errorf("queue misuse: %v", t.misuse)
	}
	return nil
}

// queue is a first-in first-out mailbox (device.Queue): a ring buffer under
// the run's mutex.
type queue struct {
	t      *threads
	name   string
	cond   *sync.Cond
	buf    []any
	head   int
	n      int
	closed bool
	// ready mirrors n > 0 || closed for Get's lock-free spin; written
	// under t.mu.
	ready atomic.Bool
}

func (t *threads) newQueue(name string) *queue {
	q := &queue{t: t, name: name, cond: sync.NewCond(&t.mu), buf: make([]any, 8)}
	t.mu.Lock()
	t.queues = append(t.queues, q)
	t.mu.Unlock()
	return q
}

// Put appends v. It never blocks. A Put after Close is a schedule bug: the
// value is dropped and Run reports it.
func (q *queue) Put(v any) {
	q.t.mu.Lock()
	defer q.t.mu.Unlock()
	if q.closed {
		q.t.misuse = append(q.t.misuse, fmt.Sprintf("Put to closed queue %s", q.name))
		return
	}
	if q.n == len(q.buf) {
		grown := make([]any, 2*len(q.buf))
		for i := 0; i < q.n; i++ {
			grown[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = v
	q.n++
	q.ready.Store(true)
	q.cond.Signal()
}

// Close marks the queue closed: Gets drain what is left, then return !ok.
func (q *queue) Close() {
	q.t.mu.Lock()
	q.closed = true
	q.ready.Store(true)
	q.cond.Broadcast()
	q.t.mu.Unlock()
}

// Len is the number of values waiting.
func (q *queue) Len() int {
	q.t.mu.Lock()
	defer q.t.mu.Unlock()
	return q.n
}

// get blocks the calling host thread (id, named who) until a value arrives, the
// queue is closed and empty, or the run deadlocks.
func (q *queue) get(id int, who string) (any, bool) {
	t := q.t
	q.spinUntilReady()
	t.mu.Lock()
	defer t.mu.Unlock()
	for q.n == 0 && !q.closed && t.deadlock == nil {
		t.blocked[id] = waiter{who, q}
		t.checkLocked()
		if t.deadlock != nil {
			delete(t.blocked, id)
			break
		}
		q.cond.Wait()
		delete(t.blocked, id)
	}
	if q.n == 0 {
		return nil, false
	}
	v := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	q.ready.Store(q.n > 0 || q.closed)
	return v, true
}

// spinUntilReady polls the queue for up to t.spin without the lock. It
// returns early when a value is there or the queue is closed; otherwise Get
// parks as before (a deadlock is detected at most t.spin later).
func (q *queue) spinUntilReady() {
	if q.t.spin <= 0 || q.ready.Load() {
		return
	}
	deadline := time.Now().Add(q.t.spin)
	for i := 1; ; i++ {
		if q.ready.Load() {
			return
		}
		// Reading the clock less often keeps the poll on the flag.
		if i%256 == 0 && time.Now().After(deadline) {
			return
		}
	}
}
