package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator the callback thread's release of the work behind a
// host function (front_end.callback_release_ns) waits, when it would
// begin inside a host thread's driver call, for the call to return and
// front_end.callback_release_host_wait_ns (10 us on the h200) more: with
// the host spinning it does not wait; querying (calls under a us) it
// waits the 10 us and a little; launching kernels a part of a launch
// more; launching chunk graphs a part of their long launch calls more
// still, wherever the launches go, and spaced launches no more than one
// call and the hand-off. The host's calls are counted: many
// short queries, fewer kernel launches, a few long chunk graph launches.
func TestReleasesBesideCallsWaitForTheHostsCall(t *testing.T) {
	_, value := measured(t, loadConfig(t, "h200"), "host function releases beside driver calls")
	last := func(n, i int) float64 { return value(rlName(n, rlCases[i].name, "last")) }
	for _, n := range rlStreams {
		spin := last(n, 0)
		assert.Greater(t, spin, 30000.0, "%d streams: a wake, the callback and the release", n)
		assert.LessOrEqual(t, value(rlName(n, rlCases[0].name, "first")), spin, "%d streams", n)
		for i := 1; i < 7; i++ {
			assert.GreaterOrEqual(t, last(n, i)-spin, 10000.0, "%d streams, %s: the hand-off after a call", n, rlCases[i].name)
			assert.Less(t, last(n, i)-spin, 70000.0, "%d streams, %s: one call and the hand-off at most", n, rlCases[i].name)
		}
		q, k, g := value(rlCallsName(n, rlCases[1].name)), value(rlCallsName(n, rlCases[2].name)), value(rlCallsName(n, rlCases[3].name))
		assert.Greater(t, q, k, "%d streams: more queries than launches in the busy time", n)
		assert.Greater(t, k, g, "%d streams: more kernel launches than chunk graph launches", n)
		assert.GreaterOrEqual(t, g, 4.0, "%d streams: the chunk graphs' launches", n)
		assert.Zero(t, value(rlCallsName(n, rlCases[0].name)), "%d streams: spinning calls nothing", n)
	}
	assert.Less(t, last(1, 1), last(1, 2), "one stream: a query's wait is shorter than a kernel launch's")
	assert.Less(t, last(1, 2), last(1, 3), "one stream: a kernel launch's is shorter than a chunk graph launch's")
	assert.InDelta(t, last(1, 3), last(1, 6), 100, "one stream: chunk graphs launched elsewhere or onto the stream (the copy nodes updated differ)")
	// Spaced launches: a release waits for the launch it falls in, if
	// any (where it falls is the gap's phase), never more.
	for _, n := range rlStreams {
		for i := 7; i < len(rlCases); i++ {
			assert.GreaterOrEqual(t, last(n, i), last(n, 0), "%d streams, %s", n, rlCases[i].name)
			assert.Less(t, last(n, i)-last(n, 0), 70000.0, "%d streams, %s: one call and the hand-off at most", n, rlCases[i].name)
		}
	}
}
