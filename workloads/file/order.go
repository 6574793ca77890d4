package file

import (
	"bytes"
	"container/heap"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device"
)

// info is the device as device.Info, for its occupancy rules.
func (d *Device) info() device.Info {
	return device.Info{
		Name: d.Name, SMs: d.SMs, ClockHz: d.ClockHz, MaxThreadsPerSM: d.MaxThreadsPerSM,
		MaxWarpsPerSM: d.MaxThreadsPerSM / d.WarpSize, MaxBlocksPerSM: d.MaxBlocksPerSM,
		RegistersPerSM: d.RegistersPerSM, RegAllocUnit: d.RegAllocUnit, SharedPerSM: d.SharedPerSM,
		SharedReserved: d.SharedReserved, MaxSharedPerBlock: d.MaxSharedPerBlock, WarpSize: d.WarpSize,
		MaxThreadsPerBlock: d.MaxThreadsPerBlock, MaxRegsPerThread: d.MaxRegsPerThread,
	}
}

// blocksPerSM is how many blocks of `threads` threads using `regs` registers
// per thread and `shared` bytes of shared memory fit on one idle SM of d,
// and the limit that binds.
func (d *Device) blocksPerSM(threads, regs, shared int) (int, string) {
	in := d.info()
	l := device.Launch{Kernel: &device.Kernel{Regs: regs, StaticShared: shared}, Block: device.D1(threads)}
	return in.Occupancy(&l)
}

// Order returns, per step, the indices of its operations in the order they
// are issued: the file's order, unless an `after` names a later operation
// of the same step, in which case a topological order of the dependencies
// (buffer conflicts in file order and `after` edges) that keeps the file's
// order where it can. A cycle is an error naming its operations.
func (f *File) Order() ([][]int, error) {
	out := make([][]int, len(f.Steps))
	for si := range f.Steps {
		ops := f.Steps[si].Ops
		index := make(map[string]int, len(ops))
		for i := range ops {
			index[ops[i].Name()] = i
		}
		forward := false
		preds := make([][]int, len(ops))
		for i := range ops {
			for _, a := range ops[i].After {
				if j, ok := index[a]; ok {
					preds[i] = append(preds[i], j)
					forward = forward || j > i
				}
			}
		}
		order := make([]int, len(ops))
		for i := range order {
			order[i] = i
		}
		if forward {
			sizes := f.sizes()
			for j := range ops {
				for i := 0; i < j; i++ {
					if conflict(&ops[i], &ops[j], sizes) {
						preds[j] = append(preds[j], i)
					}
				}
			}
			var err error
			if order, err = topological(ops, preds); err != nil {
				return nil, lineErrorf(ops[0].line, "step %d: %v", si, err)
			}
		}
		out[si] = order
	}
	return out, nil
}

func (f *File) sizes() map[string]int64 {
	m := make(map[string]int64, len(f.Buffers))
	for _, b := range f.Buffers {
		m[b.Name] = b.Bytes
	}
	return m
}

// conflict reports whether two operations touch overlapping bytes of a
// buffer and at least one of them writes them.
func conflict(a, b *Op, sizes map[string]int64) bool {
	overlaps := func(x, y []Access) bool {
		for _, p := range x {
			for _, q := range y {
				if p.Buffer == q.Buffer && p.Offset < q.Offset+span(q, sizes) && q.Offset < p.Offset+span(p, sizes) {
					return true
				}
			}
		}
		return false
	}
	return overlaps(a.Writes, b.Writes) || overlaps(a.Writes, b.Reads) || overlaps(a.Reads, b.Writes)
}

type minHeap []int

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// topological orders 0..n-1 so that every node follows its preds, taking the
// lowest ready index first; a cycle is reported by name.
func topological(ops []Op, preds [][]int) ([]int, error) {
	n := len(ops)
	succ := make([][]int, n)
	indeg := make([]int, n)
	for i, ps := range preds {
		for _, p := range ps {
			succ[p] = append(succ[p], i)
			indeg[i]++
		}
	}
	ready := &minHeap{}
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			heap.Push(ready, i)
		}
	}
	order := make([]int, 0, n)
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, i)
		for _, s := range succ[i] {
			if indeg[s]--; indeg[s] == 0 {
				heap.Push(ready, s)
			}
		}
	}
	if len(order) == n {
		return order, nil
	}
	return nil, fmt.Errorf("dependency cycle: %s", cycle(ops, preds, indeg))
}

// cycle finds one cycle among the nodes left with predecessors and names it.
func cycle(ops []Op, preds [][]int, indeg []int) string {
	start := -1
	for i, d := range indeg {
		if d > 0 {
			start = i
			break
		}
	}
	// Walk predecessors that are themselves stuck until a node repeats.
	seen := map[int]int{}
	var path []int
	for i := start; ; {
		if at, ok := seen[i]; ok {
			path = path[at:]
			break
		}
		seen[i] = len(path)
		path = append(path, i)
		next := -1
		for _, p := range preds[i] {
			if indeg[p] > 0 {
				next = p
				break
			}
		}
		i = next
	}
	names := make([]string, 0, len(path)+1)
	for k := len(path) - 1; k >= 0; k-- {
		names = append(names, fmt.Sprintf("%q (line %d)", ops[path[k]].Name(), ops[path[k]].line))
	}
	names = append(names, fmt.Sprintf("%q", ops[path[len(path)-1]].Name()))
	return strings.Join(names, " -> ")
}

// DeviceOf takes a device's figures from its description (a simulator
// config's info, or a GPU's).
func DeviceOf(in device.Info) Device {
	return Device{Name: in.Name, SMs: in.SMs, ClockHz: in.ClockHz, MaxThreadsPerSM: in.MaxThreadsPerSM,
		MaxBlocksPerSM: in.MaxBlocksPerSM, RegistersPerSM: in.RegistersPerSM, RegAllocUnit: in.RegAllocUnit,
		SharedPerSM: in.SharedPerSM, SharedReserved: in.SharedReserved, MaxSharedPerBlock: in.MaxSharedPerBlock,
		MaxThreadsPerBlock: in.MaxThreadsPerBlock, MaxRegsPerThread: in.MaxRegsPerThread, WarpSize: in.WarpSize,
		MemBandwidth: in.MemBandwidth}
}

// Marshal writes f as YAML, in the layout Parse reads.
func (f *File) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
