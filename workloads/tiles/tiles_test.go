package tiles

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

func TestHalfConversion(t *testing.T) {
	cases := []struct {
		f    float32
		bits Half
	}{
		{1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff},
		{65520, 0x7c00},                       // rounds up to infinity
		{float32(math.Ldexp(1, -24)), 0x0001}, // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000}, // tie between 0 and the smallest subnormal: even (0)
		{float32(math.Ldexp(3, -26)), 0x0001}, // 0.75 of the smallest subnormal rounds up
		{0.1, 0x2e66},
		{1 + 1.0/2048, 0x3c00}, // tie: even mantissa stays
		{1 + 3.0/2048, 0x3c02}, // tie: odd mantissa rounds up
		{float32(math.Inf(-1)), 0xfc00},
	}
	for _, c := range cases {
		assert.Equal(t, c.bits, ToHalf(c.f), "ToHalf(%g)", c.f)
	}
	for _, h := range []Half{0x3c00, 0x0001, 0x03ff, 0x7bff, 0xc000, 0x2e66, 0x8000} {
		assert.Equal(t, h, ToHalf(h.Float32()), "round trip of %#04x", uint16(h))
	}
	assert.Equal(t, float32(math.Ldexp(1, -24)), Half(0x0001).Float32())
	assert.True(t, math.IsNaN(float64(Half(0x7e00).Float32())))
	b := make([]byte, 4)
	PutHalves(b, []float32{1.5, -0.25})
	assert.Equal(t, []float32{1.5, -0.25}, Halves(b))
}

func TestGEMMRowHandComputed(t *testing.T) {
	// A row [1 2], B = [[1 2] [3 4]]: [7 10].
	s := Stage{Kind: GEMM, M: 1, N: 2, K: 2, LDA: 2}
	got, err := GEMMRow(s, []float32{1, 2}, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	assert.Equal(t, []float32{7, 10}, got)

	s.Epi = EpiGeLU
	got, err = GEMMRow(s, []float32{1, -1}, []float32{1, 0, 0, 1}) // identity: GeLU(1), GeLU(-1)
	require.NoError(t, err)
	assert.Equal(t, RoundHalf(0.8413447), got[0])
	assert.Equal(t, RoundHalf(-0.1586553), got[1])

	// SwiGLU: the A row [g0 g1 u0 u1] reads as [silu(g0) u0, silu(g1) u1].
	s = Stage{Kind: GEMM, M: 1, N: 1, K: 2, LDA: 4, AMode: ASwiGLU}
	got, err = GEMMRow(s, []float32{1, 0, 2, 5}, []float32{1, 1})
	require.NoError(t, err)
	assert.InDelta(t, 2*0.7310586, got[0], 2e-3) // silu(1)*2 + silu(0)*5
	_, err = GEMMRow(s, []float32{1, 2}, []float32{1, 1})
	assert.ErrorContains(t, err, "A row has 2 values")
}

func TestConvPixelsHandComputed(t *testing.T) {
	// One 2x2 image, one channel, all-ones 3x3 filter: every output sees
	// the whole image (padding 1), so each is 1+2+3+4.
	s := Stage{Kind: Conv, M: 4, N: 1, K: 9, Batch: 1, H: 2, W: 2, Cin: 1}
	w := make([]float32, 9)
	for i := range w {
		w[i] = 1
	}
	got, err := ConvPixels(s, []float32{1, 2, 3, 4}, w, []int{0, 1, 2, 3})
	require.NoError(t, err)
	assert.Equal(t, []float32{10, 10, 10, 10}, got)

	// Only the centre tap: identity; the (0,0) tap reads the up-left
	// neighbour (zero outside). Two output channels.
	s = Stage{Kind: Conv, M: 4, N: 2, K: 9, Batch: 1, H: 2, W: 2, Cin: 1, Epi: EpiReLU}
	w = make([]float32, 9*2)
	w[4*2+0] = 1  // centre -> channel 0
	w[0*2+1] = -1 // up-left -> channel 1, negated (ReLU clamps it)
	got, err = ConvPixels(s, []float32{1, 2, 3, 4}, w, []int{0, 3})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 0, 4, 0}, got) // pixel 3's up-left is pixel 0: -1 -> ReLU 0
	w[0*2+1] = 1
	got, err = ConvPixels(s, []float32{1, 2, 3, 4}, w, []int{3})
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 1}, got)
	_, err = ConvPixels(s, []float32{1, 2, 3, 4}, w, []int{4})
	assert.ErrorContains(t, err, "pixel 4 outside")
}

func TestRelErr(t *testing.T) {
	e, err := RelErr([]float32{3, 4}, []float32{3, 4})
	require.NoError(t, err)
	assert.Zero(t, e)
	e, err = RelErr([]float32{3, 5}, []float32{3, 4})
	require.NoError(t, err)
	assert.InDelta(t, 0.2, e, 1e-12) // |(0,1)| / |(3,4)|
	e, err = RelErr([]float32{float32(math.NaN())}, []float32{1})
	require.NoError(t, err)
	assert.True(t, math.IsInf(e, 1))
}

func TestStageArgsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		mk   func() (Stage, error)
	}{
		{"gemm", func() (Stage, error) { return NewGEMM(Tile{128, 128}, 300, 6144, 12288, APlain, EpiGeLU) }},
		{"swiglu", func() (Stage, error) { return NewGEMM(Tile{32, 128}, 7, 8192, 2816, ASwiGLU, EpiNone) }},
		{"conv", func() (Stage, error) { return NewConv(Tile{64, 64}, 2, 7, 7, 64, 64, EpiReLU) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.mk()
			require.NoError(t, err)
			op, err := s.Op("x", 0, 1, 2)
			require.NoError(t, err)
			assert.Len(t, op.Args, NumArgs)
			assert.Equal(t, s.Grid(), op.Grid)
			assert.Equal(t, s.KernelName(), op.Kernel.Name)
			back, err := FromOp(&op)
			require.NoError(t, err)
			assert.Equal(t, s, back)
			assert.Equal(t, device.Read, op.Args[ArgA].Mode)
			assert.Equal(t, device.Write, op.Args[ArgC].Mode)
			assert.Equal(t, -1, op.Args[ArgPost].Buf, "sync arguments are scalars (null) until a scheduler fills them")
		})
	}
	s, _ := NewGEMM(Tile{128, 128}, 300, 6144, 12288, APlain, EpiGeLU)
	assert.Equal(t, 3, s.TilesM())
	assert.Equal(t, 48, s.TilesN())
	assert.Equal(t, device.D2(48, 3), s.Grid())
	assert.InDelta(t, 2*128*128*12288.0/4, s.Work().Flops, 1, "tensor flops in FP32-equivalent units")
	assert.InDelta(t, 2*(300*12288+12288*6144+300*6144)/144.0, s.Work().Bytes, 1)

	bad := workloads.Op{Name: "other", Kind: workloads.OpKernel, Kernel: &device.Kernel{Module: "nn", Name: "nn_gemm"}}
	_, err := FromOp(&bad)
	assert.ErrorContains(t, err, "not a tiles kernel")
}

func TestStageValidation(t *testing.T) {
	_, err := NewGEMM(Tile{128, 128}, 10, 100, 64, APlain, EpiNone)
	assert.ErrorContains(t, err, "multiple of 8")
	_, err = NewGEMM(Tile{128, 128}, 10, 64, 48, APlain, EpiNone)
	assert.ErrorContains(t, err, "multiple of 32")
	_, err = NewGEMM(Tile{96, 128}, 10, 64, 64, APlain, EpiNone)
	assert.ErrorContains(t, err, "not compiled")
	_, err = NewConv(Tile{64, 64}, 1, 7, 7, 48, 64, EpiNone)
	assert.ErrorContains(t, err, "cin = 48")
	_, err = ParseTile("128by128")
	assert.ErrorContains(t, err, "want BMxBN")
	_, err = NewConv(Tile{128, 64}, 1, 7, 7, 64, 64, EpiNone)
	assert.ErrorContains(t, err, "tile 128x64 is compiled for GEMMs only")
	g, err := NewGEMM(Tile{128, 64}, 10, 64, 64, APlain, EpiNone)
	require.NoError(t, err)
	k, err := g.Kernel()
	require.NoError(t, err)
	assert.Equal(t, "tiles_gemm_128x64", k.Name)
}

// TestMLPTile2: GEMM2 may take a narrower tile of the same height; its
// grid then has twice the columns, the program's name says so, and a
// different height is refused.
func TestMLPTile2(t *testing.T) {
	m, err := NewMLP(MLPParams{Model: "gpt3", Tokens: 768, Tile: "128x128", Tile2: "128x64", Steps: 1, CheckRows: 1, NoData: true}, 1)
	require.NoError(t, err)
	assert.Equal(t, device.D2(48, 6), m.GEMM1.Grid())
	assert.Equal(t, device.D2(192, 6), m.GEMM2.Grid())
	assert.Equal(t, "gpt3-mlp(T=768,tile=128x128,tile2=128x64)", m.Program.Name)
	_, err = NewMLP(MLPParams{Model: "gpt3", Tokens: 768, Tile: "128x128", Tile2: "64x128", Steps: 1, CheckRows: 1, NoData: true}, 1)
	assert.ErrorContains(t, err, "tile2 64x128: GEMM2's tile must be as tall as GEMM1's (128x128)")
	_, err = NewMLP(MLPParams{Model: "gpt3", Tokens: 768, Tile: "128x128", Tile2: "128x32", Steps: 1, CheckRows: 1, NoData: true}, 1)
	assert.ErrorContains(t, err, "tile2: tile 128x32 is not compiled")

	// The CPU reference at a small size, GEMM2 on 128x64 tiles.
	s, err := NewMLP(MLPParams{Model: "gpt3", Tokens: 40, Hidden: 64, FF: 128, Tile: "128x128", Tile2: "128x64", Steps: 1, CheckRows: 40}, 3)
	require.NoError(t, err)
	require.NoError(t, s.Check(cpuMLP(t, s)))
}

// cpuMLP computes the whole MLP on the CPU: what a correct GPU returns.
func cpuMLP(t *testing.T, m *MLP) map[string][]byte {
	p := m.Params
	var x1, y []float32
	w1 := m.w1.values(0, m.w1.n)
	w2 := m.w2.values(0, m.w2.n)
	for r := 0; r < p.Tokens; r++ {
		row, err := GEMMRow(m.GEMM1, m.x.values(r*p.Hidden, (r+1)*p.Hidden), w1)
		require.NoError(t, err)
		x1 = append(x1, row...)
	}
	for r := 0; r < p.Tokens; r++ {
		row, err := GEMMRow(m.GEMM2, x1[r*m.gemm1N:(r+1)*m.gemm1N], w2)
		require.NoError(t, err)
		y = append(y, row...)
	}
	enc := func(v []float32) []byte { b := make([]byte, 2*len(v)); PutHalves(b, v); return b }
	return map[string][]byte{"x1": enc(x1), "y": enc(y)}
}

func TestMLPProgramAndCheck(t *testing.T) {
	for _, model := range []string{"gpt3", "llama"} {
		t.Run(model, func(t *testing.T) {
			p := MLPParams{Model: model, Tokens: 40, Hidden: 64, FF: 128, Tile: "auto", Steps: 2, CheckRows: 40}
			m, err := NewMLP(p, 3)
			require.NoError(t, err)
			require.NoError(t, m.Program.Validate())
			assert.Len(t, m.Program.Steps, 2)
			assert.Equal(t, Tile{64, 128}, m.GEMM1.Tile, "T = 40 takes 64-row tiles")
			n1 := 128
			if model == "llama" {
				n1 = 256
				assert.Equal(t, ASwiGLU, m.GEMM2.AMode)
				assert.Equal(t, 256, m.GEMM2.LDA)
			} else {
				assert.Equal(t, EpiGeLU, m.GEMM1.Epi)
			}
			assert.Equal(t, int64(2*40*n1), m.Program.Buffers[2].Bytes)
			op2 := m.Program.Steps[0].Ops[1]
			assert.Equal(t, 2, op2.Args[ArgA].Buf, "GEMM2 reads x1")

			out := cpuMLP(t, m)
			require.NoError(t, m.Check(out))

			// A wrong element, an unwritten (NaN) element, a missing output.
			bad := map[string][]byte{"x1": out["x1"], "y": append([]byte(nil), out["y"]...)}
			for i := 0; i < 64; i++ {
				binary.LittleEndian.PutUint16(bad["y"][2*(5*64+i):], uint16(ToHalf(3)))
			}
			assert.ErrorContains(t, m.Check(bad), "y (GEMM2): relative error")
			nan := map[string][]byte{"x1": append([]byte(nil), out["x1"]...), "y": out["y"]}
			binary.LittleEndian.PutUint16(nan["x1"][2*77:], 0x7e00)
			assert.ErrorContains(t, m.Check(nan), "x1 element 77")
			assert.ErrorContains(t, m.Check(map[string][]byte{"x1": out["x1"]}), "output y missing")
		})
	}
}

func TestMLPFullSizeShapes(t *testing.T) {
	m, err := NewMLP(MLPParams{Model: "gpt3", Tokens: 2048, Tile: "auto", Steps: 1, CheckRows: 4}, 1)
	require.NoError(t, err)
	assert.Equal(t, device.D2(48, 16), m.GEMM1.Grid())
	assert.Equal(t, device.D2(96, 16), m.GEMM2.Grid())
	assert.Equal(t, int64(2*12288*6144), m.Program.Buffers[1].Bytes)
	l, err := NewMLP(MLPParams{Model: "llama", Tokens: 1, Tile: "auto", Steps: 1, CheckRows: 4}, 1)
	require.NoError(t, err)
	assert.Equal(t, device.D2(44, 1), l.GEMM1.Grid(), "gate and up: 2 x 2816 columns")
	assert.Equal(t, Tile{32, 128}, l.GEMM1.Tile)
	_, err = NewMLP(MLPParams{Model: "bert", Tokens: 1, Steps: 1, CheckRows: 1}, 1)
	assert.ErrorContains(t, err, `model "bert"`)
	_, err = NewMLP(MLPParams{Model: "gpt3", Tokens: 0, Steps: 1, CheckRows: 1}, 1)
	assert.ErrorContains(t, err, "tokens must be at least 1")
}

func TestConvPairProgramAndCheck(t *testing.T) {
	p := ConvPairParams{Channels: 64, Size: 5, Batch: 2, Tile: "64x64", Steps: 1, CheckRows: 50}
	cp, err := NewConvPair(p, 5)
	require.NoError(t, err)
	require.NoError(t, cp.Program.Validate())
	s := cp.Conv1
	assert.Equal(t, device.D2(1, 1), s.Grid(), "50 pixels x 64 channels: one 64x64 tile")
	all := make([]int, s.M)
	for i := range all {
		all[i] = i
	}
	y1, err := ConvPixels(s, cp.x.values(0, cp.x.n), cp.w1.values(0, cp.w1.n), all)
	require.NoError(t, err)
	y2, err := ConvPixels(s, y1, cp.w2.values(0, cp.w2.n), all)
	require.NoError(t, err)
	nonzero := 0
	for _, v := range y2 {
		if v > 0 {
			nonzero++
		}
	}
	assert.Greater(t, nonzero, len(y2)/4, "inputs are scaled so activations stay alive")
	enc := func(v []float32) []byte { b := make([]byte, 2*len(v)); PutHalves(b, v); return b }
	out := map[string][]byte{"y1": enc(y1), "y2": enc(y2)}
	require.NoError(t, cp.Check(out))
	y2[10*64+3] += 50
	out["y2"] = enc(y2)
	assert.ErrorContains(t, cp.Check(out), "y2 (conv2)")

	r, err := NewConvPair(ConvPairParams{Model: "resnet38", Layer: 3, Batch: 1, Tile: "auto", Steps: 1, CheckRows: 4}, 1)
	require.NoError(t, err)
	assert.Equal(t, 512, r.Conv1.N)
	assert.Equal(t, 49, r.Conv1.M)
	_, err = NewConvPair(ConvPairParams{Model: "resnet38", Layer: 4, Batch: 1, Steps: 1, CheckRows: 1}, 1)
	assert.ErrorContains(t, err, "stages 0 to 3")
}

func TestGeneratedInputsDeterministic(t *testing.T) {
	a := newTensor(7, 1, 100, 1)
	b := newTensor(7, 1, 100, 1)
	c := newTensor(8, 1, 100, 1)
	assert.Equal(t, a.values(0, 100), b.values(0, 100))
	assert.NotEqual(t, a.values(0, 100), c.values(0, 100))
	buf := make([]byte, 200)
	a.fill(buf)
	assert.Equal(t, a.values(0, 100), Halves(buf))
	var sum float64
	for _, v := range a.values(0, 100) {
		assert.LessOrEqual(t, math.Abs(float64(v)), 1.0)
		sum += float64(v)
	}
	assert.Less(t, math.Abs(sum/100), 0.2, "roughly centred")
}

// Issue 23: sizes whose products overflowed int or asked for terabytes
// fail before anything is built, naming the parameters and the limit.
func TestHostileSizesFail(t *testing.T) {
	_, err := NewMLP(MLPParams{Model: "gpt3", Tokens: 1 << 40, Steps: 1, CheckRows: 1}, 1)
	assert.ErrorContains(t, err, "tokens x hidden = 1099511627776 x 12288")
	assert.ErrorContains(t, err, "(workloads.MaxDeviceBytes)")
	_, err = NewMLP(MLPParams{Model: "llama", Tokens: 1, FF: 1 << 62, Hidden: 1 << 62, Steps: 1, CheckRows: 1}, 1)
	assert.ErrorContains(t, err, "overflows 64 bits")
	// LLaMA's 2 x ff is a factor of its own: the error shows no wrapped figure.
	assert.ErrorContains(t, err, "hidden x 2 x ff = 4611686018427387904 x 2 x 4611686018427387904")
	assert.NotContains(t, err.Error(), "-")
	_, err = NewMLP(MLPParams{Model: "gpt3", Tokens: 16, Steps: 1 << 30, CheckRows: 1, NoData: true}, 1)
	assert.ErrorContains(t, err, "steps x kernels per step = 1073741824 x 2 = 2147483648 operations, above the limit of 1048576 (workloads.MaxOps)")
	_, err = NewConvPair(ConvPairParams{Channels: 64, Size: 1 << 20, Batch: 8, Tile: "auto", Steps: 1, CheckRows: 1}, 1)
	assert.ErrorContains(t, err, "batch x size x size x channels = 8 x 1048576 x 1048576 x 64")
}

// PlainArgs clears the synchronization arguments as Op leaves them (null
// pointers, zeros), keeps the operation's own, and leaves its input alone.
func TestPlainArgs(t *testing.T) {
	args := make([]device.Arg, NumArgs)
	for i := range args {
		args[i] = device.I32(7)
	}
	counters := device.Arg{Kind: device.ArgBuffer, Buf: device.Buffer{Addr: 4096}, Len: 64}
	args[ArgA], args[ArgPost], args[ArgWait], args[ArgOrderCounter] = counters, counters, counters, counters
	plain := PlainArgs(args)
	assert.Equal(t, counters, plain[ArgA], "an operand")
	assert.Equal(t, device.I32(7), plain[ArgOp0+5], "the operation's last int")
	for _, i := range []int{ArgPost, ArgWait, ArgOrder, ArgOrderCounter, ArgStartFlag} {
		assert.Equal(t, device.U64(0), plain[i], "pointer argument %d", i)
	}
	for _, i := range []int{ArgPostRowStride, ArgWaitPer, ArgIter, ArgFlags} {
		assert.Equal(t, device.I32(0), plain[i], "argument %d", i)
	}
	assert.Equal(t, counters, args[ArgPost], "the input is not changed")
}
