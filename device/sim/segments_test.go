package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// A segment is a maximal path of the transitive reduction linked one to
// one: a chain is one, whatever edges the closure implies beside it.
func TestDagSegments(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		edges [][2]int32
		want  int
	}{
		{"empty", 0, nil, 0},
		{"single node", 1, nil, 1},
		{"chain of 4", 4, [][2]int32{{0, 1}, {1, 2}, {2, 3}}, 1},
		// A chain captured over two streams: 0 and 2 on one, 1 and 3 on
		// the other; each waits on its predecessor and follows its
		// stream's previous node (implied).
		{"chain over two streams", 4, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {0, 2}, {1, 3}}, 1},
		{"5 independent nodes", 5, nil, 5},
		// 0 forks into 1 and 2, joined into 3: 0, 1, 2 and 3 each begin one.
		{"diamond", 4, [][2]int32{{0, 1}, {0, 2}, {1, 3}, {2, 3}}, 4},
		// 0 forks into 3 chains of 2 (1-2, 3-4, 5-6), joined into 7: k + 2.
		{"fork/join of 3 chains", 8, [][2]int32{
			{0, 1}, {1, 2}, {2, 7}, {0, 3}, {3, 4}, {4, 7}, {0, 5}, {5, 6}, {6, 7}}, 5},
		{"two independent chains", 6, [][2]int32{{0, 1}, {1, 2}, {3, 4}, {4, 5}}, 2},
		// 0 -> 1 -> 2 and 0 -> 2: the edge 0 -> 2 is implied, a chain.
		{"triangle", 3, [][2]int32{{0, 1}, {1, 2}, {0, 2}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, dagSegments(succOf(tc.n, tc.edges...)))
		})
	}
}

// host.instantiate_per_segment_ns and host.destroy_exec_per_segment_ns:
// instantiating a graph of two one-kernel branches forked from and joined
// into a kernel (4 segments) costs 4 x the first on top of its per-node
// costs, destroying its exec 4 x the second; left out, nothing.
func TestSegmentCosts(t *testing.T) {
	const inst, destroy = 4000.0, 2500.0
	for _, on := range []bool{true, false} {
		cfg := streamHostConfig(t, func(c *Config) {
			if on {
				c.Host.InstantiatePerSegmentNs, c.Host.DestroyExecPerSegmentNs = inst, destroy
			}
		})
		d, err := New(cfg)
		require.NoError(t, err)
		took, timed := callTimer(t)
		require.NoError(t, d.Run(func(h device.Host) error {
			s0, _ := h.NewStream(device.StreamOptions{})
			s1, _ := h.NewStream(device.StreamOptions{})
			fork, _ := h.NewEvent(device.EventOptions{})
			join, _ := h.NewEvent(device.EventOptions{})
			l := spinLaunch(1, 32, 5*time.Microsecond)
			require.NoError(t, h.BeginCapture(s0))
			require.NoError(t, h.Launch(s0, l))
			require.NoError(t, h.Record(fork, s0))
			require.NoError(t, h.Wait(s1, fork))
			require.NoError(t, h.Launch(s0, l))
			require.NoError(t, h.Launch(s1, l))
			require.NoError(t, h.Record(join, s1))
			require.NoError(t, h.Wait(s0, join))
			require.NoError(t, h.Launch(s0, l))
			g, err := h.EndCapture(s0)
			require.NoError(t, err)
			var x device.GraphExec
			timed(h, "instantiate", func() (err error) { x, err = h.Instantiate(g); return err })
			require.NoError(t, h.GraphLaunch(x, s0))
			require.NoError(t, h.StreamSynchronize(s0))
			timed(h, "destroy exec", func() error { return h.Destroy(x) })
			return h.Destroy(g)
		}))
		hc := cfg.Host
		i, dn := 0.0, 0.0
		if on {
			i, dn = inst, destroy
		}
		ns := func(x float64) time.Duration { return time.Duration(x) }
		assert.Equal(t, ns(hc.InstantiateBaseNs+4*hc.InstantiatePerNodeNs+4*i), took["instantiate"], "on=%v", on)
		assert.Equal(t, ns(hc.DestroyNs+4*hc.DestroyExecPerNodeNs+4*dn), took["destroy exec"], "on=%v", on)
	}
}
