package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gpusched/gpusched/device"
)

// A cuGraphLaunch call longer than host.graph_launch_stream_after_ns
// hands the device its nodes as it goes. A chain of eight 20 us kernels
// launched by an 80.5 us call (0.5 + 8 x 10 us, no first-launch upload)
// gets its first node 30 us into the call and the others long before
// their predecessors end, so the chain ends 50.5 us sooner than when the
// call hands everything over at its end. With the threshold beyond the
// call nothing changes.
func TestLongGraphLaunchHandsItsNodesOverAsItGoes(t *testing.T) {
	span := func(after float64) time.Duration {
		c := withGraphCosts(t)
		c.Host.GraphLaunchNodeNs = 10000
		c.Host.FirstGraphLaunchPerNodeNs = 0
		c.Host.GraphLaunchStreamAfterNs = after
		return graphElapsed(t, c, func(h device.Host) (device.GraphExec, device.Stream) {
			return chainOf(t, h, 8, 20*time.Microsecond)
		})
	}
	atEnd := span(0)
	assert.Equal(t, 50500*time.Nanosecond, atEnd-span(30000), "the chain starts 30 us into the call, not at its end")
	assert.Equal(t, atEnd, span(100000), "a call shorter than the threshold hands its graph over at its end")
}
