package acs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// The scheduler threads' figures (dispatch window): one job per operation
// at Batch 1, each launched once (at least the h100 config's launch cost,
// 4.8 us); the sync completion synchronizes and records nothing, the event
// completion records an event per job (at least the 1.6 us record cost);
// dispatch graph has no scheduler threads and reports none.
func TestSchedulerThreadStats(t *testing.T) {
	prog := smallRL(t)
	stats := func(p Params) map[string]float64 {
		s, err := NewSW(p)
		require.NoError(t, err)
		runPrepared(t, prog, s, func(h device.Host, in *workloads.Instance) error { return s.Run(h, in) })
		return s.Stats()
	}
	n := float64(prog.NumOps())

	sync := stats(DefaultParams())
	require.Equal(t, n, sync["thread_jobs"])
	assert.GreaterOrEqual(t, sync["thread_launch_ns_per_job"], 4816.0)
	assert.Positive(t, sync["thread_sync_ns_per_job"])
	assert.Positive(t, sync["thread_get_ns_per_job"])
	assert.Contains(t, sync, "thread_queue_ns_per_job")
	assert.Zero(t, sync["thread_queue_ns_per_job"], "queue calls are free on the h100 config (no queue lock)")
	assert.Zero(t, sync["thread_record_ns_per_job"])

	p := DefaultParams()
	p.Completion, p.InFlight = CompletionEvent, 4
	event := stats(p)
	require.Equal(t, n, event["thread_jobs"])
	assert.GreaterOrEqual(t, event["thread_record_ns_per_job"], 1586.0)
	assert.GreaterOrEqual(t, event["thread_sync_ns_per_job"], 0.0)

	for k := range stats(graphParams(32, "")) {
		assert.NotContains(t, k, "thread_", "dispatch graph has no scheduler threads")
	}
}
