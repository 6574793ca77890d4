package calibrate

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// Fitting sm.load_bandwidth (device/sim/memload.go) on launches of one
// kernel at several block counts (`gpusched profile` of
// configs/experiments/corun-blocks-gpu.yaml): the same total Work split
// over 8, 32 and 64 blocks, each launch alone. Per-block scaling of the
// base profile's model gives every launch of a group the same time; the
// GPU's slow down as their blocks draw more memory traffic at once. A
// candidate bandwidth B predicts each launch as the simulator times it
// alone (one wave: its block model's lone time x LoadStretch at its
// blocks' demand, against the kernel's profiled demand), and the fit
// takes the B whose predicted ratios within each group are closest to the
// measured ones (the rms of log(measured / predicted) after each group's
// mean is taken out: the base model's level at the group's Work is not
// what the load fits).

// LoadGroup is one kernel's launches of the same Work at several block
// counts in one run.
type LoadGroup struct {
	Run, Kernel string
	Grids       []int
	Bytes       float64   // the launches' total bytes (blocks x Work.Bytes)
	MeasuredNs  []float64 // per launch: median less the run's back_to_back_ns
	Share       float64   // the base model's byte share (the largest launch's blocks)
	Demand      []float64 // per launch: its blocks' demand alone, bytes per ns
	Lone        []float64 // per launch: the base model's lone block time, ns
	lo, hi      float64   // the demands the kernel's points in the base profile drew
}

// LoadFit is one candidate's error over every group.
type LoadFit struct {
	Bandwidth float64 // bytes per second; 0: the model off
	RMSPct    float64 // rms of log(measured/predicted) within groups, percent
	MaxPct    float64 // largest |log error|, percent
	Launches  int
}

// LoadBandwidths are the candidates fitted over, bytes per second: 0 (off)
// and 0.5 to 64 TB/s in steps of 2^(1/8).
func LoadBandwidths() []float64 {
	out := []float64{0}
	for e := -8; e <= 48; e++ {
		out = append(out, math.Round(0.5e12*math.Pow(2, float64(e)/8)/1e9)*1e9)
	}
	return out
}

// LoadGroups collects the groups of runs (profiles of the same device as
// base) that base models: a kernel's single-wave launches of one total
// Work (threads, shared memory, total bytes and scalars alike) at two or
// more block counts.
func LoadGroups(base *sim.Profile, runs []*sim.Profile, names []string) ([]LoadGroup, error) {
	models := map[string]*sim.KernelProfile{}
	for i := range base.Kernels {
		models[base.Kernels[i].Kernel] = &base.Kernels[i]
	}
	var out []LoadGroup
	for ri, run := range runs {
		if run.Device != base.Device || run.SMs != base.SMs {
			return nil, fmt.Errorf("profile load-fit: %s is of %s (%d SMs), the base of %s (%d SMs)", names[ri], run.Device, run.SMs, base.Device, base.SMs)
		}
		for i := range run.Kernels {
			if bk := models[run.Kernels[i].Kernel]; bk != nil {
				out = append(out, kernelLoadGroups(base, bk, run, &run.Kernels[i], names[ri])...)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("profile load-fit: no kernel of the base profile has launches of one Work at two or more block counts in the runs")
	}
	return out, nil
}

// loadKey is what a group's launches share: all but the block count.
type loadKey struct {
	threads, shared int
	bytes           float64 // blocks x Work.Bytes
	scalars         string
}

// kernelLoadGroups is LoadGroups for kernel k of run (named name), which
// base's kernel bk models.
func kernelLoadGroups(base *sim.Profile, bk *sim.KernelProfile, run *sim.Profile, k *sim.KernelProfile, name string) []LoadGroup {
	groups := map[loadKey][]*sim.ProfilePoint{}
	var order []loadKey
	for i := range k.Points {
		p := &k.Points[i]
		if p.Bytes <= 0 || p.Grid > max(p.PerSM, 1)*run.SMs {
			continue
		}
		kk := loadKey{p.Threads, p.Shared, math.Round(float64(p.Grid) * p.Bytes), p.Scalars}
		if groups[kk] == nil {
			order = append(order, kk)
		}
		groups[kk] = append(groups[kk], p)
	}
	var out []LoadGroup
	for _, kk := range order {
		pts := groups[kk]
		slices.SortFunc(pts, func(a, b *sim.ProfilePoint) int { return a.Grid - b.Grid })
		pts = slices.CompactFunc(pts, func(a, b *sim.ProfilePoint) bool { return a.Grid == b.Grid })
		if len(pts) < 2 {
			continue
		}
		g := LoadGroup{Run: name, Kernel: k.Kernel, Bytes: kk.bytes}
		g.lo, g.hi = sim.DemandRange(base, bk)
		dram := base.DRAMShare(kk.bytes, 0)
		beyond := base.EffectiveL2Bytes > 0 && kk.bytes > float64(base.EffectiveL2Bytes)
		for _, p := range pts {
			w := device.Work{Cycles: p.Cycles, Flops: p.Flops, Bytes: p.Bytes}
			lone := bk.Model.Lone(&w, beyond)
			if lone <= 0 {
				continue
			}
			g.Grids = append(g.Grids, p.Grid)
			g.MeasuredNs = append(g.MeasuredNs, p.Median()-run.BackToBackNs)
			g.Lone = append(g.Lone, lone)
			g.Demand = append(g.Demand, sim.LaunchDemand(p.Grid, max(p.PerSM, 1), run.SMs, p.Bytes, lone)*dram)
			g.Share = bk.Model.ByteShare(&w, beyond) * dram
		}
		if len(g.Grids) >= 2 {
			out = append(out, g)
		}
	}
	return out
}

// Errors is each launch's log(measured / predicted) at bandwidth b (bytes
// per second), less the group's mean.
func (g *LoadGroup) Errors(b float64) []float64 {
	errs := make([]float64, len(g.Grids))
	mean := 0.0
	for i := range g.Grids {
		pred := g.Lone[i] * sim.LoadStretch(g.Share, g.Demand[i], sim.LoadRef(g.Demand[i], g.lo, g.hi), b/1e9)
		errs[i] = math.Log(g.MeasuredNs[i] / pred)
		mean += errs[i]
	}
	mean /= float64(len(errs))
	for i := range errs {
		errs[i] -= mean
	}
	return errs
}

// FitLoadBandwidth scores every candidate (LoadBandwidths) on groups and
// returns the best (smallest rms error) with every candidate's score.
func FitLoadBandwidth(groups []LoadGroup) (best LoadFit, fits []LoadFit) {
	for _, b := range LoadBandwidths() {
		f := LoadFit{Bandwidth: b}
		sum := 0.0
		for i := range groups {
			for _, e := range groups[i].Errors(b) {
				sum += e * e
				f.MaxPct = max(f.MaxPct, 100*math.Abs(e))
				f.Launches++
			}
		}
		f.RMSPct = 100 * math.Sqrt(sum/float64(max(f.Launches, 1)))
		fits = append(fits, f)
		if len(fits) == 1 || f.RMSPct < best.RMSPct {
			best = f
		}
	}
	return best, fits
}
