package portfolio

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/dnn"
	"github.com/gpusched/gpusched/workloads/rl"
)

// live counts what a host's callers hold: streams, events, graphs, execs,
// device and host allocations, and host threads still running.
type live struct {
	mu  sync.Mutex
	n   map[string]int
	res map[device.Resource]string // each resource's kind: Graph and GraphExec have one method set
}

func newLive() *live { return &live{n: map[string]int{}, res: map[device.Resource]string{}} }

func (l *live) made(r device.Resource, kind string) {
	l.mu.Lock()
	l.res[r] = kind
	l.mu.Unlock()
	l.add(kind, 1)
}

func (l *live) destroyed(r device.Resource) {
	l.mu.Lock()
	kind, ok := l.res[r]
	delete(l.res, r)
	l.mu.Unlock()
	if !ok {
		kind = fmt.Sprintf("%T not made here", r)
	}
	l.add(kind, -1)
}

func (l *live) add(kind string, d int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n[kind] += d
	if l.n[kind] == 0 {
		delete(l.n, kind)
	}
}

func (l *live) snapshot() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.n {
		out[k] = v
	}
	return out
}

// counting is a Host that counts what is created and released through it
// (and through the host threads it starts).
type counting struct {
	device.Host
	info device.Info
	l    *live
}

func (c counting) DeviceInfo() device.Info { return c.info }

func (c counting) Go(name string, fn func(device.Host) error) {
	c.l.add("threads", 1)
	c.Host.Go(name, func(h device.Host) error {
		defer c.l.add("threads", -1)
		return fn(counting{Host: h, info: c.info, l: c.l})
	})
}

func (c counting) Malloc(n int64) (device.Buffer, error) {
	b, err := c.Host.Malloc(n)
	if err == nil {
		c.l.add("buffers", 1)
	}
	return b, err
}

func (c counting) Free(b device.Buffer) error { c.l.add("buffers", -1); return c.Host.Free(b) }

func (c counting) AllocHost(n int64, pinned bool) (*device.HostMem, error) {
	m, err := c.Host.AllocHost(n, pinned)
	if err == nil {
		c.l.add("host memory", 1)
	}
	return m, err
}

func (c counting) FreeHost(m *device.HostMem) error {
	c.l.add("host memory", -1)
	return c.Host.FreeHost(m)
}

func (c counting) NewStream(o device.StreamOptions) (device.Stream, error) {
	s, err := c.Host.NewStream(o)
	if err == nil {
		c.l.made(s, "streams")
	}
	return s, err
}

func (c counting) NewEvent(o device.EventOptions) (device.Event, error) {
	e, err := c.Host.NewEvent(o)
	if err == nil {
		c.l.made(e, "events")
	}
	return e, err
}

func (c counting) EndCapture(s device.Stream) (device.Graph, error) {
	g, err := c.Host.EndCapture(s)
	if err == nil && g != nil {
		c.l.made(g, "graphs")
	}
	return g, err
}

func (c counting) Instantiate(g device.Graph) (device.GraphExec, error) {
	x, err := c.Host.Instantiate(g)
	if err == nil {
		c.l.made(x, "graph execs")
	}
	return x, err
}

func (c counting) Destroy(r device.Resource) error {
	c.l.destroyed(r)
	return c.Host.Destroy(r)
}

// TestTheCheckLeavesOnlyThePick: after a Prepare that checks every
// candidate on the device (each prepared, run and released, AutoGraph's
// and IOS's searches, ACS-SW's scheduler threads, SET's workers and
// pinned slots among them), the device holds exactly what the bare pick
// holds after its own Prepare: no stream, event, graph, exec, allocation
// or host thread of a candidate it did not pick outlives the check, to
// share the host or the device with the pick's timed runs. After Cleanup,
// nothing.
func TestTheCheckLeavesOnlyThePick(t *testing.T) {
	rlp := rl.DefaultParams()
	rlp.Env, rlp.Envs, rlp.EnvsPerGroup, rlp.Steps, rlp.Warmup, rlp.Iterations = "ant", 32, 16, 2, 2, 1
	ant, err := rl.Generate(rlp, 1)
	require.NoError(t, err)
	dp := dnn.DefaultDynamic("routing")
	dp.Inputs, dp.Scale = 2, 8
	routing, err := dnn.Dynamic(dp, 1)
	require.NoError(t, err)
	for _, prog := range []*workloads.Program{program(t), ant, routing} {
		t.Run(prog.Name, func(t *testing.T) { checkLeavesOnlyThePick(t, prog) })
	}
}

func checkLeavesOnlyThePick(t *testing.T, prog *workloads.Program) {
	p, err := New(Options{Model: "test", Finalists: 64, Check: 2, Margin: 10}, models(&simModel{}), nil)
	require.NoError(t, err)
	var afterPortfolio, afterBare, afterCleanup map[string]int
	onH100(t, prog, func(h device.Host, in *workloads.Instance) {
		info := h.(device.InfoHost).DeviceInfo()
		l := newLive()
		ch := counting{Host: h, info: info, l: l}
		require.NoError(t, p.Prepare(ch, in))
		require.GreaterOrEqual(t, p.Stats()["finalists"], 11.0, "every candidate predicted within 11x of the best checked")
		afterPortfolio = l.snapshot()
		require.NoError(t, sched.Warm(ch, p, in))
		require.NoError(t, p.Cleanup(ch))
		afterCleanup = l.snapshot()

		bare, err := Build(prog, sched.DeviceTraits(ch), p.Picked())
		require.NoError(t, err)
		l2 := newLive()
		bh := counting{Host: h, info: info, l: l2}
		require.NoError(t, prepare(bh, in, bare))
		afterBare = l2.snapshot()
		require.NoError(t, cleanup(bh, bare))
	})
	assert.Equal(t, afterBare, afterPortfolio, "live after the portfolio's Prepare (pick %s) against the bare pick's", p.Picked())
	assert.Empty(t, afterCleanup)
}
