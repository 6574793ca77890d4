package sim

import "math/bits"

// dagWidth is the width of the DAG whose node u has the successors
// succ[u]: the size of a minimum chain cover (the fewest chains, paths of
// the DAG's order that may skip nodes, such that every node is on one),
// which by Dilworth's theorem equals the largest antichain (the most nodes
// no path orders). It is how many parallel branches a captured graph has,
// what cuGraphLaunch's host cost grows with (Config.Host
// GraphLaunchBranchNs): a chain is one branch, w independent nodes are w,
// a fork into k chains joined back is k.
//
// device/sim may not import sched/graph, which has DAG algorithms of its
// own (the arrows point from schedulers to devices), so the cover is
// computed here: n minus a maximum matching of the bipartite graph that
// links u (left) to every v (right) u reaches, the transitive closure
// (without it, the matching would count vertex-disjoint paths, which a
// diamond's join shared by two branches would overcount). The closure is
// a bitset per node, the matching Kuhn's augmenting paths after a greedy
// start; O(n^3/64) in the worst case, O(n^2/64) for the chains and forks
// that captures make. succ must be acyclic (captured graphs are); it
// panics otherwise.
func dagWidth(succ [][]int32) int {
	n := len(succ)
	if n == 0 {
		return 0
	}
	order := topoOrder(succ)
	reach := reachSets(succ, order)
	return n - reach.maxMatching(order)
}

// dagJoins is the number of the DAG's edges beyond a chain cover of
// width w (each chain of k nodes holds k - 1 of them): the forks and joins
// between its branches (Config.Host GraphLaunchJoinNs). A chain and
// independent nodes have none; w branches between a head and a tail node
// have 2 (w - 1). Never below 0 (a cover's chains may step over nodes).
func dagJoins(succ [][]int32, w int) int {
	edges := 0
	for _, s := range succ {
		edges += len(s)
	}
	return max(0, edges-len(succ)+w)
}

// topoOrder is a topological order of the DAG (Kahn's algorithm); it
// panics if succ has a cycle.
func topoOrder(succ [][]int32) []int32 {
	n := len(succ)
	indeg := make([]int32, n)
	for _, vs := range succ {
		for _, v := range vs {
			indeg[v]++
		}
	}
	order := make([]int32, 0, n)
	for u := range succ {
		if indeg[u] == 0 {
			order = append(order, int32(u))
		}
	}
	for i := 0; i < len(order); i++ {
		for _, v := range succ[order[i]] {
			if indeg[v]--; indeg[v] == 0 {
				order = append(order, v)
			}
		}
	}
	if len(order) != n {
		panic("sim: dagWidth of a graph with a cycle")
	}
	return order
}

// reachBits is the transitive closure of a DAG: row u is the bitset of the
// nodes u reaches.
type reachBits struct {
	words int // uint64 words per row
	bits  []uint64
}

func (r reachBits) row(u int32) []uint64 {
	return r.bits[int(u)*r.words : int(u+1)*r.words]
}

// reachSets builds the closure from the sinks up, in reverse topological
// order.
func reachSets(succ [][]int32, order []int32) reachBits {
	n := len(succ)
	words := (n + 63) / 64
	r := reachBits{words: words, bits: make([]uint64, n*words)}
	for i := n - 1; i >= 0; i-- {
		u := order[i]
		ru := r.row(u)
		for _, v := range succ[u] {
			ru[v/64] |= 1 << (v % 64)
			for w, x := range r.row(v) {
				ru[w] |= x
			}
		}
	}
	return r
}

// maxMatching is the size of a maximum matching of the bipartite graph
// linking u (left) to every v (right) u reaches: greedy, then augmenting
// paths from each left node left unmatched.
func (r reachBits) maxMatching(order []int32) int {
	n := len(order)
	words := r.words
	matchR := make([]int32, n) // the left node matched to right node v, or -1
	for v := range matchR {
		matchR[v] = -1
	}
	free := make([]uint64, words) // right nodes not matched yet
	for v := 0; v < n; v++ {
		free[v/64] |= 1 << (v % 64)
	}
	matched := 0
	var pending []int32
	for _, u := range order {
		ru := r.row(u)
		took := false
		for w := range free {
			if x := ru[w] & free[w]; x != 0 {
				b := bits.TrailingZeros64(x)
				free[w] &^= 1 << b
				matchR[w*64+b] = u
				matched++
				took = true
				break
			}
		}
		if !took {
			pending = append(pending, u)
		}
	}
	seen := make([]uint64, words)
	var augment func(u int32) bool
	augment = func(u int32) bool {
		ru := r.row(u)
		for w := range ru {
			for x := ru[w] &^ seen[w]; x != 0; x &= x - 1 {
				b := bits.TrailingZeros64(x)
				if seen[w]&(1<<b) != 0 { // seen deeper down meanwhile
					continue
				}
				seen[w] |= 1 << b
				v := w*64 + b
				if matchR[v] < 0 || augment(matchR[v]) {
					matchR[v] = u
					return true
				}
			}
		}
		return false
	}
	for _, u := range pending {
		clear(seen)
		if augment(u) {
			matched++
		}
	}
	return matched
}

// dagSegments is the number of segments of the DAG whose node u has the
// successors succ[u]: maximal paths of its transitive reduction whose
// nodes are linked one to one. A node continues its predecessor's segment
// when it has one predecessor and that predecessor one successor, both
// counted without the edges the closure implies (a captured graph's
// stream-order edge beside a longer path through another stream); every
// other node begins a segment. A chain is one segment, w independent
// nodes are w, a fork into k chains joined back is k + 2.
// (Config.Host InstantiatePerSegmentNs, DestroyExecPerSegmentNs.)
func dagSegments(succ [][]int32) int {
	n := len(succ)
	if n == 0 {
		return 0
	}
	reach := reachSets(succ, topoOrder(succ))
	in, out := make([]int32, n), make([]int32, n)
	pred := make([]int32, n) // the last kept predecessor
	for u, vs := range succ {
		for _, v := range vs {
			if impliedEdge(reach, vs, v) {
				continue
			}
			out[u]++
			in[v]++
			pred[v] = int32(u)
		}
	}
	segments := 0
	for v := 0; v < n; v++ {
		if in[v] != 1 || out[pred[v]] != 1 {
			segments++
		}
	}
	return segments
}

// impliedEdge reports whether the edge to v is implied by a path through
// another of the same node's successors vs.
func impliedEdge(reach reachBits, vs []int32, v int32) bool {
	for _, w := range vs {
		if w != v && reach.row(w)[v/64]&(1<<(v%64)) != 0 {
			return true
		}
	}
	return false
}
