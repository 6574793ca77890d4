package graph

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/workloads"
)

// DAG is a dependency graph over nodes 0..N-1. Succ and Pred hold each
// node's direct successors and predecessors, sorted ascending.
type DAG struct {
	Succ [][]int
	Pred [][]int
}

// N is the number of nodes.
func (d *DAG) N() int { return len(d.Succ) }

// Edges is the number of edges.
func (d *DAG) Edges() int {
	n := 0
	for _, s := range d.Succ {
		n += len(s)
	}
	return n
}

// FromInstance builds the data-flow graph of operations [lo, hi) of in
// (flat indices; node i is operation lo+i): an edge i -> j for i < j whenever
// the two operations' access sets conflict (read after write, write after
// read, write after write over overlapping byte ranges). Every buffer is its
// own object, so ranges of one allocation that do not overlap give no edge,
// as KeSCo's argument analysis does for sub-buffers. Program order makes the
// graph acyclic by construction.
func FromInstance(in *workloads.Instance, lo, hi int) (*DAG, error) {
	if lo < 0 || hi > in.N() || lo > hi {
		return nil, fmt.Errorf("graph: operation range [%d,%d) outside the program's %d operations", lo, hi, in.N())
	}
	n := hi - lo
	d := newDAG(n)
	for j := 0; j < n; j++ {
		for i := 0; i < j; i++ {
			if in.Conflict(lo+i, lo+j) {
				d.Succ[i] = append(d.Succ[i], j)
				d.Pred[j] = append(d.Pred[j], i)
			}
		}
	}
	return d, nil
}

// FromEdges builds a graph of n nodes from explicit edges (from, to). It
// rejects out-of-range nodes, self loops and cycles, naming a cycle found.
// Duplicate edges are merged.
func FromEdges(n int, edges [][2]int) (*DAG, error) {
	if n < 0 {
		return nil, fmt.Errorf("graph: negative node count %d", n)
	}
	d := newDAG(n)
	seen := map[[2]int]bool{}
	for _, e := range edges {
		if e[0] < 0 || e[0] >= n || e[1] < 0 || e[1] >= n {
			return nil, fmt.Errorf("graph: edge %d->%d names a node outside [0,%d)", e[0], e[1], n)
		}
		if e[0] == e[1] {
			return nil, fmt.Errorf("graph: self loop on node %d", e[0])
		}
		if seen[e] {
			continue
		}
		seen[e] = true
		d.Succ[e[0]] = append(d.Succ[e[0]], e[1])
		d.Pred[e[1]] = append(d.Pred[e[1]], e[0])
	}
	for i := range d.Succ {
		sort.Ints(d.Succ[i])
		sort.Ints(d.Pred[i])
	}
	if _, err := d.TopoOrder(); err != nil {
		return nil, err
	}
	return d, nil
}

func newDAG(n int) *DAG {
	return &DAG{Succ: make([][]int, n), Pred: make([][]int, n)}
}

// TopoOrder returns the nodes in a topological order (Kahn's algorithm,
// smallest ready node first, so the order is deterministic and equals
// program order for graphs built from a program). A cycle is an error that
// lists the nodes on one.
func (d *DAG) TopoOrder() ([]int, error) {
	n := d.N()
	indeg := make([]int, n)
	for v := range d.Pred {
		indeg[v] = len(d.Pred[v])
	}
	ready := &intHeap{}
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			ready.push(v)
		}
	}
	order := make([]int, 0, n)
	for ready.len() > 0 {
		v := ready.pop()
		order = append(order, v)
		for _, w := range d.Succ[v] {
			if indeg[w]--; indeg[w] == 0 {
				ready.push(w)
			}
		}
	}
	if len(order) < n {
		return nil, fmt.Errorf("graph: cycle %s", d.findCycle(indeg))
	}
	return order, nil
}

// findCycle walks predecessors among the nodes Kahn could not order (each
// has a remaining predecessor that is also unordered) until one repeats.
func (d *DAG) findCycle(indeg []int) string {
	start := -1
	for v, k := range indeg {
		if k > 0 {
			start = v
			break
		}
	}
	pos := map[int]int{}
	var path []int
	for v := start; ; {
		if p, ok := pos[v]; ok {
			cyc := append([]int(nil), path[p:]...)
			// path follows predecessors; print it in edge direction.
			var b strings.Builder
			for i := len(cyc) - 1; i >= 0; i-- {
				fmt.Fprintf(&b, "%d -> ", cyc[i])
			}
			fmt.Fprintf(&b, "%d", cyc[len(cyc)-1])
			return b.String()
		}
		pos[v] = len(path)
		path = append(path, v)
		for _, u := range d.Pred[v] {
			if indeg[u] > 0 {
				v = u
				break
			}
		}
	}
}

// Reachability is the transitive closure as bit sets: Reach[i] has bit j set
// when there is a path of one or more edges from i to j.
type Reachability [][]uint64

// Has reports whether j is reachable from i.
func (r Reachability) Has(i, j int) bool { return r[i][j>>6]&(1<<(uint(j)&63)) != 0 }

// Closure computes reachability (in reverse topological order, O(N*E/64)).
func (d *DAG) Closure() (Reachability, error) {
	order, err := d.TopoOrder()
	if err != nil {
		return nil, err
	}
	n := d.N()
	words := (n + 63) / 64
	r := make(Reachability, n)
	for i := range r {
		r[i] = make([]uint64, words)
	}
	for k := n - 1; k >= 0; k-- {
		v := order[k]
		for _, w := range d.Succ[v] {
			r[v][w>>6] |= 1 << (uint(w) & 63)
			for x := range r[v] {
				r[v][x] |= r[w][x]
			}
		}
	}
	return r, nil
}

// TransitiveReduction is the graph with every edge implied by a longer path
// removed (the minimum equivalent graph of a DAG; Nimble's first step).
func (d *DAG) TransitiveReduction() (*DAG, error) {
	r, err := d.Closure()
	if err != nil {
		return nil, err
	}
	out := newDAG(d.N())
	for u := range d.Succ {
		for _, w := range d.Succ[u] {
			implied := false
			for _, v := range d.Succ[u] {
				if v != w && r.Has(v, w) {
					implied = true
					break
				}
			}
			if !implied {
				out.Succ[u] = append(out.Succ[u], w)
				out.Pred[w] = append(out.Pred[w], u)
			}
		}
	}
	for i := range out.Pred {
		sort.Ints(out.Pred[i])
	}
	return out, nil
}

// Levels is the BFS levelization: level 0 holds the nodes without
// predecessors, level k the nodes whose longest path from a source has k
// edges. Nodes within a level are in ascending order.
func (d *DAG) Levels() ([][]int, error) {
	order, err := d.TopoOrder()
	if err != nil {
		return nil, err
	}
	lvl := make([]int, d.N())
	maxL := -1
	for _, v := range order {
		for _, u := range d.Pred[v] {
			if lvl[u]+1 > lvl[v] {
				lvl[v] = lvl[u] + 1
			}
		}
		if lvl[v] > maxL {
			maxL = lvl[v]
		}
	}
	levels := make([][]int, maxL+1)
	for v := 0; v < d.N(); v++ {
		levels[lvl[v]] = append(levels[lvl[v]], v)
	}
	return levels, nil
}

// Width is the largest set of mutually unreachable nodes (the maximum
// antichain). By Dilworth's theorem it equals the size of a minimum chain
// cover, which is how it is computed.
func (d *DAG) Width() (int, error) {
	chains, err := d.MinChainCover()
	if err != nil {
		return 0, err
	}
	return len(chains), nil
}

// intHeap is a min-heap of ints (container/heap without the interface
// boxing).
type intHeap struct{ a []int }

func (h *intHeap) len() int { return len(h.a) }
func (h *intHeap) push(v int) {
	h.a = append(h.a, v)
	for i := len(h.a) - 1; i > 0; {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}
func (h *intHeap) pop() int {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.a[l] < h.a[m] {
			m = l
		}
		if r < last && h.a[r] < h.a[m] {
			m = r
		}
		if m == i {
			break
		}
		h.a[m], h.a[i] = h.a[i], h.a[m]
		i = m
	}
	return top
}
