package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

func ramp(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%7) - 3
	}
	return v
}

// inceptionLike builds a small branchy net: two parallel convolutions of one
// input, concatenated, pooled, summed with a gated residual, classified.
func inceptionLike(t *testing.T, seed int64) (*Net, map[string]Tensor) {
	n := New("tiny", seed)
	x := n.Input("x", ramp(3*8*8), 3, 8, 8)
	a := n.Conv2D("a", x, Same(4, 1, 1, ActReLU))               // GEMM path
	b := n.Conv2D("b", x, Same(6, 3, 1, ActReLU6))              // direct
	d := n.Conv2D("d", b, Same(6, 3, 2, ActNone).WithGroups(6)) // depthwise, stride 2
	c := n.Concat("cat", a, b)
	p := n.Pool("pool", c, MaxPool, 3, 2, 1)
	g := n.GlobalAvgPool("gap", d)
	gate := n.Linear("gate", g, 1, ActSigmoid)
	s := n.Sum("sum", []Tensor{p.Slice(0, 6), d}, []Tensor{{}, gate}, 0.5, ActNone)
	f := n.GlobalAvgPool("feat", s)
	out := n.Linear("fc", f, 5, ActNone)
	n.Output(out)
	return n, map[string]Tensor{"x": x, "a": a, "b": b, "d": d, "cat": c, "pool": p, "gap": g, "gate": gate, "sum": s, "out": out}
}

func TestNetBuildsValidProgramWithExactAccessSets(t *testing.T) {
	n, ts := inceptionLike(t, 1)
	p, err := n.Finish()
	require.NoError(t, err)
	require.NoError(t, p.Validate())
	require.Len(t, p.Steps, 1)
	ops := p.Steps[0].Ops
	names := []string{}
	for _, op := range ops {
		names = append(names, op.Name)
		assert.Equal(t, Module, op.Kernel.Module)
		assert.Positive(t, op.Work.Flops+op.Work.Bytes, op.Name)
	}
	assert.Equal(t, []string{"a", "b", "d", "cat", "pool", "gap", "gate", "sum", "feat", "fc"}, names)
	assert.Equal(t, "nn_gemm", ops[0].Kernel.Name, "1x1 convolution runs as a GEMM")
	assert.Equal(t, "nn_conv2d", ops[1].Kernel.Name)

	// The concat writes exactly its output buffer's range and reads a and b.
	var cat workloads.Op
	for _, op := range ops {
		if op.Name == "cat" {
			cat = op
		}
	}
	require.Equal(t, "nn_concat", cat.Kernel.Name)
	assert.Equal(t, workloads.BufRange(ts["cat"].Buf, device.Write, 0, 10*8*8*4), cat.Args[0])
	assert.Equal(t, workloads.BufRange(ts["a"].Buf, device.Read, 0, 4*8*8*4), cat.Args[3])
	assert.Equal(t, workloads.BufRange(ts["b"].Buf, device.Read, 0, 6*8*8*4), cat.Args[4])

	// The sum reads only the first 6 channels of the pool output.
	for _, op := range ops {
		if op.Name == "sum" {
			assert.Equal(t, workloads.BufRange(ts["pool"].Buf, device.Read, 0, 6*4*4*4), op.Args[5])
			assert.Equal(t, workloads.BufRange(ts["gate"].Buf, device.Read, 0, 4), op.Args[14])
		}
	}

	// Bound on a device-free instance view, a and b are independent and
	// the concat depends on both: the access sets give the data-flow graph.
	in := fakeInstance(t, p)
	assert.False(t, in.Conflict(0, 1), "a and b touch disjoint buffers")
	assert.True(t, in.Conflict(0, 3))
	assert.True(t, in.Conflict(1, 3))
}

func TestConvWorkIsTheConvolutionFlops(t *testing.T) {
	n := New("work", 1)
	x := n.Input("x", make([]float32, 8*10*10), 8, 10, 10)
	n.Output(n.Conv2D("c", x, Same(16, 3, 2, ActNone).WithGroups(4)))
	p, err := n.Finish()
	require.NoError(t, err)
	op := p.Steps[0].Ops[0]
	ho, wo := 5, 5
	flops := 2.0 * 16 * (8 / 4) * 3 * 3 * float64(ho*wo)
	blocks := float64(op.Grid.Count())
	assert.Equal(t, float64(ceilDiv(16*ho*wo, elemBlock)), blocks)
	assert.InDelta(t, flops, op.Work.Flops*blocks, 1e-6)
	bytes := 4.0 * (8*10*10 + 16*2*3*3 + 16 + 16*5*5)
	assert.InDelta(t, bytes, op.Work.Bytes*blocks, 1e-6)
}

func TestValueMatchesDirectComputation(t *testing.T) {
	n, ts := inceptionLike(t, 3)
	x, err := n.Value(ts["x"])
	require.NoError(t, err)
	a, err := n.Value(ts["a"])
	require.NoError(t, err)
	w, err := n.Value(Tensor{Buf: 0, Off: n.weights[n.wByName["a/w"]].off, Shape: []int{4, 3}})
	require.NoError(t, err)
	bias, err := n.Value(Tensor{Buf: 0, Off: n.weights[n.wByName["a/b"]].off, Shape: []int{4}})
	require.NoError(t, err)
	// The GEMM path equals the convolution definition.
	want := make([]float32, 4*64)
	Conv2DRef(x, w, bias, want, ConvShape{Cin: 3, H: 8, W: 8, Cout: 4, Ho: 8, Wo: 8, KH: 1, KW: 1, Stride: 1, Groups: 1}, ActReLU)
	assert.InDeltaSlice(t, want, a, 1e-5)

	// The gated sum: 0.5 * (pool[:6] + gate * d).
	p, _ := n.Value(ts["pool"])
	d, _ := n.Value(ts["d"])
	g, _ := n.Value(ts["gate"])
	s, _ := n.Value(ts["sum"])
	require.Len(t, g, 1)
	assert.Greater(t, g[0], float32(0))
	assert.Less(t, g[0], float32(1))
	for i := range s {
		assert.InDelta(t, 0.5*(p[i]+g[0]*d[i]), s[i], 1e-5)
	}
	cat, _ := n.Value(ts["cat"])
	b, _ := n.Value(ts["b"])
	assert.Equal(t, a, cat[:len(a)])
	assert.Equal(t, b, cat[len(a):])
}

func TestCheckAcceptsReferenceRejectsPerturbation(t *testing.T) {
	n, _ := inceptionLike(t, 5)
	p, err := n.Finish()
	require.NoError(t, err)
	ref, err := n.Reference()
	require.NoError(t, err)
	out := ref["fc"]
	require.Len(t, out, 5)
	for _, v := range out {
		assert.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0))
	}
	enc := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		putFloats(b, v)
		return b
	}
	require.NoError(t, p.Check(map[string][]byte{"fc": enc(out)}))
	bad := append([]float32(nil), out...)
	bad[2] += 0.01 * (1 + float32(math.Abs(float64(bad[2]))))
	assert.ErrorContains(t, p.Check(map[string][]byte{"fc": enc(bad)}), "fc: 1 of 5")
	assert.ErrorContains(t, p.Check(map[string][]byte{}), "missing")
}

func TestWeightsDeterministicPerSeed(t *testing.T) {
	build := func(seed int64) []byte {
		n, _ := inceptionLike(t, seed)
		p, err := n.Finish()
		require.NoError(t, err)
		b := make([]byte, p.Buffers[0].Bytes)
		p.Buffers[0].Init(b)
		return b
	}
	assert.Equal(t, build(7), build(7))
	assert.NotEqual(t, build(7), build(8))
}

func TestStepsReuseBuffersByName(t *testing.T) {
	n := New("steps", 1)
	in := n.Input("in", ramp(2*2*4*4), 2, 2, 4, 4)
	out := n.Activation("out", 2, 3)
	for i := 0; i < 2; i++ {
		if i > 0 {
			n.NextStep()
		}
		y := n.Conv2D("c", in.At(i), Same(3, 3, 1, ActReLU))
		g := n.GlobalAvgPool("g", y)
		_ = g
		n.Sum("o", []Tensor{g}, nil, 1, ActNone)
	}
	_ = out
	require.NoError(t, n.Err())
	p := n.Program()
	require.Len(t, p.Steps, 2)
	assert.Equal(t, p.Steps[0].Ops[0].Args[3], p.Steps[1].Ops[0].Args[3], "step 2 reuses step 1's activation buffer")
	assert.NotEqual(t, p.Steps[0].Ops[0].Args[0], p.Steps[1].Ops[0].Args[0], "each step reads its own input slice")
	assert.Equal(t, p.Steps[0].Ops[0].Args[1], p.Steps[1].Ops[0].Args[1], "weights are shared by name")

	// Within one step a name is an error.
	n.Conv2D("c", in.At(1), Same(3, 3, 1, ActReLU))
	assert.ErrorContains(t, n.Err(), "named twice in step 1")
}

func TestBuilderErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func(n *Net, x Tensor)
		want  string
	}{
		{"groups not dividing", func(n *Net, x Tensor) { n.Conv2D("c", x, Same(4, 3, 1, ActNone).WithGroups(3)) }, "groups 3"},
		{"zero stride", func(n *Net, x Tensor) { n.Conv2D("c", x, Same(4, 3, 0, ActNone)) }, "positive"},
		{"kernel larger than input", func(n *Net, x Tensor) { n.Conv2D("c", x, Valid(4, 9, 1, ActNone)) }, "no output"},
		{"unknown activation", func(n *Net, x Tensor) { n.Unary("u", x, Act(42)) }, "bad unary"},
		{"concat of mismatched maps", func(n *Net, x Tensor) { n.Concat("k", x, n.Pool("p", x, MaxPool, 2, 2, 0)) }, "does not match"},
		{"sum of mismatched", func(n *Net, x Tensor) { n.Sum("s", []Tensor{x, x.Slice(0, 1)}, nil, 1, ActNone) }, "differs"},
		{"linear of a map", func(n *Net, x Tensor) { n.Linear("l", x, 3, ActNone) }, "neither"},
		{"softmax of a map", func(n *Net, x Tensor) { n.Softmax("s", x, 1) }, "not [rows,cols]"},
		{"bad pool", func(n *Net, x Tensor) { n.Pool("p", x, PoolKind(5), 3, 1, 1) }, "bad pooling"},
		{"input size", func(n *Net, x Tensor) { n.Input("y", []float32{1}, 2) }, "1 values"},
		{"reserved name", func(n *Net, x Tensor) { n.Activation(WeightsBuffer, 2) }, "reserved"},
		{"bad gemm view", func(n *Net, x Tensor) {
			n.GEMM("g", x.Slice(0, 1), x, Tensor{}, n.Activation("o", 4, 4), GEMMShape{M: 4, N: 4, K: 20, LdA: 20, LdB: 4, LdC: 4, Batch: 1, Alpha: 1}, ActNone)
		}, "view of"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := New("err", 1)
			x := n.Input("x", make([]float32, 2*5*5), 2, 5, 5)
			tc.build(n, x)
			require.ErrorContains(t, n.Err(), tc.want)
			_, err := n.Finish()
			assert.ErrorContains(t, err, tc.want)
			assert.False(t, n.Conv2D("later", x, Same(2, 1, 1, ActNone)).Valid(), "after an error, builders return nothing")
		})
	}
}

func TestFinishRequiresOutputAndNonEmptySteps(t *testing.T) {
	n := New("noout", 1)
	x := n.Input("x", make([]float32, 4), 1, 2, 2)
	n.Unary("u", x, ActReLU)
	_, err := n.Finish()
	assert.ErrorContains(t, err, "no output")

	m := New("empty", 1)
	m.NextStep()
	assert.ErrorContains(t, m.Err(), "step 0 is empty")
}

func TestSumChainsBeyondEightInputs(t *testing.T) {
	n := New("chain", 1)
	var xs []Tensor
	for i := 0; i < 11; i++ {
		v := make([]float32, 4)
		for j := range v {
			v[j] = float32(i + 1)
		}
		xs = append(xs, n.Input("x"+string(rune('a'+i)), v, 4))
	}
	y := n.Sum("s", xs, nil, 0.5, ActNone)
	n.Output(y)
	p, err := n.Finish()
	require.NoError(t, err)
	require.Len(t, p.Steps[0].Ops, 2)
	got, err := n.Reference()
	require.NoError(t, err)
	assert.Equal(t, []float32{33, 33, 33, 33}, got["s"]) // 0.5 * (1+...+11)
}

// accessSets turns each op's ArgSpecs into device arguments over synthetic,
// non-overlapping buffer addresses, so conflicts can be asked without a
// device (as workloads.Instance does once bound).
type accessSets struct {
	p    *workloads.Program
	base []uint64
}

func fakeInstance(t *testing.T, p *workloads.Program) *accessSets {
	t.Helper()
	a := &accessSets{p: p}
	next := uint64(1 << 20)
	for _, b := range p.Buffers {
		a.base = append(a.base, next)
		next += uint64(b.Bytes) + 256
	}
	return a
}

func (a *accessSets) args(k int) []device.Arg {
	var out []device.Arg
	for _, s := range a.p.Steps[0].Ops[k].Args {
		if s.Buf < 0 {
			continue
		}
		out = append(out, device.Arg{Kind: device.ArgBuffer, Buf: device.Buffer{Addr: a.base[s.Buf], Size: a.p.Buffers[s.Buf].Bytes}, Mode: s.Mode, Off: s.Off, Len: s.Len})
	}
	return out
}

func (a *accessSets) Conflict(i, j int) bool { return device.Conflicts(a.args(i), a.args(j)) }

func TestElementwiseOpsByValue(t *testing.T) {
	n := New("elementwise", 2)
	xv := []float32{-2, -0.5, 0, 0.5, 1, 2, 3, 7}
	x := n.Input("x", xv, 2, 2, 2)
	a := n.Affine("affine", x, ActNone)
	m := n.Binary("mul", x, a, OpMul, ActReLU)
	s := n.Binary("add", x, a, OpAdd, ActNone)
	u := n.Unary("relu6", x, ActReLU6)
	up := n.Upsample2x("up", x)
	require.NoError(t, n.Err())
	sc, err := n.Value(Tensor{Buf: 0, Off: n.weights[n.wByName["affine/scale"]].off, Shape: []int{2}})
	require.NoError(t, err)
	bi, err := n.Value(Tensor{Buf: 0, Off: n.weights[n.wByName["affine/bias"]].off, Shape: []int{2}})
	require.NoError(t, err)
	av, _ := n.Value(a)
	mv, _ := n.Value(m)
	sv, _ := n.Value(s)
	uv, _ := n.Value(u)
	upv, _ := n.Value(up)
	for i, v := range xv {
		c := i / 4 // channel of a [2,2,2] map
		want := v*sc[c] + bi[c]
		assert.Equal(t, want, av[i])
		assert.Equal(t, max(v*want, 0), mv[i])
		assert.Equal(t, v+want, sv[i])
		assert.Equal(t, min(max(v, 0), 6), uv[i])
	}
	assert.InDelta(t, 1.0, sc[0], 0.1, "batch-norm scales are around 1")
	assert.Equal(t, []float32{-2, -2, -0.5, -0.5}, upv[:4])
	assert.Equal(t, []float32{-2, -2, -0.5, -0.5}, upv[4:8])
	assert.Equal(t, []float32{0, 0, 0.5, 0.5}, upv[8:12])
}
