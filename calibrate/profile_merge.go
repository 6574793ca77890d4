package calibrate

import (
	"fmt"
	"slices"

	"github.com/gpusched/gpusched/device/sim"
)

// MergeProfiles is base with the points of add, a later profile of the
// same device (the same name and SM count): a kernel of add gets its
// points added to base's kernel of that name (a point of the same launch
// shape, occupancy, Work and scalars replaces base's, and so does the
// first of add's with scalars a base point without them), a kernel base lacks comes
// as add has it. The overheads (back-to-back gap, shortest block,
// dispatch, L2, clock) stay base's, which every point is read with;
// Source names both. The models are base's until FitProfile refits them.
func MergeProfiles(base, add *sim.Profile) (*sim.Profile, error) {
	if base.Device != add.Device || base.SMs != add.SMs {
		return nil, fmt.Errorf("profile: cannot merge a profile of %s (%d SMs) into one of %s (%d SMs)", add.Device, add.SMs, base.Device, base.SMs)
	}
	out := *base
	out.Source = base.Source + "; points added from: " + add.Source
	out.Kernels = slices.Clone(base.Kernels)
	for _, ak := range add.Kernels {
		i := slices.IndexFunc(out.Kernels, func(k sim.KernelProfile) bool { return k.Kernel == ak.Kernel })
		if i < 0 {
			out.Kernels = append(out.Kernels, ak)
			continue
		}
		k := out.Kernels[i]
		if k.Regs != ak.Regs || k.StaticShared != ak.StaticShared {
			return nil, fmt.Errorf("profile: kernel %s has %d registers and %d bytes of static shared memory in one profile, %d and %d in the other: not the same build",
				k.Kernel, k.Regs, k.StaticShared, ak.Regs, ak.StaticShared)
		}
		k.Points = slices.Clone(k.Points)
		for _, p := range ak.Points {
			j := slices.IndexFunc(k.Points, func(o sim.ProfilePoint) bool { return samePoint(o, p) && o.Scalars == p.Scalars })
			if j < 0 { // a point without scalars measured one of the launches with them
				j = slices.IndexFunc(k.Points, func(o sim.ProfilePoint) bool { return samePoint(o, p) && o.Scalars == "" })
			}
			if j >= 0 {
				k.Points[j] = p
			} else {
				k.Points = append(k.Points, p)
			}
		}
		out.Kernels[i] = k
	}
	slices.SortStableFunc(out.Kernels, func(a, b sim.KernelProfile) int {
		switch {
		case a.Kernel < b.Kernel:
			return -1
		case a.Kernel > b.Kernel:
			return 1
		}
		return 0
	})
	return &out, nil
}

// samePoint reports whether two points measured the same launch at the
// same occupancy.
func samePoint(a, b sim.ProfilePoint) bool {
	return a.Grid == b.Grid && a.Threads == b.Threads && a.Shared == b.Shared && a.PerSM == b.PerSM && a.Forced == b.Forced &&
		a.Cycles == b.Cycles && a.Flops == b.Flops && a.Bytes == b.Bytes
}

// AddColdSamples puts the cold samples (cold_ns, rewarm_ns) of add, a
// `gpusched profile --cold-l2` of the same device, onto base's points of
// the same launch (as MergeProfiles matches them), keeping base's warm
// samples, so that only the cold term the refit adds moves the model;
// it returns how many points got them. Points add has and base lacks are
// left out.
func AddColdSamples(base, add *sim.Profile) (int, error) {
	if base.Device != add.Device || base.SMs != add.SMs {
		return 0, fmt.Errorf("profile: cannot take cold samples of %s (%d SMs) for a profile of %s (%d SMs)", add.Device, add.SMs, base.Device, base.SMs)
	}
	n := 0
	base.Kernels = slices.Clone(base.Kernels)
	for _, ak := range add.Kernels {
		i := slices.IndexFunc(base.Kernels, func(k sim.KernelProfile) bool { return k.Kernel == ak.Kernel })
		if i < 0 {
			continue
		}
		k := &base.Kernels[i]
		k.Points = slices.Clone(k.Points)
		for _, p := range ak.Points {
			if len(p.ColdNs) == 0 {
				continue
			}
			j := slices.IndexFunc(k.Points, func(o sim.ProfilePoint) bool { return samePoint(o, p) && o.Scalars == p.Scalars })
			if j < 0 {
				j = slices.IndexFunc(k.Points, func(o sim.ProfilePoint) bool { return samePoint(o, p) && o.Scalars == "" })
			}
			if j >= 0 {
				k.Points[j].ColdNs, k.Points[j].RewarmNs = p.ColdNs, p.RewarmNs
				n++
			}
		}
	}
	if n > 0 {
		base.Source += "; cold samples added from: " + add.Source
	}
	return n, nil
}
