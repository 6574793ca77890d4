package jobs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// SSSPParams size the SSSP workload: Jobs random graphs of Vertices vertices
// and Vertices*Degree edges, each relaxed Iterations times from vertex 0.
type SSSPParams struct {
	Jobs       int `yaml:"jobs"`
	Vertices   int `yaml:"vertices"`
	Degree     int `yaml:"degree"`     // average in-degree
	Iterations int `yaml:"iterations"` // Bellman-Ford rounds, even
}

// DefaultSSSP is a small-graph pipeline.
func DefaultSSSP() SSSPParams { return SSSPParams{Jobs: 256, Vertices: 4096, Degree: 8, Iterations: 8} }

const ssspThreads = 256

// SSSP builds the single-source shortest path pipeline: each job copies in a
// random graph (CSR by destination, integer weights 1..64), initializes the
// distances from vertex 0 and runs Iterations Bellman-Ford relaxation rounds,
// ping-ponging between two distance arrays, then copies the distances out.
// Throughput is counted in edge relaxations.
func SSSP(p SSSPParams, seed int64) (*Workload, error) {
	switch {
	case p.Vertices < 2 || p.Vertices > 1<<20:
		return nil, fmt.Errorf("sssp: vertices is %d; it must be between 2 and %d", p.Vertices, 1<<20)
	case p.Degree < 1 || p.Degree > 64:
		return nil, fmt.Errorf("sssp: degree is %d; it must be between 1 and 64", p.Degree)
	case p.Iterations < 2 || p.Iterations%2 != 0 || p.Iterations > 64:
		return nil, fmt.Errorf("sssp: iterations is %d; it must be even, between 2 and 64", p.Iterations)
	}
	n, m := p.Vertices, p.Vertices*p.Degree
	// Input: rowptr (n+1), col (m), weight (m).
	lay := newLayout(n+1, m, m)
	blocks := ceilDiv(n, ssspThreads)
	s := jobShape{
		name:     fmt.Sprintf("sssp(jobs=%d,vertices=%d,degree=%d,iterations=%d)", p.Jobs, n, p.Degree, p.Iterations),
		inBytes:  lay.total,
		outBytes: int64(n) * 4,
		scratch:  []int64{int64(n) * 4},
		kernels: func(in, out int, scratch []int) []workloads.Op {
			// dist ping-pongs between out (even rounds start there) and
			// the scratch array; an even number of rounds ends in out.
			bufs := [2]int{out, scratch[0]}
			ops := []workloads.Op{{
				Name: "init", Kernel: kSSSPInit, Grid: device.D1(blocks), Block: device.D1(ssspThreads),
				Args: []workloads.ArgSpec{workloads.BufArg(out, device.Write), workloads.Scalar32(int32(n)), workloads.Scalar32(0)},
				Work: device.Work{Flops: ssspThreads, Bytes: 4 * ssspThreads},
			}}
			for it := 0; it < p.Iterations; it++ {
				src, dst := bufs[it%2], bufs[(it+1)%2]
				ops = append(ops, workloads.Op{
					Name: fmt.Sprintf("relax%d", it), Kernel: kSSSPRelax, Grid: device.D1(blocks), Block: device.D1(ssspThreads),
					Args: []workloads.ArgSpec{
						workloads.BufRange(in, device.Read, lay.off[0], lay.bytes(0)),
						workloads.BufRange(in, device.Read, lay.off[1], lay.bytes(1)),
						workloads.BufRange(in, device.Read, lay.off[2], lay.bytes(2)),
						workloads.BufArg(src, device.Read), workloads.BufArg(dst, device.Write), workloads.Scalar32(int32(n)),
					},
					// Per vertex: two row pointers, Degree edges (source,
					// weight, gathered distance), its own distance in and out.
					Work: device.Work{Flops: float64(2 * p.Degree * ssspThreads), Bytes: float64((4 + 12*p.Degree) * ssspThreads)},
				})
			}
			return ops
		},
		input: func(r *rand.Rand, slot []byte) {
			rowptr, col, wt := randomGraph(r, n, m)
			for i, v := range rowptr {
				putI32(slot, lay.off[0], i, v)
			}
			for i := range col {
				putI32(slot, lay.off[1], i, col[i])
				putF32(slot, lay.off[2], i, wt[i])
			}
		},
		ref: func(in, out []byte) {
			rowptr := make([]int32, n+1)
			col := make([]int32, m)
			for i := range rowptr {
				rowptr[i] = getI32(in, lay.off[0], i)
			}
			for i := range col {
				col[i] = getI32(in, lay.off[1], i)
			}
			putF32s(out, 0, SSSPRef(rowptr, col, f32s(in, lay.off[2], m), 0, p.Iterations))
		},
		compare: func(got, want []byte) error {
			return compareExact("dist", f32s(got, 0, n), f32s(want, 0, n))
		},
	}
	prog, ref, err := build(s, p.Jobs, seed)
	if err != nil {
		return nil, err
	}
	return &Workload{Program: prog, Jobs: p.Jobs, Unit: "edge relaxations", UnitsPerJob: float64(m * p.Iterations), Reference: ref, OutSlot: alignUp(s.outBytes)}, nil
}

// randomGraph draws m directed edges with uniform random endpoints and
// integer weights 1..64, and returns them in CSR form by destination.
func randomGraph(r *rand.Rand, n, m int) (rowptr, col []int32, wt []float32) {
	type edge struct {
		dst, src int32
		w        float32
	}
	es := make([]edge, m)
	for i := range es {
		es[i] = edge{int32(r.IntN(n)), int32(r.IntN(n)), float32(1 + r.IntN(64))}
	}
	slices.SortStableFunc(es, func(a, b edge) int { return int(a.dst - b.dst) })
	rowptr = make([]int32, n+1)
	col = make([]int32, m)
	wt = make([]float32, m)
	for i, e := range es {
		rowptr[e.dst+1]++
		col[i], wt[i] = e.src, e.w
	}
	for v := 0; v < n; v++ {
		rowptr[v+1] += rowptr[v]
	}
	return rowptr, col, wt
}

// SSSPRef runs the same Jacobi-style Bellman-Ford rounds as the kernels:
// each round, every vertex takes the minimum of its distance and its
// in-neighbours' previous-round distances plus the edge weights.
func SSSPRef(rowptr, col []int32, wt []float32, src, rounds int) []float32 {
	n := len(rowptr) - 1
	cur := make([]float32, n)
	for v := range cur {
		cur[v] = float32(math.Inf(1))
	}
	cur[src] = 0
	next := make([]float32, n)
	for it := 0; it < rounds; it++ {
		for v := 0; v < n; v++ {
			best := cur[v]
			for e := rowptr[v]; e < rowptr[v+1]; e++ {
				if c := cur[col[e]] + wt[e]; c < best {
					best = c
				}
			}
			next[v] = best
		}
		cur, next = next, cur
	}
	return cur
}
