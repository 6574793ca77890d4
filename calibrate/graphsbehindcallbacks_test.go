package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator the callback thread releases a host function's stream
// (front_end.callback_release_ns) before the event in front of the graph,
// and the graph queued behind then runs as on an idle stream: the same
// time. A graph launched once the function's Put arrived has its launch
// call in its time (the record before it passes at once: nothing was
// queued behind the function when it ran), longer the more branches it
// has; unless front_end.callback_release_holds_stream holds the stream for
// the release, which hides that much of the call. From the gate's end,
// a graph on an idle stream takes its own time, and one queued behind the
// host function that time plus the same hand-off (wake, callback,
// release) whatever the graph: the simulator does not hold a queued launch
// back.
func TestGraphsBehindCallbacksReadTheRelease(t *testing.T) {
	_, value := measured(t, loadConfig(t, "h200"), "graphs behind a host function")
	prev, handoff := 0.0, 0.0
	for i, sh := range gbShapes() {
		idle := value(gbName(sh.name, gbCases[0]))
		assert.InDelta(t, idle, value(gbFromGateName(sh.name, gbCases[0])), 1, "%s: on an idle stream, from the gate", sh.name)
		h := value(gbFromGateName(sh.name, gbCases[1])) - value(gbName(sh.name, gbCases[1]))
		assert.Greater(t, h, 30000.0, "%s: the hand-off before a queued graph", sh.name)
		if i > 0 {
			assert.InDelta(t, handoff, h, 1, "%s: the same hand-off before every queued graph", sh.name)
		}
		handoff = h
		assert.InDelta(t, idle, value(gbName(sh.name, gbCases[1])), 1, "%s: queued behind a host function", sh.name)
		extra := value(gbName(sh.name, gbCases[2])) - idle
		assert.Greater(t, extra, 1000.0, "%s: launched after, its launch call in its time", sh.name)
		if sh.head == "k" {
			assert.Greater(t, extra, prev, "%s: a longer launch call with more branches", sh.name)
			prev = extra
		}
	}
}
