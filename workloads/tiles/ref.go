package tiles

import (
	"fmt"
	"math"
)

// The CPU references compute what the kernels compute: fp16 operands (given
// here as float32 values that are exactly representable in fp16), products
// accumulated in float32, the epilogue applied to the float32 sum, the
// result rounded to fp16. Only the order of the float32 additions differs
// from the tensor cores', so results agree to fp16 rounding.

// GeLU is the exact GeLU, x * Phi(x).
func GeLU(x float32) float32 {
	return float32(0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2)))
}

// SiLU is x * sigmoid(x).
func SiLU(x float32) float32 { return float32(float64(x) / (1 + math.Exp(-float64(x)))) }

func applyEpi(e Epilogue, x float32) float32 {
	switch e {
	case EpiGeLU:
		return GeLU(x)
	case EpiReLU:
		return max(x, 0)
	}
	return x
}

// SwiGLURow turns one row of a [.. x 2k] gate|up matrix into the k values a
// ASwiGLU GEMM reads: silu(gate) * up, rounded to fp16 as the kernel stores
// it in shared memory.
func SwiGLURow(gateUp []float32, k int) []float32 {
	out := make([]float32, k)
	for i := range out {
		out[i] = RoundHalf(SiLU(gateUp[i]) * gateUp[k+i])
	}
	return out
}

// GEMMRow computes one output row of stage s (a GEMM): epi(a * B), with a
// the raw A row (LDA values; for ASwiGLU the gate|up row) and B as [K x N].
// The result has N values, rounded to fp16.
func GEMMRow(s Stage, a, b []float32) ([]float32, error) {
	if s.Kind != GEMM {
		return nil, fmt.Errorf("GEMMRow: stage is a %s", s.Kind)
	}
	if len(a) != s.LDA || len(b) != s.K*s.N {
		return nil, fmt.Errorf("GEMMRow: A row has %d values (want %d), B %d (want %d x %d)", len(a), s.LDA, len(b), s.K, s.N)
	}
	row := a
	if s.AMode == ASwiGLU {
		row = SwiGLURow(a, s.K)
	}
	acc := make([]float32, s.N)
	for k := 0; k < s.K; k++ {
		av := row[k]
		if av == 0 {
			continue
		}
		brow := b[k*s.N : (k+1)*s.N]
		for j, bv := range brow {
			acc[j] += av * bv
		}
	}
	for j, v := range acc {
		acc[j] = RoundHalf(applyEpi(s.Epi, v))
	}
	return acc, nil
}

// ConvPixels computes output pixels ps (linear indices over n*h*w) of stage
// s (a convolution) from input x (NHWC) and weights w ([3][3][cin][cout]).
// The result has len(ps)*cout values, rounded to fp16.
func ConvPixels(s Stage, x, w []float32, ps []int) ([]float32, error) {
	if s.Kind != Conv {
		return nil, fmt.Errorf("ConvPixels: stage is a %s", s.Kind)
	}
	if len(x) != s.M*s.Cin || len(w) != 9*s.Cin*s.N {
		return nil, fmt.Errorf("ConvPixels: input has %d values (want %d), weights %d (want %d)", len(x), s.M*s.Cin, len(w), 9*s.Cin*s.N)
	}
	out := make([]float32, 0, len(ps)*s.N)
	acc := make([]float32, s.N)
	for _, p := range ps {
		if p < 0 || p >= s.M {
			return nil, fmt.Errorf("ConvPixels: pixel %d outside [0, %d)", p, s.M)
		}
		b, rem := p/(s.H*s.W), p%(s.H*s.W)
		h, wd := rem/s.W, rem%s.W
		clear(acc)
		for r := 0; r < 3; r++ {
			ih := h + r - 1
			if ih < 0 || ih >= s.H {
				continue
			}
			for c := 0; c < 3; c++ {
				iw := wd + c - 1
				if iw < 0 || iw >= s.W {
					continue
				}
				in := x[((b*s.H+ih)*s.W+iw)*s.Cin:][:s.Cin]
				for ci, xv := range in {
					if xv == 0 {
						continue
					}
					wrow := w[((r*3+c)*s.Cin+ci)*s.N:][:s.N]
					for j, wv := range wrow {
						acc[j] += xv * wv
					}
				}
			}
		}
		for _, v := range acc {
			out = append(out, RoundHalf(applyEpi(s.Epi, v)))
		}
	}
	return out, nil
}

// RelErr is ||got - want|| / ||want|| (Euclidean norms), the error measure
// of METHOD.md. A NaN or infinity in got makes it +Inf; an all-zero want
// makes it the absolute norm of the difference.
func RelErr(got, want []float32) (float64, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("RelErr: %d values against %d", len(got), len(want))
	}
	var num, den float64
	for i := range got {
		g := float64(got[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return math.Inf(1), nil
		}
		d := g - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num), nil
	}
	return math.Sqrt(num / den), nil
}

// Tolerance is the relative error an fp16-operand, fp32-accumulate result
// must stay under (METHOD.md: about 1e-3 to 1e-2 for 16-bit operands).
const Tolerance = 1e-2
