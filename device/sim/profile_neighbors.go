package sim

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gpusched/gpusched/device"
)

// The neighbor rule (docs/SIMULATOR.md, "Kernel profiles"): a launch of a
// profiled kernel that matches none of its points takes the block model's
// lone time corrected by the ratio measured/model of the kernel's profiled
// launches nearest it. A launch is placed by its features: log2 of its
// blocks, threads per block and Work terms (1 + each), and of every scalar
// argument's magnitude with its sign (a 4-byte scalar read as int32, an
// 8-byte one as uint64; a float's bits read so grow with its exponent), so
// that two convolutions with the same Work but a 1x7 and a 7x1 window lie
// apart, and a half-size layer lies next to its full-size one. Launches
// with another number of scalars are not compared.

// LaunchFeatures is a launch's position for the neighbor rule.
func LaunchFeatures(grid, threads int, w device.Work, args []device.Arg) []float64 {
	f := []float64{math.Log2(float64(max(grid, 1))), math.Log2(float64(max(threads, 1))),
		math.Log2(1 + w.Cycles), math.Log2(1 + w.Flops), math.Log2(1 + w.Bytes)}
	for _, a := range args {
		if a.Kind != device.ArgScalar {
			continue
		}
		v := float64(a.Bits)
		if a.Size == 4 {
			v = float64(int32(uint32(a.Bits)))
		}
		f = append(f, math.Copysign(math.Log2(1+math.Abs(v)), v))
	}
	return f
}

// PointFeatures is a point's launch's position for the neighbor rule.
func PointFeatures(pt *ProfilePoint) []float64 {
	args, _ := parseScalars(pt.Scalars) // checked when the profile was parsed
	return LaunchFeatures(pt.Grid, pt.Threads, device.Work{Cycles: pt.Cycles, Flops: pt.Flops, Bytes: pt.Bytes}, args)
}

// Neighbor is one profiled launch of a kernel (its points at every
// occupancy together) as the rule reads it: its features, the log of its
// measured lone block time over its model's (the mean over its points),
// and its shape (scalars and Work, without the grid: what a
// cross-validation leaves out together).
type Neighbor struct {
	Features []float64
	LogRatio float64
	Shape    string
}

// Neighbors lists a kernel's profiled launches under model m, in the
// order of their first point.
func (p *Profile) Neighbors(m *BlockModel, pts []ProfilePoint) []Neighbor {
	return p.neighborsAt(m, pts, 0)
}

// neighborsAt is Neighbors with the points' lone times as the simulator
// with the residency rate model at threshold retime inverts them (0: off).
func (p *Profile) neighborsAt(m *BlockModel, pts []ProfilePoint, retime float64) []Neighbor {
	type acc struct {
		n   Neighbor
		sum float64
		cnt int
	}
	byKey := map[string]*acc{}
	var keys []string
	for i := range pts {
		pt := &pts[i]
		shape := ShapeOf(pt)
		key := strconv.Itoa(pt.Grid) + "|" + shape
		a := byKey[key]
		if a == nil {
			a = &acc{n: Neighbor{Features: PointFeatures(pt), Shape: shape}}
			byKey[key] = a
			keys = append(keys, key)
		}
		w := device.Work{Cycles: pt.Cycles, Flops: pt.Flops, Bytes: pt.Bytes}
		beyond := p.EffectiveL2Bytes > 0 && float64(pt.Grid)*pt.Bytes > float64(p.EffectiveL2Bytes)
		a.sum += math.Log(max(p.LoneNsAt(m, pt, retime), 1) / max(m.Lone(&w, beyond), 1))
		a.cnt++
	}
	out := make([]Neighbor, 0, len(keys))
	for _, key := range keys {
		a := byKey[key]
		a.n.LogRatio = a.sum / float64(a.cnt)
		out = append(out, a.n)
	}
	return out
}

// ShapeOf is a point's launch without its grid: threads, Work and scalar
// arguments.
func ShapeOf(pt *ProfilePoint) string {
	return strconv.Itoa(pt.Threads) + "|" + strconv.FormatFloat(pt.Cycles, 'g', -1, 64) + "|" +
		strconv.FormatFloat(pt.Flops, 'g', -1, 64) + "|" + strconv.FormatFloat(pt.Bytes, 'g', -1, 64) + "|" + pt.Scalars
}

// neighborEps is the squared distance added to every neighbor's, so that a
// launch at a neighbor's very features takes its ratio (weight 1/eps) but
// still a finite weight.
const neighborEps = 1e-2

// NeighborLogRatio is m's rule's log correction at features f from the
// m.Neighbors nearest of ns (Nearest, by m.NeighborScales): their log
// ratios weighted by 1/(eps + d^2), beside the model's own (log ratio 0)
// with weight 1/m.NeighborRadius^2. 0 without a rule or when no neighbor
// has f's number of features.
func NeighborLogRatio(ns []Neighbor, f []float64, m *BlockModel) float64 {
	if m.Neighbors <= 0 || m.NeighborRadius <= 0 {
		return 0
	}
	return Nearest(ns, f, m.Neighbors, "", m.NeighborScales).LogRatio(m.Neighbors, m.NeighborRadius)
}

// Distance2 is the rule's squared distance between features a and b of
// the same length: the sum of each difference times its scale (1 past
// scales), squared.
func Distance2(a, b, scales []float64) float64 {
	d2 := 0.0
	for j, x := range a {
		d := x - b[j]
		if j < len(scales) {
			d *= scales[j]
		}
		d2 += d * d
	}
	return d2
}

// Near is a neighbor's squared distance from a launch and its log ratio.
type Near struct{ D2, LogRatio float64 }

// NearList is neighbors nearest first.
type NearList []Near

// Nearest is the k neighbors of ns nearest features f by Distance2
// under scales, nearest first, leaving out those of shape skip (none when
// skip is "") and those with another number of features.
func Nearest(ns []Neighbor, f []float64, k int, skip string, scales []float64) NearList {
	best := make(NearList, 0, k+1)
	for i := range ns {
		n := &ns[i]
		if len(n.Features) != len(f) || (skip != "" && n.Shape == skip) {
			continue
		}
		d2 := Distance2(f, n.Features, scales)
		if len(best) == k && d2 >= best[k-1].D2 {
			continue
		}
		at := sort.Search(len(best), func(i int) bool { return best[i].D2 > d2 })
		if len(best) < k {
			best = append(best, Near{})
		}
		copy(best[at+1:], best[at:len(best)-1])
		best[at] = Near{d2, n.LogRatio}
	}
	return best
}

// LogRatio is NeighborLogRatio over the first k of the list.
func (l NearList) LogRatio(k int, radius float64) float64 {
	sum, weight := 0.0, 1/(radius*radius)
	for _, b := range l[:min(k, len(l))] {
		w := 1 / (neighborEps + b.D2)
		sum += w * b.LogRatio
		weight += w
	}
	return sum / weight
}

// neighborSets holds each profile's neighbors by kernel, computed once
// per profile and rate model (profiles are shared and read-only).
var neighborSets sync.Map // inversionKey -> map[kernelName][]Neighbor

func neighborsOf(p *Profile, retime float64) map[kernelName][]Neighbor {
	key := inversionKey{p, retime}
	if x, ok := neighborSets.Load(key); ok {
		return x.(map[kernelName][]Neighbor)
	}
	x := map[kernelName][]Neighbor{}
	for i := range p.Kernels {
		k := &p.Kernels[i]
		if k.Model.Neighbors > 0 {
			x[kernelNameOf(k.Kernel)] = p.neighborsAt(&k.Model, k.Points, retime)
		}
	}
	shared, _ := neighborSets.LoadOrStore(key, x)
	return shared.(map[kernelName][]Neighbor)
}

// neighborLone is the lone block time of a launch that matches no point
// of its kernel's profile when the kernel's model m has neighbors: the
// model's for its Work times the neighbor rule's correction; false
// without neighbors (the model's own time serves).
func (x *profileIndex) neighborLone(m *BlockModel, l *device.Launch) (float64, bool) {
	if x == nil || m == nil || m.Neighbors <= 0 || l.Kernel == nil {
		return 0, false
	}
	grid := l.Grid.Count()
	lone := m.Lone(&l.Work, x.beyondL2(grid, &l.Work))
	ns := x.neighbors[kernelName{l.Kernel.Module, l.Kernel.Name}]
	f := LaunchFeatures(grid, l.Block.Count(), l.Work, l.Args)
	return lone * math.Exp(NeighborLogRatio(ns, f, m)), true
}

// parseScalars reads a point's scalars field (checkScalars' form).
func parseScalars(sig string) ([]device.Arg, error) {
	if sig == "" {
		return nil, nil
	}
	var args []device.Arg
	for _, f := range strings.Split(sig, " ") {
		size, bits, ok := strings.Cut(f, ":")
		n, err1 := strconv.Atoi(size)
		v, err2 := strconv.ParseUint(bits, 16, 64)
		if !ok || err1 != nil || err2 != nil || (n != 4 && n != 8) || (n == 4 && v>>32 != 0) {
			return nil, errBadScalar(sig, f)
		}
		args = append(args, device.Arg{Kind: device.ArgScalar, Size: n, Bits: v})
	}
	return args, nil
}
