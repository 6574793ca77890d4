package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The host-functions-before-graphs probe on the simulator: a lone host
// function with work queued behind it spans its stream for the wake, the
// function and the release (front_end.callback_wake_ns + callback_ns +
// callback_release_ns), whatever is queued behind; on three streams at
// once the second and third wait for the thread's function only (the
// release keeps the stream, not the thread). SET-batch's loop over one
// stream pays at least that span per job, and three streams overlap it.
func TestHostFuncsBeforeGraphsReadTheCallbackThread(t *testing.T) {
	value := probeHostFuncs(t, 10000, "host functions before graphs")
	for _, b := range hgBranches {
		assert.InDelta(t, 45000, value(hgName(1, b)+": first span"), 100, "branches %d", b)
		assert.InDelta(t, 5000, value(hgName(3, b)+": span rise per function"), 100, "branches %d", b)
	}
	// What is behind a released host function runs after it: a graph of
	// 16 branches takes longer than one of 1.
	assert.Greater(t, value(hgName(1, 16)+": behind"), value(hgName(1, 1)+": behind"))
	one := value("host function loop, graphs of 4 branches, 1 streams: per job")
	assert.Greater(t, one, 45000.0)
	assert.Less(t, value("host function loop, graphs of 4 branches, 3 streams: per job"), one/2)
}
