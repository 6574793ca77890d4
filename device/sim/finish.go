package sim

import (
	"fmt"
	"sort"

	"github.com/gpusched/gpusched/device"
)

// finish computes the observations of the Run that just ended.
func (d *Device) finish() {
	d.util.advance(d.lastT)
	if !d.opts.noRaces {
		races, overlap := d.findRaces()
		if d.hb.on {
			races = append(races, d.hbRaces(overlap)...)
		}
		sortRaces(races)
		d.races = races
	}
	s := &d.stats
	s.Races = len(d.races)
	if d.anyOp {
		s.DeviceTime = (d.lastT - d.firstT).Duration()
		series, warpTime := d.util.samples(d.lastT)
		s.Utilization = series
		if span := d.lastT - d.firstT; span > 0 {
			s.SMUtilization = warpTime / (float64(d.info.SMs*d.info.MaxWarpsPerSM) * float64(span))
		}
	}
	if d.tr.on {
		for _, th := range d.threads {
			d.tr.threads = append(d.tr.threads, "host thread "+th.name)
		}
	}
	d.lastTrace = d.tr
	d.tr = traceRec{}
}

// deadlock describes everything that waits when nothing can progress.
func (d *Device) deadlock() *device.DeadlockError {
	e := &device.DeadlockError{At: d.now.Duration().String()}
	e.Waiting = append(e.Waiting, d.blockedStreams()...)
	e.Waiting = append(e.Waiting, d.spinningKernels()...)
	for _, k := range d.dq.window {
		if !k.waitReg && len(k.dqDeps) > 0 {
			e.Waiting = append(e.Waiting, fmt.Sprintf("dependency queue: kernel %s (id %d) waits on %v", k.l.Name(), k.dqID, k.dqDeps))
		}
	}
	for _, th := range d.threads {
		if th.state == thParked {
			e.Waiting = append(e.Waiting, fmt.Sprintf("host thread %s blocked in %s", th.name, th.blockedIn))
		}
	}
	if len(e.Waiting) == 0 {
		e.Waiting = append(e.Waiting, fmt.Sprintf("%d commands outstanding, nothing can progress", d.outstanding))
	}
	return e
}

// blockedStreams says why each stream's head command cannot run.
func (d *Device) blockedStreams() []string {
	var waiting []string
	for _, st := range d.streams {
		k := st.head
		if k == nil {
			continue
		}
		switch {
		case k.kind == cmdWait && !k.ev.done(k.gen):
			if k.ev.issued < k.gen {
				waiting = append(waiting, fmt.Sprintf("stream %d waits on event %d (never recorded)", st.id, k.ev.id))
			} else {
				waiting = append(waiting, fmt.Sprintf("stream %d waits on event %d (recorded on stream %d, which never reaches the record)", st.id, k.ev.id, k.ev.recordStream(k.gen)))
			}
		case st.conn.head != nil && st.conn.head != k && isQueued(st.conn, k):
			waiting = append(waiting, fmt.Sprintf("stream %d: %s %s queued on hardware queue %d behind stream %d", st.id, k.kind, cmdName(k), st.conn.id, st.conn.head.st.id))
		case k.kind == cmdKernel && k.started:
			waiting = append(waiting, fmt.Sprintf("stream %d: kernel %s never completes (%d of %d blocks done)", st.id, k.l.Name(), k.done, k.total))
		default:
			waiting = append(waiting, fmt.Sprintf("stream %d: %s %s blocked", st.id, k.kind, cmdName(k)))
		}
	}
	return waiting
}

// spinGroup is the blocks of one kernel that spin on counters, and the
// lowest-numbered of them, which the deadlock report names.
type spinGroup struct {
	k      *command
	blocks int
	first  *spinner
}

// spinningKernels describes the blocks spinning on counters, one line per
// kernel in launch order.
func (d *Device) spinningKernels() []string {
	groups := d.spinGroups()
	waiting := make([]string, 0, len(groups))
	for _, g := range groups {
		w := g.first.waits[0]
		for _, cw := range g.first.waits {
			if ct := d.counters[counterKey(cw.Counter)]; ct == nil || ct.value < cw.Target {
				w = cw
				break
			}
		}
		val := uint32(0)
		if ct := d.counters[counterKey(w.Counter)]; ct != nil {
			val = ct.value
		}
		waiting = append(waiting, fmt.Sprintf("kernel %s (stream %d): %d blocks spin holding their SMs; block %d has waited since %v for counter %#x[%d] = %d to reach %d",
			g.k.l.Name(), g.k.streamID(), g.blocks, g.first.block, g.first.since.Duration(), w.Counter.Buf.Addr, w.Counter.Index, val, w.Target))
	}
	return waiting
}

// spinGroups groups the spinning blocks by kernel, in launch order; the
// counters are visited in key order so that the result is deterministic.
func (d *Device) spinGroups() []*spinGroup {
	var groups []*spinGroup
	byK := map[*command]*spinGroup{}
	var keys []uint64
	for key := range d.counters {
		keys = append(keys, key)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	seen := map[*spinner]bool{}
	for _, key := range keys {
		for _, sp := range d.counters[key].waiters {
			if sp.started || seen[sp] {
				continue
			}
			seen[sp] = true
			g := byK[sp.k]
			if g == nil {
				g = &spinGroup{k: sp.k, first: sp}
				byK[sp.k] = g
				groups = append(groups, g)
			}
			g.blocks++
			if sp.block < g.first.block {
				g.first = sp
			}
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].k.seq < groups[j].k.seq })
	return groups
}

func isQueued(c *conn, k *command) bool {
	for x := c.head; x != nil; x = x.nextC {
		if x == k {
			return true
		}
	}
	return false
}

func cmdName(k *command) string {
	switch k.kind {
	case cmdKernel:
		return k.l.Name()
	case cmdCopy:
		return k.cp.Label
	case cmdWait, cmdRecord:
		return fmt.Sprintf("event %d", k.ev.id)
	}
	return ""
}
