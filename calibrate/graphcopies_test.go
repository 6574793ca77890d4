package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator a graph's copy past the first of its launch on an
// engine pays copy.graph_latency_ns where a stream copy pays
// copy.latency_ns: raising the field by 1 us raises what each copy past
// the first adds by 1 us, in both shapes, ways and sizes, and leaves the
// one-copy graphs as they were.
func TestCopiesInAGraphReadTheGraphLatency(t *testing.T) {
	read := func(graphLatency float64) func(string) float64 {
		cfg := loadConfig(t, "h200")
		cfg.Copy.GraphLatencyNs = graphLatency
		_, value := measured(t, cfg, "copies in a graph")
		return value
	}
	lo, hi := read(1000), read(2000)
	for _, way := range []string{"host-to-device", "device-to-host"} {
		for _, kib := range []int64{64, 512} {
			for _, shape := range gcShapes {
				name := fmt.Sprintf("copies in a graph, %s, %d KiB, each copy past the first, as %s", way, kib, shape)
				assert.InDelta(t, 1000, hi(name)-lo(name), 20, name)
				one := fmt.Sprintf("copies in a graph, %s, %d KiB, 1 as %s", way, kib, shape)
				assert.InDelta(t, lo(one), hi(one), 1, one)
			}
		}
	}
}

// On the simulator a root's open ends past the first add
// host.graph_launch_open_end_ns each (and their kernel's
// graph_launch_node_ns), and an upload root's edges out past its first
// graph_launch_copy_fan_edge_ns more, which the probe reads back.
func TestGraphLaunchOfUploadFansReadsTheCharges(t *testing.T) {
	cfg := loadConfig(t, "h200")
	cfg.Host.GraphLaunchOpenEndNs, cfg.Host.GraphLaunchCopyFanEdgeNs = 257, 716 // measured, not in the config
	_, value := measured(t, cfg, "graph launch of upload fans")
	h := cfg.Host
	want := map[string]float64{
		"kernel root": h.GraphLaunchOpenEndNs + h.GraphLaunchNodeNs,
		"upload root": h.GraphLaunchOpenEndNs + h.GraphLaunchNodeNs + h.GraphLaunchCopyFanEdgeNs,
	}
	for kind, per := range want {
		call := func(n int) float64 {
			return value(fmt.Sprintf("graph launch of upload fans, %s feeding %d branches: launch call", kind, n))
		}
		assert.InDelta(t, per, (call(32)-call(8))/24, per*0.02, kind)
	}
}

// On the simulator a joined fan's launch grows, per branch, by
// host.graph_launch_join_ns over the open fan's (each branch adds a fork
// and a join edge beyond the chain cover, the open fan only the fork),
// which the probe reads back.
func TestGraphLaunchOfJoinsReadsTheJoinCharge(t *testing.T) {
	cfg := loadConfig(t, "h200")
	cfg.Host.GraphLaunchJoinNs = 500
	_, value := measured(t, cfg, "graph launch of joins")
	slope := func(kind string) float64 {
		call := func(n int) float64 {
			return value(fmt.Sprintf("graph launch of joins, %s of %d branches: launch call", kind, n))
		}
		return (call(32) - call(8)) / 24
	}
	assert.InDelta(t, 500, slope("joined fan")-slope("open fan"), 10)
}

// With host.graph_launch_open_end_ns set, the probe reads what it
// measured on an H200 (session 27): an open fan's branches cost an open
// end each and a joined fan's nothing beyond their kernels; without it
// both cost a branch (graph_launch_branch_ns), the width's charge.
func TestGraphLaunchOfJoinsReadsTheOpenEnds(t *testing.T) {
	for _, openEnd := range []float64{0, 257} {
		cfg := loadConfig(t, "h200")
		cfg.Host.GraphLaunchOpenEndNs = openEnd
		_, value := measured(t, cfg, "graph launch of joins")
		slope := func(kind string) float64 {
			call := func(n int) float64 {
				return value(fmt.Sprintf("graph launch of joins, %s of %d branches: launch call", kind, n))
			}
			return (call(32) - call(8)) / 24
		}
		h := cfg.Host
		open, joined := h.GraphLaunchBranchNs, h.GraphLaunchBranchNs
		if openEnd > 0 {
			open, joined = openEnd, 0
		}
		assert.InDelta(t, open+h.GraphLaunchNodeNs, slope("open fan"), 10, "open fan, open_end %v", openEnd)
		assert.InDelta(t, joined+h.GraphLaunchNodeNs, slope("joined fan"), 10, "joined fan, open_end %v", openEnd)
	}
}
