package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "reached graphs' waiting branches" (issue #18, session 30): on four
// workers SET-batch's 12-branch chunk graphs run 138-366 us each on an H200
// (the CUDA backend's timelines, session 30) where the simulator runs them
// in 64-102, and the copy engines run concurrent copies in turn on both
// ("copies at once, each timed"). Session 29's "queued graphs' branches"
// found that a launch waiting behind its stream's work holds up nothing;
// but there the waiting launch had not been reached. A chunk graph is
// reached at once, and its branches then wait inside the graph, for its
// batched copy in, which waits for the other chunks' copies. If the driver
// puts a reached graph's branches on the hardware queues it shares with
// every other stream and graph, a branch waiting there holds up whatever is
// queued behind it. This probe asks directly: graph A, reached at once on a
// stream of its own (a head, then a branches of two empty kernels, joined
// by an empty kernel), its head a 200 us spin kernel or an 8 MiB pinned
// copy in; then, behind an 80 us gate on another stream, a graph G of b
// branches (as in "queued graphs' branches"), timed by events around it.
// If A's waiting branches hold up G's, G's time rises toward A's head's
// end (about 120 us after G starts) with a and b.
var (
	rbGBranches = []int{1, 4, 16}
	rbABranches = []int{1, 4, 16}
	rbHeads     = []string{"a 200 us kernel", "an 8 MiB copy in"}
)

// rbBlock is A's spin head; rbCopy A's copy head's bytes (about 150 us at
// an H100's or H200's 55 GB/s).
const (
	rbBlock = 200 * time.Microsecond
	rbCopy  = 8 << 20
)

// rbName is a "reached graphs' waiting branches" measurement's name; a is
// 0 for G alone.
func rbName(b, a int, head string) string {
	if a == 0 {
		return fmt.Sprintf("graph G of %d branches alone", b)
	}
	return fmt.Sprintf("graph G of %d branches beside a reached graph of %d branches waiting on %s", b, a, head)
}

// rbEnv is the probe's streams and graphs: G's timed stream, A's stream,
// G's exec per width and A's per head and width.
type rbEnv struct {
	env   *gdEnv
	g     *timedStream
	a     device.Stream
	aDone device.Buffer // A's spin head's counter (G's gate has g.done)
	gx    map[int]device.GraphExec
	ax    map[string]map[int]device.GraphExec
}

func (c *calibrator) reachedBranches(h device.Host) error {
	env, err := c.newGDEnv(h, rbCopy)
	if err != nil {
		return err
	}
	q := &rbEnv{env: env, gx: map[int]device.GraphExec{}, ax: map[string]map[int]device.GraphExec{}}
	if q.g, err = newTimedStream(h); err != nil {
		return err
	}
	if q.a, err = h.NewStream(device.StreamOptions{}); err != nil {
		return err
	}
	if q.aDone, err = h.Malloc(4); err != nil {
		return err
	}
	if err := c.rbExecs(h, q); err != nil {
		return err
	}
	for _, b := range rbGBranches {
		if err := c.rbRecord(h, q, b, 0, ""); err != nil {
			return err
		}
		for _, head := range rbHeads {
			for _, a := range rbABranches {
				if err := c.rbRecord(h, q, b, a, head); err != nil {
					return err
				}
			}
		}
	}
	var all []device.GraphExec
	for _, x := range q.gx {
		all = append(all, x)
	}
	for _, m := range q.ax {
		for _, x := range m {
			all = append(all, x)
		}
	}
	return destroyExecs(h, all)
}

// rbExecs instantiates G of every width and A of every head and width,
// and launches each once (the first launch uploads it).
func (c *calibrator) rbExecs(h device.Host, q *rbEnv) error {
	one := func(issue func() error) (device.GraphExec, error) {
		xs, err := c.uploadedExecs(h, q.env, 1, issue)
		if err != nil {
			return nil, err
		}
		return xs[0], nil
	}
	for _, b := range rbGBranches {
		x, err := one(q.env.issue(h, qbShape(b)))
		if err != nil {
			return fmt.Errorf("reached graphs' waiting branches, G of %d branches: %w", b, err)
		}
		q.gx[b] = x
	}
	for _, head := range rbHeads {
		q.ax[head] = map[int]device.GraphExec{}
		for _, a := range rbABranches {
			x, err := one(c.rbIssueA(h, q, head, a))
			if err != nil {
				return fmt.Errorf("reached graphs' waiting branches, A of %d branches on %s: %w", a, head, err)
			}
			q.ax[head][a] = x
		}
	}
	return nil
}

// rbIssueA captures A on the stream set's origin: its head, a branches of
// two empty kernels, an empty kernel joining them.
func (c *calibrator) rbIssueA(h device.Host, q *rbEnv, head string, a int) func() error {
	env := q.env
	s := env.ss.t.s
	return func() error {
		var err error
		if head == rbHeads[0] {
			err = h.Launch(s, c.spinLaunch(rbBlock, q.aDone))
		} else {
			err = h.Copy(s, env.copy(device.HostToDevice, rbCopy))
		}
		if err != nil {
			return err
		}
		two := gdShape{perBranch: 2}
		if err := env.ss.chainsOf(h, a, func(st device.Stream) error { return env.branch(h, st, two) }); err != nil {
			return err
		}
		return h.Launch(s, env.le)
	}
}

// rbRecord measures and records G of b branches beside A (a branches
// waiting on head; a = 0: G alone).
func (c *calibrator) rbRecord(h device.Host, q *rbEnv, b, a int, head string) error {
	var out []float64
	err := c.warmRounds(func(measured bool) error {
		if a > 0 {
			if err := h.GraphLaunch(q.ax[head][a], q.a); err != nil {
				return err
			}
		}
		y, err := c.qbTime(h, q.g, q.gx[b], false, nil)
		if err != nil {
			return err
		}
		if measured {
			out = append(out, y)
		}
		return h.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("reached graphs' waiting branches, %s: %w", rbName(b, a, head), err)
	}
	method := fmt.Sprintf("Elapsed of events around G's launch on its own stream (an empty kernel, %d chains of two empty kernels, an empty kernel) behind an 80 us gate", b)
	if a > 0 {
		method += fmt.Sprintf(", launched after graph A (%s, %d chains of two empty kernels, an empty kernel) on another, idle stream", head, a)
	}
	c.record(rbName(b, a, head), "", "ns", method, out)
	return nil
}
