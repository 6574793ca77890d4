package nn

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Act is an activation fused into a kernel's output (codes shared with nn.cu).
type Act int

const (
	ActNone Act = iota
	ActReLU
	ActReLU6
	ActGELU
	ActSigmoid
	ActSwish
	ActTanhReLU
	numActs
)

var actNames = [...]string{"none", "relu", "relu6", "gelu", "sigmoid", "swish", "tanh-relu"}

func (a Act) String() string {
	if a >= 0 && a < numActs {
		return actNames[a]
	}
	return "act?"
}

// Apply is the activation on one value, as nn.cu's nn_act computes it.
func (a Act) Apply(v float32) float32 {
	switch a {
	case ActReLU:
		return max(v, 0)
	case ActReLU6:
		return min(max(v, 0), 6)
	case ActGELU:
		return float32(0.5 * float64(v) * (1 + math.Erf(float64(v)*0.70710678118654752)))
	case ActSigmoid:
		return float32(1 / (1 + math.Exp(-float64(v))))
	case ActSwish:
		return float32(float64(v) / (1 + math.Exp(-float64(v))))
	case ActTanhReLU:
		return float32(max(math.Tanh(float64(v)), 0))
	}
	return v
}

// actFlops is the flop count charged per activated element.
func (a Act) flops() float64 {
	switch a {
	case ActNone:
		return 0
	case ActReLU, ActReLU6:
		return 1
	}
	return 8
}

// ConvShape is a convolution's geometry.
type ConvShape struct {
	Cin, H, W, Cout, Ho, Wo int
	KH, KW, Stride          int
	PadH, PadW              int
	Groups                  int
}

// Conv2DRef is nn_conv2d: y [Cout][Ho][Wo] = act(b + conv(x, w)). Every
// output element starts from its bias and adds its terms in (input channel,
// ky, kx) order, as the kernel does; the loops are ordered for locality.
func Conv2DRef(x, w, b, y []float32, s ConvShape, act Act) {
	cinG, coutG := s.Cin/s.Groups, s.Cout/s.Groups
	plane := s.Ho * s.Wo
	parallelFor(s.Cout, cinG*s.KH*s.KW*plane, func(oc int) {
		g := oc / coutG
		out := y[oc*plane : (oc+1)*plane]
		for i := range out {
			out[i] = b[oc]
		}
		wp := w[oc*cinG*s.KH*s.KW:]
		for ic := 0; ic < cinG; ic++ {
			xp := x[(g*cinG+ic)*s.H*s.W:]
			for ky := 0; ky < s.KH; ky++ {
				for kx := 0; kx < s.KW; kx++ {
					convTap(out, xp, s, ky, kx, wp[(ic*s.KH+ky)*s.KW+kx])
				}
			}
		}
		for i := range out {
			out[i] = act.Apply(out[i])
		}
	})
}

// convTap adds kernel tap (ky, kx) of weight wv, over the input plane xp,
// to every element of the output plane out.
func convTap(out, xp []float32, s ConvShape, ky, kx int, wv float32) {
	// Output columns whose input column is in range.
	ox0 := max(0, ceilDiv(s.PadW-kx, s.Stride))
	ox1 := min(s.Wo, ceilDiv(s.W+s.PadW-kx, s.Stride))
	for oy := 0; oy < s.Ho; oy++ {
		iy := oy*s.Stride - s.PadH + ky
		if iy < 0 || iy >= s.H {
			continue
		}
		row := xp[iy*s.W : (iy+1)*s.W]
		o := out[oy*s.Wo : (oy+1)*s.Wo]
		if s.Stride == 1 && ox0 < ox1 {
			src, dst := row[ox0-s.PadW+kx:ox1-s.PadW+kx], o[ox0:ox1]
			for i := range dst {
				dst[i] += src[i] * wv
			}
			continue
		}
		for ox := ox0; ox < ox1; ox++ {
			o[ox] += row[ox*s.Stride-s.PadW+kx] * wv
		}
	}
}

// parallelFor runs body(0..n-1) on all CPUs when the n iterations of about
// cost operations each are worth it. Iterations write disjoint outputs, so
// the result does not depend on the split.
func parallelFor(n, cost int, body func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || n < 2 || n*cost < 1<<18 {
		for i := 0; i < n; i++ {
			body(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				body(i)
			}
		}()
	}
	wg.Wait()
}

// GEMMShape is nn_gemm's geometry (element strides and leading dimensions).
type GEMMShape struct {
	M, N, K                   int
	LdA, LdB, LdC             int
	TransA, TransB            bool
	Batch                     int
	StrideA, StrideB, StrideC int
	BiasMode                  int // 0 none, 1 per row, 2 per column
	Alpha                     float32
}

// GEMMRef is nn_gemm: C = act(alpha op(A) op(B) + bias) per batch. Each
// element sums its K products in k order from zero, as the kernel does.
func GEMMRef(a, b, bias, c []float32, s GEMMShape, act Act) {
	parallelFor(s.Batch*s.M, s.N*s.K, func(zr int) {
		z, r := zr/s.M, zr%s.M
		az, bz, cz := a[z*s.StrideA:], b[z*s.StrideB:], c[z*s.StrideC:]
		acc := make([]float32, s.N)
		{
			for k := 0; k < s.K; k++ {
				av := az[r*s.LdA+k]
				if s.TransA {
					av = az[k*s.LdA+r]
				}
				if s.TransB {
					for col := range acc {
						acc[col] += av * bz[col*s.LdB+k]
					}
				} else {
					brow := bz[k*s.LdB : k*s.LdB+s.N]
					for col, bv := range brow {
						acc[col] += av * bv
					}
				}
			}
			for col, v := range acc {
				v *= s.Alpha
				switch s.BiasMode {
				case 1:
					v += bias[r]
				case 2:
					v += bias[col]
				}
				cz[r*s.LdC+col] = act.Apply(v)
			}
		}
	})
}

// GEMVRef is nn_gemv: y[m] = act(W[m,:] . x + b[m]).
func GEMVRef(w, x, b, y []float32, m, k int, act Act) {
	for r := 0; r < m; r++ {
		var acc float32
		for i := 0; i < k; i++ {
			acc += w[r*k+i] * x[i]
		}
		y[r] = act.Apply(acc + b[r])
	}
}

// PoolKind is max or average pooling.
type PoolKind int

const (
	MaxPool PoolKind = iota
	AvgPool
)

// Pool2DRef is nn_pool2d (average over in-bounds elements only).
func Pool2DRef(x, y []float32, c, h, w, ho, wo, k, stride, pad int, kind PoolKind) {
	for ch := 0; ch < c; ch++ {
		plane := x[ch*h*w : (ch+1)*h*w]
		for oy := 0; oy < ho; oy++ {
			for ox := 0; ox < wo; ox++ {
				y[(ch*ho+oy)*wo+ox] = poolWindow(plane, h, w, oy*stride-pad, ox*stride-pad, k, kind)
			}
		}
	}
}

// poolWindow pools the k x k window of the h x w plane whose top left
// corner is (y0, x0), over the elements inside the plane (0 if none).
func poolWindow(plane []float32, h, w, y0, x0, k int, kind PoolKind) float32 {
	acc := float32(0)
	if kind == MaxPool {
		acc = -math.MaxFloat32
	}
	cnt := 0
	for iy := max(y0, 0); iy < min(y0+k, h); iy++ {
		for ix := max(x0, 0); ix < min(x0+k, w); ix++ {
			v := plane[iy*w+ix]
			if kind == MaxPool {
				acc = max(acc, v)
			} else {
				acc += v
			}
			cnt++
		}
	}
	switch {
	case kind == AvgPool && cnt > 0:
		acc /= float32(cnt)
	case cnt == 0:
		acc = 0
	}
	return acc
}

// GlobalAvgPoolRef is nn_global_avgpool.
func GlobalAvgPoolRef(x, y []float32, c, hw int) {
	for ch := 0; ch < c; ch++ {
		var acc float32
		for i := 0; i < hw; i++ {
			acc += x[ch*hw+i]
		}
		y[ch] = acc / float32(hw)
	}
}

// SoftmaxRef is nn_softmax over rows.
func SoftmaxRef(x, y []float32, rows, cols int, scale float32) {
	for r := 0; r < rows; r++ {
		xr, yr := x[r*cols:(r+1)*cols], y[r*cols:(r+1)*cols]
		m := float32(-math.MaxFloat32)
		for _, v := range xr {
			m = max(m, scale*v)
		}
		var s float64
		for _, v := range xr {
			s += math.Exp(float64(scale*v - m))
		}
		for i, v := range xr {
			yr[i] = float32(math.Exp(float64(scale*v-m)) / s)
		}
	}
}

// LayerNormRef is nn_layernorm over rows.
func LayerNormRef(x, gamma, beta, y []float32, rows, cols int, eps float32) {
	for r := 0; r < rows; r++ {
		xr, yr := x[r*cols:(r+1)*cols], y[r*cols:(r+1)*cols]
		var s float64
		for _, v := range xr {
			s += float64(v)
		}
		mean := s / float64(cols)
		var q float64
		for _, v := range xr {
			d := float64(v) - mean
			q += d * d
		}
		inv := 1 / math.Sqrt(q/float64(cols)+float64(eps))
		for i, v := range xr {
			yr[i] = float32((float64(v)-mean)*inv)*gamma[i] + beta[i]
		}
	}
}

// Upsample2xRef is nn_upsample2x (nearest neighbour).
func Upsample2xRef(x, y []float32, c, h, w int) {
	for ch := 0; ch < c; ch++ {
		for oy := 0; oy < 2*h; oy++ {
			for ox := 0; ox < 2*w; ox++ {
				y[(ch*2*h+oy)*2*w+ox] = x[(ch*h+oy/2)*w+ox/2]
			}
		}
	}
}

// MixRef is nn_mix: y = sum_e coef[e] src[e].
func MixRef(src, coef, y []float32, e, n int) {
	for i := 0; i < n; i++ {
		var acc float32
		for j := 0; j < e; j++ {
			acc += coef[j] * src[j*n+i]
		}
		y[i] = acc
	}
}
