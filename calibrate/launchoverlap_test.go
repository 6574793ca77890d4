package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the h200 config a fan of 64 makes the launch call longer than
// host.graph_launch_stream_after_ns, so the call hands the graph over as
// it goes: with no root the fan's last node runs as the call ends, and a
// root of 50 or 100 us starts 30 us into the call, so the fan adds the
// same to Elapsed behind either, less than it adds to the call. A fan of
// one is a short call, handed over at its end: the root adds its length.
func TestGraphLaunchOverlapReadsAStreamedLaunch(t *testing.T) {
	_, value := measured(t, loadConfig(t, "h200"), "graph launch beside its first nodes")
	name := func(root int, what string) string {
		return fmt.Sprintf("graph launch beside its first nodes, %d us root, %s", root, what)
	}
	call := value(name(0, "fan of 64: launch call")) - value(name(0, "fan of 1: launch call"))
	assert.Greater(t, call, 30_000.0, "a fan of 64 costs the launch call more than the threshold")
	tail := value(name(0, "fan of 64: elapsed")) - value(name(0, "fan of 64: launch call"))
	assert.GreaterOrEqual(t, tail, 0.0)
	assert.Less(t, tail, 5_000.0, "the fan runs as the call goes and ends just after it")
	behind50 := value("graph launch beside its first nodes, 50 us root: elapsed, fan of 64 less fan of 1")
	behind100 := value("graph launch beside its first nodes, 100 us root: elapsed, fan of 64 less fan of 1")
	assert.InDelta(t, behind50, behind100, behind50*0.01)
	assert.Less(t, behind100, call, "the root ran during the call")
	assert.InDelta(t, 100_000, value(name(100, "fan of 1: elapsed"))-value(name(0, "fan of 1: elapsed")), 2_000)
}
