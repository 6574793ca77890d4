package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// SET-batch (copies batched, with a ring and JobsPerLaunch J >= 2; why:
// docs/history/set.md). SET-chain launches J jobs at once but still runs
// each job's own two copy nodes, one after another, and updates them per
// job; on a GPU the copy nodes are the costly part of a job graph.
// SET-batch instead moves a chunk's inputs in with one copy and its outputs
// out with one copy, which works because the jobs' host slots are evenly
// strided: job j's input is at HostOff(0) + j*stride in the pinned host
// buffer, so the inputs of the consecutive jobs f .. f+n-1 are one range of
// (n-1)*stride + bytes bytes from HostOff(f).
//
// Jobs are grouped into chunks of J consecutive jobs (the last one may be
// shorter), dealt round-robin to the workers' queues; a dispatch takes one
// whole chunk, from the front of the worker's own queue or else one from a
// peer's (as SET steals jobs), and a stolen chunk needs no retargeting
// beyond the copy nodes, which always name the dispatching worker's
// buffers. Each worker owns, per job slot s (a device buffer a job writes),
// one batch buffer of J*stride_s bytes: stride_s is the host stride of the
// copy that touches slot s, or the slot's size rounded up to 256 bytes if
// no host copy does, and slot i of a chunk is the range from i*stride_s.
// Every ring position of the worker holds, for each n from 1 to J, an exec
// captured in Prepare for a chunk of n jobs:
//
//	copy-in     one host-to-device copy per input copy of the job, covering
//	            the n jobs' inputs (host slots and the padding between them)
//	slot 0..n-1 the job's kernels over slot i's ranges of the batch
//	            buffers, each slot a parallel branch of the graph (captured
//	            on a side stream forked after the copy-in and joined back),
//	            or with Branches k, the slots in k contiguous runs, each
//	            run one branch with its slots in order
//	copy-out    one device-to-host copy per output copy of the job
//
// The kernel nodes never change (every chunk a worker runs uses the same
// slot ranges of its own buffers), so a dispatch updates only the copy
// nodes whose host offsets or lengths differ, launches the exec once and
// enqueues a completion callback per launch (or per Coalesce launches).
// A worker's ring positions share its batch buffers: they are launched on
// its one stream, so a chunk's copy-in starts only after the previous
// chunk's copy-out from the same buffers, and a position is prepared again
// only once the callbacks report its last launch complete (set_ring.go).
// Tests check both: execs on separate streams, or workers sharing batch
// buffers, are caught by the race checker.
//
// The coalesced copy-out also writes the device bytes between two slots'
// outputs into the host padding between the jobs' output slots. The batch
// buffers are zeroed once in Prepare and kernels write only their slots'
// ranges, so for jobs whose copies cover their slots (workloads/jobs) that
// padding is zeros, deterministically.
//
// What a program must satisfy (Prepare refuses it otherwise, by name): jobs
// shaped as leading host-to-device copies, kernels, trailing device-to-host
// copies (as for SET-kgraph); every host copy's host offset affine in the
// job index, with a positive stride that is a multiple of 256 bytes (so
// every slot starts aligned as an allocation would) and at least the size
// of the device buffer it touches; one stride per device buffer and at most
// one host-to-device copy into it; no two host copies whose ranges over all
// jobs overlap in one host buffer where one of them writes it; every job's
// kernel arguments equal to job 0's but for its buffers.

// batchAlign is the alignment of slots in a batch buffer (and of the host
// strides that define them): what cuMemAlloc guarantees an allocation.
const batchAlign = 256

func alignSlot(n int64) int64 { return (n + batchAlign - 1) / batchAlign * batchAlign }

// batchLayout is how SET-batch lays chunks out: the job's host copies and
// each slot's stride in the batch buffers.
type batchLayout struct {
	// copies are the job's host copies in job order: its nIn leading
	// host-to-device copies, then its trailing device-to-host ones.
	copies []batchCopy
	nIn    int
	// stride[s] is slot s's stride in a worker's batch buffer.
	stride []int64
	// slotOf maps a program buffer of job 0 to its slot.
	slotOf map[int]int
}

// batchCopy is one of the job's host copies.
type batchCopy struct {
	op     int   // the copy's index in a job
	slot   int   // the slot on its device side
	base   int64 // job 0's host offset; job j's is base + j*stride
	stride int64
	bytes  int64 // per job
	label  string
}

// validateBatched checks js's job shape for copies batched and finds its
// kernel range and batch layout.
func (s *SET) validateBatched(js *jobSet) error {
	if s.p.Copies != CopiesBatched {
		return nil
	}
	const what = "batched copies (copies=batched)"
	r, err := jobKernelRange(js, what)
	if err != nil {
		return err
	}
	l, err := newBatchLayout(js, r)
	if err != nil {
		return err
	}
	if err := sameKernelScalars(js, r); err != nil {
		return err
	}
	s.kernels, s.batch = r, l
	return nil
}

// newBatchLayout finds the stride of every host copy of js's jobs (the
// operations outside r) and of every slot, and checks that chunks of
// consecutive jobs can be copied in and out with one copy each.
func newBatchLayout(js *jobSet, r kernelRange) (*batchLayout, error) {
	l := &batchLayout{nIn: r.lo, stride: make([]int64, len(js.slotBytes)), slotOf: map[int]int{}}
	for sl, b := range js.local[0] {
		l.slotOf[b] = sl
	}
	copyIn := make([]bool, len(js.slotBytes))
	lo0, _ := js.in.StepRange(0)
	for k := 0; k < js.ops; k++ {
		if k >= r.lo && k < r.hi {
			continue // the kernel range
		}
		bc, err := l.hostCopy(js, k)
		if err != nil {
			return nil, err
		}
		name, op := js.in.Prog.Name, js.in.Op(lo0+k)
		if st := l.stride[bc.slot]; st != 0 && st != bc.stride {
			return nil, fmt.Errorf("set: batched copies (copies=batched) need one stride per device buffer; %s's operation %d (%s) has host stride %d, another copy of its buffer %d", name, k, op.Name, bc.stride, st)
		}
		l.stride[bc.slot] = bc.stride
		if op.Copy.Kind == device.HostToDevice {
			if copyIn[bc.slot] {
				return nil, fmt.Errorf("set: batched copies (copies=batched) need at most one host-to-device copy per device buffer (a coalesced copy writes the gaps between slots too); %s's operation %d (%s) is a second", name, k, op.Name)
			}
			copyIn[bc.slot] = true
		}
		l.copies = append(l.copies, bc)
	}
	for sl, st := range l.stride {
		if st == 0 {
			l.stride[sl] = alignSlot(js.slotBytes[sl])
		}
	}
	if err := l.checkSpans(js); err != nil {
		return nil, err
	}
	return l, nil
}

// hostCopy describes host copy k of js's jobs as a strided batchCopy and
// checks that its stride can be coalesced.
func (l *batchLayout) hostCopy(js *jobSet, k int) (batchCopy, error) {
	in := js.in
	name := in.Prog.Name
	jobs := js.jobs()
	lo0, _ := in.StepRange(0)
	op := in.Op(lo0 + k)
	c := op.Copy
	dev := c.Dst
	if c.Kind == device.DeviceToHost {
		dev = c.Src
	}
	slot, ok := l.slotOf[dev]
	if !ok {
		return batchCopy{}, fmt.Errorf("set: batched copies (copies=batched) need every host copy to touch the job's own device buffer; %s's operation %d (%s) copies out of buffer %s, which no job writes", name, k, op.Name, in.Prog.Buffers[dev].Name)
	}
	bc := batchCopy{op: k, slot: slot, base: c.HostOff, bytes: c.Bytes, stride: alignSlot(js.slotBytes[slot]),
		label: fmt.Sprintf("%s batched %s (operation %d)", name, c.Kind, k)}
	if jobs > 1 {
		lo1, _ := in.StepRange(1)
		bc.stride = in.Op(lo1+k).Copy.HostOff - bc.base
	}
	for j := 1; j < jobs; j++ {
		loj, _ := in.StepRange(j)
		opj := in.Op(loj + k)
		if got, want := opj.Copy.HostOff, bc.base+int64(j)*bc.stride; got != want {
			return batchCopy{}, fmt.Errorf("set: batched copies (copies=batched) need every host copy evenly strided over the jobs; %s's operation %d (%s) is not: job %d's host offset is %d, not %d (job 0's %d + %d x job 1's stride %d)", name, k, opj.Name, j, got, want, bc.base, j, bc.stride)
		}
	}
	switch {
	case bc.stride <= 0:
		return batchCopy{}, fmt.Errorf("set: batched copies (copies=batched) need every host copy strided upwards; %s's operation %d (%s) has host stride %d", name, k, op.Name, bc.stride)
	case bc.stride%batchAlign != 0:
		return batchCopy{}, fmt.Errorf("set: batched copies (copies=batched) need host strides that are multiples of %d bytes, so every slot of a batch buffer starts aligned; %s's operation %d (%s) has host stride %d", batchAlign, name, k, op.Name, bc.stride)
	case bc.stride < js.slotBytes[slot]:
		return batchCopy{}, fmt.Errorf("set: batched copies (copies=batched) need every host stride to hold the device buffer it copies; %s's operation %d (%s) has host stride %d for a %d-byte buffer", name, k, op.Name, bc.stride, js.slotBytes[slot])
	}
	return bc, nil
}

// checkSpans checks that no host copy touches the span a coalesced
// copy-out writes: the whole range of its chunk's jobs in the host buffer.
func (l *batchLayout) checkSpans(js *jobSet) error {
	in := js.in
	lo0, _ := in.StepRange(0)
	span := func(bc *batchCopy) (lo, hi int64) {
		return bc.base, bc.base + int64(js.jobs()-1)*bc.stride + bc.bytes
	}
	for a := range l.copies {
		for b := a + 1; b < len(l.copies); b++ {
			ca, cb := &l.copies[a], &l.copies[b]
			ka, kb := in.Op(lo0+ca.op).Copy, in.Op(lo0+cb.op).Copy
			if ka.Host != kb.Host || (ka.Kind == device.HostToDevice && kb.Kind == device.HostToDevice) {
				continue
			}
			alo, ahi := span(ca)
			blo, bhi := span(cb)
			if alo < bhi && blo < ahi {
				return fmt.Errorf("set: batched copies (copies=batched) need the host ranges of a written host buffer apart; %s's operations %d and %d (%s, %s) interleave in host buffer %s", in.Prog.Name, ca.op, cb.op, in.Op(lo0+ca.op).Name, in.Op(lo0+cb.op).Name, in.Prog.Host[ka.Host].Name)
			}
		}
	}
	return nil
}

// sameKernelScalars checks that every job's kernels in r pass job 0's
// scalar arguments: a batch exec's kernels are bound once, over slot
// ranges, so per-job scalars would be lost. (analyze already compared
// everything else but the buffers.)
func sameKernelScalars(js *jobSet, r kernelRange) error {
	in := js.in
	lo0, _ := in.StepRange(0)
	for j := 1; j < js.jobs(); j++ {
		lo, _ := in.StepRange(j)
		for k := r.lo; k < r.hi; k++ {
			if in.Op(lo+k).Kind != workloads.OpKernel {
				continue
			}
			ref, got := in.Launch(lo0+k).Args, in.Launch(lo+k).Args
			for a := range ref {
				if ref[a].Kind == device.ArgScalar && ref[a] != got[a] {
					return fmt.Errorf("set: batched copies (copies=batched) bind each slot's kernels once; job %d's operation %d (%s) passes argument %d other than job 0's", j, k, in.Op(lo+k).Name, a)
				}
			}
		}
	}
	return nil
}

// chunkSlots is how many job slots a batch buffer holds: J, or fewer when
// there are fewer jobs.
func (s *SET) chunkSlots() int { return min(s.p.JobsPerLaunch, s.js.jobs()) }

// slotAlloc is the size of a worker's device buffer for slot i: the slot,
// or under copies batched a batch buffer of chunkSlots strides.
func (s *SET) slotAlloc(i int) int64 {
	if s.p.Copies == CopiesBatched {
		return int64(s.chunkSlots()) * s.batch.stride[i]
	}
	return s.js.slotBytes[i]
}

// prepareBatched zeroes the workers' batch buffers, deals the chunks and
// captures every worker's ring of chunk execs.
func (s *SET) prepareBatched(h device.Host) (err error) {
	if err := s.zeroBatchBuffers(h); err != nil {
		return err
	}
	J, jobs := s.p.JobsPerLaunch, s.js.jobs()
	for c := 0; c*J < jobs; c++ {
		wk := s.workers[c%s.p.Workers]
		if s.dealTo != nil {
			wk = s.workers[s.dealTo(c)]
		}
		wk.queue = append(wk.queue, boundJob{job: c * J, n: min(J, jobs-c*J)})
	}
	s.dealt()
	var bc branchCapture
	defer func() { err = errors.Join(err, bc.destroy(h)) }()
	for _, wk := range s.workers {
		if err := s.prepareBatchRing(h, wk, &bc); err != nil {
			return fmt.Errorf("set: worker %d: %w", wk.id, err)
		}
	}
	return nil
}

// zeroBatchBuffers fills every worker's batch buffers with zeros (copies
// from a zeroed pinned host buffer), so the padding a coalesced copy-out
// writes back is deterministic.
func (s *SET) zeroBatchBuffers(h device.Host) (err error) {
	var most int64
	for _, wk := range s.workers {
		for _, b := range wk.slots {
			most = max(most, b.Size)
		}
	}
	zero, err := h.AllocHost(most, true)
	if err != nil {
		return fmt.Errorf("set: zeroing the batch buffers: %w", err)
	}
	defer func() { err = errors.Join(err, h.FreeHost(zero)) }()
	clear(zero.Data)
	for _, wk := range s.workers {
		if s.shareSlots && wk.id > 0 {
			continue
		}
		for _, b := range wk.slots {
			c := device.Copy{Kind: device.HostToDevice, Dst: b, Host: zero, Bytes: b.Size, Label: "zero batch buffer"}
			if err := h.Copy(wk.stream, &c); err != nil {
				return fmt.Errorf("set: zeroing worker %d's batch buffers: %w", wk.id, err)
			}
		}
	}
	for _, wk := range s.workers {
		if err := h.StreamSynchronize(wk.stream); err != nil {
			return err
		}
	}
	return nil
}

// branchCapture holds the side streams and events a chunk's capture forks
// its slots onto, made once per Prepare and shared by every capture.
type branchCapture struct {
	sides      []device.Stream
	fork, join device.Event
}

// side is side stream i, made on first use (with the events).
func (bc *branchCapture) side(h device.Host, i int) (device.Stream, error) {
	var err error
	if bc.fork == nil {
		if bc.fork, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
			return nil, err
		}
		if bc.join, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
			return nil, err
		}
	}
	for len(bc.sides) <= i {
		st, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, err
		}
		bc.sides = append(bc.sides, st)
	}
	return bc.sides[i], nil
}

func (bc *branchCapture) destroy(h device.Host) error {
	var errs []error
	for _, st := range bc.sides {
		errs = append(errs, h.Destroy(st))
	}
	for _, e := range []device.Event{bc.fork, bc.join} {
		if e != nil {
			errs = append(errs, h.Destroy(e))
		}
	}
	return errors.Join(errs...)
}

// prepareBatchRing gives worker wk Ring positions of execs for chunks of 1
// to chunkSlots jobs, each captured with the host offsets of wk's first
// chunk (or, where that chunk is too near the end, of the last n jobs), so
// wk's first launch usually needs no node update. All execs start free.
func (s *SET) prepareBatchRing(h device.Host, wk *worker, bc *branchCapture) error {
	J, jobs := s.chunkSlots(), s.js.jobs()
	wk.batch = make([]*boundJob, 0, 1)
	first := 0
	if len(wk.queue) > 0 {
		first = wk.queue[0].job
	}
	return s.makeRing(h, wk, J, func(sl *ringSlot, n int) error {
		x, cur, err := s.captureChunk(h, sl.stream, wk, min(first, jobs-n), n, bc)
		if err != nil {
			return fmt.Errorf("an exec for a chunk of %d jobs: %w", n, err)
		}
		sl.execs = append(sl.execs, x)
		sl.copies = append(sl.copies, cur)
		return nil
	})
}

// captureChunk captures on st, over wk's batch buffers, the exec for a
// chunk of n jobs from job f: the coalesced copies in, each slot's kernels
// on a side stream forked after them and joined back, the coalesced
// copies out. It returns the exec and its copy nodes' parameters.
func (s *SET) captureChunk(h device.Host, st device.Stream, wk *worker, f, n int, bc *branchCapture) (_ device.GraphExec, _ []device.Copy, err error) {
	l := s.batch
	cur := make([]device.Copy, len(l.copies))
	for c := range cur {
		cur[c] = s.chunkCopy(wk, c, f, n)
	}
	if err := h.BeginCapture(st); err != nil {
		return nil, nil, err
	}
	fail := func(e error) (device.GraphExec, []device.Copy, error) {
		return nil, nil, sched.AbortCapture(h, st, e)
	}
	for c := 0; c < l.nIn; c++ {
		if err := h.Copy(st, &cur[c]); err != nil {
			return fail(err)
		}
	}
	k := s.chunkBranches(n)
	for j := 0; j < k; j++ {
		side, err := bc.side(h, j)
		if err != nil {
			return fail(err)
		}
		if j == 0 {
			if err := h.Record(bc.fork, st); err != nil {
				return fail(err)
			}
		}
		if err := h.Wait(side, bc.fork); err != nil {
			return fail(err)
		}
		// Branch j runs slots [j*n/k, (j+1)*n/k) in order.
		for i := j * n / k; i < (j+1)*n/k; i++ {
			if err := s.issueSlot(h, side, wk, i); err != nil {
				return fail(err)
			}
		}
		if err := h.Record(bc.join, side); err != nil {
			return fail(err)
		}
		if err := h.Wait(st, bc.join); err != nil {
			return fail(err)
		}
	}
	for c := l.nIn; c < len(l.copies); c++ {
		if err := h.Copy(st, &cur[c]); err != nil {
			return fail(err)
		}
	}
	g, err := h.EndCapture(st)
	if err != nil {
		return nil, nil, err
	}
	defer func() { err = errors.Join(err, h.Destroy(g)) }()
	if want := len(l.copies) + n*(s.kernels.hi-s.kernels.lo); g.Nodes() != want {
		return nil, nil, fmt.Errorf("captured graph has %d nodes for a chunk of %d jobs, want %d", g.Nodes(), n, want)
	}
	x, err := h.Instantiate(g)
	if err != nil {
		return nil, nil, err
	}
	return x, cur, nil
}

// chunkBranches is how many parallel branches a chunk of n jobs has.
func (s *SET) chunkBranches(n int) int {
	if s.p.Branches <= 0 || s.p.Branches > n {
		return n
	}
	return s.p.Branches
}

// issueSlot issues the kernel range of the job in slot i of wk's batch
// buffers on st (issueBatchSlot).
func (s *SET) issueSlot(h device.Host, st device.Stream, wk *worker, i int) error {
	return issueBatchSlot(h, st, s.js, s.batch, s.kernels, wk.slots, i)
}

// issueBatchSlot issues on st the kernel range r of the job in slot i of
// the batch buffers bufs (one per slot of layout l): job 0's operations
// (every job's but for its buffers), each of its buffers replaced by slot
// i's range of the batch buffer for that slot, with its exact length so
// that slots are disjoint ranges for the race checker too. Shared constant
// buffers are left as they are.
func issueBatchSlot(h device.Host, st device.Stream, js *jobSet, l *batchLayout, r kernelRange, bufs []device.Buffer, i int) error {
	in := js.in
	lo0, _ := in.StepRange(0)
	at := func(slot int, off int64) int64 { return int64(i)*l.stride[slot] + off }
	for k := r.lo; k < r.hi; k++ {
		op := in.Op(lo0 + k)
		if op.Kind == workloads.OpKernel {
			ln := *in.Launch(lo0 + k)
			ln.Args = append([]device.Arg(nil), ln.Args...)
			for a, spec := range op.Args {
				slot, ok := l.slotOf[spec.Buf]
				if spec.Buf < 0 || !ok {
					continue
				}
				n := spec.Len
				if n == 0 {
					n = js.slotBytes[slot] - spec.Off
				}
				ln.Args[a].Buf, ln.Args[a].Off, ln.Args[a].Len = bufs[slot], at(slot, spec.Off), n
			}
			ln.Label = fmt.Sprintf("%s slot %d", ln.Name(), i)
			if err := h.Launch(st, &ln); err != nil {
				return err
			}
			continue
		}
		c := *in.CopyCmd(lo0 + k) // a device-to-device copy
		if slot, ok := l.slotOf[op.Copy.Src]; ok {
			c.Src, c.SrcOff = bufs[slot], at(slot, c.SrcOff)
		}
		if slot, ok := l.slotOf[op.Copy.Dst]; ok {
			c.Dst, c.DstOff = bufs[slot], at(slot, c.DstOff)
		}
		c.Label = fmt.Sprintf("%s slot %d", c.Label, i)
		if err := h.Copy(st, &c); err != nil {
			return err
		}
	}
	return nil
}

// chunkCopy is host copy c of the layout for the chunk of n jobs from job
// f over wk's batch buffers: from (or to) job f's host offset, n-1 strides
// and one job's bytes long, its device side slot 0's.
func (s *SET) chunkCopy(wk *worker, c, f, n int) device.Copy {
	bc := &s.batch.copies[c]
	lo0, _ := s.js.in.StepRange(0)
	cp := *s.js.in.CopyCmd(lo0 + bc.op)
	cp.HostOff = bc.base + int64(f)*bc.stride
	cp.Bytes = int64(n-1)*bc.stride + bc.bytes
	cp.Label = bc.label
	if cp.Kind == device.HostToDevice {
		cp.Dst = wk.slots[bc.slot]
	} else {
		cp.Src = wk.slots[bc.slot]
	}
	return cp
}

// copyNode is the node index of host copy c in an exec for n jobs: the
// copies in come first, the copies out after every slot's operations.
func (s *SET) copyNode(c, n int) int {
	if c < s.batch.nIn {
		return c
	}
	return c + n*(s.kernels.hi-s.kernels.lo)
}

// prepareChunk writes the chunk in wk.batch (stolen from a peer if steal)
// into ring position sl: the host offsets and lengths of its exec's copy
// nodes, where they differ. A stolen chunk needs nothing else, since the
// copy nodes name wk's buffers whoever's queue the chunk came from.
func (s *SET) prepareChunk(h device.Host, wk *worker, sl *ringSlot, steal bool, m *Metrics) error {
	ch := wk.batch[0]
	n := ch.n
	t := h.Now()
	defer since(h, t, &m.Schedule)
	if steal {
		h.Spend(time.Duration(len(s.batch.copies)) * s.retargetCost)
		m.Steals += n
	}
	tu := h.Now()
	defer func() { m.UpdateTime += h.Now() - tu }()
	x := sl.execs[n-1]
	for c := range s.batch.copies {
		cp := s.chunkCopy(wk, c, ch.job, n)
		cur := &sl.copies[n-1][c]
		if sameCopy(cur, &cp) {
			m.NodeUpdatesSkipped++
			continue
		}
		*cur = cp
		if err := h.SetCopyNode(x, s.copyNode(c, n), cur); err != nil {
			return fmt.Errorf("set: preparing jobs %d to %d on worker %d: %w", ch.job, ch.job+n-1, wk.id, err)
		}
		m.NodeUpdates++
	}
	for i := range n {
		sl.jobs[i] = ch.job + i
	}
	sl.n = n
	return nil
}
