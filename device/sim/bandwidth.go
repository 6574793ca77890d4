package sim

import "math"

// Device memory bandwidth shared by device-to-device copies and kernels.
//
// A device-to-device copy reads and writes every byte through the HBM that
// kernels' loads and stores use. With copy.dtod_contention c > 0 the two
// share it by progress rates (processor sharing by demand, as requests
// queue at the memory controllers): the kernels' load U is the share of
// the bandwidth kernels achieve (info.mem_bandwidth x
// sm.achieved_bandwidth_fraction) that their resident memory-moving blocks
// draw, taken as at most 1; a copy whose data moves has load 1 (alone it
// runs at mem_bandwidth). While both are active, the time a block's bytes
// take is stretched by max(1, U + c) (its other terms, cycles and flops,
// are not), and the copy moves at 1/max(1, 1 + c U) of its rate alone.
// c = 1 is full sharing: both together take as long as both alone; c = 0,
// no interaction (the simulator before the field existed). Every start or
// end of a copy's transfer or of a memory-moving block changes the loads,
// and at the end of that instant every block in flight and the copy are
// given the end their remaining work takes at the new rates. Copies over
// PCIe do not take part: at under 60 GB/s they draw under 2% of HBM, and
// the calibration measures no effect either way (calibrate/overlap.go).

// loadOne is a load of 1 in the fixed point loads are summed in, so that
// adding and removing a block's load leaves no rounding behind.
const loadOne = 1 << 32

// memFlight is a batch of memory-moving blocks in flight (or one block of
// a synchronizing kernel), whose end the copy beside it moves.
type memFlight struct {
	k          *command // nil: the slot is free
	kind       evKind   // evBatchDone or evBlockDone
	sm, x      int32    // the end event's a and b
	start, end Time     // end - start is its current total time
	base, mem  float64  // ps: its time without a copy beside, and what its bytes take of it
	slow       float64  // the slowdown of its bytes its end was set with
	load       int64    // its blocks' share of the kernels' bandwidth (fixed point)
	demand     int64    // its blocks' device-memory demand (memload.go; demandScale)
	n          int32    // its blocks
	seq        uint64   // the seq of its live end event
	wave       int32    // its kernel's placements on its SM so far, this one included (retime.go)
	nextOnSM   int32    // the next flight (index + 1) on its SM, 0: none (retime.go)
}

// bandwidthState is the shared memory bandwidth and the device-to-device
// copy engine that competes for it (copies queue on the one engine).
type bandwidthState struct {
	on         bool
	contention float64
	peak       float64 // bytes per ps kernels achieve
	kernelLoad int64
	flights    []memFlight
	free       []int32
	dirty      bool // the loads changed in this instant

	rateEngine // the device-to-device copy engine (copyengine.go)
}

func (d *Device) resetBandwidth() {
	b := &d.bw
	clear(b.flights)
	*b = bandwidthState{flights: b.flights[:0], free: b.free[:0], rateEngine: b.emptied()}
	b.contention = d.cfg.Copy.DtoDContention
	b.on = b.contention > 0
	b.peak = d.info.MemBandwidth * fraction(d.cfg.SM.BandwidthFraction) / 1e12
}

// psTime rounds picoseconds to Time, saturated at maxTime.
func psTime(ps float64) Time {
	if ps >= float64(maxTime) {
		return maxTime
	}
	return Time(math.Round(ps))
}

// kernelsLoad is U, the kernels' load, at most 1.
func (b *bandwidthState) kernelsLoad() float64 {
	return min(float64(b.kernelLoad)/loadOne, 1)
}

// blockSlow is what a copy beside stretches blocks' bytes by now.
func (b *bandwidthState) blockSlow() float64 {
	if !b.moving {
		return 1
	}
	return max(1, b.kernelsLoad()+b.contention)
}

// copySlow is what the kernels' traffic slows the copy by now.
func (b *bandwidthState) copySlow() float64 {
	return max(1, 1+b.contention*b.kernelsLoad())
}

// total is f's total time at slowdown s of its bytes.
func (f *memFlight) total(s float64) float64 {
	if s <= 1 {
		return f.base
	}
	return max(f.base, f.mem*s)
}

// endBlocks schedules the end (event kind, a = sm, b = x) of n blocks of k
// on SM sm that start at start and take dur without a copy beside; mem is
// what their bytes take of it (memPart, before anything else changed the
// residency). Blocks that move memory while sharing is on are tracked as
// a flight, so that a copy beside can move their end.
func (d *Device) endBlocks(kind evKind, k *command, sm, x, n int32, start, dur Time, mem float64, wave int32) {
	b := &d.bw
	if mem <= 0 && !d.rated(k) {
		d.schedule(addTime(start, dur), kind, sm, x, k)
		return
	}
	load := int64(math.Round(min(float64(n)*k.l.Work.Bytes/(float64(max(dur, 1))*b.peak), 1<<20) * loadOne))
	var i int32
	if n := len(b.free); n > 0 {
		i, b.free = b.free[n-1], b.free[:n-1]
	} else {
		i = int32(len(b.flights))
		b.flights = append(b.flights, memFlight{})
	}
	f := &b.flights[i]
	*f = memFlight{k: k, kind: kind, sm: sm, x: x, start: start, base: float64(dur), mem: mem, slow: b.blockSlow(), load: load, wave: wave, demand: d.demandOf(k, n, dur), n: n}
	d.addDemand(sm, n, f.demand)
	f.end = addTime(start, psTime(f.total(f.slow)))
	f.seq = d.scheduleF(f.end, kind, sm, x, i+1, k)
	d.linkFlight(i)
	b.kernelLoad += load
	d.loadsChanged()
}

// memPart is what the bytes of one block of k take of its time dur on sm
// at the residency now (the Work estimate's bytes term, at most dur), or
// 0 when sharing is off or k moves no memory.
func (d *Device) memPart(k *command, sm *smState, dur Time) float64 {
	if !d.bw.on || k.l.Work.Bytes <= 0 {
		return 0
	}
	return min(1000*d.byteNs(k, sm), float64(dur))
}

// flightDone ends flight f-1 (its live end event has come).
func (d *Device) flightDone(f int32) {
	b := &d.bw
	fl := &b.flights[f-1]
	d.unlinkFlight(f - 1)
	if fl.kind == evBatchDone {
		sm := &d.sms[fl.sm]
		sm.endedAct, sm.endedWave = fl.k.actSeq, fl.wave
	}
	b.kernelLoad -= fl.load
	d.addDemand(fl.sm, -fl.n, -fl.demand)
	*fl = memFlight{}
	b.free = append(b.free, f-1)
	d.loadsChanged()
}

// loadsChanged asks for the flights and the copy to be rated again at the
// end of this instant (schedulePass), when every change of it is in.
func (d *Device) loadsChanged() {
	if d.bw.moving {
		d.bw.dirty = true
		d.requestPass()
	}
}

// stale reports whether ev is an end that a change of rates has moved.
func (d *Device) stale(ev *event) bool {
	if ev.f == 0 {
		return false
	}
	if ev.kind == evCopyDone {
		if ev.b > 0 {
			return ev.seq != d.pcie.eng[ev.b-1].seq
		}
		return ev.seq != d.bw.seq
	}
	return ev.seq != d.bw.flights[ev.f-1].seq
}

// rerate gives every flight and the moving copy the end their remaining
// work takes at the rates of now: the copy's slowdown, and with the rate
// model the residency (retime.go).
func (d *Device) rerate() {
	b := &d.bw
	resid := d.residencyMoved()
	if !b.dirty && !resid {
		d.clearMoved()
		return
	}
	s := b.blockSlow()
	d.rt.cache = baseCache{}
	if b.dirty || d.rt.gpuMoved || d.load.moved {
		for i := range b.flights {
			if f := &b.flights[i]; f.k != nil {
				d.rerateFlight(int32(i), s, resid, d.rt.gpuMoved)
			}
		}
	} else {
		d.rerateMovedSMs(s)
	}
	b.dirty = false
	d.clearMoved()
	if !b.moving {
		return
	}
	if left, ok := b.setSlow(d.now, b.copySlow()); ok {
		b.seq = d.scheduleF(addTime(d.now, left), evCopyDone, 0, 0, 1, b.copy)
	}
}

// rerateFlight gives flight i the end its remaining work takes at the
// copy's slowdown s and, when the residency moved (resid; all: the GPU's),
// at the residency of now.
func (d *Device) rerateFlight(i int32, s float64, resid, all bool) {
	f := &d.bw.flights[i]
	base, mem, moved := f.base, f.mem, false
	if resid && d.rated(f.k) {
		base, mem, moved = d.rerateResidency(f, all)
	}
	if !moved && f.slow == s {
		return
	}
	next := memFlight{base: base, mem: mem}
	total := next.total(s)
	start, end := f.start, Time(0)
	if d.now <= f.start {
		end = addTime(f.start, psTime(total))
	} else {
		left := float64(f.end-d.now) / float64(max(f.end-f.start, 1))
		end = addTime(d.now, psTime(left*total))
		start = end - psTime(total)
	}
	if f.slow == s && absTime(end-f.end) < minRetime {
		return // the residency moved it too little to reschedule
	}
	f.slow, f.base, f.mem, f.start = s, base, mem, start
	if end != f.end {
		f.end = end
		f.seq = d.scheduleF(end, f.kind, f.sm, f.x, i+1, f.k)
	}
}

// Copy phases on the device-to-device engine while sharing is on: queued,
// latency (no data moves), transfer, done.
const copyMoves = 1 // evCopyDone's a: the copy's latency is over

// copyPick is evCopyDone's a for a host engine's pick of its next queued
// copy (copy.stream_runs; pcie.go).
const copyPick = 2

// startDtoD starts copy k on the device-to-device engine, or queues it.
func (d *Device) startDtoD(k *command) {
	k.engine = engDtoD
	if d.bw.admit(k, d.now) {
		d.schedule(addTime(d.now, d.cost.copyLatency), evCopyDone, copyMoves, 0, k)
	}
}

// copyMoving starts the transfer of the engine's copy: every byte is read
// and written at mem_bandwidth when alone.
func (d *Device) copyMoving() {
	b := &d.bw
	b.move(d.now, float64(nsTime(2*float64(b.copy.cp.Bytes)/d.info.MemBandwidth*1e9)))
	b.dirty = true
	d.requestPass()
}

// dtodDone ends the engine's copy k and starts the next queued one.
func (d *Device) dtodDone(k *command) {
	b := &d.bw
	next := b.finish(k, d.now)
	b.dirty = true
	d.requestPass()
	if next != nil {
		d.startDtoD(next)
	}
}
