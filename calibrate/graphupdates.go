package calibrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "graph exec updates" (issue #18): ACS-SW's graph dispatch updates the
// kernel nodes of a cached exec (cuGraphExecKernelNodeSetParams) and
// launches it, and its graph rows are simulated 25-33% fast. This probe
// times the updates and the launch right after them on execs of N = 1..64
// kernel nodes captured over N streams (N independent nodes), 16 steps a
// round, the stream synchronized between steps unless the case says:
//
//   - empty, dnn, rl: every node updated to another grid (alternating
//     between two) of cal_empty (no argument), synth_node (12 arguments;
//     "dnn": the models' many-argument kernels) or cal_spin of 0 us (2
//     arguments; "rl");
//   - dnn kernel change: every node alternating between synth_node and
//     cal_empty;
//   - dnn one node: node 0 alone updated; dnn no update: the launch alone;
//   - dnn arguments only: every node's output buffer changed, its grid
//     kept;
//   - dnn behind, dnn kernel change behind: the steps queued behind a 2 ms
//     spin kernel, not synchronized (the exec's earlier launches pending);
//   - spin running: each node a 5 us spin whose duration argument changes
//     (5000 <-> 5001 ns), not synchronized (the exec's previous launch
//     running at the update);
//   - copy: N 4-byte pinned host-to-device copy nodes, each updated to
//     another destination.
//
// Session 18 ran the same case names on its lost branch
// (docs/results/raw/acsgraph-*.tgz); its "dnn" and "rl" kernels and its
// spin running's update are not known beyond the method strings, and the
// two last cases are new.
var guSizes = []int{1, 4, 8, 16, 32, 64}

const (
	guSteps  = 16
	guSpinUs = 5    // spin running's node length
	guLeadUs = 2000 // the spin kernel the "behind" steps queue behind
)

type guSync int

const (
	guSynced  guSync = iota // the stream synchronized between steps
	guBehind                // queued behind a spin kernel
	guRunning               // not synchronized, nothing in front
)

// guCase is one case: the node launches of the two alternating states
// (nil: a copy-node case), which nodes are updated, and how steps follow
// one another.
type guCase struct {
	name   string
	states func(i int) [2]*device.Launch // node i's launch before and after an update
	one    bool                          // update node 0 alone
	none   bool                          // no update
	copies bool
	sync   guSync
}

// guEnv is what every case needs: the streams, the synth_node launches'
// buffers, the spin kernels' done buffer, the copy nodes' memory.
type guEnv struct {
	ss       *streamSet
	evs      []device.Event
	synth    [2]*device.Launch // synth_node into two output buffers
	dst      [2]device.Buffer
	host     *device.HostMem
	spinDone device.Buffer
	leadSpin *device.Launch
}

func (c *calibrator) newGUEnv(h device.Host) (*guEnv, error) {
	maxS := guSizes[len(guSizes)-1]
	ss, evs, err := newStreamsAndEvents(h, maxS, maxS)
	if err != nil {
		return nil, err
	}
	ls, err := newSynthLaunches(h, synthChain, 2)
	if err != nil {
		return nil, err
	}
	env := &guEnv{ss: ss, evs: evs, synth: [2]*device.Launch{ls[0], ls[1]}, spinDone: ss.t.done}
	for i := range env.dst {
		if env.dst[i], err = h.Malloc(4); err != nil {
			return nil, err
		}
	}
	if env.host, err = h.AllocHost(4, true); err != nil {
		return nil, err
	}
	env.leadSpin = c.spinLaunch(guLeadUs*time.Microsecond, ss.t.done)
	return env, nil
}

// withGrid is a copy of l with a grid of blocks.
func withGrid(l *device.Launch, blocks int) *device.Launch {
	m := *l
	m.Grid = device.D1(blocks)
	return &m
}

func (c *calibrator) guCases(env *guEnv) []guCase {
	s := env.synth[0]
	half := s.Grid.X / 2
	dnn := func(int) [2]*device.Launch { return [2]*device.Launch{s, withGrid(s, half)} }
	empty := func(int) [2]*device.Launch { return [2]*device.Launch{c.emptyLaunch(1), c.emptyLaunch(2)} }
	rl := func(int) [2]*device.Launch {
		l := c.spinLaunch(0, env.spinDone)
		return [2]*device.Launch{l, withGrid(l, 2)}
	}
	kchg := func(int) [2]*device.Launch { return [2]*device.Launch{s, c.emptyLaunch(2)} }
	args := func(int) [2]*device.Launch { return [2]*device.Launch{env.synth[0], env.synth[1]} }
	spin := func(int) [2]*device.Launch {
		return [2]*device.Launch{c.spinLaunch(guSpinUs*time.Microsecond, env.spinDone), c.spinLaunch(guSpinUs*time.Microsecond+time.Nanosecond, env.spinDone)}
	}
	return []guCase{
		{name: "empty", states: empty},
		{name: "dnn", states: dnn},
		{name: "rl", states: rl},
		{name: "dnn kernel change", states: kchg},
		{name: "dnn one node", states: dnn, one: true},
		{name: "dnn no update", states: dnn, none: true},
		{name: "dnn arguments only", states: args},
		{name: "dnn behind", states: dnn, sync: guBehind},
		{name: "dnn kernel change behind", states: kchg, sync: guBehind},
		{name: "spin running", states: spin, sync: guRunning},
		{name: "copy", copies: true},
	}
}

// guExec captures n independent nodes over n streams (node i on stream i,
// forked from and joined back to stream 0) and instantiates them.
func (c *calibrator) guExec(h device.Host, env *guEnv, k guCase, n int) (device.GraphExec, error) {
	ss := env.ss
	return c.instantiate(h, ss.t.s, func() error {
		if n > 1 {
			if err := h.Record(ss.fork, ss.stream(0)); err != nil {
				return err
			}
		}
		for i := 0; i < n; i++ {
			st := ss.stream(i)
			if i > 0 {
				if err := h.Wait(st, ss.fork); err != nil {
					return err
				}
			}
			var err error
			if k.copies {
				err = h.Copy(st, guCopy(env, 0))
			} else {
				err = h.Launch(st, k.states(i)[0])
			}
			if err != nil {
				return err
			}
		}
		return joinSides(h, ss, env.evs, n)
	})
}

func guCopy(env *guEnv, j int) *device.Copy {
	return &device.Copy{Kind: device.HostToDevice, Dst: env.dst[j%2], Host: env.host, Bytes: 4}
}

// guRound is one round of a case: 16 steps of updates then a launch; the
// update time per updated node and the launch time per launch.
func (c *calibrator) guRound(h device.Host, env *guEnv, x device.GraphExec, k guCase, n int) (upd, launch float64, err error) {
	s := env.ss.t.s
	if k.sync == guBehind {
		if err := h.Launch(s, env.leadSpin); err != nil {
			return 0, 0, err
		}
	}
	var u, l time.Duration
	updates := 0
	for step := 1; step <= guSteps; step++ {
		t0 := h.Now()
		for i := 0; i < n && !k.none; i++ {
			if k.one && i > 0 {
				break
			}
			if k.copies {
				err = h.SetCopyNode(x, i, guCopy(env, step))
			} else {
				err = h.SetKernelNode(x, i, k.states(i)[step%2])
			}
			if err != nil {
				return 0, 0, err
			}
			updates++
		}
		t1 := h.Now()
		if err := h.GraphLaunch(x, s); err != nil {
			return 0, 0, err
		}
		u += t1 - t0
		l += h.Now() - t1
		if k.sync == guSynced {
			if err := h.StreamSynchronize(s); err != nil {
				return 0, 0, err
			}
		}
	}
	if k.sync != guSynced {
		if err := h.StreamSynchronize(s); err != nil {
			return 0, 0, err
		}
	}
	if updates > 0 {
		upd = ns(u) / float64(updates)
	}
	return upd, ns(l) / guSteps, nil
}

func (k guCase) method(n int) string {
	updated := n
	switch {
	case k.none:
		updated = 0
	case k.one:
		updated = 1
	}
	what := "nodes"
	if k.copies {
		what = "copy nodes"
	}
	m := fmt.Sprintf("Host.Now around each call of %d steps (update %d of the %d %s of an exec captured over %d streams, then launch it), ", guSteps, updated, n, what, n)
	switch k.sync {
	case guBehind:
		return m + "queued behind a spin kernel (the exec's earlier launches pending)"
	case guRunning:
		return m + "not synchronized (the exec's previous launch running)"
	}
	return m + "the stream synchronized between steps"
}

// graphExecUpdates measures every case at every size (reported, no config
// field: scripts/fit-graph-updates.py fits host.graph_launch_changed_node_ns
// and graph_launch_kernel_change_ns on the raw report).
func (c *calibrator) graphExecUpdates(h device.Host) error {
	env, err := c.newGUEnv(h)
	if err != nil {
		return err
	}
	cases := c.guCases(env)
	for _, n := range guSizes {
		for _, k := range cases {
			x, err := c.guExec(h, env, k, n)
			if err != nil {
				return fmt.Errorf("graph exec updates N=%d %s: %w", n, k.name, err)
			}
			var us, ls []float64
			err = c.warmRounds(func(measured bool) error {
				u, l, err := c.guRound(h, env, x, k, n)
				if measured {
					us, ls = append(us, u), append(ls, l)
				}
				return err
			})
			if err = errors.Join(err, h.Destroy(x)); err != nil {
				return fmt.Errorf("graph exec updates N=%d %s: %w", n, k.name, err)
			}
			what := fmt.Sprintf("graph exec updates N=%d %s", n, k.name)
			c.record(what+": update per node", "", "ns", k.method(n)+": mean per update", us)
			c.record(what+": launch", "", "ns", k.method(n)+": mean per launch", ls)
		}
	}
	return nil
}
