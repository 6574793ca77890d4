package calibrate

import (
	"time"

	"github.com/gpusched/gpusched/device"
)

// graphWidth is the width of the wider graph graphHostCosts launches.
const graphWidth = 8

// launchGraphs are the graphs whose launch costs graphHostCosts fits: 1
// and graphWidth independent empty kernels (the shape of ACS-SW's
// dispatch graph: every node forked from the origin stream and joined
// back), a chain of graphWidth empty kernels (one branch: it tells the
// per-branch cost from the per-kernel one), and two 4-byte pinned copies
// in a chain (one branch).
type launchGraphs struct {
	one, wide, chain, copies device.GraphExec
	side                     []device.Stream
	fork, join               device.Event
}

// graphHostCosts measures cuGraphLaunch's host cost (a fixed part, per
// parallel branch, per kernel node and per copy node) and the node
// updates' (keeping and changing the kernel, and what a kernel change adds
// to the next launch).
func (c *calibrator) graphHostCosts(env *hostEnv) error {
	g, err := c.buildLaunchGraphs(env)
	if err != nil {
		return err
	}
	if err := c.graphLaunchCosts(env, g); err != nil {
		return err
	}
	if err := c.graphUpdateCosts(env, g.one); err != nil {
		return err
	}
	return g.destroy(env.h)
}

func (c *calibrator) buildLaunchGraphs(env *hostEnv) (*launchGraphs, error) {
	h, s := env.h, env.s
	g := &launchGraphs{}
	for i := 1; i < graphWidth; i++ {
		st, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, err
		}
		g.side = append(g.side, st)
	}
	var err error
	if g.fork, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
		return nil, err
	}
	if g.join, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
		return nil, err
	}
	if g.one, err = c.instantiate(h, s, forkJoin(h, s, g.side[:0], g.fork, g.join, env.le)); err != nil {
		return nil, err
	}
	if g.wide, err = c.instantiate(h, s, forkJoin(h, s, g.side, g.fork, g.join, env.le)); err != nil {
		return nil, err
	}
	if g.chain, err = c.instantiateChain(h, s, graphWidth, func() *device.Launch { return env.le }); err != nil {
		return nil, err
	}
	g.copies, err = c.instantiate(h, s, func() error {
		if err := h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: env.dbuf, Host: env.pin, Bytes: 4}); err != nil {
			return err
		}
		return h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: env.dbuf, Host: env.pin, Bytes: 4})
	})
	return g, err
}

// forkJoin issues l on s and on every side stream, each forked from s by
// fork and joined back into s by join.
func forkJoin(h device.Host, s device.Stream, side []device.Stream, fork, join device.Event, l *device.Launch) func() error {
	return func() error {
		if err := h.Record(fork, s); err != nil {
			return err
		}
		if err := h.Launch(s, l); err != nil {
			return err
		}
		return sideLaunches(h, s, side, fork, join, l)
	}
}

// sideLaunches issues l on every side stream, each after fork (recorded
// on s) and joined back into s by join (a wait binds to the record just
// before it, so one event joins every side).
func sideLaunches(h device.Host, s device.Stream, side []device.Stream, fork, join device.Event, l *device.Launch) error {
	return sideIssues(h, s, side, fork, join, func(_ int, st device.Stream) error { return h.Launch(st, l) })
}

// sideIssues is sideLaunches with issue(i, side[i]) for each side's work.
func sideIssues(h device.Host, s device.Stream, side []device.Stream, fork, join device.Event, issue func(i int, st device.Stream) error) error {
	for i, st := range side {
		if err := h.Wait(st, fork); err != nil {
			return err
		}
		if err := issue(i, st); err != nil {
			return err
		}
		if err := h.Record(join, st); err != nil {
			return err
		}
		if err := h.Wait(s, join); err != nil {
			return err
		}
	}
	return nil
}

func (g *launchGraphs) destroy(h device.Host) error {
	for _, x := range []device.GraphExec{g.one, g.wide, g.chain, g.copies} {
		if err := h.Destroy(x); err != nil {
			return err
		}
	}
	for _, st := range g.side {
		if err := h.Destroy(st); err != nil {
			return err
		}
	}
	if err := h.Destroy(g.fork); err != nil {
		return err
	}
	return h.Destroy(g.join)
}

// graphLaunchCosts fits the four launch cost terms to the four graphs.
func (c *calibrator) graphLaunchCosts(env *hostEnv, g *launchGraphs) error {
	var runs [4][]float64 // per-launch costs of one, wide, chain and copies, per round
	for i, x := range []device.GraphExec{g.one, g.wide, g.chain, g.copies} {
		var err error
		if runs[i], err = c.perCall(env.h, batch, nil, func(int) error { return env.h.GraphLaunch(x, env.s) }, env.sync); err != nil {
			return err
		}
	}
	// With F fixed, B per branch, N per kernel node and C per copy node:
	// one = F + B + N, wide = F + w(B + N), chain = F + B + wN, copies = F + B + 2C.
	r1, rw, rk, rc := runs[0], runs[1], runs[2], runs[3]
	var base, branch, node, cp []float64
	for i := range r1 {
		n := (rk[i] - r1[i]) / (graphWidth - 1)
		b := (rw[i]-r1[i])/(graphWidth-1) - n
		f := r1[i] - b - n
		node = append(node, n)
		branch = append(branch, b)
		base = append(base, f)
		cp = append(cp, (rc[i]-f-b)/2)
	}
	graphLaunchNs := c.record("graph launch cost, fixed part", "host.graph_launch_ns", "ns",
		"Host.Now around 100 launches each of graphs of 1 and 8 independent empty kernels and of a chain of 8: intercept", base)
	graphBranchNs := c.record("graph launch cost per branch", "host.graph_launch_branch_ns", "ns",
		"the same: slope per independent node, less the chain's slope per node", branch)
	c.graphNodeNs = c.record("graph launch cost per kernel node", "host.graph_launch_node_ns", "ns", "the same: the chain's slope per node", node)
	c.graphChainNs = graphLaunchNs + graphBranchNs
	c.record("graph launch cost per copy node", "host.graph_launch_copy_node_ns", "ns",
		"Host.Now around 100 launches of a graph of two 4-byte pinned copies (one branch), less the fixed and branch parts, halved", cp)
	return nil
}

// graphUpdateCosts times updates of the one-node graph's node, each
// followed by a launch, as schedulers do: keeping its kernel (cal_empty
// with another grid every call), and changing it every call (cal_empty <->
// cal_spin).
func (c *calibrator) graphUpdateCosts(env *hostEnv, x device.GraphExec) error {
	keep := [2]*device.Launch{env.le, c.emptyLaunch(2)}
	change := [2]*device.Launch{c.spinLaunch(0, env.dbuf), env.le}
	ku, kl, err := c.updateAndLaunch(env, x, keep)
	if err != nil {
		return err
	}
	cu, cl, err := c.updateAndLaunch(env, x, change)
	if err != nil {
		return err
	}
	var du, dl []float64
	for i := range ku {
		du = append(du, cu[i]-ku[i])
		dl = append(dl, cl[i]-kl[i])
	}
	c.record("graph node update cost", "host.set_node_ns", "ns",
		"Host.Now around 100 cuGraphExecKernelNodeSetParams keeping the kernel, each followed by a launch of the one-node graph", ku)
	c.record("graph node update, kernel change", "host.set_node_kernel_change_ns", "ns",
		"the same, changing the kernel every call (cal_empty <-> cal_spin), less the update keeping it", du)
	c.record("graph launch after a kernel change", "host.graph_launch_kernel_change_ns", "ns",
		"the launches after those updates, less the launches after the updates keeping the kernel", dl)
	return nil
}

// updateAndLaunch alternates node 0 of x between the two launches, each
// update followed by a launch, and returns the per-call update and launch
// costs, per round.
func (c *calibrator) updateAndLaunch(env *hostEnv, x device.GraphExec, ls [2]*device.Launch) (upd, launch []float64, err error) {
	h := env.h
	if err := c.warmRounds(func(measured bool) error {
		var u, l time.Duration
		for i := 0; i < batch; i++ {
			t0 := h.Now()
			if err := h.SetKernelNode(x, 0, ls[i%2]); err != nil {
				return err
			}
			t1 := h.Now()
			if err := h.GraphLaunch(x, env.s); err != nil {
				return err
			}
			u += t1 - t0
			l += h.Now() - t1
		}
		if err := env.sync(); err != nil {
			return err
		}
		if measured {
			upd = append(upd, ns(u)/batch)
			launch = append(launch, ns(l)/batch)
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return upd, launch, nil
}
