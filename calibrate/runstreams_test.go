package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The patterns issue the cross-stream edges their names say: none for
// paths, one a path but the first for paths in a chain, one a kernel but
// the first for the round-robin chain and one a kernel past the first
// layer for layers; never a dependency on a later kernel.
func TestRunPatternsEdges(t *testing.T) {
	edges := func(p runPattern, s int) int {
		n := 0
		for j := 0; j < runKernels; j++ {
			u := p.dep(j, s)
			require.Less(t, u, j, "%s over %d: kernel %d", p.name, s, j)
			if u >= 0 && p.assign(u, s) != p.assign(j, s) {
				n++
			}
		}
		return n
	}
	for _, s := range runStreamCounts[1:] {
		assert.Equal(t, 0, edges(runPatterns[0], s), "paths, %d streams", s)
		assert.Equal(t, s-1, edges(runPatterns[1], s), "paths in a chain, %d streams", s)
		assert.Equal(t, runKernels-1, edges(runPatterns[2], s), "round-robin chain, %d streams", s)
		assert.Equal(t, runKernels-s, edges(runPatterns[3], s), "layers, %d streams", s)
		for j := 0; j < runKernels; j++ {
			for _, p := range runPatterns {
				require.Less(t, p.assign(j, s), s, "%s over %d streams: kernel %d", p.name, s, j)
			}
		}
	}
}

// On the simulator each call costs the config's figure (the first launch
// on a stream as any other: the simulator has no such cost), the run's
// wall time holds its issue and synchronizes, and a host-bound run of
// short spins costs at least its launches.
func TestRunStreamsProbeSeesTheCalls(t *testing.T) {
	cfg := loadConfig(t, "h100")
	cfg.Host.UntimedRecordNs = 500
	_, value := measured(t, cfg, "runs over streams")
	for _, p := range runPatterns[1:] {
		what := fmt.Sprintf("%s, 2 us spins, 8 streams", p.name)
		assert.InDelta(t, 500, value("run over streams: record, "+what), 50, what)
		assert.InDelta(t, cfg.Host.WaitNs, value("run over streams: wait, "+what), 50, what)
		assert.InDelta(t, cfg.Host.LaunchNs, value("run over streams: first launch a stream, "+what), 50, what)
		assert.InDelta(t, cfg.Host.LaunchNs, value("run over streams: other launches, "+what), 50, what)
		wall, issue, syncs := value("run over streams, "+what), value("run over streams: issue, "+what), value("run over streams: synchronizes, "+what)
		assert.GreaterOrEqual(t, wall, issue+syncs, what)
		assert.Greater(t, issue, runKernels*cfg.Host.LaunchNs, what)
	}
	assert.Greater(t, value("run over streams: device time, paths in a chain, 20 us spins, 4 streams"), runKernels*20e3,
		"a chain of 20 us spins takes at least their sum behind the gate")
}

// A report simulated with a known host.sync_switch_ns gives it back, and a
// report without "runs over streams" is an error naming the section.
func TestFitRunSyncsRecoversTheSimulatedSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the section a few times")
	}
	truth := loadConfig(t, "h100")
	truth.Host.SyncSwitchNs = 1500
	rep, err := Measure(mustSim(t, truth), []string{"runs over streams"}, nil)
	require.NoError(t, err)
	grid := runSyncSwitches
	runSyncSwitches = []float64{0, 500, 1000, 1500, 2000}
	defer func() { runSyncSwitches = grid }()
	f, err := FitRunSyncs(rep, loadConfig(t, "h100"))
	require.NoError(t, err)
	assert.Equal(t, 1500.0, f.Config.Host.SyncSwitchNs)
	assert.Contains(t, f.Comments["host.sync_switch_ns"], "1500 ns fits best")

	_, err = FitRunSyncs(&Report{}, loadConfig(t, "h100"))
	require.ErrorContains(t, err, "runs over streams")
}

// "chains beside other streams" on the simulator reads back
// front_end.pending_queue_ns: a chain's kernel costs back_to_back_ns
// alone, beside one waiting stream and beside busy streams with nothing
// queued, and pending_queue_ns more per waiting (or queued) stream beyond
// the first, up to the bound.
func TestChainsBesideReadsPendingQueues(t *testing.T) {
	cfg := loadConfig(t, "h100")
	cfg.FrontEnd.PendingQueueNs, cfg.FrontEnd.PendingQueueMaxNs = 500, 1200
	_, read := measured(t, cfg, "chains beside other streams")
	value := func(name string) float64 { return read("chain beside other streams, " + name) }
	b2b := cfg.FrontEnd.BackToBackNs
	assert.InDelta(t, b2b, value("20 us spins, alone"), 10)
	assert.InDelta(t, b2b, value("20 us spins, 1 stream waiting on the chain's end"), 10)
	assert.InDelta(t, b2b+500, value("2 us spins, 2 streams waiting on the chain's end"), 10)
	assert.InDelta(t, b2b+1000, value("20 us spins, 3 streams running a long kernel, one queued behind"), 10)
	assert.InDelta(t, b2b+1200, value("20 us spins, 63 streams waiting on the chain's end"), 10)
	assert.InDelta(t, b2b, value("20 us spins, 63 streams running a long kernel"), 10)
}
