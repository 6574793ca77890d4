package sched

import (
	"sort"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Deps computes, for every operation of a program range, the earlier
// operations it must wait for: the last writers of the bytes it touches
// (RAW, WAW) and, if it writes, the readers since those writers (WAR).
// Waiting on those is sufficient: anything older is ordered transitively.
//
// It keeps, per buffer, the accesses not yet superseded by a write that
// covers them, so the cost per operation is proportional to the live
// accesses of the buffers it touches, not to the program's length.
type Deps struct {
	live map[uint64][]access // by buffer base address
}

type access struct {
	lo, hi uint64
	op     int
	write  bool
}

// NewDeps returns an empty tracker.
func NewDeps() *Deps { return &Deps{live: map[uint64][]access{}} }

// Add records operation op with access set args and returns the earlier
// operations it depends on, sorted and without duplicates, appended to dst.
func (d *Deps) Add(op int, args []device.Arg, dst []int) []int {
	start := len(dst)
	for _, a := range args {
		if a.Kind != device.ArgBuffer {
			continue
		}
		lo, hi := a.Range()
		w := a.Mode&device.Write != 0
		for _, e := range d.live[a.Buf.Addr] {
			if e.lo < hi && lo < e.hi && (w || e.write) && e.op != op {
				dst = append(dst, e.op)
			}
		}
	}
	for _, a := range args {
		if a.Kind != device.ArgBuffer {
			continue
		}
		lo, hi := a.Range()
		w := a.Mode&device.Write != 0
		list := d.live[a.Buf.Addr]
		if w {
			// Accesses wholly inside a range this op writes are superseded:
			// whoever touches those bytes next depends on this op, which
			// already waits for them.
			kept := list[:0]
			for _, e := range list {
				if e.lo < lo || e.hi > hi {
					kept = append(kept, e)
				}
			}
			list = kept
		}
		d.live[a.Buf.Addr] = append(list, access{lo, hi, op, w})
	}
	out := dst[start:]
	sort.Ints(out)
	n := 0
	for i, v := range out {
		if i == 0 || v != out[n-1] {
			out[n] = v
			n++
		}
	}
	return dst[:start+n]
}

// ProgramDeps returns the dependencies of every operation of in, in flat
// order.
func ProgramDeps(in *workloads.Instance) [][]int {
	d := NewDeps()
	out := make([][]int, in.N())
	for k := 0; k < in.N(); k++ {
		out[k] = d.Add(k, in.Access(k), nil)
	}
	return out
}
