package calibrate

import (
	"hash/fnv"
	"math"
	"sort"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
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
// fitted model: among neighborCounts x neighborRadii, the setting with the
// smallest mean |log error| of each profiled launch's measured/model
// ratio predicted from the launches of the other shapes; none when that
// saves less than minNeighborGain over the model alone or the kernel has
// fewer than three shapes.
func fitNeighbors(p *sim.Profile, k *sim.KernelProfile) {
	k.Model.Neighbors, k.Model.NeighborRadius = 0, 0
	ns := p.Neighbors(&k.Model, k.Points)
	shapes := map[string]bool{}
	lists := make([]sim.NearList, len(ns))
	most := neighborCounts[len(neighborCounts)-1]
	base := 0.0
	for i := range ns {
		shapes[ns[i].Shape] = true
		lists[i] = sim.Nearest(ns, ns[i].Features, most, ns[i].Shape)
		base += math.Abs(ns[i].LogRatio)
	}
	if len(shapes) < 3 {
		return
	}
	base /= float64(len(ns))
	best := base - minNeighborGain
	for _, n := range neighborCounts {
		for _, r := range neighborRadii {
			e := 0.0
			for i := range ns {
				e += math.Abs(lists[i].LogRatio(n, r) - ns[i].LogRatio)
			}
			if e /= float64(len(ns)); e < best {
				best, k.Model.Neighbors, k.Model.NeighborRadius = e, n, r
			}
		}
	}
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
	return ErrorStats{Mean: sum / float64(len(s)), Median: medianOf(s), P90: s[(len(s)*9)/10], Max: s[len(s)-1]}
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
	lone *= math.Exp(sim.NeighborLogRatio(ns, sim.PointFeatures(pt), m.Neighbors, m.NeighborRadius))
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
