package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/gpusched/gpusched/device"
)

var _ device.Host = (*thread)(nil)
var _ device.DependencyQueue = (*dqHost)(nil)
var _ device.ColdCacher = (*thread)(nil)

func (th *thread) Name() string { return th.name }

func (th *thread) Now() time.Duration { return th.clock.Duration() }

func (th *thread) Spend(dur time.Duration) {
	if dur <= 0 {
		return
	}
	if dur > Horizon {
		th.clock = maxTime
	} else {
		th.clock += fromDuration(dur)
	}
	if th.clock > horizon {
		th.d.hostPastHorizon(th, "Spend", nsTime(float64(dur)))
	}
}

func (th *thread) Go(name string, fn func(h device.Host) error) {
	th.chargeThreadStart()
	if fn == nil {
		th.d.spawn(name, func(device.Host) error { return fmt.Errorf("Go(%q): nil function", name) }, th.clock)
		return
	}
	child := th.d.spawn(name, fn, th.clock)
	if th.d.hb.on {
		child.vc.set(th.vc) // the child starts after its parent's past
	}
}

func (th *thread) Malloc(bytes int64) (device.Buffer, error) {
	d := th.d
	th.charge(d.cost.malloc, "cuMemAlloc")
	if bytes <= 0 {
		return device.Buffer{}, &device.APIError{Call: "cuMemAlloc", Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("size %d", bytes)}
	}
	if bytes > d.info.MemoryBytes-d.memUsed { // memUsed+bytes could overflow
		return device.Buffer{}, &device.APIError{Call: "cuMemAlloc", Code: "CUDA_ERROR_OUT_OF_MEMORY",
			Msg: fmt.Sprintf("%d bytes requested, %d of %d in use", bytes, d.memUsed, d.info.MemoryBytes)}
	}
	addr := d.nextAddr
	// 512-byte alignment and a gap, so no two buffers touch.
	d.nextAddr += uint64((bytes+511)/512*512) + 512
	d.allocs[addr] = bytes
	d.memUsed += bytes
	return device.Buffer{Addr: addr, Size: bytes}, nil
}

func (th *thread) Free(b device.Buffer) error {
	d := th.d
	th.charge(d.cost.free, "cuMemFree")
	n, ok := d.allocs[b.Addr]
	if !ok {
		return &device.APIError{Call: "cuMemFree", Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("%#x is not an allocation of this Run", b.Addr)}
	}
	delete(d.allocs, b.Addr)
	d.memUsed -= n
	return nil
}

func (th *thread) AllocHost(bytes int64, pinned bool) (*device.HostMem, error) {
	th.charge(th.d.cost.allocHost, "cuMemAllocHost")
	if bytes < 0 {
		return nil, &device.APIError{Call: "cuMemAllocHost", Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("size %d", bytes)}
	}
	return &device.HostMem{Data: make([]byte, bytes), Pinned: pinned}, nil
}

func (th *thread) FreeHost(m *device.HostMem) error {
	th.charge(th.d.cost.free, "cuMemFreeHost")
	if m == nil {
		return &device.APIError{Call: "cuMemFreeHost", Code: "CUDA_ERROR_INVALID_VALUE", Msg: "nil host memory"}
	}
	m.Data = nil
	return nil
}

func (th *thread) NewStream(opt device.StreamOptions) (device.Stream, error) {
	d := th.d
	th.charge(d.cost.streamCreate, "cuStreamCreate")
	// CUDA clamps priorities into the device's range.
	p := min(max(opt.Priority, d.info.StreamPriorityHigh), d.info.StreamPriorityLowest)
	s := &stream{d: d, id: len(d.streams), prio: p, run: d.run, agent: -1}
	if d.hb.on {
		s.agent = d.hb.newAgent()
	}
	// Streams take hardware queues round-robin in creation order.
	s.conn = &d.conns[s.id%len(d.conns)]
	d.streams = append(d.streams, s)
	return s, nil
}

func (th *thread) NewEvent(opt device.EventOptions) (device.Event, error) {
	d := th.d
	th.charge(d.cost.eventCreate, "cuEventCreate")
	e := &eventObj{d: d, id: d.events, run: d.run, timing: !opt.DisableTiming, stream: -1}
	d.events++
	return e, nil
}

func (th *thread) Destroy(r device.Resource) error {
	d := th.d
	// A graph's or exec's destroy is a graph-building call
	// (host.graph_lock_fraction).
	switch r.(type) {
	case *graph, *graphExec:
		th.chargeGraphBuild(d.cost.destroy, "destroy")
	default:
		th.charge(d.cost.destroy, "destroy")
	}
	switch x := r.(type) {
	case *stream:
		st, err := d.streamOf(x, "cuStreamDestroy")
		if err != nil {
			return err
		}
		if st.capture != nil {
			st.capture.invalidate("stream destroyed while capturing")
		}
		// Work already issued still completes, as in CUDA.
		st.destroyed = true
	case *eventObj:
		ev, err := d.eventOf(x, "cuEventDestroy")
		if err != nil {
			return err
		}
		// A destroyed event's capture state (the capture and the nodes it
		// last recorded) is dead: drop it so that a handle still held does
		// not keep a captured graph alive. Pending records and waits
		// complete as in CUDA.
		ev.destroyed = true
		ev.capture, ev.capNodes = nil, nil
	case *graph:
		if err := d.graphOf(x, "cuGraphDestroy"); err != nil {
			return err
		}
		x.destroyed = true
	case *graphExec:
		if err := d.execOf(x, "cuGraphExecDestroy"); err != nil {
			return err
		}
		if d.cost.destroyExecNode > 0 {
			th.chargeGraphBuild(mulTime(int64(len(x.nodes)), d.cost.destroyExecNode), "cuGraphExecDestroy (per node)")
		}
		if d.cost.destroyExecSegment > 0 {
			th.chargeGraphBuild(mulTime(int64(x.segments), d.cost.destroyExecSegment), "cuGraphExecDestroy (per segment)")
		}
		x.destroyed = true
	default:
		return invalidHandle("destroy", fmt.Sprintf("%T is not a resource of this simulator", r))
	}
	return nil
}

// busyCost is what a launch, record or wait on st costs beyond its own:
// stream_switch_ns when the thread's previous one went to another stream,
// and busy_stream_ns per other stream with commands pending. With the
// latter set, the thread first lets the engine catch up, so that it
// counts the streams busy at its clock.
func (th *thread) busyCost(st *stream) Time {
	d := th.d
	var c Time
	if d.cost.streamSwitch > 0 {
		if th.lastStream != nil && th.lastStream != st {
			c = d.cost.streamSwitch
		}
		th.lastStream = st
	}
	if d.cost.busyStream == 0 {
		return c
	}
	th.catchUp()
	n := d.busyStreams
	if st.pending > 0 {
		n--
	}
	return c + Time(n)*d.cost.busyStream
}

// pendingWaitCost is what a wait on st costs more when ev's last record is
// on another stream and not complete at the thread's clock
// (host.wait_pending_ns); the thread first lets the engine catch up.
func (th *thread) pendingWaitCost(st *stream, ev *eventObj) Time {
	d := th.d
	if d.cost.waitPending == 0 || ev.issued == 0 {
		return 0
	}
	th.catchUp()
	if ev.done(ev.issued) || ev.recordStream(ev.issued) == st.id {
		return 0
	}
	return d.cost.waitPending
}

// pendingRecordCost is what a record of ev costs more when its previous
// record is not complete at the thread's clock (host.record_pending_ns);
// the thread first lets the engine catch up.
func (th *thread) pendingRecordCost(ev *eventObj) Time {
	d := th.d
	if d.cost.recordPending == 0 || len(ev.pend) == 0 {
		return 0
	}
	th.catchUp()
	if len(ev.pend) == 0 {
		return 0
	}
	return d.cost.recordPending
}

func (th *thread) Launch(s device.Stream, l *device.Launch) error {
	d := th.d
	st, err := d.streamOf(s, "cuLaunchKernel")
	if err != nil {
		return err
	}
	if err := d.validateLaunch(l); err != nil {
		return err
	}
	if st.capture != nil {
		th.chargeGraphBuild(d.cost.capture, "cuLaunchKernel (capture)")
		return st.capture.add(st, gnode{kind: cmdKernel, l: copyLaunch(l)})
	}
	th.charge(d.cost.launch+th.busyCost(st)+th.coldCost(), "cuLaunchKernel")
	k := d.newCommand(cmdKernel)
	k.setLaunch(l)
	d.enqueue(st, k, th.clock)
	return nil
}

func (th *thread) Copy(s device.Stream, c *device.Copy) error {
	d := th.d
	st, err := d.streamOf(s, "cuMemcpyAsync")
	if err != nil {
		return err
	}
	if err := device.ValidateCopy(c); err != nil {
		return err
	}
	pageable := c.Kind != device.DeviceToDevice && !c.Host.Pinned
	if st.capture != nil {
		if pageable {
			st.capture.invalidate("pageable copy captured")
			return &device.APIError{Call: "cuMemcpyAsync", Code: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
				Msg: "a copy from pageable host memory synchronizes and cannot be captured"}
		}
		th.chargeGraphBuild(d.cost.capture, "cuMemcpyAsync (capture)")
		return st.capture.add(st, gnode{kind: cmdCopy, cp: *c})
	}
	th.charge(d.cost.copyEnqueue+th.coldCost(), "cuMemcpyAsync")
	k := d.newCommand(cmdCopy)
	k.cp = *c
	k.pageable = pageable
	d.noteCopyIssued(&k.cp, pageable)
	d.enqueue(st, k, th.clock)
	if pageable {
		// A pageable copy is staged through a driver buffer and the call
		// returns only once it is done.
		k.hostWaiter = th
		th.park(fmt.Sprintf("cuMemcpy %s from pageable memory on stream %d", c.Kind, st.id))
	}
	return nil
}

func (th *thread) Record(e device.Event, s device.Stream) error {
	d := th.d
	ev, err := d.eventOf(e, "cuEventRecord")
	if err != nil {
		return err
	}
	st, err := d.streamOf(s, "cuEventRecord")
	if err != nil {
		return err
	}
	if st.capture != nil {
		th.chargeGraphBuild(d.cost.captureEvent, "cuEventRecord (capture)")
		ev.capture = st.capture
		ev.capNodes = append(ev.capNodes[:0], st.capTail...)
		return nil
	}
	cost := d.cost.record
	if !ev.timing {
		cost = d.cost.untimedRecord // no timestamp to write
	}
	th.chargeRecord(cost + th.busyCost(st) + th.pendingRecordCost(ev) + th.coldCost())
	ev.capture = nil
	rc := ev.nextRC
	ev.nextRC = nil
	if rc == nil {
		rc = &recClock{}
	}
	ev.lastRC = rc
	ev.issued++
	ev.stream = st.id
	ev.pend = append(ev.pend, pendRec{gen: ev.issued, stream: st.id})
	k := d.newCommand(cmdRecord)
	k.ev, k.gen, k.rc = ev, ev.issued, rc
	d.enqueue(st, k, th.clock)
	return nil
}

func (th *thread) Wait(s device.Stream, e device.Event) error {
	d := th.d
	ev, err := d.eventOf(e, "cuStreamWaitEvent")
	if err != nil {
		return err
	}
	st, err := d.streamOf(s, "cuStreamWaitEvent")
	if err != nil {
		return err
	}
	if ev.capture != nil && !ev.capture.ended {
		th.chargeGraphBuild(d.cost.captureEvent, "cuStreamWaitEvent (capture)")
		return ev.capture.join(st, ev)
	}
	if st.capture != nil {
		st.capture.invalidate(fmt.Sprintf("stream %d waited on event %d recorded outside the capture", st.id, ev.id))
		return &device.APIError{Call: "cuStreamWaitEvent", Code: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
			Msg: fmt.Sprintf("capturing stream %d waits on event %d, which was not recorded in the capture", st.id, ev.id)}
	}
	th.charge(d.cost.wait+th.busyCost(st)+th.pendingWaitCost(st, ev), "cuStreamWaitEvent")
	k := d.newCommand(cmdWait)
	// A wait binds to the last record issued before it. A wait on an event
	// never recorded binds to its first record (on CUDA it would be a
	// silent no-op, which hides an ordering bug; here, if that record never
	// comes, the run ends in a DeadlockError naming the event).
	k.ev, k.gen, k.rc = ev, max(ev.issued, 1), ev.boundRC()
	d.enqueue(st, k, th.clock)
	return nil
}

func (th *thread) HostFunc(s device.Stream, fn func()) error {
	d := th.d
	st, err := d.streamOf(s, "cuLaunchHostFunc")
	if err != nil {
		return err
	}
	if fn == nil {
		return &device.APIError{Call: "cuLaunchHostFunc", Code: "CUDA_ERROR_INVALID_VALUE", Msg: "nil function"}
	}
	if st.capture != nil {
		th.chargeGraphBuild(d.cost.capture, "cuLaunchHostFunc (capture)")
		return st.capture.add(st, gnode{kind: cmdHostFunc, fn: fn})
	}
	th.charge(th.hostFuncCost(st), "cuLaunchHostFunc")
	k := d.newCommand(cmdHostFunc)
	k.fn = fn
	d.enqueue(st, k, th.clock)
	return nil
}

// hostFuncCost is what cuLaunchHostFunc on st costs: host_func_ns, or
// host_func_after_graph_ns when that is set and st's last command is a
// graph launch still pending (the thread first lets the engine catch up).
func (th *thread) hostFuncCost(st *stream) Time {
	d := th.d
	if d.cost.hostFuncAfterGraph == 0 {
		return d.cost.hostFunc
	}
	th.catchUp()
	if st.tail != nil && st.tail.kind == cmdGraph {
		return d.cost.hostFuncAfterGraph
	}
	return d.cost.hostFunc
}

func captureUnsupported(call string, st *stream) error {
	st.capture.invalidate(call + " on a capturing stream")
	return &device.APIError{Call: call, Code: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
		Msg: fmt.Sprintf("stream %d is capturing; the capture is invalidated", st.id)}
}

func (th *thread) Query(e device.Event) (bool, error) {
	d := th.d
	ev, err := d.eventOf(e, "cuEventQuery")
	if err != nil {
		return false, err
	}
	if ev.capture != nil && !ev.capture.ended {
		return false, &device.APIError{Call: "cuEventQuery", Code: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
			Msg: fmt.Sprintf("event %d was recorded in an active capture", ev.id)}
	}
	th.chargePoll(d.cost.query, "cuEventQuery")
	th.catchUp()
	if !ev.done(ev.issued) {
		th.failedPoll(pollTarget{"Query(event %d)", int64(ev.id), ""})
		return false, nil
	}
	if d.hb.on && ev.issued > 0 {
		th.vc.join(ev.lastRC.vc)
	}
	return true, nil
}

func (th *thread) StreamQuery(s device.Stream) (bool, error) {
	d := th.d
	st, err := d.streamOf(s, "cuStreamQuery")
	if err != nil {
		return false, err
	}
	if st.capture != nil {
		return false, captureUnsupported("cuStreamQuery", st)
	}
	th.chargePoll(d.cost.query, "cuStreamQuery")
	th.catchUp()
	if st.pending != 0 {
		th.failedPoll(pollTarget{"StreamQuery(stream %d)", int64(st.id), ""})
		return false, nil
	}
	if d.hb.on {
		th.vc.join(st.vc)
	}
	return true, nil
}

func (th *thread) EventSynchronize(e device.Event) error {
	d := th.d
	ev, err := d.eventOf(e, "cuEventSynchronize")
	if err != nil {
		return err
	}
	if ev.capture != nil && !ev.capture.ended {
		return &device.APIError{Call: "cuEventSynchronize", Code: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
			Msg: fmt.Sprintf("event %d was recorded in an active capture", ev.id)}
	}
	th.charge(d.cost.syncCall, "cuEventSynchronize")
	th.catchUp()
	gen, rc := ev.issued, ev.lastRC
	if !ev.done(gen) {
		ev.hostWait = append(ev.hostWait, evWaiter{th, gen})
		th.park(fmt.Sprintf("EventSynchronize(event %d)", ev.id))
	}
	if d.hb.on && gen > 0 {
		th.vc.join(rc.vc)
	}
	return nil
}

func (th *thread) StreamSynchronize(s device.Stream) error {
	d := th.d
	st, err := d.streamOf(s, "cuStreamSynchronize")
	if err != nil {
		return err
	}
	if st.capture != nil {
		return captureUnsupported("cuStreamSynchronize", st)
	}
	c := d.cost.syncCall
	if th.lastSync != nil && th.lastSync != st {
		c += d.cost.syncSwitch
	}
	th.lastSync = st
	th.charge(c, "cuStreamSynchronize")
	th.catchUp()
	if st.pending == 0 {
		if d.hb.on {
			th.vc.join(st.vc)
		}
		return nil
	}
	st.waiters = append(st.waiters, th)
	th.park(fmt.Sprintf("StreamSynchronize(stream %d)", st.id))
	return nil
}

func (th *thread) Synchronize() error {
	d := th.d
	for _, st := range d.streams {
		if st.capture != nil {
			return captureUnsupported("cuCtxSynchronize", st)
		}
	}
	th.charge(d.cost.syncCall, "cuCtxSynchronize")
	th.catchUp()
	if d.outstanding == 0 {
		if d.hb.on {
			th.vc.join(d.hb.all)
		}
		return nil
	}
	d.syncWaiters = append(d.syncWaiters, th)
	th.park("Synchronize()")
	return nil
}

func (th *thread) Elapsed(start, end device.Event) (time.Duration, error) {
	d := th.d
	a, err := d.eventOf(start, "cuEventElapsedTime")
	if err != nil {
		return 0, err
	}
	b, err := d.eventOf(end, "cuEventElapsedTime")
	if err != nil {
		return 0, err
	}
	th.charge(d.cost.query, "cuEventElapsedTime")
	for _, e := range []*eventObj{a, b} {
		if !e.timing {
			return 0, &device.APIError{Call: "cuEventElapsedTime", Code: "CUDA_ERROR_INVALID_HANDLE", Msg: fmt.Sprintf("event %d was created with timing disabled", e.id)}
		}
		if e.issued == 0 {
			return 0, &device.APIError{Call: "cuEventElapsedTime", Code: "CUDA_ERROR_INVALID_HANDLE", Msg: fmt.Sprintf("event %d was never recorded", e.id)}
		}
	}
	th.catchUp()
	for _, e := range []*eventObj{a, b} {
		if !e.done(e.issued) {
			return 0, &device.APIError{Call: "cuEventElapsedTime", Code: "CUDA_ERROR_NOT_READY", Msg: fmt.Sprintf("event %d has not completed", e.id)}
		}
	}
	return (b.doneAt - a.doneAt).Duration(), nil
}

func (th *thread) NewQueue(name string) device.Queue {
	return &queue{d: th.d, name: name, run: th.d.run}
}

func (th *thread) Get(q device.Queue) (any, bool) {
	d := th.d
	qq, ok := q.(*queue)
	if !ok || qq == nil || qq.d != d || qq.run != d.run {
		if th.misuse == nil {
			th.misuse = fmt.Errorf("Get on %T, not a queue of this Run", q)
		}
		return nil, false
	}
	th.catchUp()
	d.progress()
	th.poll.lenZeros = 0
	if len(qq.items) > qq.head {
		th.chargeQueueLock()
		v, vc := qq.take()
		if d.hb.on {
			th.vc.join(vc)
		}
		return v, true
	}
	if qq.closed {
		if d.hb.on {
			th.vc.join(qq.closeVC)
		}
		return nil, false
	}
	qq.waiters = append(qq.waiters, th)
	th.park(fmt.Sprintf("Get(queue %q)", qq.name))
	th.chargeQueueLock() // the woken Get takes the lock to return the value
	return th.qv, th.qok
}

// validateLaunch applies CUDA's launch rules (device.ValidateLaunch) and the
// simulator's own: a block's work must be finite and not negative.
func (d *Device) validateLaunch(l *device.Launch) error {
	if err := device.ValidateLaunch(&d.info, l); err != nil {
		return err
	}
	w := l.Work
	for _, v := range [...]struct {
		x    float64
		name string
	}{{w.Cycles, "cycles"}, {w.Flops, "flops"}, {w.Bytes, "bytes"}} {
		if !(v.x >= 0) || math.IsInf(v.x, 1) {
			return &device.LaunchError{Launch: l.Name(), Code: "CUDA_ERROR_INVALID_VALUE",
				Rule: fmt.Sprintf("work per block has %s = %g; the simulator needs a finite, non-negative figure", v.name, v.x)}
		}
	}
	return nil
}
