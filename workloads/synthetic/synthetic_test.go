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
		{func(p *Params) { p.Skip = math.NaN() }, "skip must be a probability, got NaN"},
	} {
		p := Defaults()
		tc.mut(&p)
		_, err := Generate(p, 1)
		assert.ErrorContains(t, err, tc.want)
	}
}

// Issue 23: width 1e9 or max_blocks 1e11 grew memory to 5 GB, iters 1e14
// wrapped the kernel's int32 argument and Work's int products. Each is
// now an error naming the parameters and the limit, found before
// anything is built.
func TestHostileSizesFailBeforeBuilding(t *testing.T) {
	for _, tc := range []struct {
		mut  func(*Params)
		want string
	}{
		{func(p *Params) { p.Width = 1e9 }, "(layers x width = 8 x 1000000000) x steps 4 = 32000000000 operations, above the limit of 1048576 (workloads.MaxOps)"},
		{func(p *Params) { p.MaxBlocks = 1e11 }, "max_blocks x threads = 100000000000 x 128 = 12800000000000 elements in one buffer, above the limit of 2147483647 (synth_node's int32 element count)"},
		{func(p *Params) { p.MaxBlocks, p.Width, p.Threads = 1<<22, 64, 256 }, "bytes of device memory, above the limit of 137438953472 (workloads.MaxDeviceBytes)"},
		{func(p *Params) { p.Iters = 1e14 }, "iters must be between 0 and 1048576 (synthetic.IterLimit), got 100000000000000"},
		{func(p *Params) { p.Layers, p.Width, p.Steps = 1<<40, 1<<40, 1<<40 }, "overflows 64 bits as operations"},
	} {
		p := Defaults()
		tc.mut(&p)
		var err error
		allocs := testing.AllocsPerRun(1, func() { _, err = Generate(p, 1) })
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		assert.Less(t, allocs, 100.0, "the program must not be built")
	}
	// The work figures of the largest iters are exact and positive.
	w := Work(1024, 4, IterLimit)
	assert.Equal(t, 1024*(2*float64(IterLimit)+8), w.Flops)
}
