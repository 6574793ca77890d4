package graph

// MinChainCover partitions the nodes into the fewest chains, each a sequence
// of nodes where every node reaches the next (Fulkerson's reduction of
// Dilworth's theorem: a maximum matching in the bipartite graph of the
// transitive closure, computed with Hopcroft-Karp; chains = N - matching).
// Chains are listed by their first node; each is in topological order.
// Consecutive nodes of a chain need not share an edge: running a chain on
// one stream orders them, which a path of edges would have required anyway.
func (d *DAG) MinChainCover() ([][]int, error) {
	r, err := d.Closure()
	if err != nil {
		return nil, err
	}
	n := d.N()
	adj := make([][]int, n)
	for u := 0; u < n; u++ {
		for v := 0; v < n; v++ {
			if r.Has(u, v) {
				adj[u] = append(adj[u], v)
			}
		}
	}
	return chainsOf(n, adj), nil
}

// MinPathCover partitions the nodes into the fewest paths along the graph's
// own edges (a maximum matching in the bipartite graph of the edges). On a
// transitive reduction this is Nimble's stream assignment: each stream
// runs a path, so consecutive nodes of a stream share an edge and need no
// event. It can need more paths than the width (a hub's two children and
// two parents make three paths but two chains).
func (d *DAG) MinPathCover() [][]int {
	return chainsOf(d.N(), d.Succ)
}

// chainsOf matches each node to at most one successor among adj and
// returns the resulting chains.
func chainsOf(n int, adj [][]int) [][]int {
	matchL, matchR := hopcroftKarp(n, n, adj)
	var chains [][]int
	for v := 0; v < n; v++ {
		if matchR[v] != -1 {
			continue // v continues some chain
		}
		var c []int
		for u := v; u != -1; u = matchL[u] {
			c = append(c, u)
		}
		chains = append(chains, c)
	}
	return chains
}

// hopcroftKarp finds a maximum matching of a bipartite graph with nl left
// and nr right vertices; adj lists each left vertex's right neighbours.
// It returns each left vertex's partner and each right vertex's partner
// (-1 when unmatched). O(E sqrt(V)).
func hopcroftKarp(nl, nr int, adj [][]int) (matchL, matchR []int) {
	matchL = make([]int, nl)
	matchR = make([]int, nr)
	for i := range matchL {
		matchL[i] = -1
	}
	for i := range matchR {
		matchR[i] = -1
	}
	const inf = int(^uint(0) >> 1)
	dist := make([]int, nl)
	queue := make([]int, 0, nl)
	bfs := func() bool {
		queue = queue[:0]
		for u := 0; u < nl; u++ {
			if matchL[u] == -1 {
				dist[u] = 0
				queue = append(queue, u)
			} else {
				dist[u] = inf
			}
		}
		found := false
		for qi := 0; qi < len(queue); qi++ {
			u := queue[qi]
			for _, v := range adj[u] {
				w := matchR[v]
				if w == -1 {
					found = true
				} else if dist[w] == inf {
					dist[w] = dist[u] + 1
					queue = append(queue, w)
				}
			}
		}
		return found
	}
	var dfs func(u int) bool
	dfs = func(u int) bool {
		for _, v := range adj[u] {
			w := matchR[v]
			if w == -1 || (dist[w] == dist[u]+1 && dfs(w)) {
				matchL[u], matchR[v] = v, u
				return true
			}
		}
		dist[u] = inf
		return false
	}
	for bfs() {
		for u := 0; u < nl; u++ {
			if matchL[u] == -1 {
				dfs(u)
			}
		}
	}
	return matchL, matchR
}
