package sim

import (
	"github.com/gpusched/gpusched/device"
)

// BlockPolicy decides which resident kernel's blocks are offered free SM
// resources first. Each scheduling pass walks the kernels that still have
// blocks to place in the policy's order; every kernel places as many blocks
// as fit, and later kernels fill what is left (the leftover policy of real
// GPUs: no kernel is preempted and SMs never idle while a block fits).
type BlockPolicy interface {
	Name() string
	// Before reports whether a is offered resources before b. It must
	// depend only on the fields of KernelInfo (they never change while a
	// kernel is resident).
	Before(a, b KernelInfo) bool
}

// KernelInfo is what a BlockPolicy sees of a resident kernel.
type KernelInfo struct {
	Name     string
	Stream   int    // issuing stream; -1 for dependency-queue kernels
	Priority int    // stream priority: lower is higher priority, as in CUDA
	Arrival  uint64 // order in which kernels reached the block scheduler
	Blocks   int    // grid size
}

// PriorityLeftover is the default policy and what NVIDIA GPUs do: kernels of
// higher-priority streams first, then the earliest arrival.
type PriorityLeftover struct{}

func (PriorityLeftover) Name() string { return "priority-leftover" }
func (PriorityLeftover) Before(a, b KernelInfo) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	return a.Arrival < b.Arrival
}

// Leftover ignores stream priorities: earliest arrival first.
type Leftover struct{}

func (Leftover) Name() string                { return "leftover" }
func (Leftover) Before(a, b KernelInfo) bool { return a.Arrival < b.Arrival }

// SmallestFirst offers resources to the kernel with the fewest blocks first
// (ties: priority, then arrival): an alternative policy for experiments on
// the block scheduler itself.
type SmallestFirst struct{}

func (SmallestFirst) Name() string { return "smallest-first" }
func (SmallestFirst) Before(a, b KernelInfo) bool {
	if a.Blocks != b.Blocks {
		return a.Blocks < b.Blocks
	}
	return PriorityLeftover{}.Before(a, b)
}

func (k *command) info() KernelInfo {
	s := -1
	if k.st != nil && k.dqID == 0 {
		s = k.st.id
	}
	return KernelInfo{Name: k.l.Name(), Stream: s, Priority: k.prio, Arrival: k.actSeq, Blocks: k.total}
}

// smState is one SM's free resources and residency.
type smState struct {
	id                                   int32
	threads, warps, blocks, regs, shared int // free
	resWarps, resBlocks                  int
	memWarps                             int // warps of resident blocks moving device memory (not spinning)
	dirty                                bool
	// The rate model (retime.go): resident warps the SM's flights were
	// last rated at, and whether its residency changed in this instant
	// (touched) and moved from the rated one (moved).
	ratedWarps int
	spinWarps  int   // warps of resident blocks spinning on counters
	flights    int32 // the first flight on the SM (index + 1; memFlight.nextOnSM), 0: none
	// The memory-load model (memload.go): the SM's flights' demand and
	// blocks, and what it adds to the GPU's demand (their mean per block).
	loadDemand, loadPart int64
	loadBlocks           int32
	touched, moved       bool
	// The kernel (by activation) and wave of the last batch that ended on
	// the SM (tailShare).
	endedAct  uint64
	endedWave int32
	// carveCut is the shared memory outside the SM's carve-out, bytes
	// (carveout.go; 0 without it).
	carveCut int
}

// fitsOne reports whether one block of r fits s with shared bytes of
// shared memory free for it (Device.sharedFree).
func (s *smState) fitsOne(r *device.BlockResources, shared int) bool {
	return s.blocks >= 1 && s.threads >= r.Threads && s.warps >= r.Warps && s.regs >= r.Registers && shared >= r.Shared
}

// fitCount is how many blocks of r fit s with shared bytes of shared
// memory free for them.
func (s *smState) fitCount(r *device.BlockResources, shared int) int {
	n := s.blocks
	if r.Threads > 0 {
		n = min(n, s.threads/r.Threads)
	}
	if r.Warps > 0 {
		n = min(n, s.warps/r.Warps)
	}
	if r.Registers > 0 {
		n = min(n, s.regs/r.Registers)
	}
	if r.Shared > 0 {
		n = min(n, shared/r.Shared)
	}
	return n
}

// pendingBatch is n blocks of k placed on SM sm in the current pass; block
// is the block index for synchronizing kernels (-1 otherwise).
type pendingBatch struct {
	k     *command
	sm    int32
	n     int32
	block int32
	wave  int32 // k's placements on the SM so far, this one included (retime.go)
}

// counter is a device-memory counter of cuSync-style block synchronization.
type counter struct {
	key     device.Counter
	value   uint32
	waiters []*spinner
	vc      vclock // the join of the posters' clocks (ordering check)
}

// spinner is a block that holds its SM while it waits for counters.
type spinner struct {
	k       *command
	sm      int32
	block   int32
	since   Time
	waits   []device.CounterWait
	started bool
}

func counterKey(c device.Counter) uint64 { return c.Buf.Addr + uint64(c.Index)*4 }

func (d *Device) counter(c device.Counter) *counter {
	key := counterKey(c)
	ct := d.counters[key]
	if ct == nil {
		ct = &counter{key: c}
		d.counters[key] = ct
	}
	return ct
}

// activate puts a resident kernel in front of the block scheduler.
func (d *Device) activate(k *command) {
	k.res = d.info.Resources(&k.l)
	k.total = k.l.Grid.Count()
	k.perSM, _ = d.info.Occupancy(&k.l)
	clear(k.ownSM)
	k.ownAll = 0
	d.timeFromProfile(k)
	k.pressure = d.kernelPressure(k)
	k.blkAcc, k.startPost = nil, nil
	if k.l.Sync != nil {
		if ba, ok := k.l.Sync.(device.BlockAccess); ok && !d.opts.noRaces {
			k.blkAcc = ba
			if cap(k.blkStart) < k.total {
				k.blkStart = make([]Time, k.total)
			}
			k.blkStart = k.blkStart[:k.total]
		}
		k.startPost, _ = k.l.Sync.(device.StartPoster)
	}
	d.activeSeq++
	k.actSeq = d.activeSeq
	k.isNew = true
	info := k.info()
	pol := d.opts.policy
	i := len(d.waiting)
	d.waiting = append(d.waiting, k)
	for i > 0 && pol.Before(info, d.waiting[i-1].info()) {
		d.waiting[i] = d.waiting[i-1]
		i--
	}
	d.waiting[i] = k
	d.requestPass()
}

// requestPass asks for a scheduling pass at the end of the current instant:
// the engine runs it once every event at this time has run, so blocks freed
// and kernels arrived at one instant are placed together.
func (d *Device) requestPass() { d.passPend = true }

// schedulePass places blocks of waiting kernels, in policy order. A kernel
// that has just arrived is offered every SM; the others only the SMs freed
// since the last pass (on the rest nothing of theirs fit then, and nothing
// has been freed there since).
func (d *Device) schedulePass() {
	d.passPend = false
	if len(d.waiting) > 0 {
		d.util.advance(d.now)
		for _, k := range d.waiting {
			if k.isNew {
				k.isNew = false
				d.place(k, true)
			} else if len(d.dirty) > 0 {
				d.place(k, false)
			}
		}
		keep := d.waiting[:0]
		for _, k := range d.waiting {
			if k.placed < k.total {
				keep = append(keep, k)
			}
		}
		clear(d.waiting[len(keep):])
		d.waiting = keep
	}
	for _, s := range d.dirty {
		d.sms[s].dirty = false
	}
	d.dirty = d.dirty[:0]
	d.startBatches()
	clear(d.batches)
	d.batches = d.batches[:0]
	d.rerate()
}

// startBatches starts the blocks placed in this pass. Durations are fixed
// once every block of this instant is placed, so blocks placed together
// see the same co-residency. With a block dispatch time, the distributor
// starts the blocks of the pass one after another: a batch starts with its
// last block, batch after batch, or, with the rate model, breadth-first
// (retime.go).
func (d *Device) startBatches() {
	start := d.now
	if d.cost.blockDispatch > 0 {
		start = max(d.now, d.distFree)
	}
	var starts []Time
	if d.rt.on && d.cost.blockDispatch > 0 {
		if cap(d.batchStarts) < len(d.batches) {
			d.batchStarts = make([]Time, len(d.batches))
		}
		starts = d.batchStarts[:len(d.batches)]
		for i := 0; i < len(d.batches); {
			i, start = d.dispatchBreadthFirst(i, start, starts)
		}
	}
	for i, b := range d.batches {
		sm := &d.sms[b.sm]
		dur := d.blockDur(b.k, sm)
		at := start
		switch {
		case starts != nil:
			at = starts[i]
		case d.cost.blockDispatch > 0:
			start = addTime(start, mulTime(int64(b.n), d.cost.blockDispatch))
			at = start
		}
		if b.block >= 0 {
			d.blockStarted(b.k, b.sm, b.block, at, dur)
		} else {
			d.endBlocks(evBatchDone, b.k, b.sm, b.n, b.n, at, dur, d.memPart(b.k, sm, dur), b.wave)
		}
	}
	if d.cost.blockDispatch > 0 {
		d.distFree = start
	}
}

// place distributes k's unplaced blocks breadth-first over the candidate
// SMs (every SM, or the dirty ones), as the hardware's block distributor
// spreads a grid across SMs before stacking blocks on one.
func (d *Device) place(k *command, all bool) {
	r := &k.res
	n := len(d.dirty)
	S := len(d.sms)
	if all {
		n = S
	}
	idx := func(i int) int {
		if all {
			j := d.rr + i
			if j >= S {
				j -= S
			}
			return j
		}
		return int(d.dirty[i])
	}
	rem := k.total - k.placed
	if k.l.Sync != nil || rem <= n {
		d.placeRoundRobin(k, n, all, idx)
		return
	}
	if d.rated(k) && !all {
		d.placeSpread(k, n, idx)
		return
	}
	if cap(d.fitBuf) < n {
		d.fitBuf = make([]int, n)
	}
	fits := d.fitBuf[:n]
	total, maxFit := 0, 0
	for i := range fits {
		sm := &d.sms[idx(i)]
		f := sm.fitCount(r, d.sharedFree(k, sm))
		fits[i] = f
		total += f
		maxFit = max(maxFit, f)
	}
	if total == 0 {
		return
	}
	if total <= rem {
		for i, f := range fits {
			if f > 0 {
				d.take(k, idx(i), f)
			}
		}
		return
	}
	// Water-fill: the largest level L with sum(min(fit, L)) <= rem, then one
	// more block on SMs with room above L until rem is used up.
	level, used := 0, 0
	for level < maxFit {
		g := 0
		for _, f := range fits {
			g += min(f, level+1)
		}
		if g > rem {
			break
		}
		level, used = level+1, g
	}
	extra := rem - used
	for i, f := range fits {
		c := min(f, level)
		if f > level && extra > 0 {
			c++
			extra--
		}
		if c > 0 {
			d.take(k, idx(i), c)
		}
	}
}

// placeRoundRobin places few blocks (or blocks that must be numbered one
// by one) one per candidate SM per round, continuing the rotation when
// every SM is a candidate.
func (d *Device) placeRoundRobin(k *command, n int, all bool, idx func(int) int) {
	r := &k.res
	rem := k.total - k.placed
	last := -1
	for rem > 0 {
		progress := false
		for i := 0; i < n && rem > 0; i++ {
			s := idx(i)
			if sm := &d.sms[s]; sm.fitsOne(r, d.sharedFree(k, sm)) {
				d.take(k, s, 1)
				rem--
				progress = true
				last = i
			}
		}
		if !progress {
			break
		}
	}
	if all && last >= 0 {
		d.rr = idx(last) + 1
		if d.rr >= len(d.sms) {
			d.rr = 0
		}
	}
}

// placeSpread places k's blocks on the n freed SMs, each taking at most
// its share of what is left (tailShare).
func (d *Device) placeSpread(k *command, n int, idx func(int) int) {
	for i := 0; i < n && k.placed < k.total; i++ {
		s := idx(i)
		sm := &d.sms[s]
		if c := min(sm.fitCount(&k.res, d.sharedFree(k, sm)), d.tailShare(k, s, n-i)); c > 0 {
			d.take(k, s, c)
		}
	}
}

// take places n blocks of k on SM s now.
func (d *Device) take(k *command, s, n int) {
	d.touch(s)
	sm := &d.sms[s]
	r := &k.res
	d.setCarveout(k, sm)
	sm.blocks -= n
	sm.threads -= n * r.Threads
	sm.warps -= n * r.Warps
	sm.regs -= n * r.Registers
	sm.shared -= n * r.Shared
	if sm.resBlocks == 0 {
		d.busySMs++
	}
	sm.resBlocks += n
	sm.resWarps += n * r.Warps
	d.ownWarps(k, s, n*r.Warps)
	d.gpuWarps += n * r.Warps
	d.util.set(d.busySMs, d.gpuWarps)
	if k.l.Sync == nil {
		d.memActive(k, s, n)
	}
	if d.tr.on {
		d.smPlace(k, s)
	}
	if !k.started {
		k.started = true
		k.start = d.now
		d.noteStart(d.now)
	}
	if k.l.Sync == nil {
		k.placed += n
		d.batches = append(d.batches, pendingBatch{k: k, sm: int32(s), n: int32(n), block: -1, wave: d.waveOn(k, s)})
		return
	}
	for ; n > 0; n-- {
		b := k.placed
		k.placed++
		d.waitBuf = k.l.Sync.Waits(b, d.waitBuf[:0])
		if d.satisfied(d.waitBuf) {
			d.memActive(k, s, 1)
			d.batches = append(d.batches, pendingBatch{k: k, sm: int32(s), n: 1, block: int32(b)})
			continue
		}
		sp := &spinner{k: k, sm: int32(s), block: int32(b), since: d.now, waits: append([]device.CounterWait(nil), d.waitBuf...)}
		d.spinning++
		d.spinWarps(k, s, r.Warps)
		for _, w := range sp.waits {
			if ct := d.counter(w.Counter); ct.value < w.Target {
				ct.waiters = append(ct.waiters, sp)
			}
		}
	}
}

// satisfied reports whether every wait's counter has reached its target (a
// counter never posted holds 0, so a target of 0 is met at once).
func (d *Device) satisfied(ws []device.CounterWait) bool {
	for _, w := range ws {
		var v uint32
		if ct := d.counters[counterKey(w.Counter)]; ct != nil {
			v = ct.value
		}
		if v < w.Target {
			return false
		}
	}
	return true
}

// freeBlocks returns n blocks' resources of k on SM s.
func (d *Device) freeBlocks(k *command, s, n int) {
	d.touch(s)
	sm := &d.sms[s]
	r := &k.res
	d.util.advance(d.now)
	sm.blocks += n
	sm.threads += n * r.Threads
	sm.warps += n * r.Warps
	sm.regs += n * r.Registers
	sm.shared += n * r.Shared
	sm.resBlocks -= n
	sm.resWarps -= n * r.Warps
	d.ownWarps(k, s, -n*r.Warps)
	d.memActive(k, s, -n)
	if sm.resBlocks == 0 {
		d.busySMs--
	}
	d.gpuWarps -= n * r.Warps
	d.util.set(d.busySMs, d.gpuWarps)
	if !sm.dirty {
		sm.dirty = true
		d.dirty = append(d.dirty, int32(s))
	}
	d.stats.Blocks += int64(n)
	k.done += n
	if len(d.waiting) > 0 {
		d.requestPass()
	}
	if d.tr.on {
		d.smFree(k, s)
	}
}

func (d *Device) batchDone(k *command, s, n int) {
	d.freeBlocks(k, s, n)
	if k.done == k.total {
		d.kernelDone(k)
	}
}

// blockStarted starts the work of block b of a synchronizing kernel on SM
// sm at start (now, or later with a block dispatch time): it notes the
// start for the race checker, makes the block's start posts and schedules
// its end.
func (d *Device) blockStarted(k *command, sm, b int32, start, dur Time) {
	dur = addTime(dur, d.syncExtra(k, b, dur))
	mem := d.memPart(k, &d.sms[sm], dur) // before its start posts release other blocks
	if k.blkAcc != nil {
		k.blkStart[b] = start
		d.hbBlockStart(k, int(b), start)
	}
	if k.startPost != nil {
		if start > d.now {
			d.schedule(start, evBlockStart, sm, b, k)
		} else {
			d.startPosts(k, int(b))
		}
	}
	d.endBlocks(evBlockDone, k, sm, b, 1, start, dur, mem, 0)
}

// startPosts makes block b's posts at the start of its work.
func (d *Device) startPosts(k *command, b int) {
	d.startBuf = k.startPost.StartPosts(b, d.startBuf[:0])
	d.hbPost(d.startBuf, d.hbPostVC(k, b))
	d.postCounters(d.startBuf)
}

// syncBlockDone finishes block b of a synchronizing kernel: it frees its SM
// and posts its counters, which may release spinning blocks.
func (d *Device) syncBlockDone(k *command, s, b int) {
	d.freeBlocks(k, s, 1)
	if k.blkAcc != nil {
		d.noteBlock(k, b)
		d.hbBlockEnd(k, b)
	}
	d.postBuf = k.l.Sync.Posts(b, d.postBuf[:0])
	d.hbPost(d.postBuf, d.hbPostVC(k, b))
	d.postCounters(d.postBuf)
	if k.done == k.total {
		d.kernelDone(k)
	}
}

// postCounters increments counters. A block released by one may post at
// its start in turn; those posts queue behind the current ones, so no
// counter's waiter list is walked re-entrantly.
func (d *Device) postCounters(cs []device.Counter) {
	d.postQ = append(d.postQ, cs...)
	if d.posting {
		return
	}
	d.posting = true
	for i := 0; i < len(d.postQ); i++ {
		d.post(d.postQ[i])
	}
	clear(d.postQ)
	d.postQ = d.postQ[:0]
	d.posting = false
}

// post increments one counter and starts the spinning blocks whose every
// wait it completes.
func (d *Device) post(c device.Counter) {
	ct := d.counter(c)
	ct.value++
	if len(ct.waiters) == 0 {
		return
	}
	keep := ct.waiters[:0]
	for _, sp := range ct.waiters {
		if sp.started {
			continue
		}
		if !d.satisfied(sp.waits) {
			keep = append(keep, sp)
			continue
		}
		sp.started = true
		d.spinning--
		d.spinWarps(sp.k, int(sp.sm), -sp.k.res.Warps)
		d.memActive(sp.k, int(sp.sm), 1)
		dur := d.blockDur(sp.k, &d.sms[sp.sm])
		d.blockStarted(sp.k, sp.sm, sp.block, addTime(d.now, d.sc.release), dur)
	}
	clear(ct.waiters[len(keep):])
	ct.waiters = keep
}

// timeFromProfile sets how k's blocks are timed: from the profile point
// its launch matches, else from its kernel's fitted model (with its
// neighbor rule's correction, fixed here, when it has one), else from its
// Work estimate; the device's Stats count each. A synchronized launch is
// matched and placed among its neighbors by its plain launch
// (profiledLaunch): the profile's points were taken without sync.
func (d *Device) timeFromProfile(k *command) {
	k.model, k.measured, k.coldNs = d.prof.model(k.l.Kernel), false, 0
	miss := 0.0 // without the L2's residency, a launch hits as its points did
	if d.prof != nil && d.prof.cold {
		miss = d.l2.launch(&k.l)
		if k.model != nil {
			w := k.l.Work.Bytes
			k.coldNs = k.model.ColdNsPerByte * w * d.prof.coldShare(k.l.Kernel, float64(k.total)*w, miss)
		}
	}
	if k.model == nil {
		d.stats.EstimatedLaunches++
		return
	}
	perSM := func() int { n, _ := d.info.Occupancy(&k.l); return n }
	plain := profiledLaunch(k)
	if lone, ok := d.prof.measuredLone(plain, perSM); ok {
		k.measured, k.measuredNs = true, lone
		d.stats.MeasuredLaunches++
		d.setLoadRef(k, lone, true, miss)
		return
	}
	if lone, ok := d.prof.neighborLone(k.model, plain); ok {
		k.measured, k.measuredNs = true, lone
	}
	d.stats.ProfiledLaunches++
	d.setLoadRef(k, k.measuredNs, false, miss)
}

// memActive counts n blocks of k on SM s as moving device memory (n < 0:
// no longer), if k's Work has Bytes: the warps that share the memory
// system. A spinning block does not count until its waits are met.
func (d *Device) memActive(k *command, s, n int) {
	if k.l.Work.Bytes <= 0 {
		return
	}
	w := n * k.res.Warps
	d.sms[s].memWarps += w
	d.memWarps += w
}

// blockDur is how long one block of k runs on sm, given the residency now.
// A kernel the profile covers takes its lone-block time (the measured
// point's, when the launch matches one, else its model's for its Work)
// times the co-residency factor at the SM's and the GPU's resident
// warps, plus its cold term for the bytes it missed in L2 (coldNs, not
// scaled: the profile fits it from lone launches; at least min_block_ns).
// Any other takes the largest of its cycles at the SM clock, its flops at its share of the
// SM's rate (its warps over max(resident warps on the SM, saturation)), and
// its bytes at its memory bandwidth; at least min_block_ns. The bandwidth
// is the smaller of two shares: of its SM's max_sm_bandwidth, by its warps
// over max(memory-moving warps on the SM, sm_mem_saturation_warps) (one SM
// cannot keep more requests in flight than its load/store path allows),
// and of the device's mem_bandwidth, by its warps over every memory-moving
// warp on the GPU (the warps share HBM). A lone block is bound by its SM, a
// full GPU by HBM. Both peak rates are scaled by the config's achieved
// fractions (sm.achieved_flops_fraction, sm.achieved_bandwidth_fraction).
func (d *Device) blockDur(k *command, sm *smState) Time {
	w := &k.l.Work
	if m := k.model; m != nil {
		f := m.Factor(d.factorWarps(k, sm), d.gpuFactorWarps(k)/d.prof.sms, k.res.Warps, d.prof.slope)
		lone := k.measuredNs
		if !k.measured {
			lone = m.Lone(w, d.prof.beyondL2(k.total, w))
		}
		k.loadStretch = d.stretchOf(k)
		return max(nsTime(lone*f*k.loadStretch+k.coldNs), d.cost.minBlock)
	}
	ns := 0.0
	if w.Cycles > 0 {
		ns = w.Cycles * d.cost.cycle
	}
	warps := float64(max(k.res.Warps, 1))
	if w.Flops > 0 {
		share := warps / float64(max(sm.resWarps, d.cfg.SM.SaturationWarps))
		rate := d.cfg.SM.FlopsPerCycle * fraction(d.cfg.SM.FlopsFraction) / d.cost.cycle * share // flops per ns
		ns = max(ns, w.Flops/rate)
	}
	if w.Bytes > 0 {
		ns = max(ns, d.byteNs(k, sm))
	}
	return max(nsTime(ns), d.cost.minBlock)
}

// byteNs is what the bytes of one block of k take on sm at the residency
// now, by the Work estimate (blockDur).
func (d *Device) byteNs(k *command, sm *smState) float64 {
	warps := float64(max(k.res.Warps, 1))
	smRate := d.cfg.SM.MaxSMBandwidth * warps / float64(max(sm.memWarps, d.cfg.SM.SMMemSaturationWarps))
	gpuRate := d.info.MemBandwidth * warps / float64(max(d.memWarps, k.res.Warps, 1))
	rate := min(smRate, gpuRate) * fraction(d.cfg.SM.BandwidthFraction) / 1e9 // bytes per ns
	return k.l.Work.Bytes / rate
}
