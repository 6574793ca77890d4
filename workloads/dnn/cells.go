package dnn

import (
	"fmt"

	"github.com/gpusched/gpusched/workloads/nn"
)

// cellSpec is a NASNet-style cell as TensorFlow's nasnet_utils.BaseCell
// describes it: block b combines hidden states idx[2b] and idx[2b+1] through
// ops[2b] and ops[2b+1] with an add; hidden states 0 and 1 are the cell's
// (adjusted) input and the previous cell's output; the cell outputs the
// concatenation of the states not marked used.
type cellSpec struct {
	ops  []string
	idx  []int
	used []int
}

type cellPair struct{ normal, reduction cellSpec }

// nasnetA is NASNet-A (Zoph et al. 2018, figure 4; nasnet_utils.py).
var nasnetA = cellPair{
	normal: cellSpec{
		ops:  []string{"sep5", "sep3", "sep5", "sep3", "avg3", "none", "avg3", "avg3", "sep3", "none"},
		idx:  []int{0, 1, 1, 1, 0, 1, 1, 1, 0, 0},
		used: []int{1, 0, 0, 0, 0, 0, 0},
	},
	reduction: cellSpec{
		ops:  []string{"sep5", "sep7", "max3", "sep7", "avg3", "sep5", "none", "avg3", "sep3", "max3"},
		idx:  []int{0, 1, 0, 1, 0, 1, 3, 2, 2, 0},
		used: []int{1, 1, 1, 0, 0, 0, 0},
	},
}

// amoebaA is AmoebaNet-A (Real et al. 2019, figure 4; TensorFlow's
// amoeba_net network_utils).
var amoebaA = cellPair{
	normal: cellSpec{
		ops:  []string{"avg3", "max3", "sep3", "none", "none", "avg3", "sep3", "sep5", "avg3", "sep3"},
		idx:  []int{0, 0, 1, 1, 0, 1, 0, 2, 5, 0},
		used: []int{1, 0, 1, 0, 0, 1, 0},
	},
	reduction: cellSpec{
		ops:  []string{"sep3", "avg3", "max3", "sep7", "max3", "max3", "sep3", "1x7_7x1", "avg3", "sep7"},
		idx:  []int{1, 0, 0, 2, 1, 0, 4, 0, 1, 0},
		used: []int{1, 1, 0, 0, 1, 0, 0},
	},
}

// factorizedReduction halves the resolution without losing information:
// two 1x1 stride-2 convolutions, the second on the grid shifted by one
// pixel, concatenated (their batch norm folded into their biases).
func factorizedReduction(n *nn.Net, name string, x nn.Tensor, out int) nn.Tensor {
	x = n.Unary(name+"/relu", x, nn.ActReLU)
	ho, wo := (x.H()+1)/2, (x.W()+1)/2
	p1 := n.Conv2D(name+"/path1", x, nn.Valid(out/2, 1, 2, nn.ActNone))
	shifted := nn.Valid(out-out/2, 1, 2, nn.ActNone)
	shifted.PadH, shifted.PadW, shifted.OutH, shifted.OutW = -1, -1, ho, wo
	p2 := n.Conv2D(name+"/path2", x, shifted)
	return n.Concat(name, p1, p2)
}

// reluConv1x1 is ReLU, a 1x1 convolution (stride) and its folded batch norm.
func reluConv1x1(n *nn.Net, name string, x nn.Tensor, out, stride int) nn.Tensor {
	x = n.Unary(name+"/relu", x, nn.ActReLU)
	return n.Conv2D(name, x, nn.Valid(out, 1, stride, nn.ActNone))
}

// cell builds one cell; x is the current input, prev the previous cell's
// output (invalid for the first stem cell).
func cell(n *nn.Net, name string, spec cellSpec, x, prev nn.Tensor, filters, stride int) nn.Tensor {
	// _reduce_prev_layer: bring prev to x's resolution and the cell's width.
	switch {
	case !prev.Valid():
		prev = x
	case prev.H() != x.H():
		prev = factorizedReduction(n, name+"/prev", prev, filters)
	case prev.C() != filters:
		prev = reluConv1x1(n, name+"/prev", prev, filters, 1)
	}
	cur := reluConv1x1(n, name+"/1x1", x, filters, 1)
	states := []nn.Tensor{cur, prev}
	relu := map[int]nn.Tensor{} // ReLU of a state, shared by the ops reading it
	reluOf := func(i int) nn.Tensor {
		if t, ok := relu[i]; ok {
			return t
		}
		relu[i] = n.Unary(fmt.Sprintf("%s/relu%d", name, i), states[i], nn.ActReLU)
		return relu[i]
	}
	for b := 0; b < len(spec.ops)/2; b++ {
		var hs [2]nn.Tensor
		for side := 0; side < 2; side++ {
			i := spec.idx[2*b+side]
			s := 1
			if i < 2 {
				s = stride
			}
			op := spec.ops[2*b+side]
			opName := fmt.Sprintf("%s/b%d/%s%d", name, b, op, side)
			h := states[i]
			switch op {
			case "sep3", "sep5", "sep7":
				k := int(op[3] - '0')
				h = n.SepConv(opName+"/a", reluOf(i), filters, k, s, nn.ActReLU)
				h = n.SepConv(opName+"/b", h, filters, k, 1, nn.ActNone)
			case "avg3", "max3":
				kind := nn.AvgPool
				if op == "max3" {
					kind = nn.MaxPool
				}
				h = n.Pool(opName, h, kind, 3, s, 1)
				if h.Valid() && h.C() != filters {
					h = n.Conv2D(opName+"/1x1", h, nn.Valid(filters, 1, 1, nn.ActNone))
				}
			case "none":
				if s > 1 || h.C() != filters {
					h = n.Conv2D(opName, reluOf(i), nn.Valid(filters, 1, s, nn.ActNone))
				}
			case "1x7_7x1":
				h = n.Conv2D(opName+"/1x7", reluOf(i), nn.Conv{Out: filters, KH: 1, KW: 7, Stride: s, PadW: 3, Groups: 1, Act: nn.ActReLU})
				h = n.Conv2D(opName+"/7x1", h, nn.Rect(filters, 7, 1, nn.ActNone))
			default:
				n.Fail(fmt.Errorf("dnn: cell %s: unknown op %q", name, op))
				return nn.Tensor{}
			}
			hs[side] = h
		}
		states = append(states, n.Sum(fmt.Sprintf("%s/b%d", name, b), hs[:], nil, 1, nn.ActNone))
	}
	if n.Err() != nil {
		return nn.Tensor{}
	}
	last := states[len(states)-1]
	var outs []nn.Tensor
	for i, s := range states {
		if i < len(spec.used) && spec.used[i] == 1 {
			continue
		}
		if s.H() != last.H() || s.C() != last.C() {
			if s.H() != last.H() {
				s = factorizedReduction(n, fmt.Sprintf("%s/reduce%d", name, i), s, last.C())
			} else {
				s = reluConv1x1(n, fmt.Sprintf("%s/reduce%d", name, i), s, last.C(), 1)
			}
		}
		outs = append(outs, s)
	}
	return n.Concat(name, outs...)
}

// cellNet is the ImageNet NASNet skeleton (TensorFlow's nasnet.py,
// mobile configuration): a 3x3 stride-2 stem convolution, two stem
// reduction cells at 1/4 and 1/2 of the filters, then 3 stacks of 4 normal
// cells with a reduction cell (doubling the filters) between stacks, and
// ReLU, global average pooling and the classifier.
func cellNet(n *nn.Net, z sizer, x nn.Tensor, cells cellPair, filters int) nn.Tensor {
	const perStack = 4
	f := z.even(filters)
	x = n.Conv2D("stem", x, nn.Valid(z.ch(32), 3, 2, nn.ActNone))
	outs := []nn.Tensor{{}, x}
	scaling := []int{4, 2}
	for i, div := range scaling {
		x = cell(n, fmt.Sprintf("stem%d", i), cells.reduction, x, outs[len(outs)-2], max(1, f/div), 2)
		outs = append(outs, x)
	}
	cur := f
	for c := 0; c < 3*perStack; c++ {
		if c > 0 && c%perStack == 0 {
			cur *= 2
			x = cell(n, fmt.Sprintf("reduce%d", c/perStack), cells.reduction, x, outs[len(outs)-2], cur, 2)
			outs = append(outs, x)
		}
		x = cell(n, fmt.Sprintf("cell%d", c), cells.normal, x, outs[len(outs)-2], cur, 1)
		outs = append(outs, x)
	}
	x = n.Unary("final/relu", x, nn.ActReLU)
	return classifier(n, x, 1000)
}
