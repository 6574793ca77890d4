package acs

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/device"
)

// opState is an operation's state in the window.
type opState uint8

const (
	stateQueued  opState = iota // still in the input FIFO
	statePending                // in the window, waiting on upstream operations
	stateReady                  // upstream list empty, not yet issued
	stateIssued                 // handed to a scheduler thread (executing)
	stateDone
)

// window is ACS's scheduling window over a program's operations, numbered
// 0..n-1 in program order. It is owned by one host thread (the window
// thread) and touches no device.
type window struct {
	access func(k int) []device.Arg
	n      int
	slots  int // N; <= 0 is unbounded

	next    int   // the input FIFO's head: the next operation to insert
	members []int // operations in the window (not done), in program order
	ready   []int // ready, not yet issued, in program order
	state   []opState
	up      [][]int // unfinished upstream operations
	down    [][]int // downstream operations, to notify on completion
	stream  []int   // the scheduler thread an issued operation went to
	order   []int   // when an operation was issued: its place in its stream
	issued  int
	done    int

	// The ranges of the operations in the window, indexed by the
	// allocation they lie in (Buffer.Addr): ranges in different
	// allocations never overlap, so an insertion compares its ranges only
	// with the window's ranges in the same allocation. The check is the
	// inner loop of the window thread, and on a GPU its real CPU cost is
	// what ACS-SW pays per kernel (BenchmarkWindowCheck). A program has
	// few allocations (rl-physics: 20), so they are found by a linear scan.
	allocs  []uint64       // allocation base addresses seen so far
	ranges  [][]rangeEntry // per allocation: ranges of window operations
	dead    int            // entries of finished operations not yet dropped
	live    int            // entries of operations still in the window
	mark    []int          // mark[m] == k+1: m is already upstream of k
	nranges []int          // entries operation k has in ranges

	checkCost time.Duration // accumulated dependency-check cost to charge
	charge    bool
}

func newWindow(n, slots int, access func(k int) []device.Arg, charge bool) *window {
	w := &window{access: access, n: n, slots: slots, charge: charge,
		state: make([]opState, n), up: make([][]int, n), down: make([][]int, n), stream: make([]int, n), order: make([]int, n),
		mark: make([]int, n), nranges: make([]int, n)}
	for i := range w.stream {
		w.stream[i] = -1
	}
	return w
}

func (w *window) full() bool { return w.slots > 0 && len(w.members) >= w.slots }

// admit inserts operations from the input FIFO while the window has free
// slots. It returns how many it inserted.
func (w *window) admit() int {
	n := 0
	for w.next < w.n && !w.full() {
		w.insert(w.next)
		w.next++
		n++
	}
	return n
}

// insert compares operation k's ranges with every operation in the window
// (RAW, WAR, WAW) and records its upstream list, in program order.
func (w *window) insert(k int) {
	acc := w.access(k)
	for _, a := range acc {
		if a.Kind != device.ArgBuffer {
			continue
		}
		lo, hi := a.Range()
		if hi <= lo {
			continue
		}
		write := a.Mode&device.Write != 0
		i := w.alloc(a.Buf.Addr)
		for _, e := range w.ranges[i] {
			// RAW and WAW: k's range against m's writes; WAR: k's
			// writes against m's reads. Entries of finished operations
			// are dropped lazily.
			if (write || e.write) && lo < e.hi && e.lo < hi && w.mark[e.op] != k+1 && w.state[e.op] != stateDone {
				w.mark[e.op] = k + 1
				w.up[k] = append(w.up[k], e.op)
			}
		}
	}
	for _, a := range acc {
		if a.Kind != device.ArgBuffer {
			continue
		}
		if lo, hi := a.Range(); hi > lo {
			i := w.alloc(a.Buf.Addr)
			w.ranges[i] = append(w.ranges[i], rangeEntry{op: k, lo: lo, hi: hi, write: a.Mode&device.Write != 0})
			w.nranges[k]++
			w.live++
		}
	}
	slices.Sort(w.up[k])
	for _, m := range w.up[k] {
		w.down[m] = append(w.down[m], k)
	}
	if w.charge {
		w.checkCost += CheckCost(len(w.members), rangesOf(acc))
	}
	w.members = append(w.members, k)
	if len(w.up[k]) == 0 {
		w.state[k] = stateReady
		w.ready = append(w.ready, k) // k is the newest: order is kept
	} else {
		w.state[k] = statePending
	}
}

// alloc is the index of the allocation at base address addr in w.ranges.
func (w *window) alloc(addr uint64) int {
	for i, a := range w.allocs {
		if a == addr {
			return i
		}
	}
	w.allocs = append(w.allocs, addr)
	w.ranges = append(w.ranges, nil)
	return len(w.allocs) - 1
}

// drop removes finished operations' entries once they outnumber the live
// ones, so scans stay proportional to the window.
func (w *window) drop() {
	if w.dead <= w.live {
		return
	}
	for i, es := range w.ranges {
		w.ranges[i] = slices.DeleteFunc(es, func(e rangeEntry) bool { return w.state[e.op] == stateDone })
	}
	w.dead = 0
}

// rangeEntry is one byte range [lo, hi) of operation op in the window.
type rangeEntry struct {
	op     int
	lo, hi uint64
	write  bool
}

func rangesOf(acc []device.Arg) int {
	n := 0
	for _, a := range acc {
		if a.Kind == device.ArgBuffer {
			n++
		}
	}
	return n
}

// takeCost returns the dependency-check cost accumulated since the last
// call.
func (w *window) takeCost() time.Duration {
	c := w.checkCost
	w.checkCost = 0
	return c
}

// issue marks ready or pending operation k as handed to thread t.
func (w *window) issue(k, t int) {
	if w.state[k] == stateReady {
		i, _ := slices.BinarySearch(w.ready, k)
		w.ready = slices.Delete(w.ready, i, i+1)
	}
	w.state[k] = stateIssued
	w.stream[k] = t
	w.order[k] = w.issued
	w.issued++
}

// complete marks k done: it leaves the window and every upstream list;
// operations left with an empty upstream list become ready.
func (w *window) complete(k int) {
	w.state[k] = stateDone
	w.done++
	i, _ := slices.BinarySearch(w.members, k)
	w.members = slices.Delete(w.members, i, i+1)
	for _, d := range w.down[k] {
		j := slices.Index(w.up[d], k)
		w.up[d] = slices.Delete(w.up[d], j, j+1)
		if len(w.up[d]) == 0 && w.state[d] == statePending {
			w.state[d] = stateReady
			i, _ := slices.BinarySearch(w.ready, d)
			w.ready = slices.Insert(w.ready, i, d)
		}
	}
	w.down[k] = nil
	n := w.nranges[k]
	w.live -= n
	w.dead += n
	w.drop()
}

// streamOrdered reports whether pending operation k's unfinished upstream
// operations have all been issued to one thread, and which: issued behind
// them on that thread's stream, k would wait for them by stream order.
func (w *window) streamOrdered(k int) (int, bool) {
	t := -1
	for _, u := range w.up[k] {
		if w.state[u] != stateIssued || (t >= 0 && w.stream[u] != t) {
			return -1, false
		}
		t = w.stream[u]
	}
	return t, t >= 0
}

func (w *window) finished() bool { return w.done == w.n }

// batch picks the operations one idle thread launches as one graph, up to
// max: the oldest ready operation, then the pending operations whose
// unfinished upstream operations are all in the batch (captured on one
// stream after them, they wait for them by stream order), then, while more
// operations are ready than idle threads remain to take them, more ready
// operations. It does not issue them.
func (w *window) batch(max, idle int) []int {
	first := w.ready[0]
	ops := []int{first}
	in := func(u int) bool { return slices.Contains(ops, u) }
	for _, p := range w.members {
		if len(ops) == max {
			break
		}
		if p <= first || w.state[p] != statePending {
			continue
		}
		all := true
		for _, u := range w.up[p] {
			if !in(u) {
				all = false
				break
			}
		}
		if all {
			ops = append(ops, p)
		}
	}
	spare := len(w.ready) - idle // ready operations no other idle thread will take
	for _, r := range w.ready[1:] {
		if len(ops) == max || spare <= 0 {
			break
		}
		ops = append(ops, r)
		spare--
	}
	slices.Sort(ops)
	return ops
}
