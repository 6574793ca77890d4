package calibrate

import (
	"hash/fnv"
	"math"
	"sort"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
)

// The neighbor settings the fit tries: neighbors counted and the radius
// (log2 units of the launch features) at which one weighs as much as the
// model.
var (
	neighborCounts = []int{1, 2, 3, 4, 6, 8}
	neighborRadii  = []float64{0.25, 0.5, 1, 2, 4, 8}
)

// minNeighborGain is the mean log error the neighbor rule must save over
// the model alone, on the kernel's own shapes left out one at a time, for
// the fit to keep it (0.5%).
const minNeighborGain = 0.005

// fitNeighbors chooses k's neighbor rule (sim.NeighborLogRatio) for its
// fitted model: its feature scales (fitNeighborScales), then among
// neighborCounts x neighborRadii the setting with the smallest mean
// |log error| of each profiled launch's measured/model ratio predicted
// from the launches of the other shapes; none when that saves less than
// minNeighborGain over the model alone or the kernel has fewer than three
// shapes.
func fitNeighbors(p *sim.Profile, k *sim.KernelProfile) {
	m := &k.Model
	m.Neighbors, m.NeighborRadius, m.NeighborScales = 0, 0, nil
	ns := p.Neighbors(m, k.Points)
	shapes := map[string]bool{}
	base := 0.0
	for i := range ns {
		shapes[ns[i].Shape] = true
		base += math.Abs(ns[i].LogRatio)
	}
	if len(shapes) < 3 {
		return
	}
	base /= float64(len(ns))
	var scales []float64
	if len(shapes) >= scaleShapesPerFeature*len(ns[0].Features) {
		scales = fitNeighborScales(ns)
	}
	most := neighborCounts[len(neighborCounts)-1]
	lists := make([]sim.NearList, len(ns))
	for i := range ns {
		lists[i] = sim.Nearest(ns, ns[i].Features, most, ns[i].Shape, scales)
	}
	if e, n, r := bestNeighborSetting(ns, lists); e < base-minNeighborGain {
		m.Neighbors, m.NeighborRadius, m.NeighborScales = n, r, scales
	}
}

// bestNeighborSetting is the neighborCounts x neighborRadii setting with
// the smallest mean |log error| of ns's log ratios predicted from lists
// (each one's nearest of other shapes), and that error; n 0 when ns is
// empty.
func bestNeighborSetting(ns []sim.Neighbor, lists []sim.NearList) (e float64, n int, r float64) {
	e = math.Inf(1)
	for _, cn := range neighborCounts {
		for _, cr := range neighborRadii {
			sum := 0.0
			for i := range ns {
				sum += math.Abs(lists[i].LogRatio(cn, cr) - ns[i].LogRatio)
			}
			if sum /= float64(len(ns)); sum < e {
				e, n, r = sum, cn, cr
			}
		}
	}
	return e, n, r
}

// The feature scales the fit tries (fitNeighborScales), the mean log
// error a change of one must save to be kept (0.2%), and the most
// profiled launches (spread evenly over the list) the scales are fitted
// on, which bounds the fit's time.
var neighborScaleSteps = []float64{0, 0.5, 1, 2, 4}

const (
	scaleShapesPerFeature = 4
	minScaleGain          = 0.002
	maxScaleFitShape      = 600
)

// fitNeighborScales chooses the rule's feature scales: from every scale
// 1, feature by feature (twice over the features), the step of
// neighborScaleSteps with the smallest mean |log error| of each launch's
// ratio predicted from the other shapes' (at its best neighborCounts x
// neighborRadii setting), kept when it saves minScaleGain. A feature the
// kernel's time per Work follows (a convolution's window) grows, so that
// a launch takes the ratio of launches of its kind rather than of
// launches nearer in size; nil when every scale stays 1.
func fitNeighborScales(all []sim.Neighbor) []float64 {
	ns := all
	if len(all) > maxScaleFitShape {
		ns = make([]sim.Neighbor, maxScaleFitShape)
		for i := range ns {
			ns[i] = all[i*len(all)/maxScaleFitShape]
		}
	}
	sf := newScaleFit(ns)
	scales := sf.scales
	cur := sf.err()
	for pass := 0; pass < 2; pass++ {
		changed := false
		for j := range scales {
			was := scales[j]
			best, bestErr := was, cur
			for _, s := range neighborScaleSteps {
				if s == was {
					continue
				}
				sf.setScale(j, s)
				if e := sf.err(); e < bestErr-minScaleGain {
					best, bestErr = s, e
				}
			}
			sf.setScale(j, best)
			changed = changed || best != was
			cur = bestErr
		}
		if !changed {
			break
		}
	}
	for _, s := range scales {
		if s != 1 {
			return append([]float64(nil), scales...)
		}
	}
	return nil
}

// scaleFit holds the squared distances between neighbors under scales,
// updated one feature at a time; +Inf between neighbors of the same
// shape or another number of features, which never predict each other.
type scaleFit struct {
	ns     []sim.Neighbor
	scales []float64
	d2     [][]float64
	lists  []sim.NearList
}

func newScaleFit(ns []sim.Neighbor) *scaleFit {
	width := 0
	for i := range ns {
		width = max(width, len(ns[i].Features))
	}
	sf := &scaleFit{ns: ns, scales: make([]float64, width), d2: make([][]float64, len(ns)), lists: make([]sim.NearList, len(ns))}
	for j := range sf.scales {
		sf.scales[j] = 1
	}
	for i := range ns {
		sf.d2[i] = make([]float64, len(ns))
		for o := range ns {
			sf.d2[i][o] = math.Inf(1)
			if ns[o].Shape != ns[i].Shape && len(ns[o].Features) == len(ns[i].Features) {
				sf.d2[i][o] = sim.Distance2(ns[i].Features, ns[o].Features, nil)
			}
		}
	}
	return sf
}

// setScale sets feature j's scale to s, updating the distances.
func (sf *scaleFit) setScale(j int, s float64) {
	delta := s*s - sf.scales[j]*sf.scales[j]
	sf.scales[j] = s
	if delta == 0 {
		return
	}
	for i := range sf.ns {
		fi := sf.ns[i].Features
		for o, d := range sf.d2[i] {
			if math.IsInf(d, 1) || j >= len(fi) {
				continue
			}
			diff := fi[j] - sf.ns[o].Features[j]
			sf.d2[i][o] = max(0, d+delta*diff*diff)
		}
	}
}

// err is the mean |log error| at the best setting under the scales now.
func (sf *scaleFit) err() float64 {
	most := neighborCounts[len(neighborCounts)-1]
	for i, row := range sf.d2 {
		best := sf.lists[i][:0]
		for o, d := range row {
			if math.IsInf(d, 1) || (len(best) == most && d >= best[most-1].D2) {
				continue
			}
			at := sort.Search(len(best), func(x int) bool { return best[x].D2 > d })
			if len(best) < most {
				best = append(best, sim.Near{})
			}
			copy(best[at+1:], best[at:len(best)-1])
			best[at] = sim.Near{D2: d, LogRatio: sf.ns[o].LogRatio}
		}
		sf.lists[i] = best
	}
	e, _, _ := bestNeighborSetting(sf.ns, sf.lists)
	return e
}

// KernelCV is a kernel's cross-validated error: each fold's shapes left
// out, the model (and neighbor rule) fitted to the rest, the left-out
// points predicted.
type KernelCV struct {
	Kernel         string
	Points, Shapes int
	// Model is the block model alone, Fallback the model with its
	// neighbor rule (what times a launch without a point).
	Model, Fallback ErrorStats
	Neighbors       int // folds whose fit kept a neighbor rule
	// ModelErrs and FallbackErrs are the left-out points' errors.
	ModelErrs, FallbackErrs []float64
}

// PooledCV is the errors of every left-out point of cvs' kernels (a
// kernel weighs by its points).
func PooledCV(cvs []KernelCV) KernelCV {
	all := KernelCV{Kernel: "(all)"}
	for _, c := range cvs {
		all.Points += c.Points
		all.Shapes += c.Shapes
		all.Neighbors += c.Neighbors
		all.ModelErrs = append(all.ModelErrs, c.ModelErrs...)
		all.FallbackErrs = append(all.FallbackErrs, c.FallbackErrs...)
	}
	all.Model, all.Fallback = errorStats(all.ModelErrs), errorStats(all.FallbackErrs)
	return all
}

// ErrorStats summarizes relative errors of per-launch time, percent.
type ErrorStats struct{ Mean, Median, P90, Max float64 }

func errorStats(errs []float64) ErrorStats {
	if len(errs) == 0 {
		return ErrorStats{}
	}
	s := append([]float64(nil), errs...)
	sort.Float64s(s)
	sum := 0.0
	for _, e := range s {
		sum += e
	}
	return ErrorStats{Mean: sum / float64(len(s)), Median: stats.MedianSorted(s), P90: s[(len(s)*9)/10], Max: s[len(s)-1]}
}

// CrossValidate measures how well p's kernels' fallback (FitProfile's
// model, with and without its neighbor rule) times launches it was not
// fitted to: per kernel with two shapes or more (ShapeOf: a launch's
// threads, Work and scalar arguments, all its grids and occupancies
// together), the shapes split into folds (at most folds, by a hash of the
// shape), each fold's points predicted by a fit to the other folds' (the
// profile's effective L2 kept). Kernels with one shape are left out.
func CrossValidate(p *sim.Profile, folds int) []KernelCV {
	var out []KernelCV
	for i := range p.Kernels {
		if cv, ok := crossValidateKernel(p, &p.Kernels[i], folds); ok {
			out = append(out, cv)
		}
	}
	return out
}

func crossValidateKernel(p *sim.Profile, k *sim.KernelProfile, folds int) (KernelCV, bool) {
	fold, n := shapeFolds(k.Points, folds)
	if n < 2 {
		return KernelCV{}, false
	}
	cv := KernelCV{Kernel: k.Kernel, Points: len(k.Points), Shapes: len(distinctShapes(k.Points))}
	var modelErrs, fallbackErrs []float64
	for f := 0; f < n; f++ {
		train := sim.KernelProfile{Kernel: k.Kernel}
		var test []*sim.ProfilePoint
		for j := range k.Points {
			if fold[j] == f {
				test = append(test, &k.Points[j])
			} else {
				train.Points = append(train.Points, k.Points[j])
			}
		}
		if len(test) == 0 || len(train.Points) == 0 {
			continue
		}
		fitKernel(p, &train)
		fitNeighbors(p, &train)
		if train.Model.Neighbors > 0 {
			cv.Neighbors++
		}
		ns := p.Neighbors(&train.Model, train.Points)
		for _, pt := range test {
			m, e := predictFallback(p, &train.Model, ns, pt)
			modelErrs = append(modelErrs, m)
			fallbackErrs = append(fallbackErrs, e)
		}
	}
	cv.Model, cv.Fallback = errorStats(modelErrs), errorStats(fallbackErrs)
	cv.ModelErrs, cv.FallbackErrs = modelErrs, fallbackErrs
	return cv, true
}

// predictFallback is a point's relative error (percent) under model m
// alone and under m with its neighbor rule over ns.
func predictFallback(p *sim.Profile, m *sim.BlockModel, ns []sim.Neighbor, pt *sim.ProfilePoint) (model, fallback float64) {
	w := device.Work{Cycles: pt.Cycles, Flops: pt.Flops, Bytes: pt.Bytes}
	lone := m.Lone(&w, beyondL2(p, pt))
	model = math.Abs((p.BackToBackNs+p.KernelNs(m, pt, lone))/pt.Median()-1) * 100
	lone *= math.Exp(sim.NeighborLogRatio(ns, sim.PointFeatures(pt), m))
	fallback = math.Abs((p.BackToBackNs+p.KernelNs(m, pt, lone))/pt.Median()-1) * 100
	return model, fallback
}

// shapeFolds assigns each point the fold of its shape (a hash of it
// modulo the folds, renumbered to the folds in use) and says how many
// folds hold points.
func shapeFolds(pts []sim.ProfilePoint, folds int) ([]int, int) {
	used := map[int]int{}
	out := make([]int, len(pts))
	for i := range pts {
		h := fnv.New32a()
		h.Write([]byte(sim.ShapeOf(&pts[i])))
		f := int(h.Sum32() % uint32(max(folds, 1)))
		if _, ok := used[f]; !ok {
			used[f] = len(used)
		}
		out[i] = used[f]
	}
	return out, len(used)
}

func distinctShapes(pts []sim.ProfilePoint) map[string]bool {
	s := map[string]bool{}
	for i := range pts {
		s[sim.ShapeOf(&pts[i])] = true
	}
	return s
}
