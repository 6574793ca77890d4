package jobs

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// HotspotParams size the Hotspot workload: Jobs chips of Size x Size cells,
// each simulated for Iterations steps.
type HotspotParams struct {
	Jobs       int `yaml:"jobs"`
	Size       int `yaml:"size"`
	Iterations int `yaml:"iterations"` // even
}

// DefaultHotspot is a small-grid pipeline.
func DefaultHotspot() HotspotParams { return HotspotParams{Jobs: 256, Size: 128, Iterations: 4} }

// Rodinia hotspot's chip constants.
const (
	hsMaxPD      = 3.0e6
	hsPrecision  = 0.001
	hsSpecHeatSi = 1.75e6
	hsKSi        = 100
	hsFactorChip = 0.5
	hsTChip      = 0.0005
	hsChipHeight = 0.016
	hsChipWidth  = 0.016
	hsAmbient    = 80.0
)

// HotspotCoeffs are the per-step coefficients Rodinia derives from the chip
// and grid sizes.
type HotspotCoeffs struct {
	StepDivCap, Rx1, Ry1, Rz1, Amb float32
}

// hotspotCoeffs computes Rodinia's coefficients for a rows x cols grid.
func hotspotCoeffs(rows, cols int) HotspotCoeffs {
	gh := hsChipHeight / float64(rows)
	gw := hsChipWidth / float64(cols)
	capacitance := hsFactorChip * hsSpecHeatSi * hsTChip * gw * gh
	rx := gw / (2.0 * hsKSi * hsTChip * gh)
	ry := gh / (2.0 * hsKSi * hsTChip * gw)
	rz := hsTChip / (hsKSi * gh * gw)
	maxSlope := hsMaxPD / (hsFactorChip * hsTChip * hsSpecHeatSi)
	step := hsPrecision / maxSlope
	return HotspotCoeffs{float32(step / capacitance), float32(1 / rx), float32(1 / ry), float32(1 / rz), hsAmbient}
}

const hsTile = 16

// Hotspot builds the thermal-simulation pipeline (Rodinia hotspot): each job
// copies in a chip's power map and initial temperatures, runs Iterations
// stencil steps ping-ponging between two temperature grids, and copies the
// final temperatures out. Throughput is counted in cell updates.
func Hotspot(p HotspotParams, seed int64) (*Workload, error) {
	switch {
	case p.Size < 2 || p.Size > 4096:
		return nil, fmt.Errorf("hotspot: size is %d; it must be between 2 and 4096", p.Size)
	case p.Iterations < 2 || p.Iterations%2 != 0 || p.Iterations > 64:
		return nil, fmt.Errorf("hotspot: iterations is %d; it must be even, between 2 and 64", p.Iterations)
	}
	n := p.Size
	in := newLayout(n*n, n*n) // power, temperature
	co := hotspotCoeffs(n, n)
	g := ceilDiv(n, hsTile)
	s := jobShape{
		name:     fmt.Sprintf("hotspot(jobs=%d,size=%d,iterations=%d)", p.Jobs, n, p.Iterations),
		inBytes:  in.total,
		outBytes: int64(n*n) * 4,
		scratch:  []int64{int64(n*n) * 4},
		kernels: func(ib, ob int, scratch []int) []workloads.Op {
			var ops []workloads.Op
			for it := 0; it < p.Iterations; it++ {
				// Step 0 reads the copied-in temperatures; then the grids
				// alternate between scratch and out, ending in out.
				src := workloads.BufRange(ib, device.Read, in.off[1], in.bytes(1))
				if it > 0 {
					src = workloads.BufArg([2]int{ob, scratch[0]}[it%2], device.Read)
				}
				dst := [2]int{scratch[0], ob}[it%2]
				if it == p.Iterations-1 {
					dst = ob
				}
				ops = append(ops, workloads.Op{
					Name: fmt.Sprintf("step%d", it), Kernel: kHotspot, Grid: device.D2(g, g), Block: device.D2(hsTile, hsTile),
					Args: []workloads.ArgSpec{
						workloads.BufRange(ib, device.Read, in.off[0], in.bytes(0)), src, workloads.BufArg(dst, device.Write),
						workloads.Scalar32(int32(n)), workloads.Scalar32(int32(n)),
						workloads.F32Arg(co.StepDivCap), workloads.F32Arg(co.Rx1), workloads.F32Arg(co.Ry1), workloads.F32Arg(co.Rz1), workloads.F32Arg(co.Amb),
					},
					Work: device.Work{Flops: 15 * hsTile * hsTile, Bytes: 4 * (2*(hsTile+2)*(hsTile+2) + hsTile*hsTile)},
				})
			}
			return ops
		},
		input: func(r *rand.Rand, slot []byte) {
			// Rodinia's inputs: power up to about 1 W-scale per cell's
			// share, temperatures around 320-340 K.
			for i := 0; i < n*n; i++ {
				putF32(slot, in.off[0], i, r.Float32()*0.5)
				putF32(slot, in.off[1], i, 320+20*r.Float32())
			}
		},
		ref: func(ib, ob []byte) {
			putF32s(ob, 0, HotspotRef(f32s(ib, in.off[0], n*n), f32s(ib, in.off[1], n*n), n, n, p.Iterations, co))
		},
		compare: func(got, want []byte) error {
			return compareClose("temperature", f32s(got, 0, n*n), f32s(want, 0, n*n), 1e-5)
		},
	}
	prog, ref, err := build(s, p.Jobs, seed)
	if err != nil {
		return nil, err
	}
	return &Workload{Program: prog, Jobs: p.Jobs, Unit: "cell updates", UnitsPerJob: float64(n * n * p.Iterations), Reference: ref, OutSlot: alignUp(s.outBytes)}, nil
}

// HotspotRef runs steps of the thermal stencil on the CPU (replicated
// boundary), as the hotspot kernel does.
func HotspotRef(power, temp []float32, rows, cols, steps int, c HotspotCoeffs) []float32 {
	cur := append([]float32(nil), temp...)
	next := make([]float32, len(temp))
	for it := 0; it < steps; it++ {
		for r := 0; r < rows; r++ {
			n, s := max(r-1, 0), min(r+1, rows-1)
			for col := 0; col < cols; col++ {
				w, e := max(col-1, 0), min(col+1, cols-1)
				t := cur[r*cols+col]
				d := c.StepDivCap * (power[r*cols+col] + (cur[s*cols+col]+cur[n*cols+col]-2*t)*c.Ry1 +
					(cur[r*cols+e]+cur[r*cols+w]-2*t)*c.Rx1 + (c.Amb-t)*c.Rz1)
				next[r*cols+col] = t + d
			}
		}
		cur, next = next, cur
	}
	return cur
}
