package sim

import (
	"fmt"
	"sort"

	"github.com/gpusched/gpusched/device"
)

// opRecord is a finished kernel, copy or callback, or one block of a
// synchronizing kernel whose Sync implements device.BlockAccess: what the
// race checker, the statistics and the timeline need of it.
type opRecord struct {
	name       string
	stream     int
	start, end Time
	lo, hi     int32  // its buffer accesses: opArgs[lo:hi]
	cmd        uint64 // the command's issue number: blocks of one launch share it
	block      int32  // the block, or -1 for a whole command
}

func (k *command) streamID() int {
	if k.st == nil || k.dqID != 0 {
		return -1
	}
	return k.st.id
}

func (d *Device) noteStart(t Time) {
	if !d.anyOp || t < d.firstT {
		d.firstT = t
	}
	d.anyOp = true
}

// noteOp records a finished command.
func (d *Device) noteOp(k *command) {
	d.noteStart(k.start)
	d.lastT = max(d.lastT, k.end)
	var name string
	switch k.kind {
	case cmdKernel:
		name = k.l.Name()
	case cmdCopy:
		name = k.cp.Label
		if name == "" {
			name = "copy " + k.cp.Kind.String()
		}
	default:
		name = "host function"
	}
	if d.tr.on {
		d.traceOp(k, name)
	}
	d.hbNoteOp(k, name)
	if d.opts.noRaces || k.kind == cmdHostFunc || k.blkAcc != nil {
		return // blocks of a BlockAccess launch were recorded one by one
	}
	lo := len(d.opArgs)
	switch k.kind {
	case cmdKernel:
		for _, a := range k.args {
			if a.Kind == device.ArgBuffer {
				d.opArgs = append(d.opArgs, a)
			}
		}
	case cmdCopy:
		c := &k.cp
		if c.Kind != device.HostToDevice {
			d.opArgs = append(d.opArgs, device.Arg{Kind: device.ArgBuffer, Buf: c.Src, Mode: device.Read, Off: c.SrcOff, Len: c.Bytes})
		}
		if c.Kind != device.DeviceToHost {
			d.opArgs = append(d.opArgs, device.Arg{Kind: device.ArgBuffer, Buf: c.Dst, Mode: device.Write, Off: c.DstOff, Len: c.Bytes})
		}
	}
	if len(d.opArgs) == lo || k.end <= k.start {
		d.opArgs = d.opArgs[:lo]
		return
	}
	d.ops = append(d.ops, opRecord{name: name, stream: k.streamID(), start: k.start, end: k.end, lo: int32(lo), hi: int32(len(d.opArgs)), cmd: k.seq, block: -1})
}

// noteBlock records block b of a BlockAccess launch, finishing now: its
// accesses over the time it did its work (spinning accesses only
// synchronization words).
func (d *Device) noteBlock(k *command, b int) {
	lo := len(d.opArgs)
	d.accBuf = k.blkAcc.BlockArgs(b, d.accBuf[:0])
	for _, a := range d.accBuf {
		if a.Kind == device.ArgBuffer {
			d.opArgs = append(d.opArgs, a)
		}
	}
	clear(d.accBuf)
	start := k.blkStart[b]
	if len(d.opArgs) == lo || d.now <= start {
		d.opArgs = d.opArgs[:lo]
		return
	}
	d.ops = append(d.ops, opRecord{name: k.l.Name(), stream: k.streamID(), start: start, end: d.now,
		lo: int32(lo), hi: int32(len(d.opArgs)), cmd: k.seq, block: int32(b)})
}

func (op *opRecord) ref() device.OpRef {
	name := op.name
	if op.block >= 0 {
		name = fmt.Sprintf("%s (block %d)", op.name, op.block)
	}
	return device.OpRef{Name: name, Stream: op.stream, Start: op.start.Duration(), End: op.end.Duration()}
}

// raceEnt is one buffer access of one operation.
type raceEnt struct {
	addr   uint64 // buffer
	lo, hi uint64 // accessed bytes
	write  bool
	op     int32
}

// findRaces reports every pair of commands that overlapped in time while
// one wrote bytes the other accessed (once per pair of commands: for a
// BlockAccess launch, the first of its blocks found racing, with that
// block's interval; blocks of one launch are not checked against each
// other). Accesses are grouped per buffer and swept in start order, keeping
// only the operations still running: the cost is O(n log n) plus the
// overlapping pairs on each buffer, not O(n^2).
func (d *Device) findRaces() ([]device.Race, map[cmdPair]bool) {
	ents := make([]raceEnt, 0, len(d.opArgs))
	for i, op := range d.ops {
		for _, a := range d.opArgs[op.lo:op.hi] {
			lo, hi := a.Range()
			if hi <= lo {
				continue
			}
			ents = append(ents, raceEnt{addr: a.Buf.Addr, lo: lo, hi: hi, write: a.Mode&device.Write != 0, op: int32(i)})
		}
	}
	sort.Slice(ents, func(i, j int) bool {
		a, b := &ents[i], &ents[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		if sa, sb := d.ops[a.op].start, d.ops[b.op].start; sa != sb {
			return sa < sb
		}
		return a.op < b.op
	})
	seen := map[cmdPair]bool{}
	var races []device.Race
	var active []raceEnt
	for i := 0; i < len(ents); {
		j := i
		active = active[:0]
		for ; j < len(ents) && ents[j].addr == ents[i].addr; j++ {
			e := ents[j]
			start := d.ops[e.op].start
			keep := active[:0]
			for _, a := range active {
				if d.ops[a.op].end > start {
					keep = append(keep, a)
				}
			}
			active = keep
			for _, a := range active {
				ca, ce := d.ops[a.op].cmd, d.ops[e.op].cmd
				if ca == ce || (!a.write && !e.write) || a.hi <= e.lo || e.hi <= a.lo {
					continue
				}
				p := cmdPair{min(ca, ce), max(ca, ce)}
				if seen[p] {
					continue
				}
				seen[p] = true
				races = append(races, device.Race{
					A: d.ops[a.op].ref(), B: d.ops[e.op].ref(),
					Lo: max(a.lo, e.lo), Hi: min(a.hi, e.hi),
				})
			}
			active = append(active, e)
		}
		i = j
	}
	return races, seen
}

// sortRaces orders races by the start of their first command, then of
// their second, then by address.
func sortRaces(races []device.Race) {
	sort.SliceStable(races, func(i, j int) bool {
		a, b := races[i], races[j]
		if a.A.Start != b.A.Start {
			return a.A.Start < b.A.Start
		}
		if a.B.Start != b.B.Start {
			return a.B.Start < b.B.Start
		}
		return a.Lo < b.Lo
	})
}
