package synthetic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

func TestNodeArithmetic(t *testing.T) {
	ins := [4][]float32{{1, 2}, {4}, {8}, {16}}
	// acc = 2 + 0.5*4 + 0.25*8 + 0.125*16 = 8 for i = 1.
	assert.Equal(t, float32(8), Node(ins, 4, 1, 0))
	assert.Equal(t, float32(1), Node(ins, 1, 0, 0))
	// One iteration: 8*0.9999 rounded to float32, plus 0.001 rounded.
	want := float32(float32(8)*float32(0.9999)) + float32(0.001)
	assert.Equal(t, math.Float32bits(want), math.Float32bits(Node(ins, 4, 1, 1)))
	// Index wraps modulo each input's length.
	assert.Equal(t, Node(ins, 2, 0, 3), Node([4][]float32{{1, 2}, {4}, nil, nil}, 2, 2, 3))
}

func TestGenerateShapeAndDeterminism(t *testing.T) {
	p := Defaults()
	a, err := Generate(p, 7)
	require.NoError(t, err)
	require.NoError(t, a.Validate())
	assert.Len(t, a.Steps, p.Steps)
	assert.Equal(t, p.Steps*p.Layers*p.Width, a.NumOps())
	for _, op := range a.Steps[0].Ops {
		assert.GreaterOrEqual(t, op.Grid.X, p.MinBlocks)
		assert.LessOrEqual(t, op.Grid.X, p.MaxBlocks)
		assert.Equal(t, p.Threads, op.Block.X)
	}
	b, err := Generate(p, 7)
	require.NoError(t, err)
	ra, err := Reference(a)
	require.NoError(t, err)
	rb, err := Reference(b)
	require.NoError(t, err)
	assert.Equal(t, ra, rb, "same seed, same results")
	c, err := Generate(p, 8)
	require.NoError(t, err)
	rc, err := Reference(c)
	require.NoError(t, err)
	assert.NotEqual(t, ra, rc, "another seed, another program")
}

func TestStepsAreChainedThroughData(t *testing.T) {
	p := Defaults()
	p.Steps = 1
	one, err := Generate(p, 3)
	require.NoError(t, err)
	p.Steps = 2
	two, err := Generate(p, 3)
	require.NoError(t, err)
	r1, _ := Reference(one)
	r2, _ := Reference(two)
	last := len(one.Buffers) - 1
	assert.NotEqual(t, r1[last], r2[last], "the second step recomputes from the first step's outputs")
	// A later step's first layer reads buffers written by the previous step.
	first := two.Steps[1].Ops[0]
	assert.Equal(t, device.Read, first.Args[0].Mode)
	assert.NotContains(t, []string{"in0", "in1"}, two.Buffers[first.Args[0].Buf].Name)
}

func TestCheckCatchesWrongOutput(t *testing.T) {
	p := Defaults()
	p.Layers, p.Width, p.Steps = 2, 2, 1
	prog, err := Generate(p, 1)
	require.NoError(t, err)
	ref, err := Reference(prog)
	require.NoError(t, err)
	out := map[string][]byte{}
	for i, b := range prog.Buffers {
		if b.Output {
			raw := make([]byte, b.Bytes)
			putFloats(raw, ref[i])
			out[b.Name] = raw
		}
	}
	require.NoError(t, prog.Check(out))
	for name, raw := range out {
		raw[0] ^= 1
		assert.ErrorContains(t, prog.Check(out), name)
		break
	}
}

func TestBadParams(t *testing.T) {
	for _, tc := range []struct {
		mut  func(*Params)
		want string
	}{
		{func(p *Params) { p.FanIn = 5 }, "fan_in"},
		{func(p *Params) { p.Threads = 100 }, "threads"},
		{func(p *Params) { p.MinBlocks, p.MaxBlocks = 10, 5 }, "min_blocks"},
		{func(p *Params) { p.Layers = 0 }, "layers"},
		{func(p *Params) { p.Skip = 2 }, "skip"},
	} {
		p := Defaults()
		tc.mut(&p)
		_, err := Generate(p, 1)
		assert.ErrorContains(t, err, tc.want)
	}
}
