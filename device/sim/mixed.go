package sim

import "math"

// Kernels of different ages on one SM (sm.younger_kernel_weight).
//
// A profiled kernel's co-residency curve (BlockModel.Factor) was measured
// with its SM full of its own blocks, all placed at once. Measured on the
// GPU (calibrate's mixed co-residency probe, `gpusched profile pairs`),
// a kernel whose blocks were resident first is hardly slowed by a
// different kernel's blocks placed beside them later, while the later one
// is slowed by the earlier one's warps: the warps resident first keep
// most of the SM. With the weight set, a resident warp of a kernel
// activated after k (a larger actSeq) counts only the weight in k's
// co-residency factor; k's own warps and those of kernels activated
// before it count 1. Left out (0), every warp counts 1, as before the
// field existed.

// youngerWeight is the weight of a younger kernel's warps; 1 when left
// out.
func (d *Device) youngerWeight() float64 {
	if w := d.cfg.SM.YoungerKernelWeight; w > 0 {
		return w
	}
	return 1
}

// agesOn reports whether a warp's weight in another kernel's factor
// depends on the two kernels' ages: younger kernels' warps count less,
// or older kernels' count their pressure.
func (d *Device) agesOn() bool { return d.youngerWeight() < 1 || d.pressureOn() }

// pressureOn reports whether older kernels' warps count their pressure.
func (d *Device) pressureOn() bool { return d.cfg.SM.OlderPressureExponent > 0 }

// kernelPressure is k's issue pressure: its co-residency curve's mean
// rise per warp relative to its first point, the profile's
// default_warp_slope for a kernel without a curve (0 without a profile).
func (d *Device) kernelPressure(k *command) float64 {
	if d.prof == nil {
		return 0
	}
	if m := k.model; m != nil && len(m.CoResidency) >= 2 {
		c := m.CoResidency
		a, b := c[0], c[len(c)-1]
		if a.Factor > 0 && b.Warps > a.Warps {
			return max(b.Factor/a.Factor-1, 0) / float64(b.Warps-a.Warps)
		}
	}
	return d.prof.slope
}

// olderWeight is how much a warp of o, activated before k, counts in k's
// factor: (p_o / p_k)^a when o's pressure is the higher, else 1 (as
// before the model: a lighter kernel's warps still take their issue
// slots); 1 between launches of one function, whose own curve already
// measures them.
func (d *Device) olderWeight(k, o *command) float64 {
	if !d.pressureOn() || k.pressure <= 0 || o.pressure <= k.pressure || sameFunction(k, o) {
		return 1
	}
	return math.Pow(o.pressure/k.pressure, d.cfg.SM.OlderPressureExponent)
}

// sameFunction reports whether a and b launch the same function.
func sameFunction(a, b *command) bool {
	ka, kb := a.l.Kernel, b.l.Kernel
	return ka == kb || ka != nil && kb != nil && ka.Module == kb.Module && ka.Name == kb.Name
}

// ownWarps counts w more running warps of k on SM s (w < 0: fewer), and
// keeps the kernels with running warps in d.ages.
func (d *Device) ownWarps(k *command, s, w int) {
	if !d.agesOn() || w == 0 {
		return
	}
	if len(k.ownSM) != len(d.sms) {
		k.ownSM = make([]int32, len(d.sms))
	}
	if k.ownAll == 0 {
		d.ages = append(d.ages, k)
	}
	k.ownSM[s] += int32(w)
	k.ownAll += w
	if k.ownAll == 0 {
		for i, o := range d.ages {
			if o == k {
				d.ages = append(d.ages[:i], d.ages[i+1:]...)
				break
			}
		}
	}
}

// otherWarps is what the running warps of kernels other than k add to
// k's factor beyond counting 1 each, given their warps (on one SM or the
// GPU): a younger kernel's count youngerWeight - 1 each, an older
// kernel's olderWeight - 1 (0 with neither model).
func (d *Device) otherWarps(k *command, warps func(o *command) int) float64 {
	if !d.agesOn() {
		return 0
	}
	yw := d.youngerWeight()
	x := 0.0
	for _, o := range d.ages {
		switch {
		case o.actSeq > k.actSeq:
			x += (yw - 1) * float64(warps(o))
		case o.actSeq < k.actSeq && d.pressureOn():
			x += (d.olderWeight(k, o) - 1) * float64(warps(o))
		}
	}
	return x
}

// gpuFactorWarps is the GPU's running warps k's factor reads (its
// GPUShare part), younger kernels' weighted by youngerWeight.
func (d *Device) gpuFactorWarps(k *command) float64 {
	all := float64(d.gpuWarps - d.rt.spinWarps)
	return max(all+d.otherWarps(k, func(o *command) int { return o.ownAll }), 0)
}

// factorWarps is the warps k's co-residency curve is read at on sm: the
// SM's running warps, younger kernels' weighted by youngerWeight.
func (d *Device) factorWarps(k *command, sm *smState) float64 {
	all := float64(sm.resWarps - sm.spinWarps)
	return max(all+d.otherWarps(k, func(o *command) int { return int(o.ownSM[sm.id]) }), 0)
}
