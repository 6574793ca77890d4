package sim

import (
	"math"

	"github.com/gpusched/gpusched/device"
)

// The memory-load model (sm.load_bandwidth > 0, issue #18, session 13).
//
// A profile times each kernel's blocks as its launches ran alone, at the
// traffic those launches drew; per-block extrapolation then gives a launch
// of more blocks, or copies of a kernel running at once, each block the
// memory rate it had alone. On the H100 and H200 a memory-bound block
// slows as the GPU's memory traffic grows, long before HBM saturates
// (KeSCo's square at 8, 32 and 64 blocks draws 137, 505 and 883 GB/s and
// its blocks take 1, 1.09 and 1.24x as long per byte;
// docs/results/raw/corun-*.tgz): the memory latency rises with the
// requests queued at the memory controllers. So a profiled block's time
// is
//
//	lone x factor x (1 + share x ((1 + D/B) / (1 + Dref/B) - 1))
//
// where share is the part of the block model's lone time its bytes take
// (BlockModel.ByteShare) times the share of its bytes from device memory
// rather than L2 (Profile.DRAMShare), D the device-memory demand of the
// GPU's SMs now (each SM's memory-moving blocks' device-memory bytes over
// their times without this stretch, bytes per ns, divided by their
// number: an SM counts one mean block, since the co-residency factor,
// fitted on launches of k blocks per SM on every SM, already holds what
// more blocks on one SM cost), Dref the demand the launch's profile time
// stands for (LoadRef: for a launch that matches a point, its own demand
// alone; for any other, its own demand clamped to the range its kernel's
// points drew), and B sm.load_bandwidth, the demand at which a byte takes
// twice as long as with none (fitted by `gpusched profile load-fit` on
// launches of one kernel at several block counts). A launch alone at a
// profiled point thus takes its point's time. With the residency rate
// model the stretch is revised as D moves (retime.go).

// LoadStretch is what a block's time is multiplied by at demand d when
// its profile time was taken at demand ref (bytes per ns both), its bytes
// taking share of it, at load bandwidth b (bytes per ns; 0: no stretch).
func LoadStretch(share, d, ref, b float64) float64 {
	if b <= 0 || share <= 0 {
		return 1
	}
	return 1 + share*((1+d/b)/(1+ref/b)-1)
}

// ByteShare is the part of the model's lone block time for Work w that
// its bytes take: its bytes terms over the whole (a roofline model's bytes
// term when it is the largest, else 0).
func (m *BlockModel) ByteShare(w *device.Work, beyondL2 bool) float64 {
	lone := m.Lone(w, beyondL2)
	b := m.NsPerByte * w.Bytes
	if beyondL2 {
		b += m.NsPerByteBeyondL2 * w.Bytes
	}
	if lone <= 0 || b <= 0 {
		return 0
	}
	if m.Roofline && b < max(m.NsPerCycle*w.Cycles, m.NsPerFlop*w.Flops) {
		return 0
	}
	return min(b/lone, 1)
}

// PointDemand is the device-memory demand of point pt's launch alone in
// profile p, in bytes per ns, as the simulator counts it: one block's
// bytes over its block time (the duration, median less back_to_back_ns,
// over the waves) on each SM its first wave holds, times the share of its
// bytes that come from device memory back to back (DRAMShare).
func PointDemand(p *Profile, pt *ProfilePoint) float64 {
	dur := pt.Median() - p.BackToBackNs
	if dur <= 0 || pt.Grid <= 0 || pt.Bytes <= 0 {
		return 0
	}
	return LaunchDemand(pt.Grid, max(pt.PerSM, 1), p.SMs, pt.Bytes, dur) * p.DRAMShare(float64(pt.Grid)*pt.Bytes, 0)
}

// DRAMShare is the share of a launch's bytes (launchBytes in all) that
// come from device memory, not L2, when miss of its read bytes are not
// resident as it starts: a launch within the effective L2 run back to
// back hits (ColdShare 1), one beyond l2_bytes streams from memory
// (ColdShare 0); a miss comes from memory whatever its size. A profile
// that records no L2 size counts every byte from memory.
func (p *Profile) DRAMShare(launchBytes, miss float64) float64 {
	if p.EffectiveL2Bytes <= 0 && p.L2Bytes <= 0 {
		return 1
	}
	return 1 - p.ColdShare(launchBytes)*(1-miss)
}

// LaunchDemand is the demand of a launch of grid blocks of bytes each, at
// perSM blocks per SM on sms SMs, whose duration alone is dur ns: the SMs
// of its first wave, each one block's bytes per block time.
func LaunchDemand(grid, perSM, sms int, bytes, dur float64) float64 {
	wave := min(grid, perSM*max(sms, 1))
	waves := (grid + wave - 1) / wave
	used := min(grid, max(sms, 1))
	return float64(used) * bytes * float64(waves) / dur
}

// DemandRange is the least and the most PointDemand over k's points in p
// that move bytes (lo > hi without any): the demands its model's times
// were fitted over.
func DemandRange(p *Profile, k *KernelProfile) (lo, hi float64) {
	lo, n := 1, 0
	for i := range k.Points {
		if k.Points[i].Bytes <= 0 {
			continue
		}
		d := PointDemand(p, &k.Points[i])
		if n++; n == 1 {
			lo, hi = d, d
			continue
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

// LoadRef is the demand a launch's model time stands for when its blocks
// alone draw own: own within the range its kernel's points were measured
// over (the fit follows the load there), else the nearer end of it (per
// block extrapolation beyond the points keeps their load). Without
// points (lo > hi), own.
func LoadRef(own, lo, hi float64) float64 {
	if lo > hi {
		return own
	}
	return min(max(own, lo), hi)
}

// demandScale is the fixed point demands are summed in (per byte per ns),
// so that adding and removing a batch's demand leaves no rounding behind.
const demandScale = 1 << 20

// loadState is the memory-load model's state in a Run.
type loadState struct {
	on     bool
	b      float64 // sm.load_bandwidth, bytes per ns
	demand int64   // resident memory-moving blocks' demand (demandScale)
	rated  int64   // the demand the flights were last rated at
	moved  bool    // the demand moved in this instant (residencyMoved)
}

func (d *Device) resetLoad() {
	d.load = loadState{b: d.cfg.SM.LoadBandwidth / 1e9}
	d.load.on = d.load.b > 0 && d.prof != nil
}

// setLoadRef gives profiled launch k its byte share and the demand its
// lone time stands for (Dref, LoadRef): lone is its lone block time (0:
// the model's for its Work), point whether a profile point gave it, miss
// the share of its read bytes not in L2 as it starts. Only its bytes from
// device memory count (Profile.DRAMShare), in its share and its demand.
func (d *Device) setLoadRef(k *command, lone float64, point bool, miss float64) {
	k.loadShare, k.loadRef, k.loadStretch, k.loadDRAM = 0, 0, 1, 1
	if !d.load.on || k.model == nil || k.l.Work.Bytes <= 0 {
		return
	}
	w := &k.l.Work
	beyond := d.prof.beyondL2(k.total, w)
	k.loadDRAM = d.prof.prof.DRAMShare(float64(k.total)*w.Bytes, miss)
	k.loadShare = k.model.ByteShare(w, beyond) * k.loadDRAM
	if lone <= 0 {
		lone = k.model.Lone(w, beyond)
	}
	if lone <= 0 {
		return
	}
	n, _ := d.info.Occupancy(&k.l)
	n = max(n, 1)
	// its blocks' time alone: lone at the co-residency of its own wave
	wave := min(k.total, n*len(d.sms))
	per := (wave + len(d.sms) - 1) / len(d.sms)
	f := k.model.Factor(float64(per*k.res.Warps), float64(wave*k.res.Warps)/float64(len(d.sms)), k.res.Warps, d.prof.slope)
	waves := (k.total + wave - 1) / wave
	own := LaunchDemand(k.total, n, len(d.sms), w.Bytes, lone*f*float64(waves)) * k.loadDRAM
	if point {
		k.loadRef = own
		return
	}
	r := d.prof.demand[kernelName{k.l.Kernel.Module, k.l.Kernel.Name}]
	k.loadRef = LoadRef(own, r[0], r[1])
}

// stretchOf is k's memory-load stretch at the demand of now.
func (d *Device) stretchOf(k *command) float64 {
	if !d.load.on || k.loadShare <= 0 {
		return 1
	}
	return LoadStretch(k.loadShare, float64(d.load.demand)/demandScale, k.loadRef, d.load.b)
}

// demandOf is the demand (demandScale) of n blocks of k that take dur,
// without the memory-load stretch that dur includes.
func (d *Device) demandOf(k *command, n int32, dur Time) int64 {
	if !d.load.on || k.l.Work.Bytes <= 0 || dur <= 0 {
		return 0
	}
	bare, dram := float64(dur)/1000, 1.0 // ns
	if k.model != nil {
		bare, dram = max((bare-k.coldNs)/k.loadStretch, 1e-3), k.loadDRAM
	}
	return int64(math.Round(min(float64(n)*k.l.Work.Bytes*dram/bare, 1e12) * demandScale))
}

// loadMoved reports whether the demand moved since the flights were last
// rated: by a hundredth of load_bandwidth (a 1% move of 1 + D/B), or at
// all before a quiet spell.
func (d *Device) loadMoved(quiet bool) bool {
	l := &d.load
	l.moved = false
	if !l.on || l.demand == l.rated {
		return false
	}
	step := int64(0.01 * l.b * demandScale)
	diff := l.demand - l.rated
	if quiet || diff >= step || -diff >= step {
		l.moved, l.rated = true, l.demand
	}
	return l.moved
}

// addDemand adds demand (demandScale) of n memory-moving blocks on SM s
// (both < 0: they end), and moves the GPU's demand by what the SM's mean
// per block changes.
func (d *Device) addDemand(s, n int32, demand int64) {
	if !d.load.on {
		return
	}
	sm := &d.sms[s]
	sm.loadDemand += demand
	sm.loadBlocks += n
	part := int64(0)
	if sm.loadBlocks > 0 {
		part = sm.loadDemand / int64(sm.loadBlocks)
	}
	d.load.demand += part - sm.loadPart
	sm.loadPart = part
}
