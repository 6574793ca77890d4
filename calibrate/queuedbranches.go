package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "queued graphs' branches" (issue #18, session 29): on four workers
// SET-batch's rows take 26-52% longer with 12-branch chunks than with 2,
// and 27-36% longer with a second launch queued behind each running one
// (ring 2) than without (ring 1), on three H200 leases, where graphs of
// empty kernels over 1-8 streams lose little to their branches ("branchy
// graphs over streams"). One explanation is the hardware queues: a graph
// launch's branches run on internal streams whose commands are queued on
// shared channels when it is launched, and a launch waiting behind its
// stream's running work would hold up, in order, whatever another stream
// queued on the same channels after it. This probe asks directly: a graph
// G of B branches (an empty kernel, B chains of two, an empty kernel) on
// a stream of its own, timed by events around it, beside a stream held by
// a 200 us spin kernel with, queued behind the spin (G itself behind an
// 80 us gate on its stream, so that its time is the device's):
//
//	nothing                     G's own time
//	a graph before G            a launch of another exec of G's shape,
//	                            issued before G
//	a graph after G             the same, issued after G
//	a 16-branch graph before G  the widest shape, before G
//	a kernel before G           an empty kernel (the user streams' own
//	                            queues: the two streams share none)
//
// for B = 1, 2, 4, 8, 16. If queued branches hold up others, G's time
// rises toward the spin's with B (or with the other's width) when issued
// after the queued launch, and not before it.
var (
	qbBranches = []int{1, 2, 4, 8, 16}
	qbKinds    = []string{"nothing", "a graph before G", "a graph after G", "a 16-branch graph before G", "a kernel before G"}
)

// qbBlock holds the other stream; qbGate, on G's stream, covers G's
// launch call and ends well before qbBlock.
const qbBlock, qbGate = 200 * time.Microsecond, 80 * time.Microsecond

// qbName is the name of a "queued graphs' branches" measurement.
func qbName(branches int, kind string) string {
	return fmt.Sprintf("graph G of %d branches beside a held stream with %s queued", branches, kind)
}

func qbShape(branches int) gdShape {
	return gdShape{name: fmt.Sprintf("%d branches", branches), head: "k", tail: "k", branches: branches, perBranch: 2}
}

func (c *calibrator) queuedBranches(h device.Host) error {
	env, err := c.newGDEnv(h, gdSmall)
	if err != nil {
		return err
	}
	q := &qbEnv{env: env}
	if q.g, err = newTimedStream(h); err != nil {
		return err
	}
	if q.held, err = h.NewStream(device.StreamOptions{}); err != nil {
		return err
	}
	q.spin = c.spinLaunch(qbBlock, q.g.done)
	if q.execs, err = c.qbExecs(h, env); err != nil {
		return err
	}
	for _, b := range qbBranches {
		for _, kind := range qbKinds {
			out, err := c.qbRounds(h, q, b, kind)
			if err != nil {
				return fmt.Errorf("queued graphs' branches, %d branches, %s: %w", b, kind, err)
			}
			c.record(qbName(b, kind), "", "ns",
				fmt.Sprintf("Elapsed of events around G's launch on its own stream (an empty kernel, %d chains of two empty kernels, an empty kernel), while another stream is held by a %v spin kernel with %s queued behind it", b, qbBlock, kind), out)
		}
	}
	for _, b := range qbBranches {
		pair := q.execs[b]
		if err := destroyExecs(h, pair[:]); err != nil {
			return err
		}
	}
	return nil
}

// qbEnv is the probe's streams and graphs: G's timed stream, the held
// stream and its spin kernel, two execs per width (G's and the queued
// one's: an exec runs one launch at a time).
type qbEnv struct {
	env   *gdEnv
	g     *timedStream
	held  device.Stream
	spin  *device.Launch
	execs map[int][2]device.GraphExec
}

// qbExecs instantiates two execs of every width and launches each once
// (the first launch uploads it), waiting for the device after each width.
func (c *calibrator) qbExecs(h device.Host, env *gdEnv) (map[int][2]device.GraphExec, error) {
	execs := map[int][2]device.GraphExec{}
	for _, b := range qbBranches {
		xs, err := c.uploadedExecs(h, env, 2, env.issue(h, qbShape(b)))
		if err != nil {
			return nil, fmt.Errorf("queued graphs' branches, %d branches: %w", b, err)
		}
		execs[b] = [2]device.GraphExec{xs[0], xs[1]}
	}
	return execs, nil
}

// qbRounds is, per round, G's time (b branches) beside the held stream
// with kind queued behind its spin.
func (c *calibrator) qbRounds(h device.Host, q *qbEnv, b int, kind string) ([]float64, error) {
	widest := qbBranches[len(qbBranches)-1]
	queue := func() error {
		switch kind {
		case qbKinds[1], qbKinds[2]:
			return h.GraphLaunch(q.execs[b][1], q.held)
		case qbKinds[3]:
			return h.GraphLaunch(q.execs[widest][1], q.held)
		case qbKinds[4]:
			return h.Launch(q.held, q.env.le)
		}
		return nil
	}
	after := kind == qbKinds[2]
	var out []float64
	err := c.warmRounds(func(measured bool) error {
		if err := h.Launch(q.held, q.spin); err != nil {
			return err
		}
		if !after {
			if err := queue(); err != nil {
				return err
			}
		}
		// e1 is recorded before a queued launch issued after G, so that
		// its launch call is not in G's time.
		y, err := c.qbTime(h, q.g, q.execs[b][0], after, queue)
		if err != nil {
			return err
		}
		if measured {
			out = append(out, y)
		}
		return h.Synchronize()
	})
	return out, err
}

// qbTime is the Elapsed of g's events around G's launch on g's stream
// behind a gate, queue called after the closing record when after, and
// g's stream synchronized.
func (c *calibrator) qbTime(h device.Host, g *timedStream, x device.GraphExec, after bool, queue func() error) (float64, error) {
	// A gate on G's stream covers G's launch call, so that the time is
	// the device's alone.
	if err := h.Launch(g.s, c.spinLaunch(qbGate, g.done)); err != nil {
		return 0, err
	}
	if err := h.Record(g.e0, g.s); err != nil {
		return 0, err
	}
	if err := h.GraphLaunch(x, g.s); err != nil {
		return 0, err
	}
	if err := h.Record(g.e1, g.s); err != nil {
		return 0, err
	}
	if after {
		if err := queue(); err != nil {
			return 0, err
		}
	}
	if err := h.StreamSynchronize(g.s); err != nil {
		return 0, err
	}
	d, err := h.Elapsed(g.e0, g.e1)
	return ns(d), err
}
