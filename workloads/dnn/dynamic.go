package dnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/nn"
)

// DynamicParams configures a dynamic network.
type DynamicParams struct {
	// Variant is one of DynamicVariants.
	Variant string `yaml:"variant"`
	// Inputs is the number of 32x32 inputs, one step each.
	Inputs int `yaml:"inputs"`
	// Scale divides channel counts (1 = full size).
	Scale int `yaml:"scale"`
}

// DefaultDynamic is 8 full-size inputs of variant.
func DefaultDynamic(variant string) DynamicParams {
	return DynamicParams{Variant: variant, Inputs: 8, Scale: 1}
}

// Limits of the generators, besides the program limits of workloads (which
// the nn builder checks as the network grows): inputs are generated on
// the host before the network is built. The committed experiments use at
// most 8 inputs and BERT at 128 tokens, 1 layer.
const (
	MaxInputs = 1024
	MaxSeqLen = 1 << 16
	MaxLayers = 1024
)

// checkInputs bounds the inputs and the host memory their images take.
func checkInputs(inputs, channels, side int) error {
	if inputs > MaxInputs {
		return fmt.Errorf("dnn: inputs must be at most %d (dnn.MaxInputs), got %d", MaxInputs, inputs)
	}
	f := workloads.F
	return workloads.Product(f("inputs", inputs), f("channels", channels), f("side", side), f("side", side), f("bytes per float", 4)).
		Check("bytes of input images", workloads.MaxHostBytes, "workloads.MaxHostBytes")
}

// DynamicVariants lists the dynamic networks.
var DynamicVariants = []string{"instanas", "routing", "condconv"}

// side is the input resolution of the dynamic networks (CIFAR-10's).
const side = 32

// Dynamic builds a dynamic network program, one step per input.
func Dynamic(p DynamicParams, seed int64) (*workloads.Program, error) {
	n, err := dynamicNet(p, seed)
	if err != nil {
		return nil, err
	}
	prog, err := n.Finish()
	if err != nil {
		return nil, err
	}
	prog.Dynamic = true // each input's branch is chosen from its own activations
	return prog, nil
}

func dynamicNet(p DynamicParams, seed int64) (*nn.Net, error) {
	if p.Inputs < 1 || p.Scale < 1 {
		return nil, fmt.Errorf("dnn: inputs (%d) and scale (%d) must be at least 1", p.Inputs, p.Scale)
	}
	z := sizer{p.Scale}
	var body func(n *nn.Net, x nn.Tensor, img []float32) (nn.Tensor, error)
	switch p.Variant {
	case "instanas":
		body = func(n *nn.Net, x nn.Tensor, img []float32) (nn.Tensor, error) {
			return instanas(n, z, x, img, seed)
		}
	case "routing":
		body = func(n *nn.Net, x nn.Tensor, _ []float32) (nn.Tensor, error) { return routing(n, z, x) }
	case "condconv":
		body = func(n *nn.Net, x nn.Tensor, _ []float32) (nn.Tensor, error) { return condconv(n, z, x), nil }
	default:
		return nil, fmt.Errorf("dnn: unknown dynamic variant %q (known: %v)", p.Variant, DynamicVariants)
	}
	if err := checkInputs(p.Inputs, 3, side); err != nil {
		return nil, err
	}
	n := nn.New(fmt.Sprintf("%s/s%d", p.Variant, p.Scale), seed)
	imgs := textures(seed, p.Inputs)
	in := n.Input("input", imgs, p.Inputs, 3, side, side)
	per := 3 * side * side
	for i := 0; i < p.Inputs; i++ {
		if i > 0 {
			n.NextStep()
		}
		logits, err := body(n, in.At(i), imgs[i*per:(i+1)*per])
		if err != nil {
			return nil, err
		}
		n.Output(n.Unary(fmt.Sprintf("logits/%d", i), logits, nn.ActNone))
	}
	return n, n.Err()
}

// textures are inputs with per-image global structure (what a controller
// can tell apart after global pooling, as it tells real images apart):
// per channel a brightness, an oriented sinusoid of random frequency and
// amplitude, and noise.
func textures(seed int64, count int) []float32 {
	r := rand.New(rand.NewPCG(uint64(seed), 0x7e47))
	out := make([]float32, 0, count*3*side*side)
	for i := 0; i < count; i++ {
		for c := 0; c < 3; c++ {
			bright := 2*r.Float64() - 1
			amp := 1.5 * r.Float64()
			fx, fy := 2*math.Pi*r.Float64()/4, 2*math.Pi*r.Float64()/4
			phase := 2 * math.Pi * r.Float64()
			for y := 0; y < side; y++ {
				for x := 0; x < side; x++ {
					v := bright + amp*math.Sin(fx*float64(x)+fy*float64(y)+phase) + 0.3*(2*r.Float64()-1)
					out = append(out, float32(v))
				}
			}
		}
	}
	return out
}

// InstaNAS-like.

// instaCells are the 17 cells of the MobileNetV2 backbone (output channels
// and stride, CIFAR strides).
var instaCells = []struct{ out, stride int }{
	{16, 1}, {24, 1}, {24, 1}, {32, 2}, {32, 1}, {32, 1}, {64, 2}, {64, 1}, {64, 1}, {64, 1},
	{96, 1}, {96, 1}, {96, 1}, {160, 2}, {160, 1}, {160, 1}, {320, 1},
}

// instaModules are each cell's candidate inverted-residual modules
// (expansion ratio, depthwise kernel).
var instaModules = []struct{ expand, k int }{{3, 3}, {6, 3}, {3, 5}, {6, 5}, {6, 7}}

// instaController is the controller network: a small CNN whose sigmoid
// outputs are one keep-probability per (cell, module).
func instaController(n *nn.Net, z sizer, x nn.Tensor) nn.Tensor {
	h := n.Conv2D("ctrl/conv1", x, nn.Same(z.ch(16), 3, 2, nn.ActReLU))
	h = n.Conv2D("ctrl/conv2", h, nn.Same(z.ch(32), 3, 2, nn.ActReLU))
	g := n.GlobalAvgPool("ctrl/gap", h)
	return n.Linear("ctrl/fc", g, len(instaCells)*len(instaModules), nn.ActSigmoid)
}

// InstaNASChoice runs the controller on one 3x32x32 image on the CPU (a net
// of the controller alone; its weights are those of the full network, being
// generated from the seed and the layer names) and returns the modules each
// cell runs: those with probability above 0.5, or the most probable one.
func InstaNASChoice(img []float32, scale int, seed int64) ([][]int, error) {
	z := sizer{scale}
	c := nn.New("instanas-controller", seed)
	x := c.Input("ctrl/input", img, 3, side, side)
	probs, err := c.Value(instaController(c, z, x))
	if err != nil {
		return nil, err
	}
	m := len(instaModules)
	choice := make([][]int, len(instaCells))
	for cell := range instaCells {
		best := 0
		for j := 0; j < m; j++ {
			p := probs[cell*m+j]
			if p > 0.5 {
				choice[cell] = append(choice[cell], j)
			}
			if p > probs[cell*m+best] {
				best = j
			}
		}
		if len(choice[cell]) == 0 {
			choice[cell] = []int{best}
		}
	}
	return choice, nil
}

func instanas(n *nn.Net, z sizer, x nn.Tensor, img []float32, seed int64) (nn.Tensor, error) {
	choice, err := InstaNASChoice(img, z.scale, seed)
	if err != nil {
		return nn.Tensor{}, err
	}
	step := n.Step()
	// The controller also runs on the GPU; its output is kept per input
	// so Check compares what the GPU decided with what the host built.
	n.Output(n.Unary(fmt.Sprintf("ctrl/probs/%d", step), instaController(n, z, x), nn.ActNone))
	h := n.Conv2D("stem", x, nn.Same(z.ch(32), 3, 1, nn.ActReLU6))
	for ci, cell := range instaCells {
		out := z.ch(cell.out)
		var branches []nn.Tensor
		for _, mi := range choice[ci] {
			mod := instaModules[mi]
			name := fmt.Sprintf("cell%d/m%d", ci, mi)
			e := h.C() * mod.expand
			t := n.Conv2D(name+"/expand", h, nn.Same(e, 1, 1, nn.ActReLU6))
			t = n.Conv2D(name+"/dw", t, nn.Same(e, mod.k, cell.stride, nn.ActReLU6).WithGroups(e))
			branches = append(branches, n.Conv2D(name+"/project", t, nn.Same(out, 1, 1, nn.ActNone)))
		}
		if cell.stride == 1 && h.C() == out {
			branches = append(branches, h)
		}
		if len(branches) == 1 {
			h = branches[0]
		} else {
			h = n.Sum(fmt.Sprintf("cell%d", ci), branches, nil, 1, nn.ActNone)
		}
	}
	h = n.Conv2D("head", h, nn.Same(z.ch(1280), 1, 1, nn.ActReLU6))
	return n.Linear("fc", n.GlobalAvgPool("gap", h), 10, nn.ActNone), n.Err()
}

// Dynamic routing.

const (
	routeLayers = 16
	routeScales = 4
)

// Gate directions of a routing cell.
const (
	gateUp = iota
	gateKeep
	gateDown
)

type routePath struct {
	t    nn.Tensor
	coef nn.Tensor // the gate value (one element) weighting the path; zero Tensor = 1
}

// routing builds one input's dynamic-routing network: scale s has
// 16<<s channels at 16>>s resolution (a stride-2 stem first); at each of 16
// layers every cell with an incoming path aggregates its inputs weighted by
// their gates, applies a separable 3x3 convolution, a norm and a ReLU, and computes its gate
// max(0, tanh(linear(gap))) for the up, keep and down paths. Only paths with
// a positive gate (as the CPU reference computes it) are built. If a whole
// layer would end with no path, the keep path of the cell with the largest
// keep logit runs unweighted, so every input reaches the classifier.
func routing(n *nn.Net, z sizer, x nn.Tensor) (nn.Tensor, error) {
	ch := func(s int) int { return z.ch(16 << s) }
	stem := n.Conv2D("stem", x, nn.Same(ch(0), 3, 2, nn.ActReLU))
	incoming := make([][]routePath, routeScales)
	incoming[0] = []routePath{{t: stem}}
	for l := 0; l < routeLayers; l++ {
		next := make([][]routePath, routeScales)
		paths := 0
		bestCell, bestLogit := -1, float32(math.Inf(-1))
		cells := make([]nn.Tensor, routeScales)
		for s := 0; s < routeScales; s++ {
			if len(incoming[s]) == 0 {
				continue
			}
			name := fmt.Sprintf("l%d/s%d", l, s)
			h := n.SepConv(name+"/cell", aggregate(n, name+"/agg", incoming[s]), ch(s), 3, 1, nn.ActNone)
			h, err := normalize(n, name+"/norm", h)
			if err != nil {
				return nn.Tensor{}, err
			}
			h = n.Unary(name+"/relu", h, nn.ActReLU)
			cells[s] = h
			logits := n.Linear(name+"/gate", n.GlobalAvgPool(name+"/gap", h), 3, nn.ActNone)
			gate := n.Unary(name+"/gate_act", logits, nn.ActTanhReLU)
			lv, err := n.Value(logits)
			if err != nil {
				return nn.Tensor{}, err
			}
			if lv[gateKeep] > bestLogit {
				bestCell, bestLogit = s, lv[gateKeep]
			}
			for dir := gateUp; dir <= gateDown; dir++ {
				target := s + dir - 1
				if target < 0 || target >= routeScales || nn.ActTanhReLU.Apply(lv[dir]) <= 0 {
					continue
				}
				var t nn.Tensor
				switch dir {
				case gateUp:
					t = n.Conv2D(name+"/up", h, nn.Same(ch(target), 1, 1, nn.ActReLU))
					t = n.Upsample2x(name+"/up2x", t)
				case gateKeep:
					t = h
				case gateDown:
					t = n.Conv2D(name+"/down", h, nn.Same(ch(target), 3, 2, nn.ActReLU))
				}
				next[target] = append(next[target], routePath{t: t, coef: gate.Slice(dir, dir+1)})
				paths++
			}
		}
		if paths == 0 {
			next[bestCell] = []routePath{{t: cells[bestCell]}}
		}
		incoming = next
	}
	var heads []nn.Tensor
	for s := 0; s < routeScales; s++ {
		if len(incoming[s]) == 0 {
			continue
		}
		name := fmt.Sprintf("head/s%d", s)
		h := aggregate(n, name+"/agg", incoming[s])
		heads = append(heads, n.Linear(name, n.GlobalAvgPool(name+"/gap", h), z.ch(64), nn.ActReLU))
	}
	feat := heads[0]
	if len(heads) > 1 {
		feat = n.Sum("head", heads, nil, 1, nn.ActNone)
	}
	return n.Linear("fc", feat, 10, nn.ActNone), n.Err()
}

// normalize is a layer norm over a whole feature map (a group norm with one
// group): it stands in for the cells' batch norm, without which the gate
// factors (below 1) would shrink the signal layer after layer until the
// biases alone decide the output. It normalizes the convolution's output
// before the ReLU (conv-norm-ReLU), where the zero-mean weights keep the
// mean small against the spread: after a ReLU the mean subtraction would
// cancel most digits and amplify rounding differences between the GPU and
// the CPU reference.
func normalize(n *nn.Net, name string, x nn.Tensor) (nn.Tensor, error) {
	if !x.Valid() {
		return x, n.Err()
	}
	flat, err := x.Reshape(1, x.Numel())
	if err != nil {
		return nn.Tensor{}, err
	}
	return n.LayerNorm(name, flat, 1e-5).Reshape(x.Shape...)
}

// aggregate sums gated paths (one unweighted path passes through).
func aggregate(n *nn.Net, name string, ps []routePath) nn.Tensor {
	if len(ps) == 1 && !ps[0].coef.Valid() {
		return ps[0].t
	}
	ts := make([]nn.Tensor, len(ps))
	cs := make([]nn.Tensor, len(ps))
	for i, p := range ps {
		ts[i], cs[i] = p.t, p.coef
	}
	return n.Sum(name, ts, cs, 1, nn.ActNone)
}

// CondConv.

// condBlocks are EfficientNet-B0's inverted-residual blocks (output
// channels, expansion, kernel, stride) with CIFAR strides.
var condBlocks = []struct{ out, expand, k, stride int }{
	{16, 1, 3, 1}, {24, 6, 3, 2}, {24, 6, 3, 1}, {40, 6, 5, 2}, {40, 6, 5, 1},
	{80, 6, 3, 2}, {80, 6, 3, 1}, {80, 6, 3, 1}, {112, 6, 5, 1}, {112, 6, 5, 1},
	{192, 6, 5, 2}, {192, 6, 5, 1}, {320, 6, 3, 1},
}

// condExperts is the number of expert kernels per convolution.
const condExperts = 4

// condConv is one conditionally parameterized convolution: the kernel is
// the routing-weighted mix of the experts, computed on the GPU per input.
func condConv(n *nn.Net, name string, x, route nn.Tensor, c nn.Conv) nn.Tensor {
	if x.Valid() && len(x.Shape) != 3 {
		n.Fail(fmt.Errorf("dnn: %s: input %v", name, x.Shape))
		return nn.Tensor{}
	}
	if !x.Valid() {
		return nn.Tensor{}
	}
	fanIn := x.C() / c.Groups * c.KH * c.KW
	experts := n.Weight(name+"/experts", nn.He(fanIn), condExperts, c.Out, x.C()/c.Groups, c.KH, c.KW)
	w := n.Mix(name+"/mix", experts, route)
	b := n.Weight(name+"/b", nn.Small(), c.Out)
	return n.ConvWith(name, x, w, b, c)
}

func condconv(n *nn.Net, z sizer, x nn.Tensor) nn.Tensor {
	h := n.Conv2D("stem", x, nn.Same(z.ch(32), 3, 1, nn.ActSwish))
	for bi, blk := range condBlocks {
		name := fmt.Sprintf("block%d", bi)
		in, out := h.C(), z.ch(blk.out)
		// Routing weights of the block, shared by its three convolutions
		// (CondConv, section 3: per-example routing r(x) = sigmoid(GAP(x) R)).
		route := n.Linear(name+"/route", n.GlobalAvgPool(name+"/gap", h), condExperts, nn.ActSigmoid)
		t := h
		if blk.expand > 1 {
			t = condConv(n, name+"/expand", t, route, nn.Same(in*blk.expand, 1, 1, nn.ActSwish))
		}
		e := t.C()
		t = condConv(n, name+"/dw", t, route, nn.Same(e, blk.k, blk.stride, nn.ActSwish).WithGroups(e))
		t = condConv(n, name+"/project", t, route, nn.Same(out, 1, 1, nn.ActNone))
		if blk.stride == 1 && in == out {
			t = n.Binary(name+"/add", t, h, nn.OpAdd, nn.ActNone)
		}
		h = t
	}
	h = n.Conv2D("head", h, nn.Same(z.ch(1280), 1, 1, nn.ActSwish))
	return n.Linear("fc", n.GlobalAvgPool("gap", h), 10, nn.ActNone)
}
