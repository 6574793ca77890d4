package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/configs"
	"github.com/gpusched/gpusched/device"
)

var otherK = &device.Kernel{Module: "test", Name: "other", Regs: 32}

// graphOf captures, on a fresh stream, a graph of w kernel nodes (chained),
// c pinned host-to-device copies of 64 KB and f host-function nodes, and
// instantiates it. It returns the exec and its stream.
func graphOf(t *testing.T, h device.Host, w, c, f int) (device.GraphExec, device.Stream) {
	t.Helper()
	s, buf, hm := captureInputs(t, h)
	require.NoError(t, h.BeginCapture(s))
	for i := 0; i < c; i++ {
		require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: hm, Bytes: 64 << 10}))
	}
	for i := 0; i < w; i++ {
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, time.Microsecond)))
	}
	for i := 0; i < f; i++ {
		require.NoError(t, h.HostFunc(s, func() {}))
	}
	g, err := h.EndCapture(s)
	require.NoError(t, err)
	x, err := h.Instantiate(g)
	require.NoError(t, err)
	require.Equal(t, w+c+f, x.Nodes())
	return x, s
}

// captureInputs is what the graph captures here need: a fresh stream, a
// 64 KB device buffer and 64 KB of pinned host memory.
func captureInputs(t *testing.T, h device.Host) (device.Stream, device.Buffer, *device.HostMem) {
	t.Helper()
	s, err := h.NewStream(device.StreamOptions{})
	require.NoError(t, err)
	buf, err := h.Malloc(64 << 10)
	require.NoError(t, err)
	hm, err := h.AllocHost(64<<10, true)
	require.NoError(t, err)
	return s, buf, hm
}

// hostTime is the host time fn takes on the calling thread.
func hostTime(t *testing.T, h device.Host, fn func() error) time.Duration {
	t.Helper()
	t0 := h.Now()
	require.NoError(t, fn())
	return h.Now() - t0
}

// withGraphCosts is the H100 config with the per-node graph costs set to
// round figures, so that the test's expectations are computed by hand, and
// no per-branch cost (the model before graph_launch_branch_ns).
func withGraphCosts(t *testing.T) *Config {
	c := h100Config(t)
	c.Host.GraphLaunchNs = 500
	c.Host.GraphLaunchBranchNs = 0
	c.Host.GraphLaunchNodeNs = 1200
	c.Host.GraphLaunchCopyNodeNs = 2700
	c.Host.GraphLaunchCopyEdgeNs = 0
	c.Host.GraphLaunchKernelChangeNs = 1300
	c.Host.SetNodeNs = 900
	c.Host.SetNodeKernelChangeNs = 700
	return c
}

func TestGraphLaunchChargesPerCopyEdge(t *testing.T) {
	// graph_launch_copy_edge_ns 0.6 us: each dependency edge that meets a
	// copy node adds it. graphOf captures a chain (copies, then kernels,
	// then host functions): c copies and w kernels have c + w - 1 edges,
	// of which min(c, c+w-1) meet a copy; kernels alone none.
	for _, tc := range []struct {
		w, c, f int
		want    time.Duration
	}{
		{4, 0, 0, 5300 * time.Nanosecond},           // 0.5 + 4 x 1.2
		{0, 1, 0, 3200 * time.Nanosecond},           // 0.5 + 2.7
		{1, 1, 0, (4400 + 600) * time.Nanosecond},   // one copy-kernel edge
		{2, 2, 0, (8300 + 2*600) * time.Nanosecond}, // copy-copy, copy-kernel
		{2, 1, 1, (6800 + 1*600) * time.Nanosecond}, // kernel-kernel, kernel-host function: none
	} {
		c := withGraphCosts(t)
		c.Host.GraphLaunchCopyEdgeNs = 600
		d, err := New(c)
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			x, s := graphOf(t, h, tc.w, tc.c, tc.f)
			assert.Equal(t, tc.want, hostTime(t, h, func() error { return h.GraphLaunch(x, s) }), "%+v", tc)
			return h.Synchronize()
		}))
	}
}

func TestGraphLaunchChargesPerNode(t *testing.T) {
	// Hand-computed host time of one cuGraphLaunch: 0.5 us + 1.2 us per
	// kernel (or host-function) node + 2.7 us per copy node. One host
	// thread, so the driver lock never makes the call wait.
	for _, tc := range []struct {
		w, c, f int
		want    time.Duration
	}{
		{1, 0, 0, 1700 * time.Nanosecond},
		{8, 0, 0, 10100 * time.Nanosecond},
		{32, 0, 0, 38900 * time.Nanosecond},
		{0, 2, 0, 5900 * time.Nanosecond},
		{1, 2, 0, 7100 * time.Nanosecond},
		{8, 2, 0, 15500 * time.Nanosecond},
		{2, 1, 3, 9200 * time.Nanosecond}, // 0.5 + 5 x 1.2 + 2.7
	} {
		d, err := New(withGraphCosts(t))
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			x, s := graphOf(t, h, tc.w, tc.c, tc.f)
			for i := 0; i < 3; i++ { // every launch costs the same
				got := hostTime(t, h, func() error { return h.GraphLaunch(x, s) })
				assert.Equal(t, tc.want, got, "w=%d c=%d f=%d launch %d", tc.w, tc.c, tc.f, i)
			}
			return h.Synchronize()
		}))
	}
}

func TestGraphLaunchStartsTheGraphAfterItsHostCost(t *testing.T) {
	// The graph reaches the front end when the call ends: an event
	// recorded just before it (its stream idle) completes at once, and the
	// graph's only kernel node, 10 us long, starts graph_launch_latency_ns
	// (2 us) after the call's 0.5 + 8 x 1.2 us; the other seven nodes follow
	// it, each graph_node_ns (0.5 us) after its predecessor and 10 us long:
	// launch 10.1 us + latency 2 us + 8 x 10 us + 7 x 0.5 us from the first
	// record to the second.
	el := graphElapsed(t, withGraphCosts(t), func(h device.Host) (device.GraphExec, device.Stream) {
		return chainOf(t, h, 8, 10*time.Microsecond)
	})
	assert.Equal(t, (10100+2000+80000+3500)*time.Nanosecond, el)
}

// chainOf captures, on a fresh stream, a chain of n one-block spin kernels
// of d each, and instantiates it. It returns the exec and its stream.
func chainOf(t *testing.T, h device.Host, n int, d time.Duration) (device.GraphExec, device.Stream) {
	t.Helper()
	s, err := h.NewStream(device.StreamOptions{})
	require.NoError(t, err)
	require.NoError(t, h.BeginCapture(s))
	for i := 0; i < n; i++ {
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, d)))
	}
	g, err := h.EndCapture(s)
	require.NoError(t, err)
	x, err := h.Instantiate(g)
	require.NoError(t, err)
	return x, s
}

func TestKernelChangesCostUpdatesAndTheNextLaunch(t *testing.T) {
	d, err := New(withGraphCosts(t))
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		x, s := graphOf(t, h, 4, 0, 0) // launches 0.5 + 4 x 1.2 = 5.3 us
		same := spinLaunch(2, 64, 2*time.Microsecond)
		other := spinLaunch(1, 32, time.Microsecond)
		other.Kernel = otherK
		set := func(node int, l *device.Launch) time.Duration {
			return hostTime(t, h, func() error { return h.SetKernelNode(x, node, l) })
		}
		launch := func() time.Duration { return hostTime(t, h, func() error { return h.GraphLaunch(x, s) }) }

		// New arguments, same kernel: set_node_ns, and the launch costs
		// what it did.
		assert.Equal(t, 900*time.Nanosecond, set(0, same))
		assert.Equal(t, 5300*time.Nanosecond, launch())
		// A kernel of the same module and name is the same kernel.
		twin := *spinK
		l := spinLaunch(1, 32, time.Microsecond)
		l.Kernel = &twin
		assert.Equal(t, 900*time.Nanosecond, set(1, l))
		assert.Equal(t, 5300*time.Nanosecond, launch())

		// Two nodes change kernel: each update costs 0.9 + 0.7 us, the
		// next launch 1.3 us per changed node more, the one after it
		// nothing more.
		assert.Equal(t, 1600*time.Nanosecond, set(0, other))
		assert.Equal(t, 1600*time.Nanosecond, set(2, other))
		assert.Equal(t, 900*time.Nanosecond, set(2, other), "node 2 already holds the kernel")
		assert.Equal(t, 7900*time.Nanosecond, launch())
		assert.Equal(t, 5300*time.Nanosecond, launch())

		// A node changed and changed back before the next launch runs the
		// kernel it ran last time: both updates change the kernel, the
		// launch sets up nothing new.
		assert.Equal(t, 1600*time.Nanosecond, set(3, other))
		assert.Equal(t, 1600*time.Nanosecond, set(3, spinLaunch(1, 32, time.Microsecond)))
		assert.Equal(t, 5300*time.Nanosecond, launch())

		// Copy-node updates cost set_node_ns.
		y, ys := graphOf(t, h, 0, 1, 0)
		buf, _ := h.Malloc(1024)
		hm, _ := h.AllocHost(1024, true)
		assert.Equal(t, 900*time.Nanosecond, hostTime(t, h, func() error {
			return h.SetCopyNode(y, 0, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: hm, Bytes: 1024})
		}))
		assert.Equal(t, 3200*time.Nanosecond, hostTime(t, h, func() error { return h.GraphLaunch(y, ys) }))
		return h.Synchronize()
	}))
}

func TestChangedNodesCostTheNextLaunch(t *testing.T) {
	// graph_launch_changed_node_ns 1 us: the launch after updates pays it
	// once per kernel node whose grid, block, shared memory or kernel
	// changed since the previous launch, a changed kernel 1.3 us more;
	// updates of the arguments alone cost the launch nothing.
	c := withGraphCosts(t)
	c.Host.GraphLaunchChangedNodeNs = 1000
	d, err := New(c)
	require.NoError(t, err)
	require.NoError(t, d.Run(func(h device.Host) error {
		x, s := graphOf(t, h, 4, 0, 0) // launches 0.5 + 4 x 1.2 = 5.3 us
		set := func(node int, l *device.Launch) {
			require.NoError(t, h.SetKernelNode(x, node, l))
		}
		launch := func() time.Duration { return hostTime(t, h, func() error { return h.GraphLaunch(x, s) }) }
		assert.Equal(t, 5300*time.Nanosecond, launch())

		// Arguments alone (the spin's duration): nothing more.
		for i := 0; i < 4; i++ {
			set(i, spinLaunch(1, 32, 3*time.Microsecond))
		}
		assert.Equal(t, 5300*time.Nanosecond, launch())

		// Another grid on two nodes, another block on one, more shared
		// memory on the last: 4 x 1 us, once.
		set(0, spinLaunch(2, 32, time.Microsecond))
		set(1, spinLaunch(4, 32, time.Microsecond))
		set(2, spinLaunch(1, 64, time.Microsecond))
		sh := spinLaunch(1, 32, time.Microsecond)
		sh.SharedMem = 1024
		set(3, sh)
		assert.Equal(t, 9300*time.Nanosecond, launch())
		assert.Equal(t, 5300*time.Nanosecond, launch())

		// A node updated twice counts once; one updated back to the
		// configuration it launched with counts nothing; a changed kernel
		// pays both costs: 5.3 + 1 (node 0) + 1 + 1.3 (node 2) us.
		set(0, spinLaunch(8, 32, time.Microsecond))
		set(0, spinLaunch(16, 32, time.Microsecond))
		set(1, spinLaunch(1, 32, time.Microsecond))
		set(1, spinLaunch(4, 32, time.Microsecond))
		other := spinLaunch(1, 64, time.Microsecond)
		other.Kernel = otherK
		set(2, other)
		assert.Equal(t, 8600*time.Nanosecond, launch())
		return h.Synchronize()
	}))
}

// A config that leaves the optional graph fields out charges the flat
// graph_launch_ns of before, whatever the graph holds and however its
// kernels change, and set_node_ns for every update: here the H100 config
// as it was before the fields (graph_launch_ns 2.5 us, set_node_ns 1 us).
func TestConfigWithoutGraphNodeFieldsChargesTheFlatCost(t *testing.T) {
	src, err := configs.FS.ReadFile("devices/h100.yaml")
	require.NoError(t, err)
	var kept []string
	for _, line := range strings.Split(string(src), "\n") {
		key := strings.TrimSpace(strings.SplitN(line, ":", 2)[0])
		switch key {
		case "graph_launch_node_ns", "graph_launch_copy_node_ns", "graph_launch_copy_edge_ns", "graph_launch_branch_ns", "graph_launch_kernel_change_ns", "graph_launch_changed_node_ns", "set_node_kernel_change_ns":
			continue
		case "graph_launch_ns":
			line = "  graph_launch_ns: 2500"
		case "set_node_ns":
			line = "  set_node_ns: 1000"
		}
		kept = append(kept, line)
	}
	old := strings.Join(kept, "\n")
	cfg, err := ParseConfig([]byte(old), "h100 without the graph node fields")
	require.NoError(t, err)
	assert.Zero(t, cfg.Host.GraphLaunchNodeNs)
	assert.Zero(t, cfg.Host.GraphLaunchCopyNodeNs)
	assert.Zero(t, cfg.Host.GraphLaunchCopyEdgeNs)
	assert.Zero(t, cfg.Host.GraphLaunchBranchNs)
	assert.Zero(t, cfg.Host.GraphLaunchKernelChangeNs)
	assert.Zero(t, cfg.Host.SetNodeKernelChangeNs)
	assert.Zero(t, cfg.Host.GraphLaunchChangedNodeNs)
	const flat, setNode = 2500 * time.Nanosecond, 1000 * time.Nanosecond
	for _, tc := range []struct{ w, c, f int }{{1, 0, 0}, {8, 0, 0}, {32, 0, 0}, {0, 2, 0}, {8, 2, 1}} {
		d, err := New(cfg)
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			x, s := graphOf(t, h, tc.w, tc.c, tc.f)
			assert.Equal(t, flat, hostTime(t, h, func() error { return h.GraphLaunch(x, s) }), "%+v", tc)
			if tc.w > 0 {
				other := spinLaunch(1, 32, time.Microsecond)
				other.Kernel = otherK
				assert.Equal(t, setNode, hostTime(t, h, func() error { return h.SetKernelNode(x, tc.c, other) }))
				assert.Equal(t, flat, hostTime(t, h, func() error { return h.GraphLaunch(x, s) }), "after a kernel change, %+v", tc)
			}
			return h.Synchronize()
		}))
	}
	// Every other embedded config without the fields charges the same way.
	for _, n := range ConfigNames() {
		c, err := LoadConfig(n)
		require.NoError(t, err)
		if c.Host.GraphLaunchNodeNs == 0 && c.Host.GraphLaunchCopyNodeNs == 0 && c.Host.GraphLaunchBranchNs == 0 {
			d, err := New(c)
			require.NoError(t, err)
			require.NoError(t, d.Run(func(h device.Host) error {
				x, s := graphOf(t, h, 8, 2, 0)
				assert.InDelta(t, float64(nsTime(c.Host.GraphLaunchNs).Duration()),
					float64(hostTime(t, h, func() error { return h.GraphLaunch(x, s) })), 1, n)
				return h.Synchronize()
			}))
		}
	}
}

// The H100 and H200 configs carry the measured per-branch costs, and a
// graph launch charges exactly their sum: here 8 kernels on 4 branches
// between a copy in and a copy out (9 edges meet a copy: the copy in's to
// the 4 branches, the 4 branches' to the copy out, and the copy in's to
// the copy out, which captures after it on the same stream). With
// graph_launch_open_end_ns and graph_launch_copy_fan_edge_ns set
// (measured, not in the configs), the one root (the copy in) pays
// graph_launch_branch_ns and the 3 branches forked beside it nothing (they
// join at the copy out, the one open end), and the copy in's 3 edges to
// branches past its first the fan charge; the 5 edges into the copy out
// and its first keep the edge charge.
func TestMeasuredConfigsChargePerBranch(t *testing.T) {
	for _, n := range []string{"h100", "h200"} {
		for _, fields := range []bool{false, true} {
			c, err := LoadConfig(n)
			require.NoError(t, err)
			hc := &c.Host
			require.Positive(t, hc.GraphLaunchBranchNs, n)
			require.Positive(t, hc.GraphLaunchCopyNodeNs, n)
			want := nsTime(hc.GraphLaunchNs) + 4*nsTime(hc.GraphLaunchBranchNs) + 8*nsTime(hc.GraphLaunchNodeNs) + 2*nsTime(hc.GraphLaunchCopyNodeNs) + 9*nsTime(hc.GraphLaunchCopyEdgeNs)
			if fields {
				hc.GraphLaunchOpenEndNs, hc.GraphLaunchCopyFanEdgeNs = 257, 716
				want = nsTime(hc.GraphLaunchNs) + nsTime(hc.GraphLaunchBranchNs) + 8*nsTime(hc.GraphLaunchNodeNs) +
					2*nsTime(hc.GraphLaunchCopyNodeNs) + 6*nsTime(hc.GraphLaunchCopyEdgeNs) + 3*nsTime(hc.GraphLaunchCopyFanEdgeNs)
			}
			d, err := New(c)
			require.NoError(t, err)
			require.NoError(t, d.Run(func(h device.Host) error {
				x, s := forkJoinOf(t, h, 8, 4, true)
				// Within 1 ns: the device rounds the sum once, want rounds each term.
				assert.InDelta(t, float64(want.Duration()), float64(hostTime(t, h, func() error { return h.GraphLaunch(x, s) })), 1, "%s, fields %v", n, fields)
				return h.Synchronize()
			}))
		}
	}
}

func TestOptionalFieldsMayBeLeftOutButNotMisspelt(t *testing.T) {
	src, err := configs.FS.ReadFile("devices/rtx3070.yaml")
	require.NoError(t, err)
	c, err := ParseConfig(src, "rtx3070.yaml")
	require.NoError(t, err)
	assert.Zero(t, c.Host.GraphLaunchNodeNs)
	bad := strings.Replace(string(src), "  set_node_ns: 1000", "  set_node_ns: 1000\n  graph_launch_nodes_ns: 1", 1)
	require.NotEqual(t, string(src), bad)
	_, err = ParseConfig([]byte(bad), "rtx3070.yaml")
	assert.ErrorContains(t, err, "unknown field host.graph_launch_nodes_ns")
	neg := strings.Replace(string(src), "  set_node_ns: 1000", "  set_node_ns: 1000\n  graph_launch_node_ns: -1", 1)
	_, err = ParseConfig([]byte(neg), "rtx3070.yaml")
	assert.ErrorContains(t, err, "host.graph_launch_node_ns must not be negative")
	// Marshal leaves zero optional fields out and writes set ones.
	out, err := c.Marshal()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "graph_launch_node_ns")
	c.Host.GraphLaunchNodeNs = 1210
	out, err = c.Marshal()
	require.NoError(t, err)
	assert.Contains(t, string(out), "graph_launch_node_ns: 1210")
	back, err := ParseConfig(out, "marshalled")
	require.NoError(t, err)
	assert.Equal(t, c, back)
}
