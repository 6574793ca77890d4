package mutate

import "github.com/gpusched/gpusched/device"

// Happens-before. The wrapper keeps a vector clock per stream and per host
// thread (Lamport; Fidge and Mattern), indexed by stream ordinal, so that a
// site is only counted when the mutation leaves two conflicting commands
// unordered: a dropped wait that other waits or host synchronization make
// redundant breaks nothing and is no site. Edges: stream order; Record and
// Wait; a host thread's synchronize or successful query (the thread then
// knows the stream or event has completed) and every command it issues
// afterwards; Go (the child starts after its parent's past); queues (Get
// after the Put, with the putter's clock: a host callback's is its stream's
// at cuLaunchHostFunc; a Put from a host thread takes every host thread's
// clock, which may order more than is true, so it can only hide sites, never
// invent them). Commands issued inside a stream capture are nodes, not
// executions, but take part alike; that too can only hide sites.
type clock []int32

// join is the pointwise maximum of c and o, as a new clock.
func (c clock) join(o clock) clock {
	n := max(len(c), len(o))
	out := make(clock, n)
	copy(out, c)
	for i, v := range o {
		if v > out[i] {
			out[i] = v
		}
	}
	return out
}

func (c clock) copy() clock { return append(clock(nil), c...) }

// covers reports whether command p (issued on stream ordinal p.stream as its
// p.seq-th command) happened before a point with clock c.
func (c clock) covers(p cmdRef) bool {
	return p.stream < len(c) && c[p.stream] >= p.seq
}

// cmdRef is one issued command: its stream ordinal and its position there.
type cmdRef struct {
	stream int
	seq    int32
}

// sid is the stream's ordinal, assigned on first sight. Call with st.mu held.
func (st *state) sid(s device.Stream) int {
	if i, ok := st.sids[s]; ok {
		return i
	}
	i := len(st.sids)
	st.sids[s] = i
	st.vc = append(st.vc, nil)
	return i
}

// issue advances stream s's clock for a command issued by the thread with
// clock hc and returns the command. Call with st.mu held.
func (st *state) issue(s device.Stream, hc clock) cmdRef {
	i := st.sid(s)
	v := st.vc[i].join(hc)
	if len(v) <= i {
		v = append(v, make(clock, i+1-len(v))...)
	}
	v[i]++
	st.vc[i] = v
	return cmdRef{stream: i, seq: v[i]}
}

// streamClock is stream s's clock. Call with st.mu held.
func (st *state) streamClock(s device.Stream) clock { return st.vc[st.sid(s)] }

// allHosts is the join of every host thread's clock. Call with st.mu held.
func (st *state) allHosts() clock {
	var c clock
	for _, h := range st.hosts {
		c = c.join(h.clock)
	}
	return c
}

// queue carries clocks with its values, so that Get orders the getter after
// the putter.
type queue struct {
	in device.Queue
	st *state
}

type stamped struct {
	v any
	c clock
}

func (q *queue) Put(v any) {
	st := q.st
	st.mu.Lock()
	c := st.callback
	if c == nil {
		c = st.allHosts()
	}
	c = c.copy()
	st.mu.Unlock()
	q.in.Put(stamped{v, c})
}

func (q *queue) Close()   { q.in.Close() }
func (q *queue) Len() int { return q.in.Len() }
