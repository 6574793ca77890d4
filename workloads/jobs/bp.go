package jobs

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// BPParams size the back-propagation workload: Jobs layers of Inputs x
// Hidden weights, each trained on a batch of Batch examples.
type BPParams struct {
	Jobs   int `yaml:"jobs"`
	Batch  int `yaml:"batch"`
	Inputs int `yaml:"inputs"`
	Hidden int `yaml:"hidden"`
}

// DefaultBP is a small-layer pipeline (Rodinia backprop's 16 hidden units,
// a short batch).
func DefaultBP() BPParams { return BPParams{Jobs: 256, Batch: 32, Inputs: 256, Hidden: 64} }

const bpThreads = 64

// BP builds the back-propagation pipeline: each job copies in a batch x,
// the layer's weights W and the output error delta, runs the forward pass
// h = sigmoid(x W) and the weight gradient G = x^T (delta .* h .* (1-h)), and
// copies h and G out. Throughput is counted in flops (multiply-adds as two).
func BP(p BPParams, seed int64) (*Workload, error) {
	switch {
	case p.Batch < 1 || p.Batch > 1024:
		return nil, fmt.Errorf("bp: batch is %d; it must be between 1 and 1024", p.Batch)
	case p.Inputs < 1 || p.Inputs > 65535:
		return nil, fmt.Errorf("bp: inputs is %d; it must be between 1 and 65535", p.Inputs)
	case p.Hidden < 1 || p.Hidden > 4096:
		return nil, fmt.Errorf("bp: hidden is %d; it must be between 1 and 4096", p.Hidden)
	}
	b, ni, nh := p.Batch, p.Inputs, p.Hidden
	in := newLayout(b*ni, ni*nh, b*nh) // x, W, delta
	out := newLayout(b*nh, ni*nh)      // h, G
	hb := ceilDiv(nh, bpThreads)
	s := jobShape{
		name:     fmt.Sprintf("bp(jobs=%d,batch=%d,inputs=%d,hidden=%d)", p.Jobs, b, ni, nh),
		inBytes:  in.total,
		outBytes: out.total,
		kernels: func(ib, ob int, _ []int) []workloads.Op {
			return []workloads.Op{{
				Name: "forward", Kernel: kBPForward, Grid: device.D2(hb, b), Block: device.D1(bpThreads),
				Args: []workloads.ArgSpec{
					workloads.BufRange(ib, device.Read, in.off[0], in.bytes(0)),
					workloads.BufRange(ib, device.Read, in.off[1], in.bytes(1)),
					workloads.BufRange(ob, device.Write, out.off[0], out.bytes(0)),
					workloads.Scalar32(int32(b)), workloads.Scalar32(int32(ni)), workloads.Scalar32(int32(nh)),
				},
				// Each thread: a dot product of length Inputs and a sigmoid;
				// W's columns stream from memory, x's row is cached.
				Work: device.Work{Flops: float64(bpThreads * (2*ni + 4)), Bytes: float64(4 * (bpThreads*ni + ni + bpThreads))},
			}, {
				Name: "wgrad", Kernel: kBPWgrad, Grid: device.D2(hb, ni), Block: device.D1(bpThreads),
				Args: []workloads.ArgSpec{
					workloads.BufRange(ib, device.Read, in.off[0], in.bytes(0)),
					workloads.BufRange(ob, device.Read, out.off[0], out.bytes(0)),
					workloads.BufRange(ib, device.Read, in.off[2], in.bytes(2)),
					workloads.BufRange(ob, device.Write, out.off[1], out.bytes(1)),
					workloads.Scalar32(int32(b)), workloads.Scalar32(int32(ni)), workloads.Scalar32(int32(nh)),
				},
				Work: device.Work{Flops: float64(bpThreads * 5 * b), Bytes: float64(4 * (2*bpThreads*b + b + bpThreads))},
			}}
		},
		input: func(r *rand.Rand, slot []byte) {
			for i := 0; i < b*ni; i++ {
				putF32(slot, in.off[0], i, r.Float32())
			}
			scale := float32(1 / math.Sqrt(float64(ni)))
			for i := 0; i < ni*nh; i++ {
				putF32(slot, in.off[1], i, (2*r.Float32()-1)*scale)
			}
			for i := 0; i < b*nh; i++ {
				putF32(slot, in.off[2], i, 2*r.Float32()-1)
			}
		},
		ref: func(ib, ob []byte) {
			h, g := BPRef(f32s(ib, in.off[0], b*ni), f32s(ib, in.off[1], ni*nh), f32s(ib, in.off[2], b*nh), b, ni, nh)
			putF32s(ob, out.off[0], h)
			putF32s(ob, out.off[1], g)
		},
		compare: func(got, want []byte) error {
			if err := compareClose("h", f32s(got, out.off[0], b*nh), f32s(want, out.off[0], b*nh), 1e-4); err != nil {
				return err
			}
			return compareClose("G", f32s(got, out.off[1], ni*nh), f32s(want, out.off[1], ni*nh), 1e-4)
		},
	}
	prog, ref, err := build(s, p.Jobs, seed)
	if err != nil {
		return nil, err
	}
	flops := float64(2*b*ni*nh + 2*b*ni*nh)
	return &Workload{Program: prog, Jobs: p.Jobs, Unit: "flops", UnitsPerJob: flops, Reference: ref, OutSlot: alignUp(s.outBytes)}, nil
}

// BPRef is the CPU reference of one back-propagation job: the hidden layer
// h = sigmoid(x W) (batch x hidden) and the weight gradient
// G = x^T (delta .* h .* (1-h)) (inputs x hidden), in float64.
func BPRef(x, W, delta []float32, b, ni, nh int) (h, G []float32) {
	h = make([]float32, b*nh)
	for r := 0; r < b; r++ {
		for j := 0; j < nh; j++ {
			s := 0.0
			for i := 0; i < ni; i++ {
				s += float64(x[r*ni+i]) * float64(W[i*nh+j])
			}
			h[r*nh+j] = float32(1 / (1 + math.Exp(-s)))
		}
	}
	G = make([]float32, ni*nh)
	for i := 0; i < ni; i++ {
		for j := 0; j < nh; j++ {
			s := 0.0
			for r := 0; r < b; r++ {
				hv := float64(h[r*nh+j])
				s += float64(x[r*ni+i]) * float64(delta[r*nh+j]) * hv * (1 - hv)
			}
			G[i*nh+j] = float32(s)
		}
	}
	return h, G
}
