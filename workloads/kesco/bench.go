package kesco

import (
	"fmt"
	"math"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

const (
	r = device.Read
	w = device.Write
)

func buf(i int, m device.Access) workloads.ArgSpec { return workloads.BufArg(i, m) }
func i32(v int) workloads.ArgSpec                  { return workloads.Scalar32(int32(v)) }
func f32(v float32) workloads.ArgSpec              { return workloads.F32Arg(v) }

// buildVEC: x1 = x^2 and y1 = y^2 (independent), then sum(x1 - y1) as
// per-block partials and a one-block final sum. Width 2.
func buildVEC(b *builder, scale float64) {
	n, g := scaled(8<<20, scale, 1024), b.blocks
	x, xgen := b.random("x", n, -1, 1)
	y, ygen := b.random("y", n, -1, 1)
	x2, y2 := b.scratch("x2", n), b.scratch("y2", n)
	part, sum := b.scratch("partial", g), b.output("sum", 1)
	fn := float64(n)
	b.launch("square_x", "kesco_square", g, fn, 8*fn, buf(x, r), buf(x2, w), i32(n))
	b.launch("square_y", "kesco_square", g, fn, 8*fn, buf(y, r), buf(y2, w), i32(n))
	b.launch("diff_partial", "kesco_diff_partial", g, 2*fn, 8*fn, buf(x2, r), buf(y2, r), buf(part, w), i32(n))
	b.launch("sum_final", "kesco_sum_final", 1, float64(g), 4*float64(g), buf(part, r), buf(sum, w), i32(g))
	// The sum of the terms' magnitudes bounds the rounding error.
	b.check(func(out map[string][]byte) error {
		xv, yv := xgen(), ygen()
		mag := 0.0
		for i := range xv {
			mag += math.Abs(float64(xv[i]*xv[i] - yv[i]*yv[i]))
		}
		got, err := floats(out, b.prefix+"sum", 1)
		if err != nil {
			return err
		}
		want := float32(refDiffSum(refSquare(xv), refSquare(yv)))
		return closeTo(b.prefix+"sum", got, []float32{want}, 0, 1e-5*mag+1e-6)
	})
}

// B&S parameters (one option series per array).
const (
	bsOptions = 10
	bsStrike  = 100
	bsRate    = 0.02
	bsVol     = 0.3
	bsT       = 1.0
)

// buildBS: ten independent Black-Scholes pricings. Width 10.
func buildBS(b *builder, scale float64) {
	n, g := scaled(2<<20, scale, 256), b.blocks
	for i := 0; i < bsOptions; i++ {
		s, sv := b.random(fmt.Sprintf("spot%d", i), n, 50, 150)
		c := b.output(fmt.Sprintf("call%d", i), n)
		b.launch(fmt.Sprintf("bs%d", i), "kesco_black_scholes", g, 60*float64(n), 8*float64(n),
			buf(s, r), buf(c, w), i32(n), f32(bsStrike), f32(bsRate), f32(bsVol), f32(bsT))
		b.expect(fmt.Sprintf("call%d", i), func() []float32 { return refBlackScholes(sv(), bsStrike, bsRate, bsVol, bsT) }, 1e-4, 2e-4)
	}
}

// ML sizes: features and classes.
const (
	mlFeatures = 64
	mlClasses  = 16
)

// buildML: ridge regression (row z-score, matmul + bias, softmax) and naive
// Bayes (matmul with log-likelihoods + log-priors, softmax) on the same
// input, joined by argmax of the summed probabilities. Width 2.
func buildML(b *builder, scale float64) {
	rows, g := scaled(200_000, scale, 64), b.blocks
	f, c := mlFeatures, mlClasses
	wr, br := b.uniform(f*c, -0.5, 0.5), b.uniform(c, -0.1, 0.1)
	wn, bn := b.uniform(f*c, -2, 0), b.uniform(c, -3, -1)
	x, xgen := b.random("x", rows*f, 0, 1)
	wrB, brB, wnB, bnB := b.input("ridge_w", wr), b.input("ridge_b", br), b.input("nb_loglik", wn), b.input("nb_logprior", bn)
	z, rs, rp := b.scratch("z", rows*f), b.scratch("ridge_scores", rows*c), b.scratch("ridge_prob", rows*c)
	ns, np := b.scratch("nb_scores", rows*c), b.scratch("nb_prob", rows*c)
	sum, label := b.output("sum", rows*c), b.output("label", rows)
	fr, rf, rc := float64(rows), float64(rows*f), float64(rows*c)
	b.launch("ridge_zscore", "kesco_row_zscore", g, 5*rf, 12*rf, buf(x, r), buf(z, w), i32(rows), i32(f))
	b.launch("ridge_matmul", "kesco_matmul_bias", g, 2*rc*float64(f), 4*rf+4*rc, buf(z, r), buf(wrB, r), buf(brB, r), buf(rs, w), i32(rows), i32(f), i32(c))
	b.launch("ridge_softmax", "kesco_softmax_rows", g, 6*rc, 12*rc, buf(rs, r), buf(rp, w), i32(rows), i32(c))
	b.launch("nb_matmul", "kesco_matmul_bias", g, 2*rc*float64(f), 4*rf+4*rc, buf(x, r), buf(wnB, r), buf(bnB, r), buf(ns, w), i32(rows), i32(f), i32(c))
	b.launch("nb_softmax", "kesco_softmax_rows", g, 6*rc, 12*rc, buf(ns, r), buf(np, w), i32(rows), i32(c))
	b.launch("argmax", "kesco_argmax_sum", g, 2*rc, 12*rc+4*fr, buf(rp, r), buf(np, r), buf(sum, w), buf(label, w), i32(rows), i32(c))

	type mlRef struct {
		sum   []float32
		label []int32
	}
	ref := sync.OnceValue(func() mlRef {
		xv := xgen()
		ridge := refSoftmaxRows(refMatmulBias(refRowZScore(xv, rows, f), wr, br, rows, f, c), rows, c)
		nb := refSoftmaxRows(refMatmulBias(xv, wn, bn, rows, f, c), rows, c)
		s, l := refArgmaxSum(ridge, nb, rows, c)
		return mlRef{s, l}
	})
	b.expect("sum", func() []float32 { return ref().sum }, 1e-4, 1e-5)
	// Labels: each must be the argmax of the GPU's own sums, and equal the
	// CPU's wherever the CPU's top two differ by more than the tolerance.
	full := b.prefix
	b.check(func(out map[string][]byte) error {
		gs, err := floats(out, full+"sum", rows*c)
		if err != nil {
			return err
		}
		gl, err := int32s(out, full+"label", rows)
		if err != nil {
			return err
		}
		wantSum, wantLabel := ref().sum, ref().label
		_, own := refArgmaxSum(gs, make([]float32, len(gs)), rows, c)
		for i := 0; i < rows; i++ {
			if gl[i] != own[i] {
				return fmt.Errorf("output %slabel: row %d has label %d, but its largest sum is at %d", full, i, gl[i], own[i])
			}
			if gl[i] != wantLabel[i] {
				top, second := wantSum[i*c+int(wantLabel[i])], float32(-1e30)
				for k := 0; k < c; k++ {
					if k != int(wantLabel[i]) {
						second = max(second, wantSum[i*c+k])
					}
				}
				if top-second > 1e-4 {
					return fmt.Errorf("output %slabel: row %d has label %d, the CPU reference %d", full, i, gl[i], wantLabel[i])
				}
			}
		}
		return nil
	})
}

// HITS shape: out-degree of the random graph, iterations.
const (
	hitsDegree = 8
	hitsIters  = 4
)

// randomGraph is a seeded graph with deg out-edges per node (distinct
// targets, weight 1) in CSR.
func (b *builder) randomGraph(n, deg int) csr {
	deg = min(deg, n)
	m := csr{n: n, rowptr: make([]int32, n+1)}
	seen := map[int32]bool{}
	for v := 0; v < n; v++ {
		clear(seen)
		var row []int32
		for len(row) < deg {
			t := int32(b.rng.IntN(n))
			if !seen[t] {
				seen[t] = true
				row = append(row, t)
			}
		}
		for i := 1; i < len(row); i++ { // sort the row (insertion; deg is small)
			for j := i; j > 0 && row[j] < row[j-1]; j-- {
				row[j], row[j-1] = row[j-1], row[j]
			}
		}
		m.col = append(m.col, row...)
		for range row {
			m.val = append(m.val, 1)
		}
		m.rowptr[v+1] = int32(len(m.col))
	}
	return m
}

// buildHITS: hubs and authorities. Each iteration computes auth' = A^T hub
// and hub' = A auth (two SpMV chains), and normalizes each by its sum
// (partial sums, then a divide that adds them). Width 2.
func buildHITS(b *builder, scale float64) {
	n, g := scaled(1<<20, scale, 256), b.blocks
	a := b.randomGraph(n, hitsDegree)
	at := a.transpose()
	init := make([]float32, n)
	for i := range init {
		init[i] = 1 / float32(n)
	}
	aRow, aCol, aVal := b.inputI32("a_rowptr", a.rowptr), b.inputI32("a_col", a.col), b.input("a_val", a.val)
	tRow, tCol, tVal := b.inputI32("at_rowptr", at.rowptr), b.inputI32("at_col", at.col), b.input("at_val", at.val)
	auth, hub := b.input("auth", init), b.input("hub", init)
	b.prog.Buffers[auth].Output = true
	b.prog.Buffers[hub].Output = true
	authT, hubT := b.scratch("auth_tmp", n), b.scratch("hub_tmp", n)
	pa, ph := b.scratch("auth_partial", g), b.scratch("hub_partial", g)
	nnz, fn := float64(len(a.col)), float64(n)
	for it := 0; it < hitsIters; it++ {
		b.launch(fmt.Sprintf("spmv_auth%d", it), "kesco_spmv", g, 2*nnz, 12*nnz+12*fn, buf(tRow, r), buf(tCol, r), buf(tVal, r), buf(hub, r), buf(authT, w), i32(n))
		b.launch(fmt.Sprintf("spmv_hub%d", it), "kesco_spmv", g, 2*nnz, 12*nnz+12*fn, buf(aRow, r), buf(aCol, r), buf(aVal, r), buf(auth, r), buf(hubT, w), i32(n))
		b.launch(fmt.Sprintf("sum_auth%d", it), "kesco_sum_partial", g, fn, 4*fn, buf(authT, r), buf(pa, w), i32(n))
		b.launch(fmt.Sprintf("sum_hub%d", it), "kesco_sum_partial", g, fn, 4*fn, buf(hubT, r), buf(ph, w), i32(n))
		b.launch(fmt.Sprintf("norm_auth%d", it), "kesco_divide_by_sum", g, fn, 8*fn, buf(authT, r), buf(pa, r), i32(g), buf(auth, w), i32(n))
		b.launch(fmt.Sprintf("norm_hub%d", it), "kesco_divide_by_sum", g, fn, 8*fn, buf(hubT, r), buf(ph, r), i32(g), buf(hub, w), i32(n))
	}
	ref := sync.OnceValue(func() [2][]float32 {
		av, hv := init, init
		for it := 0; it < hitsIters; it++ {
			av, hv = refNormalize(refSpmv(at, hv)), refNormalize(refSpmv(a, av))
		}
		return [2][]float32{av, hv}
	})
	b.expect("auth", func() []float32 { return ref()[0] }, 1e-3, 1e-9)
	b.expect("hub", func() []float32 { return ref()[1] }, 1e-3, 1e-9)
}

// gaussian is a normalized (2r+1)^2 Gaussian kernel of deviation sigma.
func gaussian(rad int, sigma float64) []float32 {
	d := 2*rad + 1
	k := make([]float32, d*d)
	sum := 0.0
	for y := -rad; y <= rad; y++ {
		for x := -rad; x <= rad; x++ {
			sum += math.Exp(-float64(x*x+y*y) / (2 * sigma * sigma))
		}
	}
	for y := -rad; y <= rad; y++ {
		for x := -rad; x <= rad; x++ {
			k[(y+rad)*d+x+rad] = float32(math.Exp(-float64(x*x+y*y)/(2*sigma*sigma)) / sum)
		}
	}
	return k
}

const imgUnsharpAmount = 0.5

// buildIMG: GrCUDA's image pipeline. Three blurs of the image (small,
// large, unsharpen), Sobel edges of the small and large blurs, min/max of
// the large edges to stretch them to [0, 1], unsharp masking, and two
// blends. Width 3.
func buildIMG(b *builder, scale float64) {
	side, g := scaled(2048, math.Sqrt(scale), 16), b.blocks
	n := side * side
	img, igen := b.random("image", n, 0, 1)
	ks, kl, ku := gaussian(1, 1), gaussian(3, 2), gaussian(2, 1.5)
	ksB, klB, kuB := b.input("kernel_small", ks), b.input("kernel_large", kl), b.input("kernel_unsharp", ku)
	b1, b2, b3 := b.scratch("blur_small", n), b.scratch("blur_large", n), b.scratch("blur_unsharp", n)
	s1, s2, e2 := b.scratch("sobel_small", n), b.scratch("sobel_large", n), b.scratch("sobel_large_ext", n)
	mm, u, c1, out := b.scratch("minmax_partial", 2*g), b.scratch("unsharpened", n), b.scratch("combined", n), b.output("out", n)
	fn := float64(n)
	blur := func(name string, k, o, rad int) {
		taps := float64((2*rad + 1) * (2*rad + 1))
		b.launch(name, "kesco_blur", g, 2*taps*fn, 8*fn, buf(img, r), buf(k, r), buf(o, w), i32(side), i32(side), i32(rad))
	}
	blur("blur_small", ksB, b1, 1)
	blur("blur_large", klB, b2, 3)
	blur("blur_unsharp", kuB, b3, 2)
	b.launch("sobel_small", "kesco_sobel", g, 20*fn, 8*fn, buf(b1, r), buf(s1, w), i32(side), i32(side))
	b.launch("sobel_large", "kesco_sobel", g, 20*fn, 8*fn, buf(b2, r), buf(s2, w), i32(side), i32(side))
	b.launch("minmax", "kesco_minmax_partial", g, 2*fn, 4*fn, buf(s2, r), buf(mm, w), i32(n))
	b.launch("extend", "kesco_extend", g, 2*fn, 8*fn, buf(s2, r), buf(mm, r), i32(g), buf(e2, w), i32(n))
	b.launch("unsharpen", "kesco_unsharpen", g, 5*fn, 12*fn, buf(img, r), buf(b3, r), buf(u, w), f32(imgUnsharpAmount), i32(n))
	b.launch("combine1", "kesco_combine", g, 4*fn, 16*fn, buf(u, r), buf(b2, r), buf(e2, r), buf(c1, w), i32(n))
	b.launch("combine2", "kesco_combine", g, 4*fn, 16*fn, buf(c1, r), buf(b1, r), buf(s1, r), buf(out, w), i32(n))

	b.expect("out", func() []float32 {
		iv := igen()
		rb1, rb2, rb3 := refBlur(iv, ks, side, side, 1), refBlur(iv, kl, side, side, 3), refBlur(iv, ku, side, side, 2)
		rs1 := refSobel(rb1, side, side)
		re2 := refExtend(refSobel(rb2, side, side))
		ru := refUnsharpen(iv, rb3, imgUnsharpAmount)
		return refCombine(refCombine(ru, rb2, re2), rb1, rs1)
	}, 1e-3, 1e-4)
}

// DL shape: channels of the two convolutions, dense outputs.
const (
	dlC1    = 8
	dlC2    = 8
	dlDense = 16
)

// buildDL: two branches (conv 3x3 + ReLU, 2x2 max-pool, conv 3x3 + ReLU) on
// two images, concatenation, and a dense layer (one block per output).
// Width 2.
func buildDL(b *builder, scale float64) {
	side, g := 2*scaled(256, math.Sqrt(scale), 4), b.blocks
	half := side / 2
	flat := dlC2 * half * half
	bd := b.uniform(dlDense, -0.1, 0.1)
	var branch [2]func() []float32
	var conv2Out [2]int
	for i := 0; i < 2; i++ {
		w1, b1 := b.uniform(dlC1*9, -0.5, 0.5), b.uniform(dlC1, -0.1, 0.1)
		w2, b2 := b.uniform(dlC2*dlC1*9, -0.3, 0.3), b.uniform(dlC2, -0.1, 0.1)
		img, igen := b.random(fmt.Sprintf("image%d", i), side*side, 0, 1)
		w1B, b1B := b.input(fmt.Sprintf("conv1_w%d", i), w1), b.input(fmt.Sprintf("conv1_b%d", i), b1)
		w2B, b2B := b.input(fmt.Sprintf("conv2_w%d", i), w2), b.input(fmt.Sprintf("conv2_b%d", i), b2)
		c1 := b.scratch(fmt.Sprintf("conv1_%d", i), dlC1*side*side)
		p1 := b.scratch(fmt.Sprintf("pool_%d", i), dlC1*half*half)
		c2 := b.scratch(fmt.Sprintf("conv2_%d", i), flat)
		px, hx := float64(side*side), float64(half*half)
		b.launch(fmt.Sprintf("conv1_%d", i), "kesco_conv3x3_relu", g, 2*9*dlC1*px, 4*px+4*dlC1*px,
			buf(img, r), buf(w1B, r), buf(b1B, r), buf(c1, w), i32(1), i32(dlC1), i32(side), i32(side))
		b.launch(fmt.Sprintf("pool_%d", i), "kesco_maxpool2", g, 3*dlC1*hx, 4*dlC1*px+4*dlC1*hx,
			buf(c1, r), buf(p1, w), i32(dlC1), i32(side), i32(side))
		b.launch(fmt.Sprintf("conv2_%d", i), "kesco_conv3x3_relu", g, 2*9*dlC1*dlC2*hx, 4*dlC1*hx+4*dlC2*hx,
			buf(p1, r), buf(w2B, r), buf(b2B, r), buf(c2, w), i32(dlC1), i32(dlC2), i32(half), i32(half))
		conv2Out[i] = c2
		branch[i] = func() []float32 {
			return refConv3x3ReLU(refMaxPool2(refConv3x3ReLU(igen(), w1, b1, 1, dlC1, side, side), dlC1, side, side), w2, b2, dlC1, dlC2, half, half)
		}
	}
	cat := b.scratch("concat", 2*flat)
	wdB, wd := b.random("dense_w", dlDense*2*flat, -0.01, 0.01)
	bdB := b.input("dense_b", bd)
	out := b.output("out", dlDense)
	b.launch("concat", "kesco_concat", g, 0, 16*float64(flat), buf(conv2Out[0], r), i32(flat), buf(conv2Out[1], r), i32(flat), buf(cat, w))
	b.launch("dense", "kesco_dense", dlDense, 2*float64(dlDense*2*flat), 4*float64(dlDense*2*flat)+8*float64(flat),
		buf(cat, r), buf(wdB, r), buf(bdB, r), buf(out, w), i32(2*flat))
	b.expect("out", func() []float32 {
		return refDense(append(branch[0](), branch[1]()...), wd(), bd, 2*flat, dlDense)
	}, 1e-3, 1e-4)
}

// biasLen is the length of the M1/M2 bias vectors (a hidden dimension,
// broadcast over the rows).
const biasLen = 1024

// buildM1: 8 bias+GeLU, 4 bias+residual joining pairs, 4 bias+GeLU, and a
// sum of the four branches. Width 8.
func buildM1(b *builder, scale float64) {
	n, g := scaled(4<<20, scale, biasLen), b.blocks
	fn := float64(n)
	var xs, gs [8]int
	var xv [8]func() []float32
	var b1v [8][]float32
	var rs, hs [4]int
	var b2v, b3v [4][]float32
	for i := range xs {
		xs[i], xv[i] = b.random(fmt.Sprintf("x%d", i), n, -2, 2)
	}
	for i := range xs {
		b1v[i] = b.uniform(biasLen, -0.5, 0.5)
		bb := b.input(fmt.Sprintf("bias1_%d", i), b1v[i])
		gs[i] = b.scratch(fmt.Sprintf("gelu1_%d", i), n)
		b.launch(fmt.Sprintf("bias_gelu1_%d", i), "kesco_bias_gelu", g, 20*fn, 8*fn, buf(xs[i], r), buf(bb, r), buf(gs[i], w), i32(n), i32(biasLen))
	}
	for j := 0; j < 4; j++ {
		b2v[j] = b.uniform(biasLen, -0.5, 0.5)
		bb := b.input(fmt.Sprintf("bias2_%d", j), b2v[j])
		rs[j] = b.scratch(fmt.Sprintf("residual_%d", j), n)
		b.launch(fmt.Sprintf("bias_residual_%d", j), "kesco_bias_residual", g, 2*fn, 12*fn, buf(gs[2*j], r), buf(gs[2*j+1], r), buf(bb, r), buf(rs[j], w), i32(n), i32(biasLen))
	}
	for j := 0; j < 4; j++ {
		b3v[j] = b.uniform(biasLen, -0.5, 0.5)
		bb := b.input(fmt.Sprintf("bias3_%d", j), b3v[j])
		hs[j] = b.scratch(fmt.Sprintf("gelu2_%d", j), n)
		b.launch(fmt.Sprintf("bias_gelu2_%d", j), "kesco_bias_gelu", g, 20*fn, 8*fn, buf(rs[j], r), buf(bb, r), buf(hs[j], w), i32(n), i32(biasLen))
	}
	out := b.output("out", n)
	b.launch("reduce", "kesco_sum4", g, 3*fn, 20*fn, buf(hs[0], r), buf(hs[1], r), buf(hs[2], r), buf(hs[3], r), buf(out, w), i32(n))
	b.expect("out", func() []float32 {
		var hv [4][]float32
		for j := range hv {
			res := refBiasResidual(b2v[j], refBiasGeLU(xv[2*j](), b1v[2*j]), refBiasGeLU(xv[2*j+1](), b1v[2*j+1]))
			hv[j] = refBiasGeLU(res, b3v[j])
		}
		return refSum4(hv[0], hv[1], hv[2], hv[3])
	}, 1e-4, 1e-4)
}

// buildM2: 6 bias+SiLU, 6 bias+gated ReLU (layer i gated by SiLU output
// i+1 mod 6), and 2 bias+residual summing three gated outputs each.
// Width 6.
func buildM2(b *builder, scale float64) {
	n, g := scaled(4<<20, scale, biasLen), b.blocks
	fn := float64(n)
	var ss, gs [6]int
	var xv [6]func() []float32
	var bsv, bgv [6][]float32
	for i := 0; i < 6; i++ {
		var x int
		x, xv[i] = b.random(fmt.Sprintf("x%d", i), n, -2, 2)
		bsv[i] = b.uniform(biasLen, -0.5, 0.5)
		bb := b.input(fmt.Sprintf("bias_silu%d", i), bsv[i])
		ss[i] = b.scratch(fmt.Sprintf("silu%d", i), n)
		b.launch(fmt.Sprintf("bias_silu%d", i), "kesco_bias_silu", g, 8*fn, 8*fn, buf(x, r), buf(bb, r), buf(ss[i], w), i32(n), i32(biasLen))
	}
	for i := 0; i < 6; i++ {
		bgv[i] = b.uniform(biasLen, -0.5, 0.5)
		bb := b.input(fmt.Sprintf("bias_gate%d", i), bgv[i])
		gs[i] = b.scratch(fmt.Sprintf("gated%d", i), n)
		gate := (i + 1) % 6
		b.launch(fmt.Sprintf("bias_gated_relu%d", i), "kesco_bias_gated_relu", g, 3*fn, 12*fn, buf(ss[i], r), buf(ss[gate], r), buf(bb, r), buf(gs[i], w), i32(n), i32(biasLen))
	}
	gated := sync.OnceValue(func() [6][]float32 {
		var sv, gv [6][]float32
		for i := range sv {
			sv[i] = refBiasSiLU(xv[i](), bsv[i])
		}
		for i := range gv {
			gv[i] = refBiasGatedReLU(sv[i], sv[(i+1)%6], bgv[i])
		}
		return gv
	})
	for j := 0; j < 2; j++ {
		bv := b.uniform(biasLen, -0.5, 0.5)
		bb := b.input(fmt.Sprintf("bias_res%d", j), bv)
		o := b.output(fmt.Sprintf("out%d", j), n)
		b.launch(fmt.Sprintf("bias_residual%d", j), "kesco_bias_residual3", g, 3*fn, 16*fn, buf(gs[3*j], r), buf(gs[3*j+1], r), buf(gs[3*j+2], r), buf(bb, r), buf(o, w), i32(n), i32(biasLen))
		b.expect(fmt.Sprintf("out%d", j), func() []float32 {
			gv := gated()
			return refBiasResidual(bv, gv[3*j], gv[3*j+1], gv[3*j+2])
		}, 1e-4, 1e-4)
	}
}
