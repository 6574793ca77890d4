package kesco

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gpusched/gpusched/workloads"
)

// cpuRun executes a program's kernels in program order on the CPU, each
// through the Go reference of its kernel applied to the launch's actual
// arguments. It checks the wiring of every program (argument order, sizes,
// which buffer feeds which kernel) against the references that Check
// composes independently, without a GPU. Reductions put their whole result
// in the first partial (the GPU spreads it over blocks; the combining
// kernels add them all).
func cpuRun(p *workloads.Program) (map[string][]byte, error) {
	mem := make([][]byte, len(p.Buffers))
	for i, b := range p.Buffers {
		mem[i] = make([]byte, b.Bytes)
		if b.Init != nil {
			b.Init(mem[i])
		}
	}
	for _, st := range p.Steps {
		for _, op := range st.Ops {
			if err := cpuKernel(op, mem); err != nil {
				return nil, fmt.Errorf("%s: %w", op.Name, err)
			}
		}
	}
	out := map[string][]byte{}
	for i, b := range p.Buffers {
		if b.Output {
			out[b.Name] = mem[i]
		}
	}
	return out, nil
}

func getF(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func getI(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func putF(b []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
}

func cpuKernel(op workloads.Op, mem [][]byte) error {
	var bufs [][]byte
	var ints []int
	var fls []float32
	for _, a := range op.Args {
		if a.Buf >= 0 {
			bufs = append(bufs, mem[a.Buf])
		} else {
			ints = append(ints, int(int32(uint32(a.Bits))))
			fls = append(fls, math.Float32frombits(uint32(a.Bits)))
		}
	}
	f := func(i int) []float32 { return getF(bufs[i]) }
	switch op.Kernel.Name {
	case "kesco_square":
		putF(bufs[1], refSquare(f(0)[:ints[0]]))
	case "kesco_diff_partial":
		p := make([]float32, len(bufs[2])/4)
		p[0] = float32(refDiffSum(f(0)[:ints[0]], f(1)[:ints[0]]))
		putF(bufs[2], p)
	case "kesco_sum_final", "kesco_sum_partial":
		n := ints[0]
		s := 0.0
		for _, v := range f(0)[:n] {
			s += float64(v)
		}
		p := make([]float32, len(bufs[1])/4)
		p[0] = float32(s)
		putF(bufs[1], p)
	case "kesco_black_scholes":
		putF(bufs[1], refBlackScholes(f(0)[:ints[0]], float64(fls[1]), float64(fls[2]), float64(fls[3]), float64(fls[4])))
	case "kesco_row_zscore":
		putF(bufs[1], refRowZScore(f(0), ints[0], ints[1]))
	case "kesco_matmul_bias":
		putF(bufs[3], refMatmulBias(f(0), f(1), f(2), ints[0], ints[1], ints[2]))
	case "kesco_softmax_rows":
		putF(bufs[1], refSoftmaxRows(f(0), ints[0], ints[1]))
	case "kesco_argmax_sum":
		sum, label := refArgmaxSum(f(0), f(1), ints[0], ints[1])
		putF(bufs[2], sum)
		for i, l := range label {
			binary.LittleEndian.PutUint32(bufs[3][4*i:], uint32(l))
		}
	case "kesco_spmv":
		n := ints[0]
		putF(bufs[4], refSpmv(csr{n: n, rowptr: getI(bufs[0]), col: getI(bufs[1]), val: f(2)}, f(3)))
	case "kesco_divide_by_sum":
		m, n := ints[0], ints[1]
		s := 0.0
		for _, v := range f(1)[:m] {
			s += float64(v)
		}
		o := make([]float32, n)
		for i, v := range f(0)[:n] {
			o[i] = float32(float64(v) / s)
		}
		putF(bufs[2], o)
	case "kesco_blur":
		putF(bufs[2], refBlur(f(0), f(1), ints[0], ints[1], ints[2]))
	case "kesco_sobel":
		putF(bufs[1], refSobel(f(0), ints[0], ints[1]))
	case "kesco_minmax_partial":
		a := f(0)[:ints[0]]
		mn, mx := a[0], a[0]
		for _, v := range a {
			mn, mx = min(mn, v), max(mx, v)
		}
		p := make([]float32, len(bufs[1])/4)
		for i := 0; i+1 < len(p); i += 2 {
			p[i], p[i+1] = mn, mx
		}
		putF(bufs[1], p)
	case "kesco_extend":
		m, n := ints[0], ints[1]
		p := f(1)
		mn, mx := p[0], p[1]
		for j := 1; j < m; j++ {
			mn, mx = min(mn, p[2*j]), max(mx, p[2*j+1])
		}
		inv := float32(0)
		if mx > mn {
			inv = 1 / (mx - mn)
		}
		o := make([]float32, n)
		for i, v := range f(0)[:n] {
			o[i] = (v - mn) * inv
		}
		putF(bufs[2], o)
	case "kesco_unsharpen":
		putF(bufs[2], refUnsharpen(f(0)[:ints[1]], f(1), fls[0]))
	case "kesco_combine":
		putF(bufs[3], refCombine(f(0)[:ints[0]], f(1), f(2)))
	case "kesco_conv3x3_relu":
		putF(bufs[3], refConv3x3ReLU(f(0), f(1), f(2), ints[0], ints[1], ints[2], ints[3]))
	case "kesco_maxpool2":
		putF(bufs[1], refMaxPool2(f(0), ints[0], ints[1], ints[2]))
	case "kesco_concat":
		na, nb := ints[0], ints[1]
		putF(bufs[2], append(f(0)[:na:na], f(1)[:nb]...))
	case "kesco_dense":
		m := op.Grid.X
		putF(bufs[3], refDense(f(0), f(1), f(2), ints[0], m))
	case "kesco_bias_gelu":
		putF(bufs[2], refBiasGeLU(f(0)[:ints[0]], f(1)[:ints[1]]))
	case "kesco_bias_silu":
		putF(bufs[2], refBiasSiLU(f(0)[:ints[0]], f(1)[:ints[1]]))
	case "kesco_bias_gated_relu":
		putF(bufs[3], refBiasGatedReLU(f(0)[:ints[0]], f(1), f(2)[:ints[1]]))
	case "kesco_bias_residual":
		putF(bufs[3], refBiasResidual(f(2)[:ints[1]], f(0)[:ints[0]], f(1)))
	case "kesco_bias_residual3":
		putF(bufs[4], refBiasResidual(f(3)[:ints[1]], f(0)[:ints[0]], f(1), f(2)))
	case "kesco_sum4":
		n := ints[0]
		putF(bufs[4], refSum4(f(0)[:n], f(1), f(2), f(3)))
	default:
		return fmt.Errorf("no CPU model of kernel %s", op.Kernel.Name)
	}
	return nil
}
