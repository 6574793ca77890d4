package dnn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/nn"
)

// referenceOutputs evaluates p on the CPU through its Check: the reference
// must accept its own outputs, and every output must be finite and not
// all zero.
func referenceOutputs(t *testing.T, n *nn.Net, p *workloads.Program) map[string][]float32 {
	t.Helper()
	require.NotNil(t, p.Check)
	ref, err := n.Reference()
	require.NoError(t, err)
	enc := map[string][]byte{}
	for name, v := range ref {
		nonzero := false
		for _, x := range v {
			require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0), "%s not finite", name)
			nonzero = nonzero || x != 0
		}
		assert.True(t, nonzero, "%s is all zero", name)
		enc[name] = floatBytes(v)
	}
	require.NoError(t, p.Check(enc))
	return ref
}

func floatBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		u := math.Float32bits(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}

// plausibleWork checks every kernel op's simulator cost: positive, and for
// convolutions exactly 2*Cout*Cin/groups*KH*KW*Ho*Wo (+ activation) flops.
func plausibleWork(t *testing.T, p *workloads.Program) {
	t.Helper()
	for s := range p.Steps {
		for _, op := range p.Steps[s].Ops {
			require.Equal(t, workloads.OpKernel, op.Kind)
			blocks := float64(op.Grid.Count())
			require.Positive(t, blocks, op.Name)
			assert.Positive(t, op.Work.Bytes, op.Name)
			assert.GreaterOrEqual(t, op.Work.Flops, 0.0, op.Name)
			if op.Kernel.Name == "nn_conv2d" {
				a := func(i int) float64 { return float64(int32(uint32(op.Args[i].Bits))) }
				cin, cout, ho, wo, kh, kw, g := a(4), a(7), a(8), a(9), a(10), a(11), a(15)
				conv := 2 * cout * cin / g * kh * kw * ho * wo
				total := op.Work.Flops * blocks
				assert.GreaterOrEqual(t, total, conv*(1-1e-9), op.Name)
				assert.LessOrEqual(t, total, conv+8*cout*ho*wo+1e-6, op.Name)
			}
		}
	}
}

func TestStaticModelsBuildAndEvaluate(t *testing.T) {
	tests := []struct {
		model   string
		scale   int
		minOps  int
		outSize int
	}{
		{"inception-v3", 8, 90, 1000},
		{"resnext-50", 8, 60, 1000},
		{"nasnet-mobile", 8, 500, 1000},
		{"amoebanet", 8, 450, 1000},
		{"squeezenet", 8, 30, 1000},
		{"randwire", 8, 300, 1000},
		{"bert", 8, 14, 16 * 96},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			n, err := staticNet(StaticParams{Model: tc.model, Inputs: 2, Scale: tc.scale, SeqLen: 128, Layers: 1}, 11)
			require.NoError(t, err)
			p, err := n.Finish()
			require.NoError(t, err)
			require.NoError(t, p.Validate())
			require.Len(t, p.Steps, 2)
			assert.GreaterOrEqual(t, len(p.Steps[0].Ops), tc.minOps)
			assert.Equal(t, len(p.Steps[0].Ops), len(p.Steps[1].Ops), "static: every input runs the same graph")
			plausibleWork(t, p)
			ref := referenceOutputs(t, n, p)
			require.Len(t, ref, 2, "one output per input")
			var outs [][]float32
			for _, v := range ref {
				assert.Len(t, v, tc.outSize)
				outs = append(outs, v)
			}
			assert.NotEqual(t, outs[0], outs[1], "different inputs give different outputs")
		})
	}
}

func TestStaticGraphsAreParallel(t *testing.T) {
	// The graphs AutoGraph searches must have real branch parallelism: some
	// level of the data-flow graph (derived from the access sets) holds
	// several kernels.
	for _, tc := range []struct {
		model string
		width int
	}{{"inception-v3", 4}, {"nasnet-mobile", 6}, {"amoebanet", 6}, {"randwire", 4}, {"bert", 3}, {"squeezenet", 2}, {"resnext-50", 2}} {
		p, err := Static(StaticParams{Model: tc.model, Inputs: 1, Scale: 8, SeqLen: 128, Layers: 1}, 1)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, maxLevelWidth(p.Steps[0].Ops), tc.width, tc.model)
	}
}

// maxLevelWidth is the largest number of ops at one depth of the dependency
// graph (an op's depth is one more than that of the deepest earlier op it
// conflicts with).
func maxLevelWidth(ops []workloads.Op) int {
	conflict := func(a, b workloads.Op) bool {
		for _, x := range a.Args {
			for _, y := range b.Args {
				if x.Buf < 0 || y.Buf < 0 || x.Buf != y.Buf || (x.Mode|y.Mode)&2 == 0 {
					continue
				}
				if x.Off < y.Off+y.Len && y.Off < x.Off+x.Len {
					return true
				}
			}
		}
		return false
	}
	depth := make([]int, len(ops))
	count := map[int]int{}
	best := 0
	for j := range ops {
		for i := 0; i < j; i++ {
			if depth[i]+1 > depth[j] && conflict(ops[i], ops[j]) {
				depth[j] = depth[i] + 1
			}
		}
		count[depth[j]]++
		best = max(best, count[depth[j]])
	}
	return best
}

func TestStaticErrors(t *testing.T) {
	for _, tc := range []struct {
		p    StaticParams
		want string
	}{
		{StaticParams{Model: "vgg", Inputs: 1, Scale: 1}, "unknown static model"},
		{StaticParams{Model: "resnext-50", Inputs: 0, Scale: 1}, "inputs"},
		{StaticParams{Model: "resnext-50", Inputs: 1, Scale: 0}, "scale"},
		{StaticParams{Model: "bert", Inputs: 1, Scale: 1, SeqLen: 0, Layers: 1}, "seq_len"},
		// Issue 23: sizes bounded before anything is built.
		{StaticParams{Model: "resnext-50", Inputs: 1e9, Scale: 1}, "(dnn.MaxInputs)"},
		{StaticParams{Model: "bert", Inputs: 1, Scale: 1, SeqLen: 1 << 40, Layers: 1}, "must be at most 65536, 1024 and 1024"},
	} {
		_, err := Static(tc.p, 1)
		assert.ErrorContains(t, err, tc.want)
	}
}

func TestWattsStrogatzGraph(t *testing.T) {
	preds := wsGraph(newRand(3), 32, 4, 0.75)
	edges := 0
	for v, ps := range preds {
		for i, u := range ps {
			assert.Less(t, u, v, "edges go from lower to higher index")
			if i > 0 {
				assert.Less(t, ps[i-1], u)
			}
		}
		edges += len(ps)
	}
	assert.Equal(t, 32*4/2, edges, "rewiring keeps the edge count")
	assert.Equal(t, preds, wsGraph(newRand(3), 32, 4, 0.75), "seeded")
	assert.NotEqual(t, preds, wsGraph(newRand(4), 32, 4, 0.75))
	// p = 0 is the ring lattice: node v's inputs are v-2, v-1 (and the wrap).
	ring := wsGraph(newRand(1), 8, 4, 0)
	assert.Equal(t, []int{2, 3}, ring[4])
	assert.Equal(t, []int{0, 1, 5, 6}, ring[7])
}
