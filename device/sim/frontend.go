package sim

import (
	"math"

	"github.com/gpusched/gpusched/device"
)

type cmdKind uint8

const (
	cmdKernel cmdKind = iota
	cmdCopy
	cmdRecord
	cmdWait
	cmdHostFunc
	cmdGraph
)

func (k cmdKind) String() string {
	return [...]string{"kernel", "copy", "record", "wait", "host function", "graph launch"}[k]
}

// command is one stream command, graph node instance or dependency-queue
// kernel. Commands are pooled: the issue path allocates nothing once the
// pool has grown.
type command struct {
	kind   cmdKind
	seq    uint64 // issue order
	st     *stream
	arrive Time // reaches the front end
	nextS  *command
	nextC  *command
	// passed: a record that left its hardware queue before its stream
	// predecessor ended (front_end.records_pass_queue); it completes
	// when it becomes its stream's head.
	passed bool
	// polled: dispatched at a poll after waiting on work on another
	// engine (waits.go).
	polled bool

	// Kernels.
	l       device.Launch
	args    []device.Arg
	res     device.BlockResources
	total   int // blocks
	perSM   int // blocks one idle SM holds
	placed  int
	done    int
	prio    int
	actSeq  uint64 // activation order at the block scheduler
	isNew   bool   // not yet offered every SM
	started bool
	start   Time
	end     Time
	firstAt Time
	// Synchronizing kernels: block-level race checking (blkAcc, with each
	// block's work start in blkStart) and posts at block start.
	blkAcc    device.BlockAccess
	startPost device.StartPoster
	blkStart  []Time
	// model is the kernel's profiled block model (nil: the Work estimate);
	// with measured, measuredNs is the lone block time of the profile
	// point the launch matches (else the model's time for its Work).
	model      *BlockModel
	measured   bool
	measuredNs float64
	// coldNs is what each block adds for the launch's read bytes that
	// missed L2 when it started (BlockModel.ColdNsPerByte; 0 without).
	coldNs float64
	// loadShare is the part of a profiled block's lone time its bytes
	// take, loadRef the device-memory demand (bytes per ns) that time was
	// measured at, and loadStretch the memory-load stretch its last timed
	// block took, and loadDRAM the share of its bytes from device memory
	// (memload.go; 0, 0, 1, 1 with the model off).
	loadShare, loadRef, loadStretch, loadDRAM float64
	// ownSM is the kernel's running (not spinning) warps on each SM and
	// ownAll their sum, kept only with sm.younger_kernel_weight or
	// sm.older_pressure_exponent (mixed.go); pressure is its issue
	// pressure (kernelPressure), set at activation.
	ownSM    []int32
	ownAll   int
	pressure float64

	// Copies.
	cp         device.Copy
	pageable   bool
	engine     int
	hostWaiter *thread

	// Events.
	ev      *eventObj
	gen     uint64
	waitReg bool

	// Host functions.
	fn func()
	// cbParked is the parked wake (front_end.callback_parked_wake_ns) a
	// host callback paid to start.
	cbParked Time

	// Graphs: a graph launch command has gx and gr; a node instance has gr
	// and node.
	gx   *graphExec
	gr   *graphRun
	node int32

	// Dependency queue.
	dqID   uint64
	dqDeps []uint64

	// Ordering check (hb.go): the issuing host thread's clock, the
	// command's own clock (what it is ordered after, with its epoch), its
	// agent (-1: its stream's) and epoch, its report entry, an event
	// record's clock, the upstream ids as submitted, and per block of a
	// BlockAccess launch its clock, agent and report entry (blkVC: the
	// join of the finished blocks').
	hostVC   vclock
	vc       vclock
	agent    int32
	epoch    int32
	hbOp     int32
	rc       *recClock
	hbDeps   []uint64
	blkVC    vclock
	blkVCs   []vclock
	blkAgent []int32
	blkOp    []int32
}

func (d *Device) newCommand(kind cmdKind) *command {
	var k *command
	if n := len(d.cmdPool); n > 0 {
		k = d.cmdPool[n-1]
		d.cmdPool = d.cmdPool[:n-1]
		args, deps, bs := k.args[:0], k.dqDeps[:0], k.blkStart[:0]
		*k = command{args: args, dqDeps: deps, blkStart: bs, hostVC: k.hostVC[:0], vc: k.vc[:0], hbDeps: k.hbDeps[:0],
			blkVC: k.blkVC[:0], blkVCs: k.blkVCs[:0], blkAgent: k.blkAgent[:0], blkOp: k.blkOp[:0]}
	} else {
		k = &command{}
	}
	d.cmdSeq++
	k.kind, k.seq = kind, d.cmdSeq
	k.agent, k.hbOp = -1, -1
	return k
}

func (d *Device) release(k *command) {
	k.l = device.Launch{}
	k.cp = device.Copy{}
	k.fn = nil
	k.st, k.ev, k.gx, k.gr, k.hostWaiter = nil, nil, nil, nil, nil
	k.blkAcc, k.startPost = nil, nil
	k.rc = nil
	clear(k.args)
	d.cmdPool = append(d.cmdPool, k)
}

// setLaunch copies l (and its arguments: schedulers reuse Launch values).
func (k *command) setLaunch(l *device.Launch) {
	k.l = *l
	k.args = append(k.args[:0], l.Args...)
	k.l.Args = k.args
}

func copyLaunch(l *device.Launch) device.Launch {
	c := *l
	c.Args = append([]device.Arg(nil), l.Args...)
	return c
}

// conn is a hardware queue (a connection): commands of the streams mapped
// onto it, processed strictly in arrival order. A command that cannot start
// (its stream predecessor still runs, its event is not recorded, no
// resident-grid slot is free) blocks every command behind it, whichever
// stream they belong to: the false dependencies of real GPUs.
type conn struct {
	id         int
	head, tail *command
	wakeAt     Time // time of a scheduled evConn, or -1
	busy       bool // dispatch in progress (re-entrancy guard)
	again      bool
	slotReg    bool // registered in Device.slotWait
}

// enqueue issues command k on stream st at host time at.
func (d *Device) enqueue(st *stream, k *command, at Time) {
	k.st, k.arrive, k.prio = st, at, st.prio
	d.hbIssue(k)
	if st.tail == nil {
		st.head = k
	} else {
		st.tail.nextS = k
	}
	st.tail = k
	if st.pending == 0 {
		d.busyStreams++
	}
	st.pending++
	d.outstanding++
	c := st.conn
	if c.tail == nil {
		c.head = k
	} else {
		c.tail.nextC = k
	}
	c.tail = k
	if c.head == k && c.wakeAt != at {
		c.wakeAt = at
		d.schedule(at, evConn, int32(c.id), 0, nil)
	}
}

// kick runs the dispatch loop of c now (engine context).
func (d *Device) kick(c *conn) {
	if c.busy {
		c.again = true
		return
	}
	c.busy = true
	for {
		c.again = false
		d.dispatch(c)
		if !c.again {
			break
		}
	}
	c.busy = false
}

// dispatch starts the commands at the head of c that can start now.
func (d *Device) dispatch(c *conn) {
	for {
		k := d.passRecords(c)
		if k == nil {
			return
		}
		if k.arrive > d.now {
			d.wakeConnAt(c, k.arrive)
			return
		}
		if k.st.head != k {
			return // its stream predecessor is still running
		}
		if at := d.pollAt(k); at > d.now {
			d.wakeConnAt(c, at)
			return
		}
		switch k.kind {
		case cmdWait:
			if !k.ev.done(k.gen) {
				if !k.waitReg {
					k.waitReg = true
					k.ev.waiters = append(k.ev.waiters, k)
				}
				return
			}
			if at := d.waitPassAt(k); at > d.now {
				d.wakeConnAt(c, at)
				return
			}
		case cmdKernel:
			if d.resident >= d.info.MaxResidentGrids {
				if !c.slotReg {
					c.slotReg = true
					d.slotWait = append(d.slotWait, slotWaiter{c: c})
				}
				return
			}
		case cmdGraph:
			if k.gx.running != nil {
				return // a graph exec runs one launch at a time; kicked when it ends
			}
		}
		c.head = k.nextC
		if c.head == nil {
			c.tail = nil
		}
		k.nextC = nil
		d.hbDispatch(k)
		switch k.kind {
		case cmdRecord:
			d.recordDone(k.ev, k.gen, k.st)
			d.streamDone(k)
			d.release(k)
		case cmdWait:
			d.streamDone(k)
			d.release(k)
		case cmdKernel:
			d.resident++
			k.firstAt = max(k.arrive+d.cost.launchLatency, d.now+d.cost.backToBack+d.pendingQueueCost(c))
			d.launchKernel(k)
		case cmdCopy:
			d.startCopy(k)
		case cmdHostFunc:
			d.startCallback(k)
		case cmdGraph:
			d.startGraph(k)
		}
	}
}

// wakeConnAt schedules c's dispatch at at, once.
func (d *Device) wakeConnAt(c *conn, at Time) {
	if c.wakeAt != at {
		c.wakeAt = at
		d.schedule(at, evConn, int32(c.id), 0, nil)
	}
}

// pendingQueueCost is what the other hardware queues holding a command
// that has arrived add to a kernel of c starting back to back:
// front_end.pending_queue_ns per queue beyond the first, at most
// front_end.pending_queue_max_ns.
func (d *Device) pendingQueueCost(c *conn) Time {
	if d.cost.pendingQueue == 0 {
		return 0
	}
	n := 0
	for i := range d.conns {
		if o := &d.conns[i]; o != c && o.head != nil && o.head.arrive <= d.now {
			n++
		}
	}
	if n <= 1 {
		return 0
	}
	w := Time(n-1) * d.cost.pendingQueue
	if d.cost.pendingQueueMax > 0 {
		w = min(w, d.cost.pendingQueueMax)
	}
	return w
}

// passRecords takes the records at the head of c that have arrived and
// whose stream predecessor still runs off the queue when
// front_end.records_pass_queue is set (streamDone completes each when it
// becomes its stream's head), and returns the head left.
func (d *Device) passRecords(c *conn) *command {
	if !d.cfg.FrontEnd.RecordsPassQueue {
		return c.head
	}
	for k := c.head; k != nil && k.kind == cmdRecord && k.arrive <= d.now && k.st.head != k; k = c.head {
		c.head = k.nextC
		if c.head == nil {
			c.tail = nil
		}
		k.nextC, k.passed = nil, true
	}
	return c.head
}

// waitPassAt is when wait k, whose record is complete, passes: the
// cost's eventWait after the record completed when it was recorded on
// another stream (among the event's recent records; an older one passes
// now).
func (d *Device) waitPassAt(k *command) Time {
	if !d.eventWaits() {
		return d.now
	}
	for _, r := range k.ev.recent {
		if r.gen == k.gen {
			if r.stream == k.st.id {
				return d.now
			}
			return max(d.now, r.at+r.wait)
		}
	}
	return d.now
}

// eventWaits reports whether cross-stream waits cost anything.
func (d *Device) eventWaits() bool { return d.cost.eventWait > 0 || d.cost.eventWaitDoubling > 0 }

// eventWaitMaxStreams bounds the busy streams eventWaitNow counts: the
// most the calibration measured.
const eventWaitMaxStreams = 8

// eventWaitNow is what a cross-stream wait on a record completing now
// adds: event_wait_ns, plus event_wait_doubling_ns per doubling of the
// streams with commands pending beyond 4 (less below; 2 to 8 counted).
func (d *Device) eventWaitNow() Time {
	if d.cost.eventWaitDoubling == 0 {
		return d.cost.eventWait
	}
	n := min(max(d.busyStreams, 2), eventWaitMaxStreams)
	w := float64(d.cost.eventWait) + float64(d.cost.eventWaitDoubling)*(math.Log2(float64(n))-2)
	return Time(max(0, math.Round(w)))
}

// launchKernel sends a resident kernel to the block scheduler at k.firstAt.
func (d *Device) launchKernel(k *command) {
	if k.firstAt > d.now {
		d.schedule(k.firstAt, evActivate, 0, 0, k)
		return
	}
	d.activate(k)
}

// streamDone completes the head command of its stream.
func (d *Device) streamDone(k *command) {
	st := k.st
	d.noteWorkDone(k)
	st.head = k.nextS
	if st.head == nil {
		st.tail = nil
	}
	k.nextS = nil
	st.pending--
	if st.pending == 0 {
		d.busyStreams--
	}
	d.outstanding--
	d.hbStreamAfter(k)
	if st.pending == 0 && len(st.waiters) > 0 {
		for _, th := range st.waiters {
			if d.hb.on {
				th.vc.join(st.vc)
			}
			d.wake(th, d.now)
		}
		st.waiters = st.waiters[:0]
	}
	d.checkIdle()
	if h := st.head; h != nil && h.passed {
		h.passed = false
		d.hbDispatch(h)
		d.recordDone(h.ev, h.gen, st)
		d.streamDone(h)
		d.release(h)
		return
	}
	if st.head != nil {
		d.kick(st.conn)
	}
}

// checkIdle wakes host threads in Synchronize once nothing is outstanding.
func (d *Device) checkIdle() {
	if d.outstanding == 0 && len(d.syncWaiters) > 0 {
		for _, th := range d.syncWaiters {
			if d.hb.on {
				th.vc.join(d.hb.all)
			}
			d.wake(th, d.now)
		}
		d.syncWaiters = d.syncWaiters[:0]
	}
}

// recordDone completes record gen of ev now. Only the waits bound to gen
// (or to an earlier record already complete) are released: a later record
// completing first releases nothing bound to an earlier one.
func (d *Device) recordDone(ev *eventObj, gen uint64, st *stream) {
	for i, p := range ev.pend {
		if p.gen == gen {
			ev.pend = append(ev.pend[:i], ev.pend[i+1:]...)
			break
		}
	}
	if gen == ev.issued {
		ev.doneAt = d.now
		ev.last = st.last
	}
	if d.eventWaits() {
		if len(ev.recent) == recentRecords {
			ev.recent = append(ev.recent[:0], ev.recent[1:]...)
		}
		ev.recent = append(ev.recent, doneRec{gen: gen, stream: st.id, at: d.now, wait: d.eventWaitNow()})
	}
	if len(ev.hostWait) > 0 {
		keep := ev.hostWait[:0]
		for _, w := range ev.hostWait {
			if ev.done(w.gen) {
				d.wake(w.th, d.now)
			} else {
				keep = append(keep, w)
			}
		}
		ev.hostWait = keep
	}
	if len(ev.waiters) > 0 {
		// The list is settled before any kick: a kicked stream may pass
		// its wait at once (no event_wait_ns), record this event again or
		// register another wait on it, re-entering here; kicking while
		// filtering in place dropped the waits registered meanwhile.
		var ready []*command
		keep := ev.waiters[:0]
		for _, w := range ev.waiters {
			if ev.done(w.gen) {
				w.waitReg = false
				ready = append(ready, w)
			} else {
				keep = append(keep, w)
			}
		}
		clear(ev.waiters[len(keep):])
		ev.waiters = keep
		for _, w := range ready {
			d.kick(w.st.conn)
		}
	}
}

// kernelDone completes a kernel whose last block finished now.
func (d *Device) kernelDone(k *command) {
	k.end = d.now
	d.resident--
	d.stats.Kernels++
	d.noteOp(k)
	// A free resident-grid slot goes to the first waiter.
	if len(d.slotWait) > 0 {
		w := d.slotWait[0]
		copy(d.slotWait, d.slotWait[1:])
		d.slotWait = d.slotWait[:len(d.slotWait)-1]
		if w.c != nil {
			w.c.slotReg = false
			d.kick(w.c)
		} else {
			d.resident++
			d.launchKernel(w.k)
		}
	}
	d.finishCmd(k)
}

// finishCmd routes a completed kernel, copy or callback to what waits on it.
func (d *Device) finishCmd(k *command) {
	d.hbEnd(k)
	switch {
	case k.gr != nil:
		d.graphNodeDone(k)
	case k.dqID != 0:
		d.dqKernelDone(k)
	default:
		d.streamDone(k)
		d.release(k)
	}
}

// acquireSlot gives k a resident-grid slot now, or queues it.
func (d *Device) acquireSlot(k *command) {
	if d.resident < d.info.MaxResidentGrids {
		d.resident++
		d.launchKernel(k)
		return
	}
	d.slotWait = append(d.slotWait, slotWaiter{k: k})
}

// Copies.

const (
	engHtoD = iota
	engDtoH
	engDtoD
)

// copyEngine is the engine copy c runs on: host to device, device to
// host (the host-to-device engine with one copy engine), device to device.
func (d *Device) copyEngine(c *device.Copy) int {
	switch c.Kind {
	case device.HostToDevice:
		return engHtoD
	case device.DeviceToHost:
		if d.info.CopyEngines >= 2 {
			return engDtoH
		}
		return engHtoD
	}
	return engDtoD
}

func (d *Device) startCopy(k *command) {
	c := &k.cp
	d.noteCopyStarted(k)
	if d.prof != nil && d.prof.cold {
		d.l2.copy(c)
	}
	eng := d.copyEngine(c)
	switch eng {
	case engHtoD, engDtoH:
		if d.pcie.on {
			d.startPCIe(eng, k, false)
			return
		}
	default:
		if d.bw.on {
			d.startDtoD(k)
			return
		}
	}
	start := max(d.now, d.copyFree[eng])
	var dur Time
	if eng == engDtoD {
		// Device to device: every byte is read and written.
		dur = d.cost.copyLatency + nsTime(2*float64(c.Bytes)/d.info.MemBandwidth*1e9)
	} else {
		dur = d.hostCopyLatency(eng, k, start, start > d.now) + d.copyTransfer(k)
	}
	k.engine = eng
	k.start, k.end = start, start+dur
	d.copyFree[eng] = k.end
	d.noteHostCopy(k, k.end)
	d.schedule(k.end, evCopyDone, 0, 0, k)
}

func (d *Device) copyDone(k *command) {
	d.stats.Copies++
	d.noteOp(k)
	if k.hostWaiter != nil {
		if d.hb.on && k.cp.Kind == device.DeviceToHost {
			// The call returns once the data is in host memory. A pageable
			// host-to-device copy returns once its source is staged (CUDA
			// does not promise the device has it then), so it orders
			// nothing, although the simulator returns when it is done.
			k.hostWaiter.vc.join(k.vc)
		}
		d.wake(k.hostWaiter, d.now)
		k.hostWaiter = nil
	}
	d.finishCmd(k)
}

// Host callbacks run one at a time on the driver's callback thread, which
// wakes (callback_wake_ns) when a callback finds it idle, and wakes from
// its park (callback_parked_wake_ns more) when it has been idle longer
// than callback_park_after_ns.
func (d *Device) startCallback(k *command) {
	start := max(d.now, d.cbFree)
	if d.now > d.cbFree {
		start += d.cost.callbackWake
		if w := d.cost.cbParkedWake; w > 0 && d.now-d.cbFree > d.cost.cbParkAfter {
			k.cbParked = w
			start += w + deepPark(d.now-d.cbFree, d.cost.cbParkedDecade)
		}
	}
	k.start = start + d.callbackCopyDelay()
	k.end = k.start + d.cost.callback
	d.cbFree = k.end
	d.schedule(k.end, evCallback, 0, 0, k)
}

func (d *Device) runCallback(k *command) {
	d.stats.Callbacks++
	d.noteOp(k)
	d.cbParkedPaid = k.cbParked
	if d.hb.on {
		// What the callback Puts is ordered after it.
		d.hb.cbVC.set(k.vc)
		k.fn()
		d.hb.cbVC = d.hb.cbVC[:0]
	} else {
		k.fn()
	}
	d.cbParkedPaid = 0
	if r := d.cost.callbackRelease; r > 0 && k.gr == nil && k.nextS != nil && k.nextS.kind != cmdHostFunc {
		// Work queued behind the callback on its stream is handed to
		// the GPU by the callback thread once the callback returns: the
		// stream waits for it, and a callback that becomes ready
		// meanwhile waits too (cbFree); one already scheduled behind
		// this one keeps its start. A stream with nothing queued behind
		// is free at once (later work goes straight to the GPU), and a
		// callback queued behind on the stream runs without it.
		r += d.releaseHostWait()
		d.cbFree = max(d.cbFree, d.now+r)
		d.schedule(d.now+r, evCallbackRelease, 0, 0, k)
		return
	}
	if r := d.cost.callbackRelease; r > 0 && k.gr == nil && k.nextS == nil && d.cfg.FrontEnd.CallbackReleaseHoldsStream {
		// Nothing queued yet: the stream waits for the release (what the
		// callback's Put brings lands behind it), the thread does not.
		d.schedule(d.now+r, evCallbackRelease, 0, 0, k)
		return
	}
	d.finishCmd(k)
}
