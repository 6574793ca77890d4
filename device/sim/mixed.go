package sim

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

// agesOn reports whether younger kernels' warps count less.
func (d *Device) agesOn() bool { return d.youngerWeight() < 1 }

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

// youngerOn is the running warps on sm of kernels activated after k (0
// without the weight).
func (d *Device) youngerOn(k *command, sm *smState) int {
	if !d.agesOn() {
		return 0
	}
	n := 0
	for _, o := range d.ages {
		if o.actSeq > k.actSeq {
			n += int(o.ownSM[sm.id])
		}
	}
	return n
}

// gpuFactorWarps is the GPU's running warps k's factor reads (its
// GPUShare part), younger kernels' weighted by youngerWeight.
func (d *Device) gpuFactorWarps(k *command) float64 {
	all := float64(d.gpuWarps - d.rt.spinWarps)
	if !d.agesOn() {
		return all
	}
	n := 0
	for _, o := range d.ages {
		if o.actSeq > k.actSeq {
			n += o.ownAll
		}
	}
	return all - (1-d.youngerWeight())*float64(n)
}

// factorWarps is the warps k's co-residency curve is read at on sm: the
// SM's running warps, younger kernels' weighted by youngerWeight.
func (d *Device) factorWarps(k *command, sm *smState) float64 {
	all := float64(sm.resWarps - sm.spinWarps)
	if !d.agesOn() {
		return all
	}
	return all - (1-d.youngerWeight())*float64(d.youngerOn(k, sm))
}
