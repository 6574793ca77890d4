package jobs

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// KNNParams size the k-nearest-neighbour workload: per job, Queries query
// points against Points reference points of Dims dimensions, keeping K.
type KNNParams struct {
	Jobs    int `yaml:"jobs"`
	Points  int `yaml:"points"`
	Queries int `yaml:"queries"`
	Dims    int `yaml:"dims"`
	K       int `yaml:"k"` // at most 8
}

// DefaultKNN is a small-query pipeline.
func DefaultKNN() KNNParams { return KNNParams{Jobs: 256, Points: 4096, Queries: 8, Dims: 8, K: 8} }

const knnDistThreads = 256

// KNN builds the k-nearest-neighbour pipeline: each job copies in its
// reference points and queries (integer coordinates 0..255 in float32, so
// squared distances are exact), computes all query-point squared distances,
// selects each query's K nearest (ties broken by lower index), and copies out
// their indices and distances. Throughput is counted in distances.
func KNN(p KNNParams, seed int64) (*Workload, error) {
	switch {
	case p.Points < 1 || p.Points > 1<<20:
		return nil, fmt.Errorf("knn: points is %d; it must be between 1 and %d", p.Points, 1<<20)
	case p.Queries < 1 || p.Queries > 65535:
		return nil, fmt.Errorf("knn: queries is %d; it must be between 1 and 65535", p.Queries)
	case p.Dims < 1 || p.Dims > 64:
		return nil, fmt.Errorf("knn: dims is %d; it must be between 1 and 64", p.Dims)
	case p.K < 1 || p.K > knnMaxK || p.K > p.Points:
		return nil, fmt.Errorf("knn: k is %d; it must be between 1 and min(%d, points)", p.K, knnMaxK)
	}
	n, q, d, k := p.Points, p.Queries, p.Dims, p.K
	in := newLayout(n*d, q*d)  // ref, qry
	out := newLayout(q*k, q*k) // idx, dist
	s := jobShape{
		name:     fmt.Sprintf("knn(jobs=%d,points=%d,queries=%d,dims=%d,k=%d)", p.Jobs, n, q, d, k),
		inBytes:  in.total,
		outBytes: out.total,
		scratch:  []int64{int64(q*n) * 4},
		kernels: func(ib, ob int, scratch []int) []workloads.Op {
			dist := scratch[0]
			return []workloads.Op{{
				Name: "dist", Kernel: kKNNDist, Grid: device.D2(ceilDiv(n, knnDistThreads), q), Block: device.D1(knnDistThreads),
				Args: []workloads.ArgSpec{
					workloads.BufRange(ib, device.Read, in.off[0], in.bytes(0)),
					workloads.BufRange(ib, device.Read, in.off[1], in.bytes(1)),
					workloads.BufArg(dist, device.Write),
					workloads.Scalar32(int32(n)), workloads.Scalar32(int32(q)), workloads.Scalar32(int32(d)),
				},
				Work: device.Work{Flops: float64(3 * d * knnDistThreads), Bytes: float64(4 * (d*knnDistThreads + d + knnDistThreads))},
			}, {
				Name: "select", Kernel: kKNNSelect, Grid: device.D1(q), Block: device.D1(knnThreads),
				Args: []workloads.ArgSpec{
					workloads.BufArg(dist, device.Read),
					workloads.BufRange(ob, device.Write, out.off[0], out.bytes(0)),
					workloads.BufRange(ob, device.Write, out.off[1], out.bytes(1)),
					workloads.Scalar32(int32(n)), workloads.Scalar32(int32(k)),
				},
				// A pass over the query's distances with a top-k insertion,
				// then k block-wide reductions.
				Work: device.Work{Flops: float64(n*2 + k*knnThreads*8), Bytes: float64(4 * n)},
			}}
		},
		input: func(r *rand.Rand, slot []byte) {
			for i := 0; i < n*d; i++ {
				putF32(slot, in.off[0], i, float32(r.IntN(256)))
			}
			for i := 0; i < q*d; i++ {
				putF32(slot, in.off[1], i, float32(r.IntN(256)))
			}
		},
		ref: func(ib, ob []byte) {
			idx, dist := KNNRef(f32s(ib, in.off[0], n*d), f32s(ib, in.off[1], q*d), n, q, d, k)
			for i, v := range idx {
				putI32(ob, out.off[0], i, v)
			}
			putF32s(ob, out.off[1], dist)
		},
		compare: func(got, want []byte) error {
			for i := 0; i < q*k; i++ {
				if g, w := getI32(got, out.off[0], i), getI32(want, out.off[0], i); g != w {
					return fmt.Errorf("query %d neighbour %d: index %d, want %d", i/k, i%k, g, w)
				}
			}
			return compareExact("dist", f32s(got, out.off[1], q*k), f32s(want, out.off[1], q*k))
		},
	}
	prog, ref, err := build(s, p.Jobs, seed)
	if err != nil {
		return nil, err
	}
	return &Workload{Program: prog, Jobs: p.Jobs, Unit: "distances", UnitsPerJob: float64(n * q), Reference: ref, OutSlot: alignUp(s.outBytes)}, nil
}

// KNNRef returns, per query, the indices and squared distances of the k
// nearest reference points, nearest first, ties broken by lower index.
func KNNRef(ref, qry []float32, n, q, d, k int) (idx []int32, dist []float32) {
	type cand struct {
		d float32
		i int32
	}
	cs := make([]cand, n)
	for qi := 0; qi < q; qi++ {
		for i := 0; i < n; i++ {
			var s float32
			for c := 0; c < d; c++ {
				t := ref[i*d+c] - qry[qi*d+c]
				s += float32(t * t)
			}
			cs[i] = cand{s, int32(i)}
		}
		slices.SortFunc(cs, func(a, b cand) int {
			if c := cmp.Compare(a.d, b.d); c != 0 {
				return c
			}
			return cmp.Compare(a.i, b.i)
		})
		for r := 0; r < k; r++ {
			idx = append(idx, cs[r].i)
			dist = append(dist, cs[r].d)
		}
	}
	return idx, dist
}
