package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// graphElapsed is Elapsed from an event recorded just before one launch
// of what build captures to one recorded after it, on c.
func graphElapsed(t *testing.T, c *Config, build func(h device.Host) (device.GraphExec, device.Stream)) time.Duration {
	t.Helper()
	d, err := New(c)
	require.NoError(t, err)
	var el time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		x, s := build(h)
		a, _ := h.NewEvent(device.EventOptions{})
		b, _ := h.NewEvent(device.EventOptions{})
		require.NoError(t, h.Record(a, s))
		require.NoError(t, h.GraphLaunch(x, s))
		require.NoError(t, h.Record(b, s))
		require.NoError(t, h.StreamSynchronize(s))
		el, err = h.Elapsed(a, b)
		return err
	}))
	return el
}

// withGraphDeviceCosts is the datasheet H100 with graph_copy_node_ns
// 3 us and graph_dispatch_ns 0.7 us.
func withGraphDeviceCosts(t *testing.T) *Config {
	c := h100Config(t)
	c.FrontEnd.GraphCopyNodeNs, c.FrontEnd.GraphDispatchNs = 3000, 700
	return c
}

// independentOf captures n independent 1 us kernels (n roots).
func independentOf(t *testing.T, h device.Host, n int) (device.GraphExec, device.Stream) {
	t.Helper()
	return fanOf(t, h, n, false, false)
}

func TestGraphDeviceCostsDelayCopyNodesAndForks(t *testing.T) {
	// Each shape's Elapsed with the two fields set, less without them
	// (the host's launch cost and everything else equal), hand-computed:
	for _, tc := range []struct {
		name  string
		build func(t *testing.T, h device.Host) (device.GraphExec, device.Stream)
		extra time.Duration
	}{
		// A chain of 8 kernels: no copy node, releases 1.5 us apart.
		{"chain of 8 kernels", func(t *testing.T, h device.Host) (device.GraphExec, device.Stream) {
			return graphOf(t, h, 8, 0, 0)
		}, 0},
		// Two copies, then 4 kernels, in one chain: 2 x 3 us.
		{"2 copies then 4 kernels", func(t *testing.T, h device.Host) (device.GraphExec, device.Stream) {
			return graphOf(t, h, 4, 2, 0)
		}, 6000 * time.Nanosecond},
		// A copy in, 8 kernels on 4 branches, a copy out (graph_node_ns
		// 0.5 us, 1 us kernels): each copy 3 us later; after the copy in
		// (at T) the 4 branches' heads are released at T, T+0.7, T+1.4,
		// T+2.1, their second nodes, ready at T+1.5 .. T+3.6, at T+2.8,
		// T+3.5, T+4.2, T+4.9 (0.7 us after the previous release), so
		// the last ends at T+5.9 rather than T+2.5: 3.4 us + 6 us.
		{"copy, 8 kernels on 4 branches, copy", func(t *testing.T, h device.Host) (device.GraphExec, device.Stream) {
			return forkJoinOf(t, h, 8, 4, true)
		}, 9400 * time.Nanosecond},
		// 5 independent kernels: 5 roots released 0.7 us apart, the
		// last 2.8 us after the first.
		{"5 roots", func(t *testing.T, h device.Host) (device.GraphExec, device.Stream) {
			return independentOf(t, h, 5)
		}, 2800 * time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func(h device.Host) (device.GraphExec, device.Stream) { return tc.build(t, h) }
			base := graphElapsed(t, h100Config(t), build)
			with := graphElapsed(t, withGraphDeviceCosts(t), build)
			assert.Equal(t, tc.extra, with-base)
			// Deterministic: the same run again gives the same time.
			assert.Equal(t, with, graphElapsed(t, withGraphDeviceCosts(t), build))
		})
	}
}

func TestGraphDeviceCostFieldsParseAndAreChecked(t *testing.T) {
	c := h100Config(t)
	assert.Zero(t, c.FrontEnd.GraphCopyNodeNs)
	assert.Zero(t, c.FrontEnd.GraphDispatchNs)
	out, err := withGraphDeviceCosts(t).Marshal()
	require.NoError(t, err)
	back, err := ParseConfig(out, "marshalled")
	require.NoError(t, err)
	assert.InDelta(t, 3000, back.FrontEnd.GraphCopyNodeNs, 0)
	assert.InDelta(t, 700, back.FrontEnd.GraphDispatchNs, 0)
	c.FrontEnd.GraphDispatchNs = -1
	_, err = New(c)
	assert.ErrorContains(t, err, "front_end.graph_dispatch_ns must not be negative")
}

// gatedPairElapsed is Elapsed around two launches of what build
// captures (twice), on two streams that both wait for one gate kernel, so
// that both start when it ends.
func gatedPairElapsed(t *testing.T, c *Config, build func(h device.Host) (device.GraphExec, device.Stream)) time.Duration {
	t.Helper()
	d, err := New(c)
	require.NoError(t, err)
	var el time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		x1, s1 := build(h)
		x2, s2 := build(h)
		g, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		a, _ := h.NewEvent(device.EventOptions{})
		open, _ := h.NewEvent(device.EventOptions{})
		b, _ := h.NewEvent(device.EventOptions{})
		require.NoError(t, h.Record(a, g))
		require.NoError(t, h.Launch(g, spinLaunch(1, 32, 50*time.Microsecond)))
		require.NoError(t, h.Record(open, g))
		for _, l := range []struct {
			x device.GraphExec
			s device.Stream
		}{{x1, s1}, {x2, s2}} {
			require.NoError(t, h.Wait(l.s, open))
			require.NoError(t, h.GraphLaunch(l.x, l.s))
			done, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
			require.NoError(t, h.Record(done, l.s))
			require.NoError(t, h.Wait(g, done))
		}
		require.NoError(t, h.Record(b, g))
		require.NoError(t, h.Synchronize())
		el, err = h.Elapsed(a, b)
		return err
	}))
	return el
}

// front_end.graph_branch_queue_ns: a launch alone (5 roots, one stream)
// costs nothing more; of two 5-root launches that start together behind
// a gate on two streams, the first releases its roots before the second
// runs (nothing else holds queues), the second while the first's 4 extra
// branches hold queues: its 5 roots (each begins a branch) are released
// 4 x 1 us apart, so the pair ends 16 us later. One hardware queue (every branch on the
// streams' queue) and chains (no branch beside the stream) cost nothing.
func TestGraphBranchQueuesSpaceReleasesBesideOtherLaunches(t *testing.T) {
	roots := func(h device.Host) (device.GraphExec, device.Stream) { return independentOf(t, h, 5) }
	chain := func(h device.Host) (device.GraphExec, device.Stream) { return graphOf(t, h, 5, 0, 0) }
	withBQ := func(queues int) *Config {
		c := h100Config(t)
		c.FrontEnd.GraphBranchQueueNs = 1000
		if queues > 0 {
			c.Info.HardwareQueues = queues
		}
		return c
	}
	assert.Equal(t, graphElapsed(t, h100Config(t), roots), graphElapsed(t, withBQ(0), roots), "one launch alone")
	base := gatedPairElapsed(t, h100Config(t), roots)
	assert.Equal(t, 16*time.Microsecond, gatedPairElapsed(t, withBQ(0), roots)-base)
	assert.Equal(t, gatedPairElapsed(t, withBQ(0), roots), gatedPairElapsed(t, withBQ(0), roots), "deterministic")
	one := h100Config(t)
	one.Info.HardwareQueues = 1
	assert.Equal(t, gatedPairElapsed(t, one, roots), gatedPairElapsed(t, withBQ(1), roots), "one queue")
	assert.Equal(t, gatedPairElapsed(t, h100Config(t), chain), gatedPairElapsed(t, withBQ(0), chain), "chains")

	assert.Zero(t, h100Config(t).FrontEnd.GraphBranchQueueNs, "left out of a config: none")
	out, err := withBQ(0).Marshal()
	require.NoError(t, err)
	back, err := ParseConfig(out, "marshalled")
	require.NoError(t, err)
	assert.InDelta(t, 1000, back.FrontEnd.GraphBranchQueueNs, 0)
	bad := h100Config(t)
	bad.FrontEnd.GraphBranchQueueNs = -1
	_, err = New(bad)
	assert.ErrorContains(t, err, "front_end.graph_branch_queue_ns must not be negative")
}

// front_end.graph_branch_queue_busy: only the branches the other launches
// have a node released on count. Of the same two 5-root launches gated
// together, the second's roots become ready at the gate's end, when none of
// the first's has been released yet: nothing more, where counting every
// branch they hold costs the 16 us above. (calibrate's "reached graphs'
// waiting branches" test reads the waiting case: branches waiting inside
// their graph never count.)
func TestGraphBranchQueueBusyCountsReleasedBranchesOnly(t *testing.T) {
	roots := func(h device.Host) (device.GraphExec, device.Stream) { return independentOf(t, h, 5) }
	with := func(busy bool) *Config {
		c := h100Config(t)
		c.FrontEnd.GraphBranchQueueNs, c.FrontEnd.GraphBranchQueueBusy = 1000, busy
		return c
	}
	base := gatedPairElapsed(t, h100Config(t), roots)
	assert.Equal(t, 16*time.Microsecond, gatedPairElapsed(t, with(false), roots)-base, "every branch held")
	assert.Equal(t, base, gatedPairElapsed(t, with(true), roots), "busy branches only")
	out, err := with(true).Marshal()
	require.NoError(t, err)
	back, err := ParseConfig(out, "marshalled")
	require.NoError(t, err)
	assert.True(t, back.FrontEnd.GraphBranchQueueBusy)
}

// branchHeads: the roots of a graph of several roots and the successors
// of a fork begin branches; a chain's later nodes and a join do not.
func TestBranchHeadsMarkRootsOfSeveralAndForkSuccessors(t *testing.T) {
	// 0 -> {1, 2}; 1 -> 3; 2 -> 4; {3, 4} -> 5: copy in, 2 branches of 2, copy out.
	succ := [][]int32{{1, 2}, {3}, {4}, {5}, {5}, nil}
	npred := []int32{0, 1, 1, 1, 1, 2}
	assert.Equal(t, []bool{false, true, true, false, false, false}, branchHeads(succ, npred))
	// Two independent chains 0 -> 1 and 2 -> 3: both roots begin a branch.
	assert.Equal(t, []bool{true, false, true, false}, branchHeads([][]int32{{1}, nil, {3}, nil}, []int32{0, 1, 0, 1}))
	// One chain: no branch begins.
	assert.Equal(t, []bool{false, false}, branchHeads([][]int32{{1}, nil}, []int32{0, 1}))
}
