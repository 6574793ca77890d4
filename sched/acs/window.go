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
//
// On a GPU its real CPU cost is what ACS-SW's window thread pays per
// kernel (BenchmarkWindowCheck, BenchmarkSWHostCost), so it allocates
// nothing per operation once reset for a second run of the same size: a
// scheduler keeps one window and resets it per Run.
type window struct {
	access func(k int) []device.Arg
	n      int
	slots  int // N; <= 0 is unbounded

	next    int   // the input FIFO's head: the next operation to insert
	members []int // operations in the window (not done), in program order
	pending []int // members waiting on upstream operations, in program order
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
	// inner loop of the window thread. A program has few allocations
	// (rl-physics: 20), so they are found by a linear scan.
	allocs    []uint64 // allocation base addresses seen so far
	allocHits [64]allocHit
	// Per allocation, the ranges of window operations that write
	// (writes) and that only read (reads): a range that only reads is
	// compared with the writes alone, since two reads never conflict.
	writes  [][]rangeEntry
	reads   [][]rangeEntry
	dead    int          // entries of finished operations not yet dropped
	live    int          // entries of operations still in the window
	mark    []int        // mark[m] == k+1: m is already upstream of k
	nranges []int        // entries operation k has in ranges
	scratch []rangeEntry // the inserted operation's ranges (insert's buffer)

	checkCost time.Duration // accumulated dependency-check cost to charge
	charge    bool
	// costs memoizes CheckCost by window occupancy and range count: the
	// charge is a pure function of the two, computed once per pair.
	costs [][]time.Duration
}

func newWindow(n, slots int, access func(k int) []device.Arg, charge bool) *window {
	w := &window{}
	w.reset(n, slots, access, charge)
	return w
}

// reset empties the window for a run over n operations, keeping the
// memory of earlier runs.
func (w *window) reset(n, slots int, access func(k int) []device.Arg, charge bool) {
	w.access, w.n, w.slots, w.charge = access, n, slots, charge
	w.next, w.issued, w.done, w.dead, w.live, w.checkCost = 0, 0, 0, 0, 0, 0
	w.members, w.pending, w.ready = w.members[:0], w.pending[:0], w.ready[:0]
	w.state = resize(w.state, n)
	w.stream = resize(w.stream, n)
	w.order = resize(w.order, n)
	w.mark = resize(w.mark, n)
	w.nranges = resize(w.nranges, n)
	for i := range w.stream {
		w.stream[i] = -1
	}
	w.up = resizeLists(w.up, n)
	w.down = resizeLists(w.down, n)
	for i := range w.writes {
		w.writes[i], w.reads[i] = w.writes[i][:0], w.reads[i][:0]
	}
	w.allocs, w.writes, w.reads = w.allocs[:0], w.writes[:0], w.reads[:0]
	w.allocHits = [len(w.allocHits)]allocHit{}
}

// resize returns s with length n, zeroed, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// resizeLists returns ls with length n, each list emptied but keeping its
// array.
func resizeLists(ls [][]int, n int) [][]int {
	if cap(ls) < n {
		ls = append(ls[:cap(ls)], make([][]int, n-cap(ls))...)
	}
	ls = ls[:n]
	for i := range ls {
		ls[i] = ls[i][:0]
	}
	return ls
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
	mine := w.scratch[:0]
	for i := range acc {
		a := &acc[i]
		if a.Kind != device.ArgBuffer {
			continue
		}
		if lo, hi := a.Range(); hi > lo {
			mine = append(mine, rangeEntry{op: int32(k), alloc: int32(w.alloc(a.Buf.Addr)), lo: lo, hi: hi, write: a.Mode&device.Write != 0})
		}
	}
	w.scratch = mine
	up := w.up[k]
	for _, r := range mine {
		// RAW and WAW: k's range against m's writes; WAR: k's writes
		// against m's reads. Entries of finished operations are dropped
		// lazily.
		up = w.overlaps(up, k, r, w.writes[r.alloc])
		if r.write {
			up = w.overlaps(up, k, r, w.reads[r.alloc])
		}
	}
	for _, r := range mine {
		if r.write {
			w.writes[r.alloc] = append(w.writes[r.alloc], r)
		} else {
			w.reads[r.alloc] = append(w.reads[r.alloc], r)
		}
	}
	w.nranges[k] = len(mine)
	w.live += len(mine)
	slices.Sort(up)
	w.up[k] = up
	for _, m := range up {
		w.down[m] = append(w.down[m], k)
	}
	if w.charge {
		w.checkCost += w.cost(len(w.members), rangesOf(acc))
	}
	w.members = append(w.members, k) // k is the newest: order is kept
	if len(up) == 0 {
		w.state[k] = stateReady
		w.ready = append(w.ready, k)
	} else {
		w.state[k] = statePending
		w.pending = append(w.pending, k)
	}
}

// overlaps appends to up the unfinished operations of entries es whose
// ranges overlap r, each once per inserted operation k.
func (w *window) overlaps(up []int, k int, r rangeEntry, es []rangeEntry) []int {
	for _, e := range es {
		if r.lo < e.hi && e.lo < r.hi {
			if m := int(e.op); w.mark[m] != k+1 && w.state[m] != stateDone {
				w.mark[m] = k + 1
				up = append(up, m)
			}
		}
	}
	return up
}

// cost is CheckCost(members, ranges), memoized.
func (w *window) cost(members, ranges int) time.Duration {
	const maxMembers, maxRanges = 256, 64
	if members >= maxMembers || ranges >= maxRanges {
		return CheckCost(members, ranges)
	}
	for len(w.costs) <= members {
		w.costs = append(w.costs, nil)
	}
	row := w.costs[members]
	if len(row) <= ranges {
		for len(row) <= ranges {
			row = append(row, -1)
		}
		w.costs[members] = row
	}
	if row[ranges] < 0 {
		row[ranges] = CheckCost(members, ranges)
	}
	return row[ranges]
}

// alloc is the index of the allocation at base address addr in w.writes
// and w.reads: a direct-mapped cache of recent lookups by address, then a
// scan of the allocations seen so far.
func (w *window) alloc(addr uint64) int {
	slot := &w.allocHits[(addr*0x9e3779b97f4a7c15)>>58] // Fibonacci hashing into 64 slots
	if slot.addr == addr && slot.index > 0 {
		return slot.index - 1
	}
	i := slices.Index(w.allocs, addr)
	if i < 0 {
		w.allocs = append(w.allocs, addr)
		w.writes, w.reads = grow(w.writes), grow(w.reads)
		i = len(w.allocs) - 1
	}
	*slot = allocHit{addr, i + 1}
	return i
}

// allocHit caches that allocation addr has index index-1 (0: empty).
type allocHit struct {
	addr  uint64
	index int
}

// drop removes finished operations' entries once they outnumber the live
// ones, so scans stay proportional to the window.
func (w *window) drop() {
	if w.dead <= w.live {
		return
	}
	for i := range w.allocs {
		w.writes[i] = w.keepLive(w.writes[i])
		w.reads[i] = w.keepLive(w.reads[i])
	}
	w.dead = 0
}

// keepLive keeps the entries of es whose operations are not done, in order.
func (w *window) keepLive(es []rangeEntry) []rangeEntry {
	kept := es[:0]
	for _, e := range es {
		if w.state[e.op] != stateDone {
			kept = append(kept, e)
		}
	}
	return kept
}

// grow appends an empty list to ls, reusing an emptied list of an earlier
// run when there is one.
func grow(ls [][]rangeEntry) [][]rangeEntry {
	if len(ls) < cap(ls) {
		return ls[:len(ls)+1]
	}
	return append(ls, nil)
}

// rangeEntry is one byte range [lo, hi) of operation op in the window, in
// allocation alloc (an index into window.ranges).
type rangeEntry struct {
	lo, hi    uint64
	op, alloc int32
	write     bool
}

func rangesOf(acc []device.Arg) int {
	n := 0
	for i := range acc {
		if acc[i].Kind == device.ArgBuffer {
			n++
		}
	}
	return n
}

// takeCost returns the dependency-check cost accumulated since the last
// call, as gpusched's check costs on the GPU hosts (checkHostScale times
// the paper's figures).
func (w *window) takeCost() time.Duration {
	c := w.checkCost
	w.checkCost = 0
	return time.Duration(float64(c)*checkHostScale + 0.5)
}

// issue marks ready or pending operation k as handed to thread t.
func (w *window) issue(k, t int) {
	switch w.state[k] {
	case stateReady:
		w.ready = remove(w.ready, k)
	case statePending:
		w.pending = remove(w.pending, k)
	}
	w.state[k] = stateIssued
	w.stream[k] = t
	w.order[k] = w.issued
	w.issued++
}

// remove deletes k from list s. Searched from the front: the window's
// lists are in program order, and what leaves them (the oldest ready
// operation issued, the oldest member done) is usually near the front.
func remove(s []int, k int) []int {
	i := slices.Index(s, k)
	return slices.Delete(s, i, i+1)
}

// complete marks k done: it leaves the window and every upstream list;
// operations left with an empty upstream list become ready.
func (w *window) complete(k int) {
	w.state[k] = stateDone
	w.done++
	w.members = remove(w.members, k)
	for _, d := range w.down[k] {
		j := slices.Index(w.up[d], k)
		w.up[d] = slices.Delete(w.up[d], j, j+1)
		if len(w.up[d]) == 0 && w.state[d] == statePending {
			w.state[d] = stateReady
			w.pending = remove(w.pending, d)
			i, _ := slices.BinarySearch(w.ready, d)
			w.ready = slices.Insert(w.ready, i, d)
		}
	}
	w.down[k] = w.down[k][:0]
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
// most: the oldest ready operation, then the pending operations whose
// unfinished upstream operations are all in the batch (captured on one
// stream after them, they wait for them by stream order), then, while more
// operations are ready than idle threads remain to take them, more ready
// operations. It does not issue them.
func (w *window) batch(most, idle int) []int {
	first := w.ready[0]
	ops := []int{first}
	in := func(u int) bool { return slices.Contains(ops, u) }
	for _, p := range w.pending {
		if len(ops) == most {
			break
		}
		if p <= first {
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
		if len(ops) == most || spare <= 0 {
			break
		}
		ops = append(ops, r)
		spare--
	}
	slices.Sort(ops)
	return ops
}
