package jobs

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// GEMMParams size the GEMM workload: Jobs products of Size x Size matrices.
type GEMMParams struct {
	Jobs int `yaml:"jobs"`
	Size int `yaml:"size"` // a multiple of 16
}

// DefaultGEMM is a small-matrix pipeline (batched small GEMMs).
func DefaultGEMM() GEMMParams { return GEMMParams{Jobs: 256, Size: 128} }

// GEMM builds the matrix-multiply pipeline: each job copies in A and B,
// computes C = A B with a shared-memory tiled kernel, and copies C out.
// Entries are small integers (-8..8) in float32, so every partial sum is
// exact and the GPU must match the reference bit for bit. Throughput is
// counted in flops (2 n^3 per job).
func GEMM(p GEMMParams, seed int64) (*Workload, error) {
	if p.Size < gemmTile || p.Size%gemmTile != 0 || p.Size > 2048 {
		return nil, fmt.Errorf("gemm: size is %d; it must be a multiple of %d between %d and 2048", p.Size, gemmTile, gemmTile)
	}
	n := p.Size
	in := newLayout(n*n, n*n)
	t := gemmTile
	s := jobShape{
		name:     fmt.Sprintf("gemm(jobs=%d,size=%d)", p.Jobs, n),
		inBytes:  in.total,
		outBytes: int64(n*n) * 4,
		kernels: func(ib, ob int, _ []int) []workloads.Op {
			return []workloads.Op{{
				Name: "gemm", Kernel: kGEMM, Grid: device.D2(n/t, n/t), Block: device.D2(t, t),
				Args: []workloads.ArgSpec{
					workloads.BufRange(ib, device.Read, in.off[0], in.bytes(0)),
					workloads.BufRange(ib, device.Read, in.off[1], in.bytes(1)),
					workloads.BufArg(ob, device.Write), workloads.Scalar32(int32(n)),
				},
				// A tile-row strip of A and a tile-column strip of B in,
				// one tile of C out; 2n flops per output.
				Work: device.Work{Flops: float64(2 * n * t * t), Bytes: float64(4 * (2*n*t + t*t))},
			}}
		},
		input: func(r *rand.Rand, slot []byte) {
			for i := 0; i < 2*n*n; i++ {
				sec := i / (n * n)
				putF32(slot, in.off[sec], i%(n*n), float32(r.IntN(17)-8))
			}
		},
		ref: func(ib, ob []byte) { putF32s(ob, 0, GEMMRef(f32s(ib, in.off[0], n*n), f32s(ib, in.off[1], n*n), n)) },
		compare: func(got, want []byte) error {
			return compareExact("C", f32s(got, 0, n*n), f32s(want, 0, n*n))
		},
	}
	prog, ref, err := build(s, p.Jobs, seed)
	if err != nil {
		return nil, err
	}
	return &Workload{Program: prog, Jobs: p.Jobs, Unit: "flops", UnitsPerJob: 2 * float64(n) * float64(n) * float64(n), Reference: ref, OutSlot: alignUp(s.outBytes)}, nil
}

// GEMMRef is C = A B for n x n row-major matrices.
func GEMMRef(A, B []float32, n int) []float32 {
	C := make([]float32, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for k := 0; k < n; k++ {
				s += float32(A[i*n+k] * B[k*n+j])
			}
			C[i*n+j] = s
		}
	}
	return C
}
