package nn

import (
	"fmt"
	"math"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Threads per block of the one-thread-per-element kernels.
const elemBlock = 128

func s32(v int) workloads.ArgSpec { return workloads.Scalar32(int32(v)) }

var nullPtr = workloads.Scalar64(0)

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func elemGrid(n int) device.Dim3 { return device.D1(ceilDiv(n, elemBlock)) }

// Conv describes a 2-D convolution layer (its bias is the folded batch norm).
// Build one with Same or Valid and refine it with the methods.
type Conv struct {
	Out        int
	KH, KW     int
	Stride     int
	PadH, PadW int // may be negative: a shifted sampling grid
	Groups     int
	Act        Act
	OutH, OutW int // output size; 0 = (in + 2 pad - k) / stride + 1
}

// Same is a k x k convolution with (k-1)/2 padding.
func Same(out, k, stride int, act Act) Conv {
	return Conv{Out: out, KH: k, KW: k, Stride: stride, PadH: (k - 1) / 2, PadW: (k - 1) / 2, Groups: 1, Act: act}
}

// Valid is a k x k convolution without padding.
func Valid(out, k, stride int, act Act) Conv {
	return Conv{Out: out, KH: k, KW: k, Stride: stride, Groups: 1, Act: act}
}

// Rect is a kh x kw convolution with "same" padding (Inception's 1x7, 7x1).
func Rect(out, kh, kw int, act Act) Conv {
	return Conv{Out: out, KH: kh, KW: kw, Stride: 1, PadH: (kh - 1) / 2, PadW: (kw - 1) / 2, Groups: 1, Act: act}
}

// WithGroups sets the group count (Groups = channels is depthwise).
func (c Conv) WithGroups(g int) Conv { c.Groups = g; return c }

// Shape resolves the convolution's geometry on input x.
func (c Conv) Shape(x Tensor) (ConvShape, error) {
	if len(x.Shape) != 3 {
		return ConvShape{}, fmt.Errorf("input shape %v is not [C,H,W]", x.Shape)
	}
	s := ConvShape{Cin: x.C(), H: x.H(), W: x.W(), Cout: c.Out, KH: c.KH, KW: c.KW, Stride: c.Stride, PadH: c.PadH, PadW: c.PadW, Groups: c.Groups}
	switch {
	case c.Out <= 0 || c.KH <= 0 || c.KW <= 0 || c.Stride <= 0 || c.Groups <= 0:
		return s, fmt.Errorf("conv needs positive out, kernel, stride and groups (got %+v)", c)
	case s.Cin%c.Groups != 0 || c.Out%c.Groups != 0:
		return s, fmt.Errorf("groups %d divide neither %d input nor %d output channels", c.Groups, s.Cin, c.Out)
	case c.Act < 0 || c.Act >= numActs:
		return s, fmt.Errorf("unknown activation %d", c.Act)
	}
	s.Ho, s.Wo = c.OutH, c.OutW
	if s.Ho == 0 {
		s.Ho = (s.H+2*c.PadH-c.KH)/c.Stride + 1
	}
	if s.Wo == 0 {
		s.Wo = (s.W+2*c.PadW-c.KW)/c.Stride + 1
	}
	if s.Ho <= 0 || s.Wo <= 0 {
		return s, fmt.Errorf("%dx%d kernel, stride %d, padding %d,%d leave no output of a %dx%d input", c.KH, c.KW, c.Stride, c.PadH, c.PadW, s.H, s.W)
	}
	return s, nil
}

// Conv2D appends a convolution layer named name: weights name/w, bias
// name/b, output activation name. A 1x1 stride-1 ungrouped convolution runs
// as a GEMM (nn_gemm), every other one as a direct convolution (nn_conv2d).
func (n *Net) Conv2D(name string, x Tensor, c Conv) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	s, err := c.Shape(x)
	if err != nil {
		return n.failf("%s: %v", name, err)
	}
	fanIn := s.Cin / s.Groups * s.KH * s.KW
	w := n.Weight(name+"/w", He(fanIn), s.Cout, s.Cin/s.Groups, s.KH, s.KW)
	b := n.Weight(name+"/b", Small(), s.Cout)
	y := n.Activation(name, s.Cout, s.Ho, s.Wo)
	if !n.ok() {
		return Tensor{}
	}
	flops := 2*float64(fanIn)*float64(s.Cout*s.Ho*s.Wo) + float64(s.Cout*s.Ho*s.Wo)*c.Act.flops()
	bytes := 4 * float64(x.Numel()+w.Numel()+b.Numel()+y.Numel())
	if s.KH == 1 && s.KW == 1 && s.Stride == 1 && s.PadH == 0 && s.PadW == 0 && s.Groups == 1 && s.Ho == s.H && s.Wo == s.W {
		hw := s.H * s.W
		n.gemm(name, w, x, b, y, GEMMShape{M: s.Cout, N: hw, K: s.Cin, LdA: s.Cin, LdB: hw, LdC: hw, Batch: 1, BiasMode: 1, Alpha: 1}, c.Act)
		return y
	}
	args := []workloads.ArgSpec{x.Arg(device.Read), w.Arg(device.Read), b.Arg(device.Read), y.Arg(device.Write),
		s32(s.Cin), s32(s.H), s32(s.W), s32(s.Cout), s32(s.Ho), s32(s.Wo), s32(s.KH), s32(s.KW),
		s32(s.Stride), s32(s.PadH), s32(s.PadW), s32(s.Groups), s32(int(c.Act))}
	act := c.Act
	n.launch(name, "nn_conv2d", elemGrid(y.Numel()), device.D1(elemBlock), args, flops, bytes, func(m *Memory) {
		Conv2DRef(m.View(x), m.View(w), m.View(b), m.View(y), s, act)
	})
	return y
}

// SepConv appends a depthwise-separable convolution: a k x k depthwise
// convolution (name/dw, stride) then a 1x1 pointwise one (name/pw, out
// channels, act; its bias is the folded batch norm).
func (n *Net) SepConv(name string, x Tensor, out, k, stride int, act Act) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(x.Shape) != 3 {
		return n.failf("%s: input shape %v is not [C,H,W]", name, x.Shape)
	}
	dw := n.Conv2D(name+"/dw", x, Same(x.C(), k, stride, ActNone).WithGroups(x.C()))
	return n.Conv2D(name+"/pw", dw, Same(out, 1, 1, act))
}

// gemm appends nn_gemm over views a, b, bias (may be invalid when BiasMode
// is 0) and c; each view must cover exactly what the kernel touches.
func (n *Net) gemm(name string, a, b, bias, c Tensor, s GEMMShape, act Act) {
	if err := s.check(a, b, bias, c); err != nil {
		n.failf("%s: %v", name, err)
		return
	}
	tA, tB := 0, 0
	if s.TransA {
		tA = 1
	}
	if s.TransB {
		tB = 1
	}
	biasArg := nullPtr
	if s.BiasMode != 0 {
		biasArg = bias.Arg(device.Read)
	}
	args := []workloads.ArgSpec{a.Arg(device.Read), b.Arg(device.Read), biasArg, c.Arg(device.Write),
		s32(s.M), s32(s.N), s32(s.K), s32(s.LdA), s32(s.LdB), s32(s.LdC), s32(tA), s32(tB),
		workloads.Scalar64(uint64(s.StrideA)), workloads.Scalar64(uint64(s.StrideB)), workloads.Scalar64(uint64(s.StrideC)),
		s32(s.BiasMode), s32(int(act)), workloads.F32Arg(s.Alpha)}
	grid := device.Dim3{X: ceilDiv(s.N, 32), Y: ceilDiv(s.M, 32), Z: s.Batch}
	outs := float64(s.Batch * s.M * s.N)
	flops := 2*outs*float64(s.K) + outs*act.flops()
	bytes := 4 * float64(a.Numel()+b.Numel()+bias.Numel()+c.Numel())
	n.launch(name, "nn_gemm", grid, device.D2(32, 8), args, flops, bytes, func(m *Memory) {
		var bv []float32
		if s.BiasMode != 0 {
			bv = m.View(bias)
		}
		GEMMRef(m.View(a), m.View(b), bv, m.View(c), s, act)
	})
}

// span is the number of elements from the first to one past the last one a
// strided matrix access touches.
func span(batch, stride, rows, ld, cols int) int {
	return (batch-1)*stride + (rows-1)*ld + cols
}

func (s GEMMShape) check(a, b, bias, c Tensor) error {
	if s.M <= 0 || s.N <= 0 || s.K <= 0 || s.Batch <= 0 {
		return fmt.Errorf("gemm dimensions M=%d N=%d K=%d batch=%d must be positive", s.M, s.N, s.K, s.Batch)
	}
	need := func(what string, t Tensor, rows, ld, cols, stride int) error {
		if !t.Valid() {
			return fmt.Errorf("gemm %s missing", what)
		}
		if ld < cols {
			return fmt.Errorf("gemm %s: leading dimension %d < %d", what, ld, cols)
		}
		if got, want := t.Numel(), span(s.Batch, stride, rows, ld, cols); got < want {
			return fmt.Errorf("gemm %s: view of %d elements, the access spans %d", what, got, want)
		}
		return nil
	}
	ar, ac := s.M, s.K
	if s.TransA {
		ar, ac = s.K, s.M
	}
	br, bc := s.K, s.N
	if s.TransB {
		br, bc = s.N, s.K
	}
	if err := need("A", a, ar, s.LdA, ac, s.StrideA); err != nil {
		return err
	}
	if err := need("B", b, br, s.LdB, bc, s.StrideB); err != nil {
		return err
	}
	if err := need("C", c, s.M, s.LdC, s.N, s.StrideC); err != nil {
		return err
	}
	switch s.BiasMode {
	case 0:
	case 1, 2:
		want := s.M
		if s.BiasMode == 2 {
			want = s.N
		}
		if bias.Numel() < want {
			return fmt.Errorf("gemm bias has %d elements, needs %d", bias.Numel(), want)
		}
	default:
		return fmt.Errorf("gemm bias mode %d", s.BiasMode)
	}
	return nil
}

// GEMM appends C = act(alpha op(A) op(B) + bias) over explicit views (see
// GEMMShape); bias may be the zero Tensor when s.BiasMode is 0. Attention
// uses it with strides to run every head in one launch.
func (n *Net) GEMM(name string, a, b, bias, c Tensor, s GEMMShape, act Act) {
	if !n.ok() {
		return
	}
	n.gemm(name, a, b, bias, c, s, act)
}

// Linear appends a fully connected layer with out outputs: for a vector x
// [in] a GEMV (nn_gemv, W [out][in]), for a matrix x [rows][in] a GEMM
// computing x W + b (W [in][out]).
func (n *Net) Linear(name string, x Tensor, out int, act Act) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	switch len(x.Shape) {
	case 1:
		in := x.Shape[0]
		w := n.Weight(name+"/w", He(in), out, in)
		b := n.Weight(name+"/b", Small(), out)
		y := n.Activation(name, out)
		if !n.ok() {
			return Tensor{}
		}
		args := []workloads.ArgSpec{w.Arg(device.Read), x.Arg(device.Read), b.Arg(device.Read), y.Arg(device.Write), s32(out), s32(in), s32(int(act))}
		rowsPerBlock := elemBlock / 32
		n.launch(name, "nn_gemv", device.D1(ceilDiv(out, rowsPerBlock)), device.D1(elemBlock), args,
			2*float64(out*in)+float64(out)*act.flops(), 4*float64(w.Numel()+in+2*out), func(m *Memory) {
				GEMVRef(m.View(w), m.View(x), m.View(b), m.View(y), out, in, act)
			})
		return y
	case 2:
		rows, in := x.Shape[0], x.Shape[1]
		w := n.Weight(name+"/w", Init{Bound: He(in).Bound}, in, out) // [in][out]: no per-unit rows
		b := n.Weight(name+"/b", Small(), out)
		y := n.Activation(name, rows, out)
		if !n.ok() {
			return Tensor{}
		}
		n.gemm(name, x, w, b, y, GEMMShape{M: rows, N: out, K: in, LdA: in, LdB: out, LdC: out, Batch: 1, BiasMode: 2, Alpha: 1}, act)
		return y
	}
	return n.failf("%s: linear input shape %v is neither [in] nor [rows,in]", name, x.Shape)
}

// Pool appends a k x k max or average pooling with stride and padding.
func (n *Net) Pool(name string, x Tensor, kind PoolKind, k, stride, pad int) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(x.Shape) != 3 || k <= 0 || stride <= 0 || pad < 0 || pad >= k || (kind != MaxPool && kind != AvgPool) {
		return n.failf("%s: bad pooling (input %v, kind %d, k %d, stride %d, pad %d)", name, x.Shape, kind, k, stride, pad)
	}
	c, h, w := x.C(), x.H(), x.W()
	ho, wo := (h+2*pad-k)/stride+1, (w+2*pad-k)/stride+1
	if ho <= 0 || wo <= 0 {
		return n.failf("%s: %dx%d pooling leaves no output of %dx%d", name, k, k, h, w)
	}
	y := n.Activation(name, c, ho, wo)
	if !n.ok() {
		return Tensor{}
	}
	args := []workloads.ArgSpec{x.Arg(device.Read), y.Arg(device.Write), s32(c), s32(h), s32(w), s32(ho), s32(wo), s32(k), s32(stride), s32(pad), s32(int(kind))}
	n.launch(name, "nn_pool2d", elemGrid(y.Numel()), device.D1(elemBlock), args,
		float64(y.Numel()*k*k), 4*float64(x.Numel()+y.Numel()), func(m *Memory) {
			Pool2DRef(m.View(x), m.View(y), c, h, w, ho, wo, k, stride, pad, kind)
		})
	return y
}

// GlobalAvgPool appends the mean over each channel: [C,H,W] -> [C].
func (n *Net) GlobalAvgPool(name string, x Tensor) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(x.Shape) != 3 {
		return n.failf("%s: input shape %v is not [C,H,W]", name, x.Shape)
	}
	c, hw := x.C(), x.H()*x.W()
	y := n.Activation(name, c)
	if !n.ok() {
		return Tensor{}
	}
	args := []workloads.ArgSpec{x.Arg(device.Read), y.Arg(device.Write), s32(c), s32(hw)}
	n.launch(name, "nn_global_avgpool", device.D1(ceilDiv(c, elemBlock/32)), device.D1(elemBlock), args,
		float64(x.Numel()), 4*float64(x.Numel()+c), func(m *Memory) {
			GlobalAvgPoolRef(m.View(x), m.View(y), c, hw)
		})
	return y
}

// Unary appends y = act(x) (ActNone copies).
func (n *Net) Unary(name string, x Tensor, act Act) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if !x.Valid() || act < 0 || act >= numActs {
		return n.failf("%s: bad unary (input %v, act %d)", name, x.Shape, act)
	}
	y := n.Activation(name, x.Shape...)
	if !n.ok() {
		return Tensor{}
	}
	cnt := x.Numel()
	args := []workloads.ArgSpec{x.Arg(device.Read), y.Arg(device.Write), s32(cnt), s32(int(act))}
	n.launch(name, "nn_unary", elemGrid(cnt), device.D1(elemBlock), args,
		float64(cnt)*act.flops(), 8*float64(cnt), func(m *Memory) {
			xs, ys := m.View(x), m.View(y)
			for i := range ys {
				ys[i] = act.Apply(xs[i])
			}
		})
	return y
}

// BinaryOp is nn_binary's operation.
type BinaryOp int

const (
	OpAdd BinaryOp = iota
	OpMul
)

// Binary appends y = act(a op b) elementwise over equal shapes.
func (n *Net) Binary(name string, a, b Tensor, op BinaryOp, act Act) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if !a.Valid() || a.Numel() != b.Numel() || (op != OpAdd && op != OpMul) || act < 0 || act >= numActs {
		return n.failf("%s: bad binary op %d on %v and %v", name, op, a.Shape, b.Shape)
	}
	y := n.Activation(name, a.Shape...)
	if !n.ok() {
		return Tensor{}
	}
	cnt := a.Numel()
	args := []workloads.ArgSpec{a.Arg(device.Read), b.Arg(device.Read), y.Arg(device.Write), s32(cnt), s32(int(op)), s32(int(act))}
	n.launch(name, "nn_binary", elemGrid(cnt), device.D1(elemBlock), args,
		float64(cnt)*(1+act.flops()), 12*float64(cnt), func(m *Memory) {
			as, bs, ys := m.View(a), m.View(b), m.View(y)
			for i := range ys {
				v := as[i] + bs[i]
				if op == OpMul {
					v = as[i] * bs[i]
				}
				ys[i] = act.Apply(v)
			}
		})
	return y
}

// Affine appends a per-channel affine map y = act(x*scale[c] + bias[c])
// with weights name/scale (around 1) and name/bias: batch norm in inference
// form where it cannot be folded into a convolution.
func (n *Net) Affine(name string, x Tensor, act Act) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(x.Shape) != 3 {
		return n.failf("%s: input shape %v is not [C,H,W]", name, x.Shape)
	}
	c, hw := x.C(), x.H()*x.W()
	sc := n.Weight(name+"/scale", Init{Center: 1, Bound: 0.1}, c)
	bi := n.Weight(name+"/bias", Small(), c)
	y := n.Activation(name, x.Shape...)
	if !n.ok() {
		return Tensor{}
	}
	args := []workloads.ArgSpec{x.Arg(device.Read), sc.Arg(device.Read), bi.Arg(device.Read), y.Arg(device.Write), s32(c), s32(hw), s32(int(act))}
	n.launch(name, "nn_channel_affine", elemGrid(c*hw), device.D1(elemBlock), args,
		float64(c*hw)*(2+act.flops()), 4*float64(2*c*hw+2*c), func(m *Memory) {
			xs, ss, bs, ys := m.View(x), m.View(sc), m.View(bi), m.View(y)
			for i := range ys {
				ch := i / hw
				ys[i] = act.Apply(xs[i]*ss[ch] + bs[ch])
			}
		})
	return y
}

// maxSumInputs is how many inputs one nn_sum or nn_concat launch takes.
const maxSumInputs = 8

// Sum appends y = act(scale * sum_j coef_j * x_j) over inputs of equal size.
// coefs is nil (all 1) or one entry per input: a one-element tensor in
// device memory (a gate, an aggregation weight) or the zero Tensor for 1.
// More than 8 inputs run as a chain of launches (partial sums name/part<i>).
func (n *Net) Sum(name string, xs []Tensor, coefs []Tensor, scale float32, act Act) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(xs) == 0 || (coefs != nil && len(coefs) != len(xs)) || act < 0 || act >= numActs {
		return n.failf("%s: sum of %d inputs with %d coefficients", name, len(xs), len(coefs))
	}
	for i, x := range xs {
		if !x.Valid() || x.Numel() != xs[0].Numel() {
			return n.failf("%s: input %d shape %v differs from %v", name, i, x.Shape, xs[0].Shape)
		}
		if coefs != nil && coefs[i].Valid() && coefs[i].Numel() != 1 {
			return n.failf("%s: coefficient %d has %d elements, want 1", name, i, coefs[i].Numel())
		}
	}
	if coefs == nil {
		coefs = make([]Tensor, len(xs))
	}
	// Chain: each launch sums up to 8 terms, the previous partial sum (with
	// coefficient 1) being one of them; scale and act apply only at the end.
	var acc Tensor
	i, part := 0, 0
	for i < len(xs) {
		take := min(len(xs)-i, maxSumInputs)
		if acc.Valid() {
			take = min(len(xs)-i, maxSumInputs-1)
		}
		last := i+take == len(xs)
		outName := name
		if !last {
			outName = fmt.Sprintf("%s/part%d", name, part)
		}
		ins, cs := append([]Tensor(nil), xs[i:i+take]...), append([]Tensor(nil), coefs[i:i+take]...)
		if acc.Valid() {
			ins, cs = append([]Tensor{acc}, ins...), append([]Tensor{{}}, cs...)
		}
		sc, a := float32(1), ActNone
		if last {
			sc, a = scale, act
		}
		acc = n.sumLaunch(outName, ins, cs, sc, a)
		i += take
		part++
	}
	return acc
}

func (n *Net) sumLaunch(name string, xs, coefs []Tensor, scale float32, act Act) Tensor {
	y := n.Activation(name, xs[0].Shape...)
	if !n.ok() {
		return Tensor{}
	}
	cnt := y.Numel()
	args := []workloads.ArgSpec{y.Arg(device.Write), s32(cnt), s32(len(xs)), workloads.F32Arg(scale), s32(int(act))}
	for j := 0; j < maxSumInputs; j++ {
		if j < len(xs) {
			args = append(args, xs[j].Arg(device.Read))
		} else {
			args = append(args, nullPtr)
		}
	}
	for j := 0; j < maxSumInputs; j++ {
		if j < len(xs) && coefs[j].Valid() {
			args = append(args, coefs[j].Arg(device.Read))
		} else {
			args = append(args, nullPtr)
		}
	}
	n.launch(name, "nn_sum", elemGrid(cnt), device.D1(elemBlock), args,
		float64(cnt)*(2*float64(len(xs))+act.flops()), 4*float64(cnt*(len(xs)+1)), func(m *Memory) {
			ys := m.View(y)
			vs := make([][]float32, len(xs))
			cv := make([]float32, len(xs))
			hasC := make([]bool, len(xs))
			for j := range xs {
				vs[j] = m.View(xs[j])
				if coefs[j].Valid() {
					cv[j], hasC[j] = m.View(coefs[j])[0], true
				}
			}
			for i := range ys {
				var acc float32
				for j := range vs {
					v := vs[j][i]
					if hasC[j] {
						v *= cv[j]
					}
					acc += v
				}
				ys[i] = act.Apply(scale * acc)
			}
		})
	return y
}

// Concat appends the concatenation of feature maps along channels (one
// nn_concat launch per 8 inputs, each writing its channel range).
func (n *Net) Concat(name string, xs ...Tensor) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(xs) == 0 {
		return n.failf("%s: concat of nothing", name)
	}
	total := 0
	for i, x := range xs {
		if len(x.Shape) != 3 || x.H() != xs[0].H() || x.W() != xs[0].W() {
			return n.failf("%s: input %d shape %v does not match %v", name, i, x.Shape, xs[0].Shape)
		}
		total += x.C()
	}
	h, w := xs[0].H(), xs[0].W()
	y := n.Activation(name, total, h, w)
	if !n.ok() {
		return Tensor{}
	}
	hw := h * w
	c0 := 0
	for i := 0; i < len(xs); i += maxSumInputs {
		part := xs[i:min(i+maxSumInputs, len(xs))]
		pc := 0
		for _, x := range part {
			pc += x.C()
		}
		dst := y.Slice(c0, c0+pc)
		args := []workloads.ArgSpec{dst.Arg(device.Write), s32(hw), s32(len(part))}
		for j := 0; j < maxSumInputs; j++ {
			if j < len(part) {
				args = append(args, part[j].Arg(device.Read))
			} else {
				args = append(args, nullPtr)
			}
		}
		for j := 0; j < maxSumInputs; j++ {
			c := 0
			if j < len(part) {
				c = part[j].C()
			}
			args = append(args, s32(c))
		}
		lname := name
		if len(xs) > maxSumInputs {
			lname = fmt.Sprintf("%s/%d", name, i/maxSumInputs)
		}
		n.launch(lname, "nn_concat", elemGrid(pc*hw), device.D1(elemBlock), args, 0, 8*float64(pc*hw), func(m *Memory) {
			ys := m.View(dst)
			off := 0
			for _, x := range part {
				off += copy(ys[off:], m.View(x))
			}
		})
		c0 += pc
	}
	return y
}

// Upsample2x appends nearest-neighbour 2x upsampling of a feature map.
func (n *Net) Upsample2x(name string, x Tensor) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(x.Shape) != 3 {
		return n.failf("%s: input shape %v is not [C,H,W]", name, x.Shape)
	}
	c, h, w := x.C(), x.H(), x.W()
	y := n.Activation(name, c, 2*h, 2*w)
	if !n.ok() {
		return Tensor{}
	}
	args := []workloads.ArgSpec{x.Arg(device.Read), y.Arg(device.Write), s32(c), s32(h), s32(w)}
	n.launch(name, "nn_upsample2x", elemGrid(y.Numel()), device.D1(elemBlock), args, 0, 4*float64(x.Numel()+y.Numel()), func(m *Memory) {
		Upsample2xRef(m.View(x), m.View(y), c, h, w)
	})
	return y
}

// Mix appends y = sum_e coef[e] * experts[e] (CondConv's per-input kernel):
// experts is [E, ...], coef [E] in device memory; y has experts' shape
// without the first dimension.
func (n *Net) Mix(name string, experts, coef Tensor) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(experts.Shape) < 2 || coef.Numel() != experts.Shape[0] {
		return n.failf("%s: mix of experts %v with %d coefficients", name, experts.Shape, coef.Numel())
	}
	e := experts.Shape[0]
	y := n.Activation(name, experts.Shape[1:]...)
	if !n.ok() {
		return Tensor{}
	}
	cnt := y.Numel()
	args := []workloads.ArgSpec{experts.Arg(device.Read), coef.Arg(device.Read), y.Arg(device.Write), s32(e), s32(cnt)}
	n.launch(name, "nn_mix", elemGrid(cnt), device.D1(elemBlock), args, 2*float64(e*cnt), 4*float64((e+1)*cnt+e), func(m *Memory) {
		MixRef(m.View(experts), m.View(coef), m.View(y), e, cnt)
	})
	return y
}

// ConvWith appends a convolution whose weights w [Out, Cin/groups, KH, KW]
// and bias b [Out] are given (computed on the device, as CondConv's mixed
// kernels are) instead of created. Always a direct convolution.
func (n *Net) ConvWith(name string, x, w, b Tensor, c Conv) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	s, err := c.Shape(x)
	if err != nil {
		return n.failf("%s: %v", name, err)
	}
	fanIn := s.Cin / s.Groups * s.KH * s.KW
	if w.Numel() != s.Cout*fanIn || b.Numel() != s.Cout {
		return n.failf("%s: weights of %d and bias of %d elements, want %d and %d", name, w.Numel(), b.Numel(), s.Cout*fanIn, s.Cout)
	}
	y := n.Activation(name, s.Cout, s.Ho, s.Wo)
	if !n.ok() {
		return Tensor{}
	}
	args := []workloads.ArgSpec{x.Arg(device.Read), w.Arg(device.Read), b.Arg(device.Read), y.Arg(device.Write),
		s32(s.Cin), s32(s.H), s32(s.W), s32(s.Cout), s32(s.Ho), s32(s.Wo), s32(s.KH), s32(s.KW),
		s32(s.Stride), s32(s.PadH), s32(s.PadW), s32(s.Groups), s32(int(c.Act))}
	act := c.Act
	flops := 2*float64(fanIn)*float64(y.Numel()) + float64(y.Numel())*act.flops()
	n.launch(name, "nn_conv2d", elemGrid(y.Numel()), device.D1(elemBlock), args, flops,
		4*float64(x.Numel()+w.Numel()+b.Numel()+y.Numel()), func(m *Memory) {
			Conv2DRef(m.View(x), m.View(w), m.View(b), m.View(y), s, act)
		})
	return y
}

// Softmax appends a row softmax of scale*x over a [rows, cols] matrix.
func (n *Net) Softmax(name string, x Tensor, scale float32) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(x.Shape) != 2 {
		return n.failf("%s: input shape %v is not [rows,cols]", name, x.Shape)
	}
	rows, cols := x.Shape[0], x.Shape[1]
	y := n.Activation(name, rows, cols)
	if !n.ok() {
		return Tensor{}
	}
	args := []workloads.ArgSpec{x.Arg(device.Read), y.Arg(device.Write), s32(rows), s32(cols), workloads.F32Arg(scale)}
	n.launch(name, "nn_softmax", device.D1(rows), device.D1(elemBlock), args, 12*float64(rows*cols), 8*float64(rows*cols), func(m *Memory) {
		SoftmaxRef(m.View(x), m.View(y), rows, cols, scale)
	})
	return y
}

// LayerNorm appends a row layer norm of a [rows, cols] matrix with weights
// name/gamma (around 1) and name/beta.
func (n *Net) LayerNorm(name string, x Tensor, eps float32) Tensor {
	if !n.ok() {
		return Tensor{}
	}
	if len(x.Shape) != 2 || eps <= 0 || math.IsNaN(float64(eps)) {
		return n.failf("%s: layer norm of %v with eps %g", name, x.Shape, eps)
	}
	rows, cols := x.Shape[0], x.Shape[1]
	g := n.Weight(name+"/gamma", Init{Center: 1, Bound: 0.1}, cols)
	b := n.Weight(name+"/beta", Small(), cols)
	y := n.Activation(name, rows, cols)
	if !n.ok() {
		return Tensor{}
	}
	args := []workloads.ArgSpec{x.Arg(device.Read), g.Arg(device.Read), b.Arg(device.Read), y.Arg(device.Write), s32(rows), s32(cols), workloads.F32Arg(eps)}
	n.launch(name, "nn_layernorm", device.D1(rows), device.D1(elemBlock), args, 8*float64(rows*cols), 4*float64(2*rows*cols+2*cols), func(m *Memory) {
		LayerNormRef(m.View(x), m.View(g), m.View(b), m.View(y), rows, cols, eps)
	})
	return y
}
