package calibrate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The host-functions-before-graphs probe on the simulator: a lone host
// function with work queued behind it spans its stream for the wake, the
// function and the release (front_end.callback_wake_ns + callback_ns +
// callback_release_ns), whatever is queued behind, and after the 300 us
// lead the callback thread has parked (callback_parked_wake_ns more,
// whatever the host does meanwhile; not after a 40 us lead), and a host
// polling the event meanwhile holds the release for the query in progress
// and front_end.callback_release_host_wait_ns (10 us); on three streams at
// once the second and third wait for the thread's function only (the
// release keeps the stream, not the thread). SET-batch's loop over one
// stream pays at least that span per job, and three streams overlap it.
func TestHostFuncsBeforeGraphsReadTheCallbackThread(t *testing.T) {
	value := probeHostFuncs(t, 10000, "host functions before graphs")
	for _, b := range hgBranches {
		assert.InDelta(t, 85000, value(hgName(1, b)+": first span"), 100, "branches %d", b)
		assert.InDelta(t, 5000, value(hgName(3, b)+": span rise per function"), 100, "branches %d", b)
	}
	for _, w := range hgWaits {
		want := 85000.0
		if w.leadUs < 160 {
			want = 45000
		}
		if strings.Contains(w.name, "polls") {
			want += 10000
		}
		assert.InDelta(t, want, value(hgName(1, 0)+", "+w.name+": first span"), 100, w.name)
	}
	// What is behind a released host function runs after it: a graph of
	// 16 branches takes longer than one of 1.
	assert.Greater(t, value(hgName(1, 16)+": behind"), value(hgName(1, 1)+": behind"))
	one := value("host function loop, graphs of 4 branches, 1 streams: per job")
	assert.Greater(t, one, 45000.0) // the loop keeps the thread from parking
	assert.Less(t, value("host function loop, graphs of 4 branches, 3 streams: per job"), one/2)
}
