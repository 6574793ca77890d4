package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConv2DRefHandComputed(t *testing.T) {
	tests := []struct {
		name    string
		x, w, b []float32
		s       ConvShape
		act     Act
		want    []float32
	}{
		{
			name: "3x3 input, 2x2 kernel, valid",
			x:    []float32{1, 2, 3, 4, 5, 6, 7, 8, 9},
			w:    []float32{1, 0, 0, -1},
			b:    []float32{0.5},
			s:    ConvShape{Cin: 1, H: 3, W: 3, Cout: 1, Ho: 2, Wo: 2, KH: 2, KW: 2, Stride: 1, Groups: 1},
			// x[i][j] - x[i+1][j+1] = -4 everywhere, plus bias.
			want: []float32{-3.5, -3.5, -3.5, -3.5},
		},
		{
			name: "stride 2, pad 1, relu",
			x:    []float32{1, 2, 3, 4, 5, 6, 7, 8, 9},
			w:    []float32{1, 1, 1, 1, 1, 1, 1, 1, 1},
			b:    []float32{-12},
			s:    ConvShape{Cin: 1, H: 3, W: 3, Cout: 1, Ho: 2, Wo: 2, KH: 3, KW: 3, Stride: 2, PadH: 1, PadW: 1, Groups: 1},
			act:  ActReLU,
			// window sums: top-left 1+2+4+5=12, top-right 2+3+5+6=16,
			// bottom-left 4+5+7+8=24, bottom-right 5+6+8+9=28; minus 12.
			want: []float32{0, 4, 12, 16},
		},
		{
			name: "two input channels summed",
			x:    []float32{1, 2, 3, 4, 10, 20, 30, 40},
			w:    []float32{2, 0.5},
			b:    []float32{0},
			s:    ConvShape{Cin: 2, H: 2, W: 2, Cout: 1, Ho: 2, Wo: 2, KH: 1, KW: 1, Stride: 1, Groups: 1},
			want: []float32{7, 14, 21, 28},
		},
		{
			name: "depthwise: groups = channels",
			x:    []float32{1, 2, 3, 4, 10, 20, 30, 40},
			w:    []float32{2, -1},
			b:    []float32{1, 0},
			s:    ConvShape{Cin: 2, H: 2, W: 2, Cout: 2, Ho: 2, Wo: 2, KH: 1, KW: 1, Stride: 1, Groups: 2},
			want: []float32{3, 5, 7, 9, -10, -20, -30, -40},
		},
		{
			name: "negative padding shifts the grid",
			x:    []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			w:    []float32{1},
			b:    []float32{0},
			s:    ConvShape{Cin: 1, H: 4, W: 4, Cout: 1, Ho: 2, Wo: 2, KH: 1, KW: 1, Stride: 2, PadH: -1, PadW: -1, Groups: 1},
			want: []float32{6, 8, 14, 16},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := make([]float32, len(tc.want))
			Conv2DRef(tc.x, tc.w, tc.b, y, tc.s, tc.act)
			assert.Equal(t, tc.want, y)
		})
	}
}

func TestGEMMRefHandComputed(t *testing.T) {
	a := []float32{1, 2, 3, 4} // [[1,2],[3,4]]
	b := []float32{5, 6, 7, 8} // [[5,6],[7,8]]
	c := make([]float32, 4)
	GEMMRef(a, b, nil, c, GEMMShape{M: 2, N: 2, K: 2, LdA: 2, LdB: 2, LdC: 2, Batch: 1, Alpha: 1}, ActNone)
	assert.Equal(t, []float32{19, 22, 43, 50}, c)

	// transB: A * B^T = [[1*5+2*6, 1*7+2*8],[3*5+4*6, 3*7+4*8]]; alpha 0.5; per-row bias.
	GEMMRef(a, b, []float32{1, -1}, c, GEMMShape{M: 2, N: 2, K: 2, LdA: 2, LdB: 2, LdC: 2, TransB: true, Batch: 1, BiasMode: 1, Alpha: 0.5}, ActNone)
	assert.Equal(t, []float32{9.5, 12.5, 18.5, 25.5}, c)

	// transA with per-column bias: A^T * B = [[1*5+3*7, 1*6+3*8],[2*5+4*7, 2*6+4*8]].
	GEMMRef(a, b, []float32{100, 200}, c, GEMMShape{M: 2, N: 2, K: 2, LdA: 2, LdB: 2, LdC: 2, TransA: true, Batch: 1, BiasMode: 2, Alpha: 1}, ActNone)
	assert.Equal(t, []float32{126, 230, 138, 244}, c)

	// Two batches of 1x1x2 dot products with strides.
	c2 := make([]float32, 2)
	GEMMRef([]float32{1, 2, 3, 4}, []float32{1, 1, 2, 2}, nil, c2, GEMMShape{M: 1, N: 1, K: 2, LdA: 2, LdB: 1, LdC: 1, Batch: 2, StrideA: 2, StrideB: 2, StrideC: 1, Alpha: 1}, ActNone)
	assert.Equal(t, []float32{3, 14}, c2)

	y := make([]float32, 2)
	GEMVRef([]float32{1, 2, 3, 4, 5, 6}, []float32{1, 0, -1}, []float32{0.5, 10}, y, 2, 3, ActReLU)
	assert.Equal(t, []float32{0, 8}, y) // relu(-2+0.5)=0, -2+10=8
}

func TestPoolingRefHandComputed(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	y := make([]float32, 4)
	Pool2DRef(x, y, 1, 3, 3, 2, 2, 2, 1, 0, MaxPool)
	assert.Equal(t, []float32{5, 6, 8, 9}, y)
	// 3x3 average, stride 2, pad 1: the corner windows hold 4 valid values.
	Pool2DRef(x, y, 1, 3, 3, 2, 2, 3, 2, 1, AvgPool)
	assert.Equal(t, []float32{3, 4, 6, 7}, y)

	g := make([]float32, 2)
	GlobalAvgPoolRef([]float32{1, 2, 3, 6, -1, -1, -1, -1}, g, 2, 4)
	assert.Equal(t, []float32{3, -1}, g)

	u := make([]float32, 8)
	Upsample2xRef([]float32{1, 2}, u, 1, 1, 2)
	assert.Equal(t, []float32{1, 1, 2, 2, 1, 1, 2, 2}, u)

	m := make([]float32, 2)
	MixRef([]float32{1, 2, 10, 20}, []float32{0.5, 0.1}, m, 2, 2)
	assert.InDeltaSlice(t, []float32{1.5, 3}, m, 1e-6)
}

func TestSoftmaxLayerNormRef(t *testing.T) {
	y := make([]float32, 4)
	SoftmaxRef([]float32{0, float32(math.Log(3)), 5, 5}, y, 2, 2, 1)
	assert.InDeltaSlice(t, []float32{0.25, 0.75, 0.5, 0.5}, y, 1e-6)
	// scale halves the logits: softmax(0, ln 9 / 2) = softmax(0, ln 3).
	SoftmaxRef([]float32{0, float32(math.Log(9))}, y[:2], 1, 2, 0.5)
	assert.InDeltaSlice(t, []float32{0.25, 0.75}, y[:2], 1e-6)

	z := make([]float32, 3)
	LayerNormRef([]float32{1, 2, 3}, []float32{1, 1, 2}, []float32{0, 1, 0}, z, 1, 3, 0)
	s := float32(math.Sqrt(1.5)) // 1/sqrt(2/3)
	assert.InDeltaSlice(t, []float32{-s, 1, 2 * s}, z, 1e-6)
}

func TestActivations(t *testing.T) {
	tests := []struct {
		act  Act
		in   float32
		want float64
	}{
		{ActNone, -3, -3},
		{ActReLU, -3, 0},
		{ActReLU, 2, 2},
		{ActReLU6, 7, 6},
		{ActReLU6, 3, 3},
		{ActGELU, 1, 0.8413447460685429},
		{ActGELU, -1, -0.15865525393145707},
		{ActSigmoid, 0, 0.5},
		{ActSwish, 2, 2 / (1 + math.Exp(-2))},
		{ActTanhReLU, -1, 0},
		{ActTanhReLU, 0.5, math.Tanh(0.5)},
	}
	for _, tc := range tests {
		t.Run(tc.act.String(), func(t *testing.T) {
			assert.InDelta(t, tc.want, float64(tc.act.Apply(tc.in)), 1e-6)
		})
	}
}

func TestCompare(t *testing.T) {
	want := []float32{1, -100, 0}
	require.NoError(t, Compare("x", []float32{1.00001, -100.001, 0.001}, want, 1e-4))
	assert.ErrorContains(t, Compare("x", []float32{1.1, -100, 0}, want, 1e-4), "1 of 3 values")
	assert.Error(t, Compare("x", []float32{float32(math.NaN()), -100, 0}, want, 1e-4))
	assert.ErrorContains(t, Compare("x", []float32{1}, want, 1e-4), "1 values, reference has 3")
}

// The references are loop-reordered for speed; each output element must
// still add the same terms in the same order as the kernel (and so as the
// textbook loops below), bit for bit.
func TestReferencesMatchNaiveLoopsBitForBit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	convs := []ConvShape{
		{Cin: 3, H: 9, W: 7, Cout: 4, KH: 3, KW: 3, Stride: 1, PadH: 1, PadW: 1, Groups: 1},
		{Cin: 4, H: 8, W: 8, Cout: 4, KH: 5, KW: 5, Stride: 2, PadH: 2, PadW: 2, Groups: 4},
		{Cin: 6, H: 5, W: 11, Cout: 4, KH: 1, KW: 7, Stride: 1, PadH: 0, PadW: 3, Groups: 2},
		{Cin: 2, H: 7, W: 7, Cout: 3, KH: 1, KW: 1, Stride: 2, PadH: -1, PadW: -1, Groups: 1},
		{Cin: 2, H: 2, W: 3, Cout: 2, KH: 5, KW: 5, Stride: 3, PadH: 2, PadW: 3, Groups: 1},
		// Large enough for the parallel path.
		{Cin: 16, H: 32, W: 32, Cout: 16, KH: 3, KW: 3, Stride: 1, PadH: 1, PadW: 1, Groups: 1},
	}
	for _, s := range convs {
		s.Ho, s.Wo = (s.H+2*s.PadH-s.KH)/s.Stride+1, (s.W+2*s.PadW-s.KW)/s.Stride+1
		if s.PadH < 0 {
			s.Ho, s.Wo = (s.H+1)/2, (s.W+1)/2
		}
		x, w, b := fill(s.Cin*s.H*s.W), fill(s.Cout*s.Cin/s.Groups*s.KH*s.KW), fill(s.Cout)
		got, want := make([]float32, s.Cout*s.Ho*s.Wo), make([]float32, s.Cout*s.Ho*s.Wo)
		Conv2DRef(x, w, b, got, s, ActReLU6)
		cinG := s.Cin / s.Groups
		for oc := 0; oc < s.Cout; oc++ {
			g := oc / (s.Cout / s.Groups)
			for oy := 0; oy < s.Ho; oy++ {
				for ox := 0; ox < s.Wo; ox++ {
					acc := b[oc]
					for ic := 0; ic < cinG; ic++ {
						for ky := 0; ky < s.KH; ky++ {
							for kx := 0; kx < s.KW; kx++ {
								iy, ix := oy*s.Stride-s.PadH+ky, ox*s.Stride-s.PadW+kx
								if iy >= 0 && iy < s.H && ix >= 0 && ix < s.W {
									acc += x[((g*cinG+ic)*s.H+iy)*s.W+ix] * w[((oc*cinG+ic)*s.KH+ky)*s.KW+kx]
								}
							}
						}
					}
					want[(oc*s.Ho+oy)*s.Wo+ox] = ActReLU6.Apply(acc)
				}
			}
		}
		assert.Equal(t, want, got, "%+v", s)
	}

	for _, s := range []GEMMShape{
		{M: 5, N: 7, K: 9, LdA: 9, LdB: 7, LdC: 7, Batch: 1, BiasMode: 1, Alpha: 1},
		{M: 4, N: 3, K: 6, LdA: 4, LdB: 6, LdC: 5, TransA: true, TransB: true, Batch: 2, StrideA: 24, StrideB: 18, StrideC: 20, BiasMode: 2, Alpha: 0.25},
		{M: 64, N: 64, K: 64, LdA: 64, LdB: 64, LdC: 64, Batch: 1, BiasMode: 1, Alpha: 1}, // parallel path
	} {
		a, b, bias := fill(4096), fill(4096), fill(64)
		got, want := make([]float32, 4096), make([]float32, 4096)
		GEMMRef(a, b, bias, got, s, ActGELU)
		for z := 0; z < s.Batch; z++ {
			for i := 0; i < s.M; i++ {
				for j := 0; j < s.N; j++ {
					var acc float32
					for k := 0; k < s.K; k++ {
						av, bv := a[z*s.StrideA+i*s.LdA+k], b[z*s.StrideB+k*s.LdB+j]
						if s.TransA {
							av = a[z*s.StrideA+k*s.LdA+i]
						}
						if s.TransB {
							bv = b[z*s.StrideB+j*s.LdB+k]
						}
						acc += av * bv
					}
					v := s.Alpha * acc
					if s.BiasMode == 1 {
						v += bias[i]
					} else {
						v += bias[j]
					}
					want[z*s.StrideC+i*s.LdC+j] = ActGELU.Apply(v)
				}
			}
		}
		assert.Equal(t, want, got, "%+v", s)
	}
}
