package sched

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Plan is a static multi-stream schedule of a range of operations: which
// stream each runs on, and which cross-stream waits it needs. Within a
// stream, program order keeps dependencies; across streams, an operation
// waits on an event recorded after its latest dependency on each other
// stream (waiting on an earlier one of the same stream is redundant).
type Plan struct {
	Lo, Hi  int
	Streams int
	Assign  []int   // Assign[k-Lo]: stream index of op k
	Waits   [][]int // Waits[k-Lo]: ops (on other streams) that op k waits on
	record  []int   // record[k-Lo]: how many waits name op k (0: no event)
}

// NewPlan builds the waits of an assignment. deps are flat dependencies
// (ProgramDeps); dependencies before lo are taken as already satisfied (a
// previous step, ordered by the caller).
func NewPlan(lo, hi, streams int, assign []int, deps [][]int) (*Plan, error) {
	if len(assign) != hi-lo {
		return nil, fmt.Errorf("plan: %d assignments for %d operations", len(assign), hi-lo)
	}
	p := &Plan{Lo: lo, Hi: hi, Streams: streams, Assign: assign, Waits: make([][]int, hi-lo), record: make([]int, hi-lo)}
	latest := make([]int, streams)
	for k := lo; k < hi; k++ {
		s := assign[k-lo]
		if s < 0 || s >= streams {
			return nil, fmt.Errorf("plan: op %d assigned to stream %d of %d", k, s, streams)
		}
		for i := range latest {
			latest[i] = -1
		}
		for _, j := range deps[k] {
			if j < lo {
				continue
			}
			if j >= k {
				return nil, fmt.Errorf("plan: op %d depends on later op %d", k, j)
			}
			if t := assign[j-lo]; t != s && j > latest[t] {
				latest[t] = j
			}
		}
		for _, j := range latest {
			if j >= 0 {
				p.Waits[k-lo] = append(p.Waits[k-lo], j)
				p.record[j-lo]++
			}
		}
	}
	return p, nil
}

// WaitCount is the number of cross-stream waits the plan issues.
func (p *Plan) WaitCount() int {
	n := 0
	for _, w := range p.Waits {
		n += len(w)
	}
	return n
}

// EventPool recycles events between issues, so long programs do not create
// one event per operation.
type EventPool struct {
	free []device.Event
	all  []device.Event
}

// Get returns a free event, creating one if needed.
func (ep *EventPool) Get(h device.Host) (device.Event, error) {
	if n := len(ep.free); n > 0 {
		e := ep.free[n-1]
		ep.free = ep.free[:n-1]
		return e, nil
	}
	e, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	if err != nil {
		return nil, err
	}
	ep.all = append(ep.all, e)
	return e, nil
}

// Put returns an event whose every wait has been issued: CUDA's
// cuStreamWaitEvent captures the event's state when it is called, so the
// event may be recorded again afterwards.
func (ep *EventPool) Put(e device.Event) { ep.free = append(ep.free, e) }

// Destroy releases every event the pool created.
func (ep *EventPool) Destroy(h device.Host) error {
	var first error
	for _, e := range ep.all {
		if err := h.Destroy(e); err != nil && first == nil {
			first = err
		}
	}
	ep.all, ep.free = nil, nil
	return first
}

// Issue enqueues the plan's operations on streams in program order, with
// an event after each operation that another stream waits on.
func (p *Plan) Issue(h device.Host, in *workloads.Instance, streams []device.Stream, pool *EventPool) error {
	events := make([]device.Event, p.Hi-p.Lo)
	pending := append([]int(nil), p.record...)
	for k := p.Lo; k < p.Hi; k++ {
		s := streams[p.Assign[k-p.Lo]]
		for _, j := range p.Waits[k-p.Lo] {
			if err := h.Wait(s, events[j-p.Lo]); err != nil {
				return err
			}
			if pending[j-p.Lo]--; pending[j-p.Lo] == 0 {
				pool.Put(events[j-p.Lo])
				events[j-p.Lo] = nil
			}
		}
		if err := in.Issue(h, s, k); err != nil {
			return err
		}
		if p.record[k-p.Lo] > 0 {
			e, err := pool.Get(h)
			if err != nil {
				return err
			}
			if err := h.Record(e, s); err != nil {
				return err
			}
			events[k-p.Lo] = e
		}
	}
	return nil
}

// Fork makes streams[1:] wait for everything issued so far on streams[0]; in
// stream capture this is how other streams join the capture.
func Fork(h device.Host, streams []device.Stream, pool *EventPool) error {
	return joinOnto(h, streams[0], streams[1:], pool, true)
}

// Join makes streams[0] wait for everything issued on streams[1:]; a
// capture must join every forked stream back before it ends.
func Join(h device.Host, streams []device.Stream, pool *EventPool) error {
	return joinOnto(h, streams[0], streams[1:], pool, false)
}

func joinOnto(h device.Host, origin device.Stream, others []device.Stream, pool *EventPool, fork bool) error {
	for _, o := range others {
		from, to := o, origin
		if fork {
			from, to = origin, o
		}
		e, err := pool.Get(h)
		if err != nil {
			return err
		}
		if err := h.Record(e, from); err != nil {
			return err
		}
		if err := h.Wait(to, e); err != nil {
			return err
		}
		pool.Put(e)
	}
	return nil
}

// NewStreams creates k streams of default priority.
func NewStreams(h device.Host, k int) ([]device.Stream, error) {
	out := make([]device.Stream, 0, k)
	for i := 0; i < k; i++ {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, errors.Join(err, DestroyStreams(h, out))
		}
		out = append(out, s)
	}
	return out, nil
}

// DestroyStreams destroys streams, returning the first error.
func DestroyStreams(h device.Host, streams []device.Stream) error {
	var first error
	for _, s := range streams {
		if err := h.Destroy(s); err != nil && first == nil {
			first = err
		}
	}
	return first
}
