package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The simulator starts a graph's nodes once its launch call has returned:
// what the wide fan adds to Elapsed is the same whatever the root's length,
// and at least what it adds to the call.
func TestGraphLaunchOverlapReadsASequentialLaunch(t *testing.T) {
	_, value := measured(t, loadConfig(t, "h200"), "graph launch beside its first nodes")
	call := value("graph launch beside its first nodes, 0 us root, fan of 64: launch call") -
		value("graph launch beside its first nodes, 0 us root, fan of 1: launch call")
	assert.Greater(t, call, 10_000.0, "a fan of 64 costs the launch call more than one kernel")
	first := value("graph launch beside its first nodes, 0 us root: elapsed, fan of 64 less fan of 1")
	assert.GreaterOrEqual(t, first, call)
	for _, root := range loRootsUs[1:] {
		extra := value(fmt.Sprintf("graph launch beside its first nodes, %d us root: elapsed, fan of 64 less fan of 1", root))
		assert.InDelta(t, first, extra, first*0.01, "root %d us", root)
	}
	// The root adds its length to Elapsed (the narrow fan's launch is
	// short beside it).
	assert.InDelta(t, 100_000, value("graph launch beside its first nodes, 100 us root, fan of 1: elapsed")-
		value("graph launch beside its first nodes, 0 us root, fan of 1: elapsed"), 2_000)
}
