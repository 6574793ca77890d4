package kesco

import (
	"math"
)

// CPU references of the kernels in workloads/kernels/kesco.cu. They compute
// in float32 where the kernels do (transcendentals through float64), so the
// GPU's results agree to within the tolerances Check uses. Reductions add in
// a different order than the GPU's trees, which the tolerances absorb.

func refSquare(x []float32) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = v * v
	}
	return y
}

func refDiffSum(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i] - b[i])
	}
	return s
}

// cnd is the standard normal cumulative distribution.
func cnd(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func refBlackScholes(spot []float32, strike, rate, vol, t float64) []float32 {
	out := make([]float32, len(spot))
	sq := vol * math.Sqrt(t)
	disc := strike * math.Exp(-rate*t)
	for i, s32 := range spot {
		s := float64(s32)
		d1 := (math.Log(s/strike) + (rate+0.5*vol*vol)*t) / sq
		d2 := d1 - sq
		out[i] = float32(s*cnd(d1) - disc*cnd(d2))
	}
	return out
}

func refRowZScore(x []float32, rows, f int) []float32 {
	z := make([]float32, len(x))
	for r := 0; r < rows; r++ {
		row := x[r*f : (r+1)*f]
		mean := 0.0
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(f)
		v := 0.0
		for _, x := range row {
			d := float64(x) - mean
			v += d * d
		}
		inv := 1 / math.Sqrt(v/float64(f)+1e-6)
		for j, x := range row {
			z[r*f+j] = float32((float64(x) - mean) * inv)
		}
	}
	return z
}

func refMatmulBias(x, w, b []float32, rows, f, c int) []float32 {
	out := make([]float32, rows*c)
	for r := 0; r < rows; r++ {
		for k := 0; k < c; k++ {
			s := float64(b[k])
			for j := 0; j < f; j++ {
				s += float64(x[r*f+j]) * float64(w[j*c+k])
			}
			out[r*c+k] = float32(s)
		}
	}
	return out
}

func refSoftmaxRows(in []float32, rows, c int) []float32 {
	out := make([]float32, len(in))
	for r := 0; r < rows; r++ {
		row := in[r*c : (r+1)*c]
		m := float64(row[0])
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		for k, v := range row {
			out[r*c+k] = float32(math.Exp(float64(v)-m) / s)
		}
	}
	return out
}

// refArgmaxSum returns a+b and each row's first largest index.
func refArgmaxSum(a, b []float32, rows, c int) ([]float32, []int32) {
	sum := make([]float32, len(a))
	label := make([]int32, rows)
	for r := 0; r < rows; r++ {
		best, bv := 0, float32(-1e30)
		for k := 0; k < c; k++ {
			v := a[r*c+k] + b[r*c+k]
			sum[r*c+k] = v
			if v > bv {
				best, bv = k, v
			}
		}
		label[r] = int32(best)
	}
	return sum, label
}

// csr is a sparse matrix in compressed sparse row form.
type csr struct {
	n      int
	rowptr []int32
	col    []int32
	val    []float32
}

func refSpmv(m csr, x []float32) []float32 {
	y := make([]float32, m.n)
	for r := 0; r < m.n; r++ {
		s := 0.0
		for e := m.rowptr[r]; e < m.rowptr[r+1]; e++ {
			s += float64(m.val[e]) * float64(x[m.col[e]])
		}
		y[r] = float32(s)
	}
	return y
}

// transpose returns the CSR form of m's transpose.
func (m csr) transpose() csr {
	t := csr{n: m.n, rowptr: make([]int32, m.n+1), col: make([]int32, len(m.col)), val: make([]float32, len(m.val))}
	for _, c := range m.col {
		t.rowptr[c+1]++
	}
	for i := 0; i < m.n; i++ {
		t.rowptr[i+1] += t.rowptr[i]
	}
	next := append([]int32(nil), t.rowptr[:m.n]...)
	for r := 0; r < m.n; r++ {
		for e := m.rowptr[r]; e < m.rowptr[r+1]; e++ {
			c := m.col[e]
			t.col[next[c]] = int32(r)
			t.val[next[c]] = m.val[e]
			next[c]++
		}
	}
	return t
}

func refNormalize(a []float32) []float32 {
	s := 0.0
	for _, v := range a {
		s += float64(v)
	}
	out := make([]float32, len(a))
	for i, v := range a {
		out[i] = float32(float64(v) / s)
	}
	return out
}

func clampi(v, lo, hi int) int { return min(max(v, lo), hi) }

func refBlur(in, k []float32, w, h, r int) []float32 {
	out := make([]float32, w*h)
	d := 2*r + 1
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			s := 0.0
			for dy := -r; dy <= r; dy++ {
				yy := clampi(y+dy, 0, h-1)
				for dx := -r; dx <= r; dx++ {
					xx := clampi(x+dx, 0, w-1)
					s += float64(k[(dy+r)*d+dx+r]) * float64(in[yy*w+xx])
				}
			}
			out[y*w+x] = float32(s)
		}
	}
	return out
}

func refSobel(in []float32, w, h int) []float32 {
	out := make([]float32, w*h)
	at := func(x, y int) float64 { return float64(in[clampi(y, 0, h-1)*w+clampi(x, 0, w-1)]) }
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			gx := (at(x+1, y-1) + 2*at(x+1, y) + at(x+1, y+1)) - (at(x-1, y-1) + 2*at(x-1, y) + at(x-1, y+1))
			gy := (at(x-1, y+1) + 2*at(x, y+1) + at(x+1, y+1)) - (at(x-1, y-1) + 2*at(x, y-1) + at(x+1, y-1))
			out[y*w+x] = float32(math.Sqrt(gx*gx + gy*gy))
		}
	}
	return out
}

func refExtend(a []float32) []float32 {
	mn, mx := a[0], a[0]
	for _, v := range a {
		mn, mx = min(mn, v), max(mx, v)
	}
	inv := float32(0)
	if mx > mn {
		inv = 1 / (mx - mn)
	}
	out := make([]float32, len(a))
	for i, v := range a {
		out[i] = (v - mn) * inv
	}
	return out
}

func refUnsharpen(img, blur []float32, amount float32) []float32 {
	out := make([]float32, len(img))
	for i := range img {
		out[i] = min(max(img[i]*(1+amount)-blur[i]*amount, 0), 1)
	}
	return out
}

func refCombine(a, b, mask []float32) []float32 {
	out := make([]float32, len(a))
	for i := range a {
		out[i] = a[i]*mask[i] + b[i]*(1-mask[i])
	}
	return out
}

func refConv3x3ReLU(in, w, b []float32, cin, cout, h, wd int) []float32 {
	out := make([]float32, cout*h*wd)
	for co := 0; co < cout; co++ {
		for y := 0; y < h; y++ {
			for x := 0; x < wd; x++ {
				s := float64(b[co])
				for ci := 0; ci < cin; ci++ {
					for ky := 0; ky < 3; ky++ {
						yy := y + ky - 1
						if yy < 0 || yy >= h {
							continue
						}
						for kx := 0; kx < 3; kx++ {
							xx := x + kx - 1
							if xx < 0 || xx >= wd {
								continue
							}
							s += float64(w[((co*cin+ci)*3+ky)*3+kx]) * float64(in[(ci*h+yy)*wd+xx])
						}
					}
				}
				out[(co*h+y)*wd+x] = float32(math.Max(s, 0))
			}
		}
	}
	return out
}

func refMaxPool2(in []float32, c, h, wd int) []float32 {
	ho, wo := h/2, wd/2
	out := make([]float32, c*ho*wo)
	for ch := 0; ch < c; ch++ {
		for y := 0; y < ho; y++ {
			for x := 0; x < wo; x++ {
				p := (ch*h+2*y)*wd + 2*x
				out[(ch*ho+y)*wo+x] = max(in[p], in[p+1], in[p+wd], in[p+wd+1])
			}
		}
	}
	return out
}

func refDense(x, w, b []float32, n, m int) []float32 {
	out := make([]float32, m)
	for j := 0; j < m; j++ {
		s := 0.0
		for i := 0; i < n; i++ {
			s += float64(w[j*n+i]) * float64(x[i])
		}
		out[j] = float32(s + float64(b[j]))
	}
	return out
}

func gelu(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(0.7978845608*(x+0.044715*x*x*x)))
}

func silu(x float64) float64 { return x / (1 + math.Exp(-x)) }

func refBiasGeLU(in, bias []float32) []float32 {
	out := make([]float32, len(in))
	for i, v := range in {
		out[i] = float32(gelu(float64(v + bias[i%len(bias)])))
	}
	return out
}

func refBiasSiLU(in, bias []float32) []float32 {
	out := make([]float32, len(in))
	for i, v := range in {
		out[i] = float32(silu(float64(v + bias[i%len(bias)])))
	}
	return out
}

func refBiasGatedReLU(in, gate, bias []float32) []float32 {
	out := make([]float32, len(in))
	for i, v := range in {
		out[i] = max(v+bias[i%len(bias)], 0) * gate[i]
	}
	return out
}

// refBiasResidual sums the inputs element-wise and adds the bias.
func refBiasResidual(bias []float32, in ...[]float32) []float32 {
	out := make([]float32, len(in[0]))
	for i := range out {
		var s float32
		for _, a := range in {
			s += a[i]
		}
		out[i] = s + bias[i%len(bias)]
	}
	return out
}

func refSum4(a, b, c, d []float32) []float32 {
	out := make([]float32, len(a))
	for i := range a {
		out[i] = (a[i] + b[i]) + (c[i] + d[i])
	}
	return out
}
