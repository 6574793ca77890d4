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

	// Each operation's byte ranges, split by whether it writes them,
	// computed once at insertion: the check is the inner loop of the
	// window thread, and on a GPU its real cost is what ACS-SW pays.
	reads, writes [][]span

	checkCost time.Duration // accumulated dependency-check cost to charge
	charge    bool
}

func newWindow(n, slots int, access func(k int) []device.Arg, charge bool) *window {
	w := &window{access: access, n: n, slots: slots, charge: charge,
		state: make([]opState, n), up: make([][]int, n), down: make([][]int, n), stream: make([]int, n), order: make([]int, n),
		reads: make([][]span, n), writes: make([][]span, n)}
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
// (RAW, WAR, WAW) and records its upstream list.
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
		if a.Mode&device.Write != 0 {
			w.writes[k] = append(w.writes[k], span{lo, hi})
		} else {
			w.reads[k] = append(w.reads[k], span{lo, hi})
		}
	}
	rk, wk := w.reads[k], w.writes[k]
	for _, m := range w.members {
		// RAW and WAW: k's ranges against m's writes; WAR: k's writes
		// against m's reads.
		if overlaps(rk, w.writes[m]) || overlaps(wk, w.writes[m]) || overlaps(wk, w.reads[m]) {
			w.up[k] = append(w.up[k], m)
			w.down[m] = append(w.down[m], k)
		}
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

// span is a byte range [lo, hi) of device address space.
type span struct{ lo, hi uint64 }

func overlaps(a, b []span) bool {
	for _, x := range a {
		for _, y := range b {
			if x.lo < y.hi && y.lo < x.hi {
				return true
			}
		}
	}
	return false
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
	w.reads[k], w.writes[k] = nil, nil
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
