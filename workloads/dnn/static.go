package dnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/nn"
)

// StaticParams configures a static graph.
type StaticParams struct {
	// Model is one of StaticModels.
	Model string `yaml:"model"`
	// Inputs is the number of inferences, one step each (activations are
	// reused between steps, each input has its own output buffer).
	Inputs int `yaml:"inputs"`
	// Scale divides channels and resolution (1 = full size).
	Scale int `yaml:"scale"`
	// SeqLen is BERT's sequence length at scale 1 (divided by Scale).
	SeqLen int `yaml:"seq_len"`
	// Layers is the number of BERT encoder layers.
	Layers int `yaml:"layers"`
}

// DefaultStatic is one full-size inference of model.
func DefaultStatic(model string) StaticParams {
	return StaticParams{Model: model, Inputs: 1, Scale: 1, SeqLen: 128, Layers: 1}
}

// StaticModels lists the static graphs.
var StaticModels = []string{"inception-v3", "resnext-50", "nasnet-mobile", "nasnet-a", "amoebanet", "squeezenet", "randwire", "bert"}

type sizer struct{ scale int }

// ch is channel count c reduced by the scale, at least 4 (or c): narrower
// layers of random ReLU networks die (every unit negative) too often.
func (z sizer) ch(c int) int { return max(min(c, 4), (c+z.scale/2)/z.scale) }

// even is ch rounded to an even count of at least 2.
func (z sizer) even(c int) int { return max(2, 2*((c/z.scale+1)/2)) }

// res is resolution r reduced by the scale, at least lo.
func (z sizer) res(r, lo int) int { return max(lo, r/z.scale) }

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// images are deterministic inputs, uniform in [-1, 1].
func images(seed int64, n int) []float32 {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed1a6e))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(2*r.Float64() - 1)
	}
	return v
}

// Static builds a static graph program; seed fixes weights, inputs and (for
// RandWire) the random graph.
func Static(p StaticParams, seed int64) (*workloads.Program, error) {
	n, err := staticNet(p, seed)
	if err != nil {
		return nil, err
	}
	return n.Finish()
}

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x9a9d)) }

func staticNet(p StaticParams, seed int64) (*nn.Net, error) {
	if p.Inputs < 1 || p.Scale < 1 {
		return nil, fmt.Errorf("dnn: inputs (%d) and scale (%d) must be at least 1", p.Inputs, p.Scale)
	}
	z := sizer{p.Scale}
	type model struct {
		c, hw int // input channels and side (before scaling)
		lo    int // minimum side
		body  func(n *nn.Net, x nn.Tensor) nn.Tensor
	}
	var m model
	switch p.Model {
	case "inception-v3":
		m = model{3, 299, 75, func(n *nn.Net, x nn.Tensor) nn.Tensor { return inceptionV3(n, z, x) }}
	case "resnext-50":
		m = model{3, 224, 32, func(n *nn.Net, x nn.Tensor) nn.Tensor { return resnext50(n, z, x) }}
	case "nasnet-mobile", "nasnet-a":
		m = model{3, 224, 32, func(n *nn.Net, x nn.Tensor) nn.Tensor { return cellNet(n, z, x, nasnetA, 44) }}
	case "amoebanet":
		m = model{3, 224, 32, func(n *nn.Net, x nn.Tensor) nn.Tensor { return cellNet(n, z, x, amoebaA, 50) }}
	case "squeezenet":
		m = model{3, 224, 32, func(n *nn.Net, x nn.Tensor) nn.Tensor { return squeezenet(n, z, x) }}
	case "randwire":
		// One random graph per stage, the same for every input.
		g := newRand(seed)
		var stages [3][][]int
		for i := range stages {
			stages[i] = wsGraph(g, 32, 4, 0.75)
		}
		m = model{3, 224, 32, func(n *nn.Net, x nn.Tensor) nn.Tensor { return randwire(n, z, x, stages) }}
	case "bert":
		if p.SeqLen < 1 || p.Layers < 1 {
			return nil, fmt.Errorf("dnn: bert needs seq_len (%d) and layers (%d) of at least 1", p.SeqLen, p.Layers)
		}
		if p.SeqLen > MaxSeqLen || p.Layers > MaxLayers || p.Inputs > MaxInputs {
			return nil, fmt.Errorf("dnn: bert's seq_len (%d), layers (%d) and inputs (%d) must be at most %d, %d and %d (dnn.MaxSeqLen, MaxLayers, MaxInputs)",
				p.SeqLen, p.Layers, p.Inputs, MaxSeqLen, MaxLayers, MaxInputs)
		}
		return bert(p, z, seed)
	default:
		return nil, fmt.Errorf("dnn: unknown static model %q (known: %v)", p.Model, StaticModels)
	}
	side := z.res(m.hw, m.lo)
	if err := checkInputs(p.Inputs, m.c, side); err != nil {
		return nil, err
	}
	n := nn.New(fmt.Sprintf("%s/s%d", p.Model, p.Scale), seed)
	in := n.Input("input", images(seed, p.Inputs*m.c*side*side), p.Inputs, m.c, side, side)
	for i := 0; i < p.Inputs; i++ {
		if i > 0 {
			n.NextStep()
		}
		logits := m.body(n, in.At(i))
		// Each input keeps its own logits.
		out := n.Unary(fmt.Sprintf("logits/%d", i), logits, nn.ActNone)
		n.Output(out)
	}
	return n, n.Err()
}

// conv is a convolution followed by its folded batch norm and ReLU.
func conv(n *nn.Net, name string, x nn.Tensor, out, k, stride int) nn.Tensor {
	return n.Conv2D(name, x, nn.Same(out, k, stride, nn.ActReLU))
}

func convValid(n *nn.Net, name string, x nn.Tensor, out, k, stride int) nn.Tensor {
	return n.Conv2D(name, x, nn.Valid(out, k, stride, nn.ActReLU))
}

func convRect(n *nn.Net, name string, x nn.Tensor, out, kh, kw int) nn.Tensor {
	return n.Conv2D(name, x, nn.Rect(out, kh, kw, nn.ActReLU))
}

// classifier is global average pooling and a linear layer.
func classifier(n *nn.Net, x nn.Tensor, classes int) nn.Tensor {
	return n.Linear("fc", n.GlobalAvgPool("gap", x), classes, nn.ActNone)
}

func inceptionV3(n *nn.Net, z sizer, x nn.Tensor) nn.Tensor {
	c := z.ch
	x = convValid(n, "conv1a", x, c(32), 3, 2)
	x = convValid(n, "conv2a", x, c(32), 3, 1)
	x = conv(n, "conv2b", x, c(64), 3, 1)
	x = n.Pool("pool1", x, nn.MaxPool, 3, 2, 0)
	x = conv(n, "conv3b", x, c(80), 1, 1)
	x = convValid(n, "conv4a", x, c(192), 3, 1)
	x = n.Pool("pool2", x, nn.MaxPool, 3, 2, 0)
	incA := func(name string, x nn.Tensor, pool int) nn.Tensor {
		b1 := conv(n, name+"/b1", x, c(64), 1, 1)
		b5 := conv(n, name+"/b5_1", x, c(48), 1, 1)
		b5 = conv(n, name+"/b5_2", b5, c(64), 5, 1)
		b3 := conv(n, name+"/b3_1", x, c(64), 1, 1)
		b3 = conv(n, name+"/b3_2", b3, c(96), 3, 1)
		b3 = conv(n, name+"/b3_3", b3, c(96), 3, 1)
		bp := n.Pool(name+"/pool", x, nn.AvgPool, 3, 1, 1)
		bp = conv(n, name+"/bp", bp, c(pool), 1, 1)
		return n.Concat(name, b1, b5, b3, bp)
	}
	x = incA("mixed5b", x, 32)
	x = incA("mixed5c", x, 64)
	x = incA("mixed5d", x, 64)
	// InceptionB: grid reduction 35 -> 17.
	{
		b3 := convValid(n, "mixed6a/b3", x, c(384), 3, 2)
		bd := conv(n, "mixed6a/bd_1", x, c(64), 1, 1)
		bd = conv(n, "mixed6a/bd_2", bd, c(96), 3, 1)
		bd = convValid(n, "mixed6a/bd_3", bd, c(96), 3, 2)
		bp := n.Pool("mixed6a/pool", x, nn.MaxPool, 3, 2, 0)
		x = n.Concat("mixed6a", b3, bd, bp)
	}
	incC := func(name string, x nn.Tensor, c7 int) nn.Tensor {
		c7 = c(c7)
		b1 := conv(n, name+"/b1", x, c(192), 1, 1)
		b7 := conv(n, name+"/b7_1", x, c7, 1, 1)
		b7 = convRect(n, name+"/b7_2", b7, c7, 1, 7)
		b7 = convRect(n, name+"/b7_3", b7, c(192), 7, 1)
		bd := conv(n, name+"/bd_1", x, c7, 1, 1)
		bd = convRect(n, name+"/bd_2", bd, c7, 7, 1)
		bd = convRect(n, name+"/bd_3", bd, c7, 1, 7)
		bd = convRect(n, name+"/bd_4", bd, c7, 7, 1)
		bd = convRect(n, name+"/bd_5", bd, c(192), 1, 7)
		bp := n.Pool(name+"/pool", x, nn.AvgPool, 3, 1, 1)
		bp = conv(n, name+"/bp", bp, c(192), 1, 1)
		return n.Concat(name, b1, b7, bd, bp)
	}
	x = incC("mixed6b", x, 128)
	x = incC("mixed6c", x, 160)
	x = incC("mixed6d", x, 160)
	x = incC("mixed6e", x, 192)
	// InceptionD: grid reduction 17 -> 8.
	{
		b3 := conv(n, "mixed7a/b3_1", x, c(192), 1, 1)
		b3 = convValid(n, "mixed7a/b3_2", b3, c(320), 3, 2)
		b7 := conv(n, "mixed7a/b7_1", x, c(192), 1, 1)
		b7 = convRect(n, "mixed7a/b7_2", b7, c(192), 1, 7)
		b7 = convRect(n, "mixed7a/b7_3", b7, c(192), 7, 1)
		b7 = convValid(n, "mixed7a/b7_4", b7, c(192), 3, 2)
		bp := n.Pool("mixed7a/pool", x, nn.MaxPool, 3, 2, 0)
		x = n.Concat("mixed7a", b3, b7, bp)
	}
	incE := func(name string, x nn.Tensor) nn.Tensor {
		b1 := conv(n, name+"/b1", x, c(320), 1, 1)
		b3 := conv(n, name+"/b3_1", x, c(384), 1, 1)
		b3a := convRect(n, name+"/b3_2a", b3, c(384), 1, 3)
		b3b := convRect(n, name+"/b3_2b", b3, c(384), 3, 1)
		bd := conv(n, name+"/bd_1", x, c(448), 1, 1)
		bd = conv(n, name+"/bd_2", bd, c(384), 3, 1)
		bda := convRect(n, name+"/bd_3a", bd, c(384), 1, 3)
		bdb := convRect(n, name+"/bd_3b", bd, c(384), 3, 1)
		bp := n.Pool(name+"/pool", x, nn.AvgPool, 3, 1, 1)
		bp = conv(n, name+"/bp", bp, c(192), 1, 1)
		return n.Concat(name, b1, b3a, b3b, bda, bdb, bp)
	}
	x = incE("mixed7b", x)
	x = incE("mixed7c", x)
	return classifier(n, x, 1000)
}

func resnext50(n *nn.Net, z sizer, x nn.Tensor) nn.Tensor {
	x = conv(n, "conv1", x, z.ch(64), 7, 2)
	x = n.Pool("pool1", x, nn.MaxPool, 3, 2, 1)
	stages := []struct{ blocks, width, out, stride int }{
		{3, 128, 256, 1}, {4, 256, 512, 2}, {6, 512, 1024, 2}, {3, 1024, 2048, 2},
	}
	for si, st := range stages {
		width, out := z.ch(st.width), z.ch(st.out)
		groups := gcd(32, width)
		for b := 0; b < st.blocks; b++ {
			name := fmt.Sprintf("layer%d.%d", si+1, b)
			stride := 1
			if b == 0 {
				stride = st.stride
			}
			h := conv(n, name+"/conv1", x, width, 1, 1)
			h = n.Conv2D(name+"/conv2", h, nn.Same(width, 3, stride, nn.ActReLU).WithGroups(groups))
			h = n.Conv2D(name+"/conv3", h, nn.Same(out, 1, 1, nn.ActNone))
			short := x
			if b == 0 {
				short = n.Conv2D(name+"/down", x, nn.Same(out, 1, stride, nn.ActNone))
			}
			x = n.Binary(name, h, short, nn.OpAdd, nn.ActReLU)
		}
	}
	return classifier(n, x, 1000)
}

func squeezenet(n *nn.Net, z sizer, x nn.Tensor) nn.Tensor {
	c := z.ch
	x = convValid(n, "conv1", x, c(64), 3, 2)
	x = n.Pool("pool1", x, nn.MaxPool, 3, 2, 0)
	fire := func(name string, x nn.Tensor, sq, ex int) nn.Tensor {
		s := conv(n, name+"/squeeze", x, c(sq), 1, 1)
		e1 := conv(n, name+"/expand1", s, c(ex), 1, 1)
		e3 := conv(n, name+"/expand3", s, c(ex), 3, 1)
		return n.Concat(name, e1, e3)
	}
	x = fire("fire2", x, 16, 64)
	x = fire("fire3", x, 16, 64)
	x = n.Pool("pool3", x, nn.MaxPool, 3, 2, 0)
	x = fire("fire4", x, 32, 128)
	x = fire("fire5", x, 32, 128)
	x = n.Pool("pool5", x, nn.MaxPool, 3, 2, 0)
	x = fire("fire6", x, 48, 192)
	x = fire("fire7", x, 48, 192)
	x = fire("fire8", x, 64, 256)
	x = fire("fire9", x, 64, 256)
	x = conv(n, "conv10", x, 1000, 1, 1)
	return n.GlobalAvgPool("gap", x)
}

// RandWire-WS.

// wsGraph is a Watts-Strogatz graph (ring lattice of k neighbours, each
// edge rewired with probability p) on nodes 0..nodes-1, oriented from the
// lower to the higher index: preds[v] lists v's inputs, ascending.
func wsGraph(r *rand.Rand, nodes, k int, p float64) [][]int {
	adj := make([]map[int]bool, nodes)
	for i := range adj {
		adj[i] = map[int]bool{}
	}
	for i := 0; i < nodes; i++ {
		for j := 1; j <= k/2; j++ {
			v := (i + j) % nodes
			adj[i][v], adj[v][i] = true, true
		}
	}
	for j := 1; j <= k/2; j++ {
		for i := 0; i < nodes; i++ {
			v := (i + j) % nodes
			if r.Float64() >= p || !adj[i][v] {
				continue
			}
			// Rewire (i, v) to (i, w) for a uniform w not i and not adjacent.
			var cand []int
			for w := 0; w < nodes; w++ {
				if w != i && !adj[i][w] {
					cand = append(cand, w)
				}
			}
			if len(cand) == 0 {
				continue
			}
			w := cand[r.IntN(len(cand))]
			delete(adj[i], v)
			delete(adj[v], i)
			adj[i][w], adj[w][i] = true, true
		}
	}
	preds := make([][]int, nodes)
	for v := 0; v < nodes; v++ {
		for u := 0; u < v; u++ {
			if adj[v][u] {
				preds[v] = append(preds[v], u)
			}
		}
	}
	return preds
}

// randwireStage runs one random-graph stage: input nodes take x at stride 2,
// every node aggregates its inputs with positive weights, applies ReLU and a
// separable 3x3 convolution; the output averages the sink nodes.
func randwireStage(n *nn.Net, name string, x nn.Tensor, preds [][]int, ch int) nn.Tensor {
	nodes := len(preds)
	out := make([]nn.Tensor, nodes)
	hasSucc := make([]bool, nodes)
	for v := 0; v < nodes; v++ {
		for _, u := range preds[v] {
			hasSucc[u] = true
		}
	}
	for v := 0; v < nodes; v++ {
		node := fmt.Sprintf("%s/n%d", name, v)
		var in nn.Tensor
		stride := 1
		if len(preds[v]) == 0 {
			in, stride = n.Unary(node+"/relu", x, nn.ActReLU), 2
		} else {
			xs := make([]nn.Tensor, len(preds[v]))
			w := n.Weight(node+"/agg", nn.Init{Center: 0.5, Bound: 0.4}, len(preds[v]))
			cs := make([]nn.Tensor, len(preds[v]))
			for j, u := range preds[v] {
				xs[j], cs[j] = out[u], w.Slice(j, j+1)
			}
			in = n.Sum(node+"/agg", xs, cs, 1, nn.ActReLU)
		}
		out[v] = n.SepConv(node, in, ch, 3, stride, nn.ActNone)
	}
	var sinks []nn.Tensor
	for v := 0; v < nodes; v++ {
		if !hasSucc[v] {
			sinks = append(sinks, out[v])
		}
	}
	return n.Sum(name, sinks, nil, 1/float32(len(sinks)), nn.ActNone)
}

// randwire is RandWire-WS's small regime over three stage graphs
// (Watts-Strogatz, 32 nodes, K=4, P=0.75).
func randwire(n *nn.Net, z sizer, x nn.Tensor, stages [3][][]int) nn.Tensor {
	c := z.ch(78)
	x = n.Conv2D("conv1", x, nn.Same(max(1, c/2), 3, 2, nn.ActNone))
	x = n.Unary("conv2/relu", x, nn.ActReLU)
	x = n.Conv2D("conv2", x, nn.Same(c, 3, 2, nn.ActNone))
	for s, mult := range []int{1, 2, 4} {
		x = randwireStage(n, fmt.Sprintf("stage%d", s+3), x, stages[s], c*mult)
	}
	x = n.Unary("head/relu", x, nn.ActReLU)
	x = n.Conv2D("head", x, nn.Same(z.ch(1280), 1, 1, nn.ActReLU))
	return classifier(n, x, 1000)
}

// BERT-base encoder layers.
func bert(p StaticParams, z sizer, seed int64) (*nn.Net, error) {
	const heads = 12
	d := max(heads, heads*z.ch(64))
	ff := z.ch(3072)
	seq := z.res(p.SeqLen, 8)
	dh := d / heads
	n := nn.New(fmt.Sprintf("bert/s%d", p.Scale), seed)
	in := n.Input("input", images(seed, p.Inputs*seq*d), p.Inputs, seq, d)
	for i := 0; i < p.Inputs; i++ {
		if i > 0 {
			n.NextStep()
		}
		x := in.At(i)
		for l := 0; l < p.Layers; l++ {
			pre := fmt.Sprintf("layer%d/", l)
			q := n.Linear(pre+"q", x, d, nn.ActNone)
			k := n.Linear(pre+"k", x, d, nn.ActNone)
			v := n.Linear(pre+"v", x, d, nn.ActNone)
			scores := n.Activation(pre+"scores", heads, seq, seq)
			n.GEMM(pre+"scores", q, k, nn.Tensor{}, scores, nn.GEMMShape{
				M: seq, N: seq, K: dh, LdA: d, LdB: d, LdC: seq, TransB: true,
				Batch: heads, StrideA: dh, StrideB: dh, StrideC: seq * seq, Alpha: float32(1 / math.Sqrt(float64(dh))),
			}, nn.ActNone)
			flat, err := scores.Reshape(heads*seq, seq)
			if err != nil {
				return nil, err
			}
			probs := n.Softmax(pre+"probs", flat, 1)
			ctx := n.Activation(pre+"ctx", seq, d)
			n.GEMM(pre+"ctx", probs, v, nn.Tensor{}, ctx, nn.GEMMShape{
				M: seq, N: dh, K: seq, LdA: seq, LdB: d, LdC: d,
				Batch: heads, StrideA: seq * seq, StrideB: dh, StrideC: dh, Alpha: 1,
			}, nn.ActNone)
			attn := n.Linear(pre+"attn_out", ctx, d, nn.ActNone)
			h := n.LayerNorm(pre+"ln1", n.Binary(pre+"res1", attn, x, nn.OpAdd, nn.ActNone), 1e-12)
			f := n.Linear(pre+"ffn1", h, ff, nn.ActGELU)
			f = n.Linear(pre+"ffn2", f, d, nn.ActNone)
			x = n.LayerNorm(pre+"ln2", n.Binary(pre+"res2", f, h, nn.OpAdd, nn.ActNone), 1e-12)
		}
		out := n.Unary(fmt.Sprintf("output/%d", i), x, nn.ActNone)
		n.Output(out)
	}
	return n, n.Err()
}
