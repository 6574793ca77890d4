package mutate

import (
	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Pair is an EarlyReuse site: buffer B would be given buffer A's storage.
// A is dead in program order before B's first write (op First), and A is
// no output; B is first written whole, has no initial contents and is no
// output, so with a correct ordering the aliasing would change no result.
// Unordered is an operation touching A that the program's dependency graph
// does not order before First: the ordering the bug forgets.
type Pair struct {
	A, B      int // buffer indices of the program
	First     int // flat index of B's first (writing) operation
	Unordered int // flat index of an operation on A not ordered before First
}

// Pairs lists the EarlyReuse sites of a bound program, ordered by First,
// then A.
func Pairs(in *workloads.Instance) []Pair {
	p := in.Prog
	nb := len(in.Bufs)
	u := bufferUses(in)
	deps := sched.ProgramDeps(in)
	var out []Pair
	order := make([]int, 0, nb)
	for b := 0; b < nb; b++ {
		spec := p.Buffers[b]
		if u.first[b] < 0 || !u.pureWholeFirst[b] || spec.Output || spec.Init != nil {
			continue
		}
		order = append(order, b)
	}
	// By first write, then buffer index: deterministic.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && u.first[order[j]] < u.first[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, b := range order {
		f := u.first[b]
		anc := ancestors(deps, f)
		for a := 0; a < nb; a++ {
			if a == b || u.first[a] < 0 || u.last[a] >= f || p.Buffers[a].Output || p.Buffers[a].Bytes < p.Buffers[b].Bytes {
				continue
			}
			for _, k := range u.accessors[a] {
				if !anc[k] {
					out = append(out, Pair{A: a, B: b, First: f, Unordered: k})
					break
				}
			}
		}
	}
	return out
}

// uses is, per buffer of a bound program, the first and last operations
// that access it (-1: none), every operation that does, and whether its
// first access is a write of the whole buffer and nothing else.
type uses struct {
	first, last    []int
	accessors      [][]int
	pureWholeFirst []bool
}

func bufferUses(in *workloads.Instance) *uses {
	nb := len(in.Bufs)
	index := map[uint64]int{}
	for i, b := range in.Bufs {
		index[b.Addr] = i
	}
	u := &uses{first: make([]int, nb), last: make([]int, nb), accessors: make([][]int, nb), pureWholeFirst: make([]bool, nb)}
	for i := range u.first {
		u.first[i], u.last[i] = -1, -1
	}
	for k := 0; k < in.N(); k++ {
		seen := map[int]bool{}
		for _, a := range in.Access(k) {
			b, ok := index[a.Buf.Addr]
			if !ok {
				continue
			}
			if u.first[b] < 0 {
				u.first[b] = k
				u.pureWholeFirst[b] = true
			}
			if u.first[b] == k {
				whole := a.Off == 0 && (a.Len == 0 || a.Len == a.Buf.Size)
				if a.Mode != device.Write || !whole {
					u.pureWholeFirst[b] = false
				}
			}
			u.last[b] = k
			if !seen[b] {
				seen[b] = true
				u.accessors[b] = append(u.accessors[b], k)
			}
		}
	}
	return u
}

// ancestors marks every operation that must complete before op f.
func ancestors(deps [][]int, f int) []bool {
	anc := make([]bool, len(deps))
	stack := append([]int(nil), deps[f]...)
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if anc[k] {
			continue
		}
		anc[k] = true
		stack = append(stack, deps[k]...)
	}
	return anc
}
