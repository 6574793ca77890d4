package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator every case's host function finds the callback thread
// idle (nothing else runs a host function), so each hand-off is
// front_end.callback_wake_ns longer than without the wake; a chunk queued
// behind the host function adds at least its launch call, and three other
// streams' chunks, launched first, hold the copy engines the timed chunk
// needs.
func TestHostFuncsAfterChunksReadTheCallbackPath(t *testing.T) {
	with, v, v0 := measuredWakeOnOff(t, "h200", "host functions after chunk graphs")
	for _, cs := range hfChunkCases {
		assert.InDelta(t, with.FrontEnd.CallbackWakeNs, v(hfChunkName(cs.name))-v0(hfChunkName(cs.name)), 100, cs.name)
		assert.InEpsilon(t, v(hfChunkName(cs.name)), v(hfChunkMeanName(cs.name)), 0.02, "%s: no tail (the first repetition after the warm-up aside)", cs.name)
	}
	alone := v(hfChunkName(hfChunkCases[0].name))
	assert.Greater(t, v(hfChunkName(hfChunkCases[1].name)), alone+1000, "the queued chunk's launch call")
	assert.Greater(t, v(hfChunkName(hfChunkCases[2].name)), alone+20000, "the other chunks' copies first")
}
