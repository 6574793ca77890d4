//go:build cudaemu

package cudaemu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/dnn"
	"github.com/gpusched/gpusched/workloads/nn"
)

// coverage is a program using every kernel and every mode the networks
// leave out (transposed GEMM operands, every activation, per-channel affine,
// products, sums and concatenations of more than 8 inputs).
func coverage(t *testing.T) *workloads.Program {
	n := nn.New("coverage", 7)
	vals := make([]float32, 4*6*6)
	for i := range vals {
		vals[i] = float32(i%11)/5 - 1
	}
	x := n.Input("x", vals, 4, 6, 6)
	a := n.Affine("affine", x, nn.ActSwish)
	m := n.Binary("mul", a, x, nn.OpMul, nn.ActNone)
	var parts []nn.Tensor
	for act := nn.ActNone; act <= nn.ActTanhReLU; act++ {
		parts = append(parts, n.Unary(fmt.Sprintf("act%d", act), m, act))
	}
	parts = append(parts, n.Pool("avg", x, nn.AvgPool, 3, 1, 1), n.Pool("max", x, nn.MaxPool, 3, 1, 1))
	cat := n.Concat("cat", parts...) // 9 inputs: two launches
	sum := n.Sum("sum", parts, nil, 0.5, nn.ActGELU)
	mat, err := cat.Reshape(9*4, 36)
	require.NoError(t, err)
	g := n.Activation("gt", 36, 9*4)
	// g = cat^T cat-slice product with transposed A and B: (36x36)^T x ...
	n.GEMM("gemm_tt", mat, mat.Slice(0, 9*4), nn.Tensor{}, g, nn.GEMMShape{
		M: 36, N: 36, K: 36, LdA: 36, LdB: 36, LdC: 36, TransA: true, TransB: true, Batch: 1, Alpha: 0.1,
	}, nn.ActSigmoid)
	n.Output(n.Softmax("soft", g, 2))
	n.Output(sum)
	n.Output(n.Upsample2x("up", x))
	p, err := n.Finish()
	require.NoError(t, err)
	return p
}

func TestEmulatedKernelsMatchReferences(t *testing.T) {
	type build struct {
		name string
		f    func() (*workloads.Program, error)
	}
	bs := []build{{"coverage", func() (*workloads.Program, error) { return coverage(t), nil }}}
	for _, m := range dnn.StaticModels {
		bs = append(bs, build{m, func() (*workloads.Program, error) {
			return dnn.Static(dnn.StaticParams{Model: m, Inputs: 1, Scale: 8, SeqLen: 128, Layers: 1}, 3)
		}})
	}
	for _, v := range dnn.DynamicVariants {
		bs = append(bs, build{v, func() (*workloads.Program, error) {
			return dnn.Dynamic(dnn.DynamicParams{Variant: v, Inputs: 2, Scale: 4}, 3)
		}})
	}
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			p, err := b.f()
			require.NoError(t, err)
			out, err := Run(p)
			require.NoError(t, err)
			require.NoError(t, p.Check(out))
		})
	}
}

// The comparison is sharp: a one-element change of any output fails Check.
func TestEmulationCheckDetectsACorruptedOutput(t *testing.T) {
	p := coverage(t)
	out, err := Run(p)
	require.NoError(t, err)
	require.NoError(t, p.Check(out))
	b := out["soft"]
	b[43] ^= 0x01 // element 10: flip exponent bit 24 (a factor of 4)
	assert.Error(t, p.Check(out))
}
