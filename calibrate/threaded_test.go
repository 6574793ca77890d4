package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// "host threads at once" tells a driver that serializes the threads'
// calls from one that runs them in parallel: on the simulator with the
// whole of every call under the driver lock, four threads' graph builds
// take little less per build than one thread's; with none of it, far
// less (the host side divides by four; the device's share does not).
func TestThreadedHostCallsSeeTheDriverLock(t *testing.T) {
	aggregate := func(lock float64, loop string, threads int) (float64, float64) {
		cfg := loadConfig(t, "h100")
		// Graph builds under the driver fraction too (graph_lock_fraction
		// 0), with no hand-off.
		cfg.Host.DriverLockFraction, cfg.Host.GraphLockFraction, cfg.Host.GraphLockHandoffNs = lock, 0, 0
		rep, err := Measure(mustSim(t, cfg), []string{"host threads at once"}, nil)
		require.NoError(t, err)
		m, ok := rep.byName(fmt.Sprintf("%s, %d host thread(s) at once", loop, threads))
		require.True(t, ok, "measured %s over %d threads", loop, threads)
		own, ok := rep.byName(fmt.Sprintf("%s, %d host thread(s) at once, per thread", loop, threads))
		require.True(t, ok)
		return m.Value, own.Value
	}
	one, oneOwn := aggregate(1, "graph build of 4", 1)
	assert.InDelta(t, one, oneOwn, one*0.01, "one thread: the aggregate is the thread's own time")
	serialized, _ := aggregate(1, "graph build of 4", 4)
	parallel, parallelOwn := aggregate(0, "graph build of 4", 4)
	// Under the lock only the waits for the device overlap.
	assert.Greater(t, serialized, one*0.75, "every call under the lock: four threads little faster than one")
	assert.Less(t, parallel, one*0.4, "no lock: four threads build in parallel")
	assert.InDelta(t, parallel*4, parallelOwn, parallelOwn*0.1, "each of four parallel threads pays about one build per iteration")
	tokenOne, _ := aggregate(0, "token + launch + synchronize", 1)
	tokenFour, _ := aggregate(0, "token + launch + synchronize", 4)
	assert.Greater(t, tokenFour, tokenOne/4*1.5, "the token held over the launch serializes the launches")
}

// host.graph_lock_fraction and host.graph_lock_handoff_ns are fitted to
// how the graph-build loop scales with threads: a report simulated with
// one pair gives it back, whatever the fitted config's single-thread
// costs.
func TestGraphLockFitRecoversTheSimulatedPair(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the probe's graph builds 30 times")
	}
	truth := loadConfig(t, "h100")
	truth.Host.GraphLockFraction, truth.Host.GraphLockHandoffNs = 0.8, 2000
	rep, err := Measure(mustSim(t, truth), []string{"host threads at once"}, nil)
	require.NoError(t, err)
	// A coarser grid around the truth keeps the test short.
	fs, hs := graphLockFractions, graphLockHandoffs
	graphLockFractions, graphLockHandoffs = []float64{0.4, 0.6, 0.8, 1}, []float64{0, 1000, 2000, 3000, 4000, 6000}
	defer func() { graphLockFractions, graphLockHandoffs = fs, hs }()
	base := loadConfig(t, "h100")
	base.Host.DestroyNs *= 1.3 // another host's single-thread costs
	f := newFitted(base)
	require.NoError(t, f.fitGraphLock(rep))
	assert.InDelta(t, 0.8, f.Config.Host.GraphLockFraction, 0.21)
	assert.InDelta(t, 2000, f.Config.Host.GraphLockHandoffNs, 1000)
	assert.Contains(t, f.Comments["host.graph_lock_handoff_ns"], "4 threads")

	fresh := loadConfig(t, "h100")
	fresh.Host.GraphLockFraction, fresh.Host.GraphLockHandoffNs = 0.35, 700
	none := newFitted(fresh)
	require.NoError(t, none.fitGraphLock(&Report{}))
	assert.Equal(t, 0.35, none.Config.Host.GraphLockFraction, "nothing measured: the base config's")
	assert.Equal(t, 700.0, none.Config.Host.GraphLockHandoffNs)
	assert.Contains(t, none.Notes[0], "kept from the base config")
}
