package calibrate

import (
	"fmt"
	"math"

	"github.com/gpusched/gpusched/device"
)

// bigGraphShapes are the graphs of hundreds of nodes bigGraphs launches:
// nodes empty kernels in branches parallel chains.
var bigGraphShapes = []struct{ nodes, branches int }{
	{128, 1}, {128, 8}, {128, 32}, {512, 1}, {512, 8}, {512, 64},
}

const bigGraphLaunches = 20

// bigGraphs launches graphs of 128 and 512 empty kernels on 1 to 64
// parallel branches: the host cost of a launch (Host.Now around 20
// launches) and the device time per node along a branch (Elapsed of one
// launch, behind a gate, over the nodes per branch). It then fits the
// launch cost's fixed, per-branch and per-node terms to these graphs
// (least squares on relative error), to check the small graphs' fit
// (graphHostCosts) where the schedulers' graphs are.
func (c *calibrator) bigGraphs(h device.Host) error {
	ss, err := newStreamSet(h, 64)
	if err != nil {
		return err
	}
	le := c.emptyLaunch(1)
	var rows [][3]float64 // 1, branches, nodes
	var costs []float64   // median host cost per shape
	for _, sh := range bigGraphShapes {
		x, err := c.instantiate(h, ss.t.s, ss.chains(h, sh.branches, sh.nodes/sh.branches, le))
		if err != nil {
			return err
		}
		r, err := c.perCall(h, bigGraphLaunches, nil, func(int) error { return h.GraphLaunch(x, ss.t.s) }, ss.t.sync(h))
		if err != nil {
			return err
		}
		v := c.record(fmt.Sprintf("graph launch cost, %d nodes on %d branches", sh.nodes, sh.branches), "", "ns",
			"Host.Now around 20 launches of the graph (empty kernels in parallel chains)", r)
		rows, costs = append(rows, [3]float64{1, float64(sh.branches), float64(sh.nodes)}), append(costs, v)
		ys, err := c.gatedRounds(h, ss, 1, 1, func() error { return h.GraphLaunch(x, ss.t.s) })
		if err != nil {
			return err
		}
		dev := pick(ys, func(y float64) float64 { return y / float64(sh.nodes/sh.branches) })
		c.record(fmt.Sprintf("graph device time per node, %d nodes on %d branches", sh.nodes, sh.branches), "", "ns",
			"Elapsed of one launch behind a gate kernel, over the nodes per branch", dev)
		if err := h.Destroy(x); err != nil {
			return err
		}
	}
	c.fitGraphCosts(rows, costs)
	return nil
}

// chains issues, on the first branches streams, a chain of perBranch
// launches each, forked from and joined back into the origin.
func (ss *streamSet) chains(h device.Host, branches, perBranch int, l *device.Launch) func() error {
	return func() error {
		return ss.chainsOf(h, branches, func(st device.Stream) error {
			return chain(h, st, perBranch, func() *device.Launch { return l })()
		})
	}
}

func (t *timedStream) sync(h device.Host) func() error {
	return func() error { return h.StreamSynchronize(t.s) }
}

// fitGraphCosts fits cost = fixed + per branch x branches + per node x
// nodes to the big graphs (relative least squares) and records the three
// terms and the worst residual (reported: the config keeps the small
// graphs' fit; the check compares the two).
func (c *calibrator) fitGraphCosts(rows [][3]float64, costs []float64) {
	var a [3][4]float64
	for i, r := range rows {
		for p := 0; p < 3; p++ {
			for q := 0; q < 3; q++ {
				a[p][q] += r[p] * r[q] / (costs[i] * costs[i])
			}
			a[p][3] += r[p] / costs[i]
		}
	}
	m := make([][]float64, 3)
	for i := range m {
		m[i] = a[i][:]
	}
	sol, ok := solve(m)
	if !ok {
		c.report.Notes = append(c.report.Notes, "the big graphs' launch costs could not be fitted (singular)")
		return
	}
	worst := 0.0
	for i, r := range rows {
		worst = max(worst, math.Abs((sol[0]*r[0]+sol[1]*r[1]+sol[2]*r[2])/costs[i]-1))
	}
	for i, name := range []string{"fixed part", "per branch", "per kernel node"} {
		c.record("graph launch cost "+name+", graphs of 128-512 nodes", "", "ns",
			"least squares (relative) over the six big graphs' medians", []float64{sol[i]})
	}
	c.record("graph launch cost fit error, graphs of 128-512 nodes", "", "%",
		"the largest relative residual of that fit", []float64{100 * worst})
}
