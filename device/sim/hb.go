package sim

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// Ordering-based race checking (happens-before).
//
// The overlap sweep (race.go) reports conflicting commands that ran at the
// same time in this run. A broken schedule often runs them apart by luck of
// timing, so the checker also reports conflicting commands that nothing
// orders, whenever they ran. Order is tracked with vector clocks (Lamport;
// Fidge; Mattern) over agents: every stream is an agent, and graph nodes,
// dependency-queue kernels and blocks of tile-synchronized launches run on
// pooled agents (an idle agent is reused only by an operation that is
// already ordered after its last operation, so each agent's operations stay
// totally ordered and the pool stays as large as the concurrency). An
// operation gets an epoch (agent, count) when it starts; operation A
// happens before B exactly when B's clock holds A's agent at A's count or
// more.
//
// Edges: stream order; a host thread's knowledge at the time it issues a
// command; event record -> the waits, EventSynchronize and successful
// queries bound to that record; StreamSynchronize, Synchronize, a
// successful StreamQuery, DQSynchronize, a successful DQDone, the stale-list
// rule of the dependency queue (hbDQStale) and a pageable device-to-host
// copy's return (the host thread learns what completed); Go (the child
// starts with its parent's knowledge); Queue Put -> Get and Close -> a Get
// that finds the queue closed (a callback puts with its own clock); host callbacks (ordered on their stream like any
// command); graph launches (every node after the launch's stream
// predecessors, after its DAG predecessors and after the previous launch
// of the same exec, as cudaGraphLaunch promises; the stream's next command
// after every node); the dependency queue (a kernel after its listed
// upstream kernels); cuSync counters (a block that waited on counters after
// every post made to them before it started: a superset of the posts it
// needed, which can only hide races, never invent them).
//
// Memory stays bounded by the live state, as in FastTrack (Flanagan and
// Freund, PLDI 2009): each buffer keeps its accesses as (byte range, epoch)
// entries, and an access drops every entry it is ordered after whose bytes
// it covers (a read drops reads, a write drops both), since any later
// access racing with the dropped entry races with the new one too.

// vclock is a vector clock indexed by agent.
type vclock []int32

// join sets c to the pointwise maximum of c and o.
func (c *vclock) join(o vclock) {
	if len(*c) < len(o) {
		*c = append(*c, make(vclock, len(o)-len(*c))...)
	}
	v := *c
	for i, x := range o {
		if x > v[i] {
			v[i] = x
		}
	}
}

// set makes c a copy of o, reusing c's storage.
func (c *vclock) set(o vclock) { *c = append((*c)[:0], o...) }

// tick sets agent a's entry to epoch e.
func (c *vclock) tick(a, e int32) {
	if int(a) >= len(*c) {
		*c = append(*c, make(vclock, int(a)+1-len(*c))...)
	}
	(*c)[a] = e
}

// covers reports whether the operation with epoch (a, e) happened before a
// point with clock c.
func (c vclock) covers(a, e int32) bool { return int(a) < len(c) && c[a] >= e }

// recClock is one record of an event: the clock of its stream when the
// record completed. Waits and host synchronization bind to the record (as
// the simulator binds them to its generation).
type recClock struct{ vc vclock }

// hbOp is one operation the ordering check names in a report.
type hbOp struct {
	name       string
	stream     int
	start, end Time
	cmd        uint64
	block      int32
}

// hbEnt is one access of one operation to a buffer.
type hbEnt struct {
	lo, hi uint64
	write  bool
	agent  int32
	epoch  int32
	op     int32
	cmd    uint64
}

type hbRace struct {
	a, b   int32
	lo, hi uint64
}

type cmdPair struct{ a, b uint64 }

// hbState is the ordering checker's state for one Run.
type hbState struct {
	on     bool
	tips   []int32   // each agent's last epoch
	busy   []bool    // pooled agents running an operation
	idle   [][]int32 // pooled agents free, by home (stream + 1), most recently freed last
	home   []int32   // each agent's home: the stream (+1) of its last operation
	all    vclock    // every finished operation
	cbVC   vclock    // the running host callback's clock (engine context)
	dqAll  vclock    // every finished dependency-queue kernel
	dqEnd  map[uint64]vclock
	dqOld  vclock // finished dependency-queue kernels dropped from dqEnd
	bufs   map[uint64][]hbEnt
	ops    []hbOp
	races  []hbRace
	seen   map[cmdPair]bool
	wbuf   []device.CounterWait
	argBuf []device.Arg
}

// dqKeep is how many finished dependency-queue kernels keep their own clock
// for later DQSubmit deps and DQDone; older ones are merged into one clock
// (ordering after it can only hide races).
const dqKeep = 4096

func (h *hbState) reset(on bool) {
	for i := range h.idle {
		h.idle[i] = h.idle[i][:0]
	}
	*h = hbState{on: on, tips: h.tips[:0], busy: h.busy[:0], idle: h.idle, home: h.home[:0], ops: h.ops[:0],
		wbuf: h.wbuf[:0], argBuf: h.argBuf[:0]}
	if on {
		h.bufs = map[uint64][]hbEnt{}
		h.seen = map[cmdPair]bool{}
		h.dqEnd = map[uint64]vclock{}
	}
}

// newAgent adds an agent and returns its index.
func (h *hbState) newAgent() int32 {
	h.tips = append(h.tips, 0)
	h.busy = append(h.busy, false)
	h.home = append(h.home, 0)
	return int32(len(h.tips) - 1)
}

// pooled takes an idle pooled agent whose last operation vc is ordered
// after, or a new one, and starts an operation on it: vc gets its epoch.
// Idle agents are kept by the stream they last served (home: stream + 1,
// 0 for dependency-queue kernels), since an operation is usually ordered
// after what its own stream ran; the look is bounded to the few most
// recently freed (what a stream successor follows) and the few longest
// free (what news of completion, such as the dependency queue's stale
// list, reaches last), which keeps it O(1).
func (h *hbState) pooled(vc *vclock, home int) (int32, int32) {
	a := int32(-1)
	for len(h.idle) <= home {
		h.idle = append(h.idle, nil)
	}
	idle := h.idle[home]
	const look = 8
	for i, n := len(idle)-1, 0; i >= 0 && n < look; i, n = i-1, n+1 {
		if c := idle[i]; vc.covers(c, h.tips[c]) {
			a = c
			h.idle[home] = append(idle[:i], idle[i+1:]...)
			break
		}
	}
	for i := 0; a < 0 && i < min(look, len(idle)-look); i++ {
		if c := idle[i]; vc.covers(c, h.tips[c]) {
			a = c
			h.idle[home] = append(idle[:i], idle[i+1:]...)
		}
	}
	if a < 0 {
		a = h.newAgent()
	}
	h.home[a] = int32(home)
	h.busy[a] = true
	h.tips[a]++
	vc.tick(a, h.tips[a])
	return a, h.tips[a]
}

// release frees pooled agent a.
func (h *hbState) release(a int32) {
	if a >= 0 && h.busy[a] {
		h.busy[a] = false
		h.idle[h.home[a]] = append(h.idle[h.home[a]], a)
	}
}

// streamOp starts an operation on stream agent a: vc gets its epoch.
func (h *hbState) streamOp(a int32, vc *vclock) int32 {
	h.tips[a]++
	vc.tick(a, h.tips[a])
	return h.tips[a]
}

// newOp adds an operation to the report table.
func (h *hbState) newOp(cmd uint64, stream int, block int32) int32 {
	h.ops = append(h.ops, hbOp{cmd: cmd, stream: stream, block: block})
	return int32(len(h.ops) - 1)
}

// access checks an operation's buffer accesses against every access not
// ordered before it, and records them. The operation's report entry *op is
// made on its first buffer access (most tiny kernels have none).
func (h *hbState) access(vc vclock, agent, epoch int32, op *int32, cmd uint64, stream int, block int32, args []device.Arg) {
	for _, a := range args {
		if a.Kind != device.ArgBuffer {
			continue
		}
		lo, hi := a.Range()
		if hi <= lo {
			continue
		}
		if *op < 0 {
			*op = h.newOp(cmd, stream, block)
		}
		write := a.Mode&device.Write != 0
		ents := h.bufs[a.Buf.Addr]
		keep := ents[:0]
		for _, e := range ents {
			ordered := vc.covers(e.agent, e.epoch)
			if !ordered && e.cmd != cmd && (write || e.write) && e.lo < hi && lo < e.hi {
				h.report(e.op, *op, e.cmd, cmd, max(lo, e.lo), min(hi, e.hi))
			}
			if ordered && lo <= e.lo && e.hi <= hi && (write || !e.write) {
				continue // superseded by this access
			}
			keep = append(keep, e)
		}
		clear(ents[len(keep):])
		h.bufs[a.Buf.Addr] = append(keep, hbEnt{lo: lo, hi: hi, write: write, agent: agent, epoch: epoch, op: *op, cmd: cmd})
	}
}

func (h *hbState) report(a, b int32, ca, cb uint64, lo, hi uint64) {
	p := cmdPair{min(ca, cb), max(ca, cb)}
	if h.seen[p] {
		return
	}
	h.seen[p] = true
	h.races = append(h.races, hbRace{a: a, b: b, lo: lo, hi: hi})
}

func (op *hbOp) ref() device.OpRef {
	name := op.name
	if op.block >= 0 {
		name = fmt.Sprintf("%s (block %d)", op.name, op.block)
	}
	return device.OpRef{Name: name, Stream: op.stream, Start: op.start.Duration(), End: op.end.Duration()}
}

// Hooks called by the engine and the host calls. Each does nothing when
// the ordering check is off.

// hbIssue gives command k the issuing host thread's knowledge.
func (d *Device) hbIssue(k *command) {
	if !d.hb.on {
		return
	}
	if th := d.current; th != nil {
		k.hostVC.set(th.vc)
	} else {
		k.hostVC.set(d.hb.cbVC)
	}
}

// hbDispatch runs when stream command k leaves its hardware queue (its
// stream predecessors are complete).
func (d *Device) hbDispatch(k *command) {
	if !d.hb.on {
		return
	}
	st := k.st
	st.vc.join(k.hostVC)
	switch k.kind {
	case cmdRecord:
		k.rc.vc.set(st.vc)
	case cmdWait:
		st.vc.join(k.rc.vc)
	case cmdGraph:
		// "Each launch is ordered behind both any previous work in stream
		// and any previous launches of graphExec" (cudaGraphLaunch).
		k.vc.set(st.vc)
		k.vc.join(k.gx.hbDone)
	default:
		k.agent = -1 // a stream agent: never pooled
		k.epoch = d.hb.streamOp(st.agent, &st.vc)
		k.vc.set(st.vc)
		d.hbStartOp(k, st.agent)
	}
}

// hbStartOp registers the accesses of kernel, copy or callback k, whose
// clock and epoch are set.
func (d *Device) hbStartOp(k *command, agent int32) {
	h := &d.hb
	k.hbOp = -1
	switch k.kind {
	case cmdKernel:
		if k.l.Sync != nil {
			if _, ok := k.l.Sync.(device.BlockAccess); ok {
				return // checked block by block
			}
		}
		h.access(k.vc, agent, k.epoch, &k.hbOp, k.seq, k.streamID(), -1, k.args)
	case cmdCopy:
		c := &k.cp
		h.argBuf = h.argBuf[:0]
		if c.Kind != device.HostToDevice {
			h.argBuf = append(h.argBuf, device.Arg{Kind: device.ArgBuffer, Buf: c.Src, Mode: device.Read, Off: c.SrcOff, Len: c.Bytes})
		}
		if c.Kind != device.DeviceToHost {
			h.argBuf = append(h.argBuf, device.Arg{Kind: device.ArgBuffer, Buf: c.Dst, Mode: device.Write, Off: c.DstOff, Len: c.Bytes})
		}
		h.access(k.vc, agent, k.epoch, &k.hbOp, k.seq, k.streamID(), -1, h.argBuf)
	}
}

// hbPooledStart starts graph node or dependency-queue kernel k on a pooled
// agent; k.vc already holds what it is ordered after.
func (d *Device) hbPooledStart(k *command) {
	if !d.hb.on {
		return
	}
	k.agent, k.epoch = d.hb.pooled(&k.vc, k.streamID()+1)
	d.hbStartOp(k, k.agent)
}

// hbEnd runs when kernel, copy or callback k completes: vc is what its
// completion makes known (its own clock, or the join of its blocks').
func (d *Device) hbEnd(k *command) {
	if !d.hb.on {
		return
	}
	h := &d.hb
	if k.blkAcc != nil {
		k.vc.join(k.blkVC)
	}
	h.all.join(k.vc)
	if k.kind != cmdGraph {
		h.release(k.agent)
	}
}

// hbNoteOp fills in the report entry of a finished command.
func (d *Device) hbNoteOp(k *command, name string) {
	if !d.hb.on || k.hbOp < 0 || int(k.hbOp) >= len(d.hb.ops) {
		return
	}
	op := &d.hb.ops[k.hbOp]
	op.name, op.start, op.end = name, k.start, k.end
}

// hbBlockStart starts the work of block b of a BlockAccess launch: it is
// ordered after its launch's start and after every post made so far to the
// counters it waited on.
func (d *Device) hbBlockStart(k *command, b int, start Time) {
	h := &d.hb
	if !h.on {
		return
	}
	if len(k.blkVCs) < k.total {
		k.blkVCs = append(k.blkVCs, make([]vclock, k.total-len(k.blkVCs))...)
		k.blkAgent = append(k.blkAgent, make([]int32, k.total-len(k.blkAgent))...)
		k.blkOp = append(k.blkOp, make([]int32, k.total-len(k.blkOp))...)
	}
	vc := &k.blkVCs[b]
	vc.set(k.vc)
	h.wbuf = k.l.Sync.Waits(b, h.wbuf[:0])
	for _, w := range h.wbuf {
		if ct := d.counters[counterKey(w.Counter)]; ct != nil {
			vc.join(ct.vc)
		}
	}
	agent, epoch := h.pooled(vc, k.streamID()+1)
	k.blkAgent[b] = agent
	k.blkOp[b] = -1
	h.argBuf = k.blkAcc.BlockArgs(b, h.argBuf[:0])
	h.access(*vc, agent, epoch, &k.blkOp[b], k.seq, k.streamID(), int32(b), h.argBuf)
	clear(h.argBuf)
	if op := k.blkOp[b]; op >= 0 {
		h.ops[op].name, h.ops[op].start = k.l.Name(), start
	}
}

// hbBlockEnd finishes block b of a BlockAccess launch.
func (d *Device) hbBlockEnd(k *command, b int) {
	h := &d.hb
	if !h.on || b >= len(k.blkVCs) {
		return
	}
	k.blkVC.join(k.blkVCs[b])
	if op := k.blkOp[b]; op >= 0 {
		h.ops[op].end = d.now
	}
	h.release(k.blkAgent[b])
}

// hbPostVC is the clock that posts of block b of k carry.
func (d *Device) hbPostVC(k *command, b int) vclock {
	if k.blkAcc != nil && b < len(k.blkVCs) {
		return k.blkVCs[b]
	}
	return k.vc
}

// hbPost makes counters cs carry clock vc.
func (d *Device) hbPost(cs []device.Counter, vc vclock) {
	if !d.hb.on {
		return
	}
	for _, c := range cs {
		d.counter(c).vc.join(vc)
	}
}

// hbDQDispatch orders dependency-queue kernel k after its listed upstream
// kernels and starts it.
func (d *Device) hbDQDispatch(k *command) {
	h := &d.hb
	if !h.on {
		return
	}
	k.vc.set(k.hostVC)
	for _, id := range k.hbDeps {
		if vc, ok := h.dqEnd[id]; ok {
			k.vc.join(vc)
		} else {
			k.vc.join(h.dqOld)
		}
	}
	d.hbPooledStart(k)
}

// hbDQDone keeps the clock of finished dependency-queue kernel k.
func (d *Device) hbDQDone(k *command) {
	h := &d.hb
	if !h.on {
		return
	}
	h.dqEnd[k.dqID] = append(vclock(nil), k.vc...)
	h.dqAll.join(k.vc)
	if k.dqID > dqKeep {
		old := k.dqID - dqKeep
		if vc, ok := h.dqEnd[old]; ok {
			h.dqOld.join(vc)
			delete(h.dqEnd, old)
		}
	}
}

// hbDQKnown is the clock of dependency-queue kernel id, done.
func (d *Device) hbDQKnown(id uint64) vclock {
	if vc, ok := d.hb.dqEnd[id]; ok {
		return vc
	}
	return d.hb.dqOld
}

// hbGraphRelease orders node i of graph run gr after the launch and the
// node's predecessors, and starts it.
func (d *Device) hbGraphRelease(k *command, gk *command, i int) {
	if !d.hb.on {
		return
	}
	gr := gk.gr
	k.vc.set(gk.vc)
	if i < len(gr.nvc) {
		k.vc.join(gr.nvc[i])
	}
	d.hbPooledStart(k)
}

// hbGraphNodeDone passes node k's clock to its successors and the launch.
func (d *Device) hbGraphNodeDone(k *command) {
	if !d.hb.on {
		return
	}
	gr := k.gr
	if gr.nvc == nil {
		gr.nvc = make([]vclock, len(gr.nodes))
	}
	for _, s := range gr.x.succ[k.node] {
		gr.nvc[s].join(k.vc)
	}
	gr.all.join(k.vc)
}

// hbDQStale orders a host thread submitting dependency-queue kernel id
// after every kernel more than stale_list submissions older: the queue
// admits the submission only once those are done (dqFull), which is what
// lets the host drop them from its list of upstream candidates.
func (d *Device) hbDQStale(th *thread, id uint64) {
	if !d.hb.on {
		return
	}
	m := uint64(d.cfg.DQ.StaleList)
	for th.dqKnown+m+1 < id && th.dqKnown+1 < uint64(len(d.dq.done)) && d.dq.done[th.dqKnown+1] {
		th.dqKnown++
		th.vc.join(d.hbDQKnown(th.dqKnown))
	}
}

// hbStreamAfter orders the rest of stream command k's stream after it (a graph
// launch: after every node).
func (d *Device) hbStreamAfter(k *command) {
	if d.hb.on && k.kind == cmdGraph {
		k.vc.join(k.gr.all)
		k.st.vc.join(k.vc)
		k.gx.hbDone.set(k.vc)
		d.hb.all.join(k.vc)
	} else if d.hb.on && (k.kind == cmdKernel || k.kind == cmdCopy || k.kind == cmdHostFunc) {
		k.st.vc.join(k.vc)
	}
}

// hbRaces turns the ordering check's findings into reports, leaving out
// pairs of commands the overlap sweep already reported.
func (d *Device) hbRaces(overlap map[cmdPair]bool) []device.Race {
	var out []device.Race
	for _, r := range d.hb.races {
		a, b := &d.hb.ops[r.a], &d.hb.ops[r.b]
		if overlap[cmdPair{min(a.cmd, b.cmd), max(a.cmd, b.cmd)}] {
			continue
		}
		if b.start < a.start {
			a, b = b, a
		}
		out = append(out, device.Race{A: a.ref(), B: b.ref(), Lo: r.lo, Hi: r.hi, Unordered: true})
	}
	return out
}
