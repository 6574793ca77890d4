package sim

import "math"

// The residency rate model (sm.retime_threshold > 0).
//
// Without it a block's duration is fixed when it is placed, from the
// co-residency of that instant, so a kernel's partial last wave, placed
// while its full wave still holds the GPU, runs at the full wave's
// factor to its end, where the GPU speeds the tail up as the SMs empty.
// With it a resident block of a profiled kernel is a rated flight
// (bandwidth.go's flights): at the end of every instant in which an SM's
// resident warps or the GPU's changed, each flight whose duration at the
// residency of now (blockDur) differs from the one it was last timed at
// by more than the threshold keeps its progress (the fraction of its time
// elapsed) and ends when its remaining fraction takes at the new duration.
// The threshold bounds the work: steady full waves change nothing, and a
// draining wave re-times a flight only every threshold of change.
//
// Two placement rules go with it, so that a lone launch runs as the
// hardware runs it and as the profile inversion (RatedKernelNs) assumes:
//   - the blocks placed at one instant are dispatched breadth-first (one
//     block per SM in turn, as the block distributor spreads a grid), so a
//     batch of n blocks starts when its n-th block is dispatched; and
//   - a rated kernel's blocks placed on SMs freed by ending blocks (not
//     its first placement) are spread over the SMs about to free
//     (tailShare), as the hardware hands the freed slots out one at a time
//     in the order the blocks end. A partial last wave thus runs one block
//     per SM (or its share), not packed onto the first SMs to empty.

// rateState is the rate model's state in a Run.
type rateState struct {
	on        bool
	threshold float64
	touched   []int32 // SMs whose residency changed in this instant
	gpuWarps  int     // the GPU's resident warps the flights were last rated at
	gpuMoved  bool    // the GPU's resident warps moved in this instant
	spinWarps int     // warps of resident blocks spinning on counters
	cache     baseCache
}

func (d *Device) resetRates() {
	r := &d.rt
	clear(r.touched)
	*r = rateState{touched: r.touched[:0]}
	r.threshold = d.cfg.SM.RetimeThreshold
	r.on = r.threshold > 0 && d.prof != nil
}

// rated reports whether k's blocks follow the residency.
func (d *Device) rated(k *command) bool { return d.rt.on && k.model != nil }

// touch notes that SM s's residency changes in this instant, and asks for
// the pass at its end that rates the flights again.
func (d *Device) touch(s int) {
	if !d.rt.on {
		return
	}
	sm := &d.sms[s]
	if !sm.touched {
		sm.touched = true
		d.rt.touched = append(d.rt.touched, int32(s))
	}
	d.requestPass()
}

// residencyMoved reports whether any SM's resident warps, or the GPU's
// (rateState.gpuMoved), differ from what the flights were last rated at,
// and marks the SMs that moved (smState.moved) until clearMoved. The
// GPU's residency is re-rated in steps, to bound the work of co-running
// kernels whose blocks end one after another: when its mean moved by a
// warp per SM since it was last rated, or at all before a quiet spell (no
// event within quietNs: the end of a draining wave).
func (d *Device) residencyMoved() bool {
	r := &d.rt
	if !r.on {
		return false
	}
	gpu := d.gpuWarps - r.spinWarps
	step := max(len(d.sms), 1)
	quiet := len(d.heap) == 0 || d.heap[0].t-d.now >= quietNs
	r.gpuMoved = gpu != r.gpuWarps && (quiet || absInt(gpu-r.gpuWarps) >= step)
	moved := d.loadMoved(quiet) || r.gpuMoved
	if r.gpuMoved {
		r.gpuWarps = gpu
	}
	for _, s := range r.touched {
		sm := &d.sms[s]
		sm.touched = false
		w := sm.resWarps - sm.spinWarps
		sm.moved = w != sm.ratedWarps
		sm.ratedWarps = w
		moved = moved || sm.moved
	}
	return moved
}

// spinWarps counts w more warps of blocks spinning on counters on SM s
// (w < 0: fewer). With the rate model a spinning block holds its SM's
// resources but not its co-residency: the factor counts the warps that
// run (blockDur), so a block that starts spinning beside running ones
// does not slow them, and one released does.
func (d *Device) spinWarps(k *command, s, w int) {
	if !d.rt.on {
		return
	}
	d.ownWarps(k, s, -w)
	d.sms[s].spinWarps += w
	d.rt.spinWarps += w
	d.touch(s)
}

// clearMoved forgets which SMs moved in this instant.
func (d *Device) clearMoved() {
	for _, s := range d.rt.touched {
		d.sms[s].moved = false
	}
	clear(d.rt.touched)
	d.rt.touched = d.rt.touched[:0]
}

// flightBase is f's duration at the residency of now, without a copy
// beside: its block time (blockDur, with its synchronization costs for a
// block of a synchronizing kernel) and what its bytes take of it.
func (d *Device) flightBase(f *memFlight) (base, mem float64) {
	sm := &d.sms[f.sm]
	dur := d.blockDur(f.k, sm)
	if f.kind == evBlockDone {
		dur = addTime(dur, d.syncExtra(f.k, f.x, dur))
	}
	return float64(dur), d.memPart(f.k, sm, dur)
}

// quietNs is the gap to the next event after which a change of the GPU's
// residency smaller than a step is re-rated (residencyMoved).
const quietNs = Time(50_000)

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// linkFlight and unlinkFlight keep each SM's flights in a list, so that a
// change of one SM's residency re-rates only the flights on it.
func (d *Device) linkFlight(i int32) {
	f := &d.bw.flights[i]
	sm := &d.sms[f.sm]
	f.nextOnSM, sm.flights = sm.flights, i+1
}

func (d *Device) unlinkFlight(i int32) {
	f := &d.bw.flights[i]
	p := &d.sms[f.sm].flights
	for *p != 0 && *p != i+1 {
		p = &d.bw.flights[*p-1].nextOnSM
	}
	if *p == i+1 {
		*p = f.nextOnSM
	}
	f.nextOnSM = 0
}

// rerateMovedSMs re-rates the flights on the SMs whose residency moved,
// at the copy's slowdown s (unchanged).
func (d *Device) rerateMovedSMs(s float64) {
	for _, sm := range d.rt.touched {
		if !d.sms[sm].moved {
			continue
		}
		for i := d.sms[sm].flights; i != 0; i = d.bw.flights[i-1].nextOnSM {
			d.rerateFlight(i-1, s, true, false)
		}
	}
}

// minRetime is the least move of a block's end the rate model
// reschedules: a block about to end keeps its end (a draining wave's
// blocks, re-rated at every SM that empties, would otherwise be
// rescheduled at each).
const minRetime = Time(1000)

func absTime(t Time) Time {
	if t < 0 {
		return -t
	}
	return t
}

// baseCache is the last duration rerateResidency computed for a batch of a
// kernel on an SM of a given residency, within one pass (the GPU's
// residency fixed): the flights of one kernel on alike SMs share it.
type baseCache struct {
	k               *command
	warps, memWarps int
	factorWarps     float64
	base, mem       float64
}

// rerateResidency is flight f's duration and bytes' part at the residency
// of now, and whether that moved its duration by more than the threshold
// (its SM's residency moved, or the GPU's, all, for a kernel the GPU's
// residency times).
func (d *Device) rerateResidency(f *memFlight, all bool) (base, mem float64, moved bool) {
	sm := &d.sms[f.sm]
	if !sm.moved && (!all || f.k.model.GPUShare == 0) && (!d.load.moved || f.k.loadShare == 0) {
		return f.base, f.mem, false
	}
	warps := sm.resWarps - sm.spinWarps
	fw := d.factorWarps(f.k, sm)
	if c := &d.rt.cache; f.kind == evBatchDone && c.k == f.k && c.warps == warps && c.factorWarps == fw && c.memWarps == sm.memWarps {
		base, mem = c.base, c.mem
	} else {
		base, mem = d.flightBase(f)
		if f.kind == evBatchDone {
			*c = baseCache{f.k, warps, sm.memWarps, fw, base, mem}
		}
	}
	if math.Abs(base-f.base) <= d.rt.threshold*f.base {
		return f.base, f.mem, false
	}
	return base, mem, true
}

// tailShare is how many blocks of k an SM s freed by ending blocks takes
// at most: its share of k's unplaced blocks over the SMs whose slots free
// before blocks placed now would end (those holding k's batches of the
// wave that just ended on s or an earlier one, at k's blocks per SM
// alone, and the freed SMs not yet offered in this pass, left), as the
// hardware hands the freed slots out in the order they free. While k has
// enough unplaced blocks for every SM that holds or frees its blocks, the
// SM takes what fits.
func (d *Device) tailShare(k *command, s, left int) int {
	rem := k.total - k.placed
	per := max(k.perSM, 1)
	if rem >= per*((k.placed-k.done+per-1)/per+left) {
		return rem
	}
	ended := d.waveOn(k, s) - 1
	soon := 0
	for i := range d.bw.flights {
		if f := &d.bw.flights[i]; f.k == k && f.kind == evBatchDone && f.wave <= ended {
			soon += int(f.x)
		}
	}
	sms := (soon+per-1)/per + left
	return max((rem+sms-1)/sms, 1)
}

// waveOn is the wave of a batch of k placed on SM s now: one more than
// the last batch of k that ended there, or 1.
func (d *Device) waveOn(k *command, s int) int32 {
	if sm := &d.sms[s]; sm.endedAct == k.actSeq && k.actSeq != 0 {
		return sm.endedWave + 1
	}
	return 1
}

// dispatchBreadthFirst sets the start of each pending batch from i0 on
// that belongs to the same kernel as batch i0, the blocks dispatched
// breadth-first from base: round r dispatches one block to every batch of
// more than r blocks, in batch order, and a batch starts with its last
// block. It returns the index past the kernel's batches and the time its
// last block is dispatched.
func (d *Device) dispatchBreadthFirst(i0 int, base Time, starts []Time) (int, Time) {
	k := d.batches[i0].k
	i1, most := i0, int32(0)
	for i1 < len(d.batches) && d.batches[i1].k == k {
		most = max(most, d.batches[i1].n)
		i1++
	}
	pos := int64(0)
	for r := int32(0); r < most; r++ {
		for i := i0; i < i1; i++ {
			if n := d.batches[i].n; n > r {
				pos++
				if n == r+1 {
					starts[i] = addTime(base, mulTime(pos, d.cost.blockDispatch))
				}
			}
		}
	}
	return i1, addTime(base, mulTime(pos, d.cost.blockDispatch))
}
