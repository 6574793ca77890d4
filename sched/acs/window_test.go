package acs

import (
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

func arg(b device.Buffer, m device.Access, off, n int64) device.Arg {
	return device.Arg{Kind: device.ArgBuffer, Buf: b, Mode: m, Off: off, Len: n}
}

var (
	bufA = device.Buffer{Addr: 0x1000, Size: 1024}
	bufB = device.Buffer{Addr: 0x4000, Size: 1024}
)

func accessOf(sets ...[]device.Arg) func(int) []device.Arg {
	return func(k int) []device.Arg { return sets[k] }
}

func TestWindowHazards(t *testing.T) {
	sets := [][]device.Arg{
		{arg(bufA, device.Write, 0, 0)},   // 0 writes A
		{arg(bufA, device.Read, 0, 0)},    // 1 reads A: RAW on 0
		{arg(bufA, device.Read, 0, 0)},    // 2 reads A: RAW on 0 (reads never conflict)
		{arg(bufB, device.Write, 0, 512)}, // 3 writes B's low half: independent
		{arg(bufB, device.Write, 512, 0)}, // 4 writes B's high half: disjoint from 3
		{arg(bufA, device.Write, 0, 0)},   // 5 writes A: WAW on 0, WAR on 1 and 2
		{arg(bufB, device.Read, 0, 0)},    // 6 reads all of B: RAW on 3 and 4
	}
	w := newWindow(len(sets), 32, accessOf(sets...), false)
	require.Equal(t, len(sets), w.admit())
	want := [][]int{nil, {0}, {0}, nil, nil, {0, 1, 2}, {3, 4}}
	for k := range sets {
		assert.Equal(t, want[k], w.up[k], "upstream of %d", k)
	}
	assert.Equal(t, []int{0, 3, 4}, w.ready)
	assert.Equal(t, statePending, w.state[5])
}

func TestWindowLifecycle(t *testing.T) {
	// A chain 0 -> 1 -> 2 plus an independent 3, in a window of 2.
	sets := [][]device.Arg{
		{arg(bufA, device.Write, 0, 0)},
		{arg(bufA, device.ReadWrite, 0, 0)},
		{arg(bufA, device.Read, 0, 0)},
		{arg(bufB, device.Write, 0, 0)},
	}
	w := newWindow(4, 2, accessOf(sets...), false)
	assert.Equal(t, 2, w.admit(), "two slots")
	assert.Equal(t, 0, w.admit(), "full")
	assert.Equal(t, []int{0}, w.ready)
	w.issue(0, 1)
	assert.Equal(t, stateIssued, w.state[0])
	assert.Empty(t, w.ready)
	w.complete(0)
	assert.Equal(t, stateDone, w.state[0])
	assert.Equal(t, []int{1}, w.ready, "completion removes 0 from 1's upstream list")
	assert.Equal(t, 1, w.admit(), "the freed slot admits 2")
	assert.Equal(t, []int{1}, w.up[2])
	w.issue(1, 0)
	w.complete(1)
	assert.Equal(t, 1, w.admit())
	assert.Equal(t, []int{2, 3}, w.ready, "program order")
	w.issue(2, 0)
	w.issue(3, 1)
	w.complete(3)
	w.complete(2)
	assert.True(t, w.finished())
	assert.Empty(t, w.members)
}

func TestWindowUnbounded(t *testing.T) {
	sets := make([][]device.Arg, 100)
	for i := range sets {
		sets[i] = []device.Arg{arg(bufA, device.ReadWrite, int64(8*(i%10)), 8)}
	}
	w := newWindow(100, 0, accessOf(sets...), false)
	assert.Equal(t, 100, w.admit(), "window <= 0 admits everything")
	assert.Len(t, w.ready, 10, "ten independent chains")
	// Every unfinished conflicting kernel in the window is upstream, as in
	// the paper (no transitive reduction): op 90 waits on its whole chain.
	assert.Equal(t, []int{0, 10, 20, 30, 40, 50, 60, 70, 80}, w.up[90])
}

func TestWindowStreamOrdered(t *testing.T) {
	sets := [][]device.Arg{
		{arg(bufA, device.Write, 0, 0)},
		{arg(bufB, device.Write, 0, 0)},
		{arg(bufA, device.Read, 0, 0)},                               // waits on 0
		{arg(bufA, device.Read, 0, 0), arg(bufB, device.Read, 0, 0)}, // waits on 0 and 1
	}
	w := newWindow(4, 32, accessOf(sets...), false)
	w.admit()
	_, ok := w.streamOrdered(2)
	assert.False(t, ok, "0 not issued yet")
	w.issue(0, 2)
	th, ok := w.streamOrdered(2)
	assert.True(t, ok)
	assert.Equal(t, 2, th)
	w.issue(1, 3)
	_, ok = w.streamOrdered(3)
	assert.False(t, ok, "upstream kernels on two streams")
	w.complete(1)
	th, ok = w.streamOrdered(3)
	assert.True(t, ok, "only 0 is left, on stream 2")
	assert.Equal(t, 2, th)
}

func TestWindowChargesCheckCost(t *testing.T) {
	sets := make([][]device.Arg, 40)
	for i := range sets {
		sets[i] = []device.Arg{arg(bufA, device.Read, 0, 0), arg(bufB, device.Read, 0, 0)}
	}
	w := newWindow(40, 32, accessOf(sets...), true)
	w.admit()
	var want time.Duration
	for i := 0; i < 32; i++ {
		want += CheckCost(i, 2)
	}
	assert.Equal(t, time.Duration(float64(want)*checkHostScale+0.5), w.takeCost(), "the paper's figures scaled to the GPU hosts' check")
	assert.Zero(t, w.takeCost(), "taken")
}

func TestWindowAgreesWithDeviceConflicts(t *testing.T) {
	// The window's split read/write check decides exactly as
	// device.Conflicts on random access sets.
	r := rand.New(rand.NewSource(1))
	bufs := []device.Buffer{bufA, bufB}
	modes := []device.Access{device.Read, device.Write, device.ReadWrite}
	sets := make([][]device.Arg, 300)
	for i := range sets {
		for j := 0; j < 1+r.Intn(4); j++ {
			off := int64(r.Intn(1000))
			sets[i] = append(sets[i], arg(bufs[r.Intn(2)], modes[r.Intn(3)], off, int64(1+r.Intn(int(1024-off)))))
		}
	}
	w := newWindow(len(sets), 0, accessOf(sets...), false)
	w.admit()
	for k := range sets {
		var want []int
		for m := 0; m < k; m++ {
			if device.Conflicts(sets[k], sets[m]) {
				want = append(want, m)
			}
		}
		assert.Equal(t, want, w.up[k], "op %d", k)
	}
}

func TestWindowBatch(t *testing.T) {
	// Two chains: 0 -> 1 -> 2 on A and 3 -> 4 on B, and 5 independent.
	sets := [][]device.Arg{
		{arg(bufA, device.Write, 0, 64)},
		{arg(bufA, device.ReadWrite, 0, 64)},
		{arg(bufA, device.ReadWrite, 0, 64)},
		{arg(bufB, device.Write, 0, 64)},
		{arg(bufB, device.ReadWrite, 0, 64)},
		{arg(bufA, device.Write, 512, 64)},
	}
	w := newWindow(len(sets), 32, accessOf(sets...), false)
	w.admit()
	require.Equal(t, []int{0, 3, 5}, w.ready)
	// Three idle threads, three ready chains: each thread takes its chain,
	// no extra ready kernel.
	assert.Equal(t, []int{0, 1, 2}, w.batch(8, 3), "the ready kernel and its chain")
	assert.Equal(t, []int{0, 1}, w.batch(2, 3), "up to max")
	// One idle thread: it also takes the ready kernels no one else will.
	assert.Equal(t, []int{0, 1, 2, 3, 5}, w.batch(5, 1))
	// 4 depends on 3, which is not in the batch: never taken without it.
	for _, k := range w.batch(4, 1) {
		assert.NotEqual(t, 4, k)
	}
}

// A window reset for another run, of another size, computes what a new
// window does: nothing of the earlier run leaks through the memory it
// keeps.
func TestWindowResetMatchesANewWindow(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	bufs := []device.Buffer{bufA, bufB, {Addr: 0x9000, Size: 1024}}
	modes := []device.Access{device.Read, device.Write, device.ReadWrite}
	program := func(n int) [][]device.Arg {
		sets := make([][]device.Arg, n)
		for k := range sets {
			for r := rng.Intn(4); r >= 0; r-- {
				off := int64(rng.Intn(8)) * 128
				sets[k] = append(sets[k], arg(bufs[rng.Intn(len(bufs))], modes[rng.Intn(len(modes))], off, 128*int64(1+rng.Intn(3))))
			}
		}
		return sets
	}
	reused := newWindow(0, 8, accessOf(), false)
	// A run that fails stops with operations still in the window (abort:
	// completions before it stops); the next run must not see them.
	for _, tc := range []struct {
		name  string
		n     int
		slots int
		abort int
	}{{"first", 60, 8, 0}, {"larger", 90, 16, 0}, {"aborted", 50, 16, 10}, {"smaller", 20, 4, 0}, {"unbounded", 40, 0, 0}, {"aborted-unbounded", 40, 0, 3}, {"after-abort", 45, 8, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			sets := program(tc.n)
			fresh := newWindow(tc.n, tc.slots, accessOf(sets...), true)
			reused.reset(tc.n, tc.slots, accessOf(sets...), true)
			for _, w := range []*window{fresh, reused} {
				w.admit()
			}
			for completed := 0; !fresh.finished() && (tc.abort == 0 || completed < tc.abort); completed++ {
				// A new window's empty lists may be nil, a reset one's not.
				same := func(a []int) []int { return append([]int{}, a...) }
				require.Equal(t, same(fresh.members), same(reused.members))
				require.Equal(t, same(fresh.ready), same(reused.ready))
				require.Equal(t, same(fresh.pending), same(reused.pending))
				require.Equal(t, fresh.takeCost(), reused.takeCost())
				for _, k := range fresh.members {
					require.Equal(t, same(fresh.up[k]), same(reused.up[k]), "upstream of %d", k)
				}
				k := fresh.ready[0]
				for _, w := range []*window{fresh, reused} {
					w.issue(k, 0)
					w.complete(k)
					w.admit()
				}
			}
			assert.Equal(t, tc.abort == 0, reused.finished())
		})
	}
}
