package cuda

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

func TestQueueFIFOAndGrowth(t *testing.T) {
	th := newThreads()
	th.started()
	q := th.newQueue("q")
	for i := 0; i < 100; i++ {
		q.Put(i)
		if i%3 == 0 {
			v, ok := q.get(1, "main")
			require.True(t, ok)
			assert.Equal(t, i/3, v)
		}
	}
	assert.Equal(t, 100-34, q.Len())
	q.Close()
	for want := 34; want < 100; want++ {
		v, ok := q.get(1, "main")
		require.True(t, ok)
		assert.Equal(t, want, v)
	}
	v, ok := q.get(1, "main")
	assert.False(t, ok)
	assert.Nil(t, v)
	require.NoError(t, th.err())
}

func TestQueueWakesBlockedGetter(t *testing.T) {
	th := newThreads()
	th.started()
	th.started()
	q := th.newQueue("work")
	got := make(chan any)
	go func() {
		v, _ := q.get(2, "worker")
		got <- v
	}()
	time.Sleep(10 * time.Millisecond) // let the worker block
	q.Put("x")
	assert.Equal(t, "x", <-got)
	require.NoError(t, th.err())
}

func TestQueueDeadlockWhenAllThreadsWait(t *testing.T) {
	th := newThreads()
	th.started()
	th.started()
	a, b := th.newQueue("a"), th.newQueue("b")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, ok := a.get(1, "main"); assert.False(t, ok) }()
	go func() { defer wg.Done(); _, ok := b.get(2, "worker"); assert.False(t, ok) }()
	wg.Wait()
	var dl *device.DeadlockError
	require.ErrorAs(t, th.err(), &dl)
	require.Len(t, dl.Waiting, 2)
	assert.Contains(t, dl.Waiting[0], "host thread main blocked in Get(queue a)")
	assert.Contains(t, dl.Waiting[1], "host thread worker blocked in Get(queue b)")
}

func TestQueueNoDeadlockWhileCallbackPending(t *testing.T) {
	th := newThreads()
	th.started()
	th.callbackQueued(1)
	q := th.newQueue("done")
	got := make(chan bool)
	go func() { _, ok := q.get(1, "main"); got <- ok }()
	time.Sleep(10 * time.Millisecond)
	q.Put(1) // the callback's Put
	th.callbackDone()
	assert.True(t, <-got)
	require.NoError(t, th.err())

	// A callback that finishes without putting leaves the waiter stuck.
	th.callbackQueued(1)
	go func() { _, ok := q.get(1, "main"); got <- ok }()
	time.Sleep(10 * time.Millisecond)
	th.callbackDone()
	assert.False(t, <-got)
	assert.Error(t, th.err())
}

func TestQueueDeadlockWhenLastOtherThreadExits(t *testing.T) {
	th := newThreads()
	th.started()
	th.started()
	q := th.newQueue("q")
	got := make(chan bool)
	go func() { _, ok := q.get(1, "main"); got <- ok }()
	time.Sleep(10 * time.Millisecond)
	th.exited() // the other thread returns without putting
	assert.False(t, <-got)
	var dl *device.DeadlockError
	assert.ErrorAs(t, th.err(), &dl)
}

func TestQueuePutAfterCloseIsReported(t *testing.T) {
	th := newThreads()
	q := th.newQueue("q")
	q.Close()
	q.Put(1)
	assert.Equal(t, 0, q.Len())
	err := th.err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Put to closed queue q")
}

// Spinning before parking must change neither delivery nor deadlock
// detection: with a spin longer than the Put's delay the value arrives
// while the getter polls; with none it arrives through the parked path.
func TestQueueSpinThenPark(t *testing.T) {
	for _, spin := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(spin.String(), func(t *testing.T) {
			th := newThreads()
			th.spin = spin
			th.started()
			th.started()
			q := th.newQueue("work")
			got := make(chan any)
			go func() {
				v, _ := q.get(2, "worker")
				got <- v
			}()
			time.Sleep(2 * time.Millisecond)
			q.Put("x")
			assert.Equal(t, "x", <-got)

			// Both threads then wait on empty queues: a deadlock, found
			// after the spin.
			a, b := th.newQueue("a"), th.newQueue("b")
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); _, ok := a.get(1, "main"); assert.False(t, ok) }()
			go func() { defer wg.Done(); _, ok := b.get(2, "worker"); assert.False(t, ok) }()
			wg.Wait()
			var dl *device.DeadlockError
			require.ErrorAs(t, th.err(), &dl)
			assert.Len(t, dl.Waiting, 2)
		})
	}
}
