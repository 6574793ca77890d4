package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// "host threads at once" tells a driver that serializes the threads'
// calls from one that runs them in parallel: on the simulator with the
// whole of every call under the driver lock, four threads' graph builds
// take little less per build than one thread's; with none of it, far
// less (the host side divides by four; the device's share does not).
func TestThreadedHostCallsSeeTheDriverLock(t *testing.T) {
	aggregate := func(lock float64, loop string, threads int) (float64, float64) {
		cfg, err := sim.LoadConfig("h100")
		require.NoError(t, err)
		cfg.Host.DriverLockFraction = lock
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

// host.graph_lock_fraction is fitted to how the graph loops scale with
// threads: a report simulated with one fraction gives it back, whatever
// the fitted config's single-thread costs.
func TestGraphLockFractionFitRecoversTheSimulatedOne(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the probe 21 times")
	}
	truth, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	truth.Host.GraphLockFraction = 0.9
	rep, err := Measure(mustSim(t, truth), []string{"host threads at once"}, nil)
	require.NoError(t, err)
	base, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	base.Host.InstantiateBaseNs *= 1.3 // another host's single-thread costs
	f := &Fitted{Config: base, Comments: map[string]string{}}
	require.NoError(t, f.fitGraphLockFraction(rep))
	assert.InDelta(t, 0.9, f.Config.Host.GraphLockFraction, 0.1)
	assert.Contains(t, f.Comments["host.graph_lock_fraction"], "graph build of 4 x4")

	fresh, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	none := &Fitted{Config: fresh, Comments: map[string]string{}}
	require.NoError(t, none.fitGraphLockFraction(&Report{}))
	assert.Zero(t, none.Config.Host.GraphLockFraction, "nothing measured: the base config's")
	assert.Contains(t, none.Notes[0], "kept from the base config")
}
