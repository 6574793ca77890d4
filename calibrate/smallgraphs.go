package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "small graph builds" (issue #18, session 17): Graph-per-job (SET's
// baseline) captures, instantiates, launches, synchronizes and destroys a
// graph of one job (a 64 KiB copy in, a kernel, a copy out) per job. Its
// GPU traces (scripts/gpu/setgap.sh) show that job graph's instantiate at
// 8-9 us where the simulator charges 22 (instantiate_base_ns +
// instantiate_per_node_ns per node + instantiate_per_segment_ns, fitted on
// graphs of 8 to 512 kernels). This probe does graph-per-job's cycle on
// graphs of 1 to 16 empty kernels, of copies alone and of copies around
// kernels, each captured afresh every time, and reports each call's cost:
// how instantiate and destroy grow from a one-node graph, and what a copy
// node costs there beside a kernel node.
var smallGraphShapes = []string{"k", "kk", "kkkk", "kkkkkkkk", "kkkkkkkkkkkkkkkk", "c", "cc", "ckc", "ckkkkc"}

// smallGraphBytes is each copy's size: sobel-256 s128's jobs'.
const smallGraphBytes = 64 << 10

// smallGraphCycles is how many cycles a round times per shape (the round's
// figure is their mean).
const smallGraphCycles = 16

// smallGraphName is the name of a "small graph builds" measurement of the
// shape (k: an empty kernel, c: a 64 KiB copy, in then out) and the call.
func smallGraphName(shape, call string) string {
	return fmt.Sprintf("small graph %s: %s", shape, call)
}

// smallGraphCalls are the timed parts of one cycle, in order.
var smallGraphCalls = []string{"capture", "instantiate", "launch", "synchronize", "exec destroy", "graph destroy"}

func (c *calibrator) smallGraphBuilds(h device.Host) error {
	env, err := c.newGDEnv(h, smallGraphBytes)
	if err != nil {
		return err
	}
	s := env.ss.t.s
	for _, shape := range smallGraphShapes {
		issue := func() error { return smallGraphIssue(h, env, s, shape) }
		rounds := make([][]float64, len(smallGraphCalls))
		if err := c.warmRounds(func(measured bool) error {
			sums := make([]float64, len(smallGraphCalls))
			for i := 0; i < smallGraphCycles; i++ {
				d, err := smallGraphCycle(h, s, issue)
				if err != nil {
					return fmt.Errorf("small graph %s: %w", shape, err)
				}
				for j, v := range d {
					sums[j] += ns(v)
				}
			}
			if measured {
				for j := range sums {
					rounds[j] = append(rounds[j], sums[j]/smallGraphCycles)
				}
			}
			return nil
		}); err != nil {
			return err
		}
		for j, call := range smallGraphCalls {
			c.record(smallGraphName(shape, call), "", "ns",
				fmt.Sprintf("Host.Now around it in graph-per-job's cycle (capture, instantiate, launch, synchronize, destroy), a fresh capture each time, mean of %d cycles", smallGraphCycles),
				rounds[j])
		}
	}
	return nil
}

// smallGraphIssue issues shape on s: k an empty kernel, c a copy (host to
// device first, then device to host, alternating).
func smallGraphIssue(h device.Host, env *gdEnv, s device.Stream, shape string) error {
	copies := 0
	for _, r := range shape {
		var err error
		switch r {
		case 'k':
			err = h.Launch(s, env.le)
		case 'c':
			kind := device.HostToDevice
			if copies%2 == 1 {
				kind = device.DeviceToHost
			}
			copies++
			err = h.Copy(s, env.copy(kind, smallGraphBytes))
		default:
			err = fmt.Errorf("shape %q: %q is neither k nor c", shape, r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// smallGraphCycle is one graph-per-job cycle of what issue issues on s,
// each part timed with Host.Now (smallGraphCalls' order).
func smallGraphCycle(h device.Host, s device.Stream, issue func() error) ([]time.Duration, error) {
	d := make([]time.Duration, 0, len(smallGraphCalls))
	t := h.Now()
	lap := func() {
		now := h.Now()
		d = append(d, now-t)
		t = now
	}
	g, err := capture(h, s, issue)
	if err != nil {
		return nil, err
	}
	lap()
	x, err := h.Instantiate(g)
	if err != nil {
		return nil, err
	}
	lap()
	if err := h.GraphLaunch(x, s); err != nil {
		return nil, err
	}
	lap()
	if err := h.StreamSynchronize(s); err != nil {
		return nil, err
	}
	lap()
	if err := h.Destroy(x); err != nil {
		return nil, err
	}
	lap()
	if err := h.Destroy(g); err != nil {
		return nil, err
	}
	lap()
	return d, nil
}
