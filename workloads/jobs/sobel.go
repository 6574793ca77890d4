package jobs

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// SobelParams size the Sobel workload: Jobs images of Size x Size pixels.
type SobelParams struct {
	Jobs int `yaml:"jobs"`
	Size int `yaml:"size"` // image side, a multiple of 16
}

// DefaultSobel is a small-image pipeline, where scheduling dominates.
func DefaultSobel() SobelParams { return SobelParams{Jobs: 256, Size: 128} }

// Sobel builds the Sobel pipeline: each job copies in a Size x Size image of
// 8-bit intensities (held in float32), computes its gradient magnitude, and
// copies it out. Throughput is counted in pixels.
func Sobel(p SobelParams, seed int64) (*Workload, error) {
	if p.Size < sobelTile || p.Size%sobelTile != 0 || p.Size > 4096 {
		return nil, fmt.Errorf("sobel: size is %d; it must be a multiple of %d between %d and 4096", p.Size, sobelTile, sobelTile)
	}
	n := p.Size
	bytes := int64(n*n) * 4
	blk := float64(sobelTile * sobelTile)
	s := jobShape{
		name:     fmt.Sprintf("sobel(jobs=%d,size=%d)", p.Jobs, n),
		inBytes:  bytes,
		outBytes: bytes,
		kernels: func(in, out int, _ []int) []workloads.Op {
			return []workloads.Op{{
				Name: "sobel", Kernel: kSobel,
				Grid: device.D2(n/sobelTile, n/sobelTile), Block: device.D2(sobelTile, sobelTile),
				Args: []workloads.ArgSpec{workloads.BufArg(in, device.Read), workloads.BufArg(out, device.Write),
					workloads.Scalar32(int32(n)), workloads.Scalar32(int32(n))},
				// 9 loads (mostly cached: a tile plus its halo from DRAM), 17
				// flops and a square root per pixel, one store.
				Work: device.Work{Flops: 20 * blk, Bytes: 4*(sobelTile+2)*(sobelTile+2) + 4*blk},
			}}
		},
		input: func(r *rand.Rand, slot []byte) {
			for i := 0; i < n*n; i++ {
				putF32(slot, 0, i, float32(r.IntN(256)))
			}
		},
		ref: func(in, out []byte) { putF32s(out, 0, SobelRef(f32s(in, 0, n*n), n, n)) },
		compare: func(got, want []byte) error {
			return compareExact("magnitude", f32s(got, 0, n*n), f32s(want, 0, n*n))
		},
	}
	prog, ref, err := build(s, p.Jobs, seed)
	if err != nil {
		return nil, err
	}
	return &Workload{Program: prog, Jobs: p.Jobs, Unit: "pixels", UnitsPerJob: float64(n * n), Reference: ref, OutSlot: alignUp(s.outBytes)}, nil
}

// SobelRef is the CPU reference of the sobel kernel: the gradient magnitude
// of a w x h image, 0 on the border.
func SobelRef(img []float32, w, h int) []float32 {
	out := make([]float32, w*h)
	at := func(x, y int) float32 { return img[y*w+x] }
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			gx := (at(x+1, y-1) + float32(2*at(x+1, y)) + at(x+1, y+1)) - (at(x-1, y-1) + float32(2*at(x-1, y)) + at(x-1, y+1))
			gy := (at(x-1, y+1) + float32(2*at(x, y+1)) + at(x+1, y+1)) - (at(x-1, y-1) + float32(2*at(x, y-1)) + at(x+1, y-1))
			out[y*w+x] = float32(math.Sqrt(float64(float32(gx*gx) + float32(gy*gy))))
		}
	}
	return out
}
