package hardening

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/mutate"
)

// TestMutationSuite runs every mutation against every family on a slowed
// simulated H100 and prints the catch-rate table (go test -v). It asserts
// what must hold: the unmutated schedules are race-free (else a catch
// would mean nothing), every mutation finds sites in the families where
// the table says it applies, and the race checker catches every kind of
// mutation somewhere. The catch rate itself is reported, not asserted: a
// miss is a removed ordering whose commands did not overlap in time.
func TestMutationSuite(t *testing.T) {
	rep, err := MutationSuite("h100", 1000, 1, 64, Families, 1)
	require.NoError(t, err)
	t.Logf("catch rate on the simulator (%s):\n%s\n%s", rep.Device, rep.Table(), rep.Details())
	for k, races := range rep.Controls {
		assert.Zero(t, races, "unmutated control %s must be race-free", k)
	}
	caught := map[mutate.Kind]int{}
	applies := map[mutate.Kind]map[string]bool{}
	for _, c := range rep.Cells {
		caught[c.Mutation] += c.Caught()
		if applies[c.Mutation] == nil {
			applies[c.Mutation] = map[string]bool{}
		}
		applies[c.Mutation][c.Family] = c.Applies()
		for _, r := range c.Runs {
			assert.NoError(t, r.Err, "%s x %s, %s site %d", c.Mutation, c.Family, r.Scheduler, r.Site)
		}
	}
	for _, k := range mutate.Kinds {
		assert.Positive(t, caught[k], "no %s was caught in any family", k)
	}
	// Every family but the ones whose schedules cannot host it (see the
	// table's n/a cells in docs/results/hardening.md) offers each mutation.
	for _, f := range []string{"synthetic", "kesco", "rl", "dnn", "jobs", "tiles"} {
		for _, k := range []mutate.Kind{mutate.DropWait, mutate.WrongEvent, mutate.SharedStream, mutate.MissingEdge} {
			assert.True(t, applies[k][f], "%s found no site in family %s", k, f)
		}
	}
}

func TestSpread(t *testing.T) {
	assert.Equal(t, []int{1, 2}, spread([]int{1, 2}, 3))
	assert.Equal(t, []int{0, 5, 10}, spread([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 3))
}

func TestSlowConfig(t *testing.T) {
	cfg, err := SlowConfig("h100", 10)
	require.NoError(t, err)
	base, err := SlowConfig("h100", 1)
	require.NoError(t, err)
	assert.Equal(t, base.Info.ClockHz/10, cfg.Info.ClockHz)
	assert.InDelta(t, base.Info.MemBandwidth/10, cfg.Info.MemBandwidth, 1)
	_, err = SlowConfig("h100", 0.5)
	assert.ErrorContains(t, err, "at least 1")
	_, err = SlowConfig("no-such-gpu", 2)
	assert.Error(t, err)
}

// TestGPUMutationSuiteRunsOnTheSimulator exercises the GPU suite's code
// path with the simulator standing in for the GPU: the simulator moves no
// data, so no output can differ and nothing may be caught, but every site
// must run without error and the controls must match.
func TestGPUMutationSuiteRunsOnTheSimulator(t *testing.T) {
	d, err := sim.NewNamed("h100", sim.WithRaceCheck(false))
	require.NoError(t, err)
	small := []Family{{"synthetic", Spec{"synthetic", "{layers: 3, width: 4, steps: 1}"}, []Spec{{"round-robin", "{k: 4}"}, {"graph-per-step", "{streams: 4}"}}}}
	rep, err := GPUMutationSuite(d, false, "h100", small, 1, 1)
	require.NoError(t, err)
	runs := 0
	for _, c := range rep.Cells {
		for _, r := range c.Runs {
			runs++
			assert.NoError(t, r.Err)
			assert.False(t, r.Caught(), "the simulator computes nothing: no output can differ")
		}
	}
	assert.Positive(t, runs)
	for k, n := range rep.Controls {
		assert.Zero(t, n, k)
	}
}
