package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "graphs behind a host function" (issue #18, session 30): in SET-batch's
// timelines on an H200 a chunk graph launched while its stream's previous
// completion callback was pending (ring 2) runs 52-58 us longer on its
// stream than one launched after the callback returned (ring 1), and the
// gap grows with the chunk's branches. Session 24's "host functions before
// graphs" timed the host function's span, which ends with the record right
// after it: the work the callback thread releases first. Whether the graph
// behind it then starts late (the driver submitting a launch that waited
// behind a host function only once the function returns) is what this
// probe asks: on one stream behind an 80 us gate, a graph G timed by events
// just around it,
//
//	on an idle stream           G's launch issued under the gate
//	queued behind a host function
//	                            a no-op host function, then G, issued
//	                            under the gate: G waits behind the pending
//	                            function
//	launched once a host function's Put arrived
//	                            a host function that Puts; the host Gets,
//	                            then launches G (the function has not
//	                            returned yet: the record before G waits for
//	                            the stream's release, or passes at once)
//
// for G an empty kernel, b one-kernel branches, an empty kernel (b = 1, 4,
// 12), and SET-batch's chunk shape (a 1 MiB copy in, 12 branches, a 1 MiB
// copy out). Events just around G do not see a launch the driver holds
// back until the host function returns (the record before G is held with
// it), so each case is also timed from the gate's end to G's end (session
// 35): the host function's hand-off, then G, however it reached the GPU.
// Every round begins with an untimed host function, so that the callback
// thread's idle before the timed one is the gate's.
var (
	gbBranches = []int{1, 4, 12}
	gbCases    = []string{"on an idle stream", "queued behind a host function", "launched once a host function's Put arrived"}
)

// gbFromGateName is the name of a case's time from the gate's end to G's
// end.
func gbFromGateName(shape, cs string) string {
	return gbName(shape, cs) + ", from the gate's end"
}

const gbGate = 80 * time.Microsecond

// gbShapes are the probe's graphs.
func gbShapes() []gdShape {
	var out []gdShape
	for _, b := range gbBranches {
		out = append(out, gdShape{name: fmt.Sprintf("kernel, %d branches, kernel", b), head: "k", tail: "k", branches: b, perBranch: 1})
	}
	return append(out, gdShape{name: "1 MiB copy, 12 branches, 1 MiB copy", head: "c", tail: "c", branches: 12, perBranch: 1, copyBytes: gdChunk})
}

// gbName is a "graphs behind a host function" measurement's name.
func gbName(shape, cs string) string {
	return fmt.Sprintf("graph of %s, %s", shape, cs)
}

func (c *calibrator) graphsBehindCallbacks(h device.Host) error {
	env, err := c.newGDEnv(h, gdChunk)
	if err != nil {
		return err
	}
	g, err := newTimedStream(h)
	if err != nil {
		return err
	}
	gateEnd, err := h.NewEvent(device.EventOptions{})
	if err != nil {
		return err
	}
	done := h.NewQueue("graphs behind a host function")
	for _, sh := range gbShapes() {
		xs, err := c.uploadedExecs(h, env, 1, env.issue(h, sh))
		if err != nil {
			return fmt.Errorf("graphs behind a host function, %s: %w", sh.name, err)
		}
		x := xs[0]
		for _, cs := range gbCases {
			out, fromGate, err := c.gbRounds(h, g, x, gateEnd, done, cs)
			if err != nil {
				return fmt.Errorf("graphs behind a host function, %s, %s: %w", sh.name, cs, err)
			}
			c.record(gbName(sh.name, cs), "", "ns",
				"Elapsed of events just around the graph's launch on one stream behind an 80 us gate; median of the round", out)
			c.record(gbFromGateName(sh.name, cs), "", "ns",
				"Elapsed from an event recorded right after the gate (before the host function) to the one after the graph", fromGate)
		}
		if err := h.Destroy(x); err != nil {
			return err
		}
	}
	return nil
}

// gbRounds is, per round, the Elapsed around x's launch on g's stream in
// case cs, and from the gate's end (gateEnd) to x's end.
func (c *calibrator) gbRounds(h device.Host, g *timedStream, x device.GraphExec, gateEnd device.Event, done device.Queue, cs string) (out, fromGate []float64, err error) {
	err = c.warmRounds(func(measured bool) error {
		// An untimed host function first, so that the callback thread
		// idles only the gate's time before the timed one: after the
		// last round's graph and the gate it would be at its park
		// threshold (140-170 us; session 35's first timing had that).
		put := func() { done.Put(nil) }
		if _, err := hostFuncHandoff(h, g.s, done, put, nil, nil); err != nil {
			return err
		}
		if err := h.Launch(g.s, c.spinLaunch(gbGate, g.done)); err != nil {
			return err
		}
		if err := h.Record(gateEnd, g.s); err != nil {
			return err
		}
		switch cs {
		case gbCases[1]:
			if err := h.HostFunc(g.s, func() {}); err != nil {
				return err
			}
		case gbCases[2]:
			if _, err := hostFuncHandoff(h, g.s, done, put, nil, nil); err != nil {
				return err
			}
		}
		y, err := g.elapsed(h, func() error { return h.GraphLaunch(x, g.s) })
		if err != nil {
			return err
		}
		z, err := h.Elapsed(gateEnd, g.e1)
		if err != nil {
			return err
		}
		if measured {
			out, fromGate = append(out, y), append(fromGate, ns(z))
		}
		return nil
	})
	return out, fromGate, err
}
