package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// succOf builds successor lists of n nodes from edges u->v.
func succOf(n int, edges ...[2]int32) [][]int32 {
	succ := make([][]int32, n)
	for _, e := range edges {
		succ[e[0]] = append(succ[e[0]], e[1])
	}
	return succ
}

func TestDagWidthIsTheMinimumChainCover(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		edges [][2]int32
		want  int
	}{
		{"empty", 0, nil, 0},
		{"single node", 1, nil, 1},
		{"chain of 4", 4, [][2]int32{{0, 1}, {1, 2}, {2, 3}}, 1},
		{"chain of 4 numbered backwards", 4, [][2]int32{{3, 2}, {2, 1}, {1, 0}}, 1},
		{"5 independent nodes", 5, nil, 5},
		// 0 -> 1, 2 -> 3.
		{"diamond", 4, [][2]int32{{0, 1}, {0, 2}, {1, 3}, {2, 3}}, 2},
		// 0 forks into 3 chains of 2 (1-2, 3-4, 5-6), joined into 7.
		{"fork/join of 3 chains", 8, [][2]int32{
			{0, 1}, {1, 2}, {2, 7}, {0, 3}, {3, 4}, {4, 7}, {0, 5}, {5, 6}, {6, 7}}, 3},
		{"two independent chains", 6, [][2]int32{{0, 1}, {1, 2}, {3, 4}, {4, 5}}, 2},
		// 0 and 1 join into 2, which forks into 3 and 4: two chains
		// (0-2-3, 1-4 through 2's order), not the three vertex-disjoint
		// paths a cover without the transitive closure would need.
		{"butterfly", 5, [][2]int32{{0, 2}, {1, 2}, {2, 3}, {2, 4}}, 2},
		// 0 -> 1, 0 -> 2, 3 -> 1: the greedy start matches 0 with 1 and
		// leaves 3 alone; an augmenting path rematches 0 with 2.
		{"crossing (needs an augmenting path)", 4, [][2]int32{{0, 1}, {0, 2}, {3, 1}}, 2},
		// Antichain {1, 2, 3} under a root, with 4 after 1 and 2 only.
		{"fork of 3, partial join", 5, [][2]int32{{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, dagWidth(succOf(tc.n, tc.edges...)))
		})
	}
	assert.Panics(t, func() { dagWidth(succOf(2, [2]int32{0, 1}, [2]int32{1, 0})) })
}

func TestDagWidthOfLargeShapes(t *testing.T) {
	// k chains of m nodes forked from one root and joined into one sink,
	// and 200 independent nodes: k and 200.
	for _, k := range []int{1, 2, 16, 64} {
		const m = 50
		n := 2 + k*m
		var edges [][2]int32
		for j := 0; j < k; j++ {
			first := int32(1 + j*m)
			edges = append(edges, [2]int32{0, first})
			for i := int32(0); i < m-1; i++ {
				edges = append(edges, [2]int32{first + i, first + i + 1})
			}
			edges = append(edges, [2]int32{first + m - 1, int32(n - 1)})
		}
		assert.Equal(t, k, dagWidth(succOf(n, edges...)), "k=%d", k)
	}
	assert.Equal(t, 200, dagWidth(succOf(200)))
}

// forkJoinOf captures what device/cuda TestGraphTopologyLaunchCosts
// measured: n kernel nodes dealt in contiguous runs over k branches (side
// streams forked from s and joined back), with a pinned copy in before the
// fork and one out after the join when copies is set; and instantiates it.
func forkJoinOf(t *testing.T, h device.Host, n, k int, copies bool) (device.GraphExec, device.Stream) {
	t.Helper()
	s, buf, hm := captureInputs(t, h)
	fork, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	require.NoError(t, err)
	join, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	require.NoError(t, err)
	require.NoError(t, h.BeginCapture(s))
	if copies {
		require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: hm, Bytes: 64 << 10}))
	}
	require.NoError(t, h.Record(fork, s))
	for j := 0; j < k; j++ {
		side, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Wait(side, fork))
		for i := 0; i < n/k; i++ {
			require.NoError(t, h.Launch(side, spinLaunch(1, 32, time.Microsecond)))
		}
		require.NoError(t, h.Record(join, side))
		require.NoError(t, h.Wait(s, join))
	}
	if copies {
		require.NoError(t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: buf, Host: hm, Bytes: 64 << 10}))
	}
	g, err := h.EndCapture(s)
	require.NoError(t, err)
	x, err := h.Instantiate(g)
	require.NoError(t, err)
	want := n
	if copies {
		want += 2
	}
	require.Equal(t, want, x.Nodes())
	return x, s
}

// withBranchCosts is withGraphCosts with the per-branch graph launch
// model: 0.5 us fixed, 0.8 us per branch, 0.02 us per kernel node, 1.3 us
// per copy node (and 1.3 us per kernel change, as there).
func withBranchCosts(t *testing.T) *Config {
	c := withGraphCosts(t)
	h := &c.Host
	h.GraphLaunchBranchNs, h.GraphLaunchNodeNs, h.GraphLaunchCopyNodeNs = 800, 20, 1300
	return c
}

func TestGraphLaunchChargesPerBranch(t *testing.T) {
	// Hand-computed host time of one cuGraphLaunch, one host thread.
	for _, tc := range []struct {
		name        string
		n, k        int
		copies      bool
		perNodeOnly time.Duration // withGraphCosts, no branch field: 0.5 + 1.2/kernel + 2.7/copy
		perBranch   time.Duration // withBranchCosts: 0.5 + 0.8/branch + 0.02/kernel + 1.3/copy
	}{
		{"chain of 8", 8, 1, false, 10100 * time.Nanosecond, 1460 * time.Nanosecond},
		{"8 on 2 branches", 8, 2, false, 10100 * time.Nanosecond, 2260 * time.Nanosecond},
		{"8 on 4 branches", 8, 4, false, 10100 * time.Nanosecond, 3860 * time.Nanosecond},
		{"8 independent", 8, 8, false, 10100 * time.Nanosecond, 7060 * time.Nanosecond},
		{"chain of 16", 16, 1, false, 19700 * time.Nanosecond, 1620 * time.Nanosecond},
		{"16 independent", 16, 16, false, 19700 * time.Nanosecond, 13620 * time.Nanosecond},
		{"copy, chain of 8, copy", 8, 1, true, 15500 * time.Nanosecond, 4060 * time.Nanosecond},
		{"copy, 8 on 4 branches, copy", 8, 4, true, 15500 * time.Nanosecond, 6460 * time.Nanosecond},
		{"copy, 16 independent, copy", 16, 16, true, 25100 * time.Nanosecond, 16220 * time.Nanosecond},
	} {
		for _, m := range []struct {
			name string
			cfg  *Config
			want time.Duration
		}{{"per node only", withGraphCosts(t), tc.perNodeOnly}, {"per branch", withBranchCosts(t), tc.perBranch}} {
			d, err := New(m.cfg)
			require.NoError(t, err)
			require.NoError(t, d.Run(func(h device.Host) error {
				x, s := forkJoinOf(t, h, tc.n, tc.k, tc.copies)
				for i := 0; i < 2; i++ { // every launch costs the same
					got := hostTime(t, h, func() error { return h.GraphLaunch(x, s) })
					assert.Equal(t, m.want, got, "%s, %s, launch %d", tc.name, m.name, i)
				}
				return h.Synchronize()
			}))
		}
	}
}

func TestBranchesOfCopiesAndHostFunctions(t *testing.T) {
	// graphOf chains everything on one stream: one branch, whatever the
	// nodes. Two copies: 0.5 + 0.8 + 2 x 1.3 = 3.9 us; 2 kernels, a copy
	// and 3 host functions: 0.5 + 0.8 + 5 x 0.02 + 1.3 = 2.7 us; and a
	// kernel change still adds its cost to the next launch.
	d, err := New(withBranchCosts(t))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		x, s := graphOf(t, h, 0, 2, 0)
		assert.Equal(t, 3900*time.Nanosecond, hostTime(t, h, func() error { return h.GraphLaunch(x, s) }))
		y, ys := graphOf(t, h, 2, 1, 3)
		assert.Equal(t, 2700*time.Nanosecond, hostTime(t, h, func() error { return h.GraphLaunch(y, ys) }))
		other := spinLaunch(1, 32, time.Microsecond)
		other.Kernel = otherK
		require.NoError(t, h.SetKernelNode(y, 1, other))
		assert.Equal(t, 4000*time.Nanosecond, hostTime(t, h, func() error { return h.GraphLaunch(y, ys) }))
		return h.Synchronize()
	}))
}

func TestDagJoinsAreTheEdgesBeyondAChainCover(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		edges [][2]int32
		want  int
	}{
		{"empty", 0, nil, 0},
		{"chain of 4", 4, [][2]int32{{0, 1}, {1, 2}, {2, 3}}, 0},
		{"5 independent nodes", 5, nil, 0},
		{"diamond", 4, [][2]int32{{0, 1}, {0, 2}, {1, 3}, {2, 3}}, 2},
		{"fork/join of 3 chains", 8, [][2]int32{
			{0, 1}, {1, 2}, {2, 7}, {0, 3}, {3, 4}, {4, 7}, {0, 5}, {5, 6}, {6, 7}}, 4},
		{"fork of 3, no join", 4, [][2]int32{{0, 1}, {0, 2}, {0, 3}}, 2},
		// The cover's chains 0-2-3 and 1-4 (stepping over 2) hold 3 of
		// the 4 edges: one beyond.
		{"butterfly", 5, [][2]int32{{0, 2}, {1, 2}, {2, 3}, {2, 4}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			succ := succOf(tc.n, tc.edges...)
			assert.Equal(t, tc.want, dagJoins(succ, dagWidth(succ)))
		})
	}
}

func TestGraphLaunchChargesPerJoin(t *testing.T) {
	// withBranchCosts plus 0.3 us per fork or join: k branches between
	// two copies have 2 (k - 1) of them and the capture's edge from the
	// copy in to the copy out (the joining stream's own dependency, kept
	// beside the branches' as CUDA's capture keeps it) one more; k chains
	// without copies have none.
	c := withBranchCosts(t)
	c.Host.GraphLaunchJoinNs = 300
	for _, tc := range []struct {
		name   string
		n, k   int
		copies bool
		want   time.Duration
	}{
		{"8 on 4 branches", 8, 4, false, 3860 * time.Nanosecond},
		{"8 independent", 8, 8, false, 7060 * time.Nanosecond},
		{"copy, chain of 8, copy", 8, 1, true, (4060 + 300) * time.Nanosecond},
		{"copy, 8 on 4 branches, copy", 8, 4, true, (6460 + 7*300) * time.Nanosecond},
		{"copy, 16 independent, copy", 16, 16, true, (16220 + 31*300) * time.Nanosecond},
	} {
		d, err := New(c)
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			x, s := forkJoinOf(t, h, tc.n, tc.k, tc.copies)
			assert.Equal(t, tc.want, hostTime(t, h, func() error { return h.GraphLaunch(x, s) }), tc.name)
			return h.Synchronize()
		}))
	}
}

// fanOf captures k one-kernel branches forked from a head kernel (from
// nothing, k independent kernels, without head), joined back into a tail
// kernel when tail is set (left open otherwise), and instantiates it:
// calibrate "graph launch of joins"'s shapes.
func fanOf(t *testing.T, h device.Host, k int, head, tail bool) (device.GraphExec, device.Stream) {
	t.Helper()
	s, err := h.NewStream(device.StreamOptions{})
	require.NoError(t, err)
	fork, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	require.NoError(t, err)
	require.NoError(t, h.BeginCapture(s))
	if head {
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, time.Microsecond)))
	}
	require.NoError(t, h.Record(fork, s))
	for j := 0; j < k; j++ {
		side, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		require.NoError(t, h.Wait(side, fork))
		require.NoError(t, h.Launch(side, spinLaunch(1, 32, time.Microsecond)))
		join, err := h.NewEvent(device.EventOptions{DisableTiming: true})
		require.NoError(t, err)
		require.NoError(t, h.Record(join, side))
		require.NoError(t, h.Wait(s, join))
	}
	if tail {
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, time.Microsecond)))
	}
	g, err := h.EndCapture(s)
	require.NoError(t, err)
	x, err := h.Instantiate(g)
	require.NoError(t, err)
	want := k
	for _, extra := range []bool{head, tail} {
		if extra {
			want++
		}
	}
	require.Equal(t, want, x.Nodes())
	return x, s
}

// With host.graph_launch_open_end_ns a launch charges roots and open ends,
// not width: a root 0.8 us, each open end past the roots' count 0.3, a
// branch forked and joined back nothing (withBranchCosts: 0.5 fixed, 0.02 a
// kernel, 1.3 a copy). Without the field every branch of the width costs
// 0.8.
func TestOpenEndsReplaceTheWidthsBranches(t *testing.T) {
	for _, tc := range []struct {
		name            string
		capture         func(t *testing.T, h device.Host) (device.GraphExec, device.Stream)
		width, openEnds time.Duration
	}{
		// 0.5 + 4 x 0.8 + 5 x 0.02; 0.5 + 0.8 + 3 x 0.3 + 5 x 0.02.
		{"kernel feeding 4 open branches", func(t *testing.T, h device.Host) (device.GraphExec, device.Stream) {
			return fanOf(t, h, 4, true, false)
		}, 3800 * time.Nanosecond, 2300 * time.Nanosecond},
		// 0.5 + 4 x 0.8 + 6 x 0.02; 0.5 + 0.8 + 6 x 0.02.
		{"kernel feeding 4 branches joined into a kernel", func(t *testing.T, h device.Host) (device.GraphExec, device.Stream) { return fanOf(t, h, 4, true, true) }, 3820 * time.Nanosecond, 1420 * time.Nanosecond},
		// 4 roots, 4 open ends either way: 0.5 + 4 x 0.8 + 4 x 0.02.
		{"4 independent kernels", func(t *testing.T, h device.Host) (device.GraphExec, device.Stream) {
			return fanOf(t, h, 4, false, false)
		}, 3780 * time.Nanosecond, 3780 * time.Nanosecond},
		// One root and one open end (the copies): 0.5 + 0.8 + 8 x 0.02 + 2 x 1.3.
		{"copy, 8 on 4 branches, copy", func(t *testing.T, h device.Host) (device.GraphExec, device.Stream) {
			return forkJoinOf(t, h, 8, 4, true)
		}, 6460 * time.Nanosecond, 4060 * time.Nanosecond},
	} {
		for _, openEnd := range []float64{0, 300} {
			cfg := withBranchCosts(t)
			cfg.Host.GraphLaunchOpenEndNs = openEnd
			want := tc.width
			if openEnd > 0 {
				want = tc.openEnds
			}
			d, err := New(cfg)
			require.NoError(t, err)
			require.NoError(t, d.Run(func(h device.Host) error {
				x, s := tc.capture(t, h)
				assert.Equal(t, want, hostTime(t, h, func() error { return h.GraphLaunch(x, s) }), "%s, open_end_ns %v", tc.name, openEnd)
				return h.Synchronize()
			}))
		}
	}
}
