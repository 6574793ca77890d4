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
// the queue calls cost what host.queue_call_ns says;
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
	// Each job: a Len of the thread's work queue after its launch and the
	// completion's Put, each 200 ns + 60 ns for every other live host
	// thread (the window thread and three other scheduler threads) on the
	// h100 config: 2 x 440 ns.
	assert.InDelta(t, 880.0, sync["thread_queue_ns_per_job"], 0.5, "a job's Len and Put")
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
