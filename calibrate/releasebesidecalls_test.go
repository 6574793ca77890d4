package calibrate

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator the callback thread's release of the work behind a
// host function (front_end.callback_release_ns) shares nothing with the
// host threads' driver calls: the release spans are the same whatever the
// host does while the device is otherwise idle, and only chunk graphs
// running beside (their copies and kernels) move them. The host's calls
// are counted: many short queries, fewer kernel launches, a few long
// chunk graph launches.
func TestReleasesBesideCallsShareNothingWithTheHost(t *testing.T) {
	_, value := measured(t, loadConfig(t, "h200"), "host function releases beside driver calls")
	for _, n := range rlStreams {
		spin := value(rlName(n, rlCases[0], "last"))
		assert.Greater(t, spin, 30000.0, "%d streams: a wake, the callback and the release", n)
		assert.LessOrEqual(t, value(rlName(n, rlCases[0], "first")), spin, "%d streams", n)
		for _, cs := range slices.Concat(rlCases[1:4], rlCases[5:]) {
			assert.InDelta(t, spin, value(rlName(n, cs, "last")), 1, "%d streams, %s", n, cs)
		}
		q, k, g := value(rlCallsName(n, rlCases[1])), value(rlCallsName(n, rlCases[2])), value(rlCallsName(n, rlCases[3]))
		assert.Greater(t, q, k, "%d streams: more queries than launches in the busy time", n)
		assert.Greater(t, k, g, "%d streams: more kernel launches than chunk graph launches", n)
		assert.GreaterOrEqual(t, g, 4.0, "%d streams: the chunk graphs' launches", n)
		assert.Zero(t, value(rlCallsName(n, rlCases[0])), "%d streams: spinning calls nothing", n)
	}
}
