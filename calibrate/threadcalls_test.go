package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var threadCallSections = []string{"host thread hand-off", "event records without timing", "launches over threads", "queue calls over threads"}

// The three probes time what the simulator charges for each call: a
// timing-disabled record host.untimed_record_ns and a timing one
// host.record_ns; one thread's queue calls the queue lock (nobody else
// wants it back to back but the measuring thread's Gets); one thread's
// launch host.launch_ns, and 8 threads' more (the driver lock).
func TestThreadCallProbesSeeTheirFields(t *testing.T) {
	cfg := lockOnly(t)
	cfg.Host.UntimedRecordNs, cfg.Host.QueueLockNs, cfg.Host.QueueLockHandoffNs = 600, 200, 0
	_, value := measured(t, cfg, threadCallSections[1:]...)
	assert.InDelta(t, 600, value(untimedRecordName), 0.5)
	assert.InDelta(t, cfg.Host.RecordNs, value(timedRecordName), 0.5)
	for _, call := range []string{"Put", "Len", "Get"} {
		assert.InDelta(t, 200, value(callName("queue calls beside launch + synchronize", call, 1)), 0.5, call)
	}
	assert.InDelta(t, cfg.Host.LaunchNs, value(callName("launch + synchronize", "launch", 1)), 0.5)
	assert.Greater(t, value(callName("launch + synchronize", "launch", 8)), cfg.Host.LaunchNs+1000, "8 threads wait for the driver lock")
	assert.Greater(t, value(callName("queue calls back to back", "Put", 8)), 200.0, "8 threads back to back wait for the queue lock")
}

// A report simulated with known fields gives them back.
func TestThreadCallsFitRecoversTheSimulatedFields(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the probes a few dozen times")
	}
	truth := lockOnly(t)
	truth.Host.UntimedRecordNs, truth.Host.DriverLockHandoffNs = 700, 1500
	truth.Host.QueueLockNs, truth.Host.QueueLockHandoffNs = 200, 800
	rep, err := Measure(mustSim(t, truth), threadCallSections, nil)
	require.NoError(t, err)
	// Coarser grids around the truth keep the test short.
	dh, ql, qh := driverLockHandoffs, callQueueLocks, callQueueHandoffs
	driverLockHandoffs, callQueueLocks, callQueueHandoffs = []float64{0, 500, 1500, 2500}, []float64{0, 100, 200, 300}, []float64{0, 400, 800, 1200}
	defer func() { driverLockHandoffs, callQueueLocks, callQueueHandoffs = dh, ql, qh }()
	f, err := FitThreadCalls(rep, loadConfig(t, "h100"))
	require.NoError(t, err)
	h := f.Config.Host
	assert.InDelta(t, 700, h.UntimedRecordNs, 0.5)
	assert.Equal(t, 1500.0, h.DriverLockHandoffNs)
	assert.Equal(t, 200.0, h.QueueLockNs)
	assert.Equal(t, 800.0, h.QueueLockHandoffNs)
	pp, ok := rep.byName(pingPongName)
	require.True(t, ok)
	assert.InDelta(t, pp.Value-400, h.HandoffNs, 0.5, "the ping-pong less two lock holds")
	assert.Contains(t, f.Comments["host.driver_lock_handoff_ns"], "8 threads")
	assert.Equal(t, truth.Host.DriverLockFraction, h.DriverLockFraction, "no launch throughput in the report: the fraction kept")
	assert.Contains(t, f.Comments["host.driver_lock_fraction"], "kept")
	assert.Contains(t, f.Comments["host.queue_lock_ns"], "back to back")

	// The probes one by one: what the report lacks is kept and noted.
	rec, err := Measure(mustSim(t, truth), []string{"event records without timing"}, nil)
	require.NoError(t, err)
	f, err = FitThreadCalls(rec, loadConfig(t, "h100"))
	require.NoError(t, err)
	assert.InDelta(t, 700, f.Config.Host.UntimedRecordNs, 0.5)
	assert.Zero(t, f.Config.Host.DriverLockHandoffNs)
	assert.Len(t, f.Notes, 2)
	queues, err := Measure(mustSim(t, truth), []string{"queue calls over threads"}, nil)
	require.NoError(t, err)
	_, err = FitThreadCalls(queues, loadConfig(t, "h100"))
	assert.ErrorContains(t, err, "host thread hand-off")
	_, err = FitThreadCalls(&Report{}, loadConfig(t, "h100"))
	assert.ErrorContains(t, err, "event records without timing")
}
