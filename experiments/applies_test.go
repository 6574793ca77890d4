package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
)

// TestFamiliesOfferWhatTheyAre: the traits computed from each family's
// small workload (smallWorkloads) are what the family is: job pipelines
// offer jobs, cuSync's pairs tile pairs, the mixes independent tasks,
// programs chosen at run time no whole-program planning, programs whose
// steps repeat one graph static steps.
func TestFamiliesOfferWhatTheyAre(t *testing.T) {
	ops, whole, static := sched.TraitOps, sched.TraitWholeProgram, sched.TraitStaticSteps
	indep, jobs, tiles := sched.TraitIndependentSteps, sched.TraitJobs, sched.TraitTilePairs
	want := map[string][]sched.Trait{
		"synthetic":        {ops, whole},
		"synthetic-random": {ops, whole},
		"kesco":            {ops, whole, static},
		"kesco-mix":        {ops, whole, indep},
		"rl-physics":       {ops},
		"dynamic-dnn":      {ops},
		"nas-static":       {ops, whole, static},
		"dnn-static":       {ops, whole, static},
		"tiles-mlp":        {ops, whole, static, tiles},
		"tiles-convpair":   {ops, whole, static, tiles},
		"file":             {ops, whole, static},
	}
	for _, f := range []string{"jobs-sobel", "jobs-sssp", "jobs-bp", "jobs-gemm", "jobs-knn", "jobs-hotspot"} {
		want[f] = []sched.Trait{ops, whole, indep, jobs}
	}
	for _, f := range Workloads() {
		w, ok := want[f]
		require.True(t, ok, "family %s: say what it offers here", f)
		assert.Equal(t, w, ProgramOffers(smallWorkload(t, f)), f)
	}
	h100, err := sim.NewNamed("h100")
	require.NoError(t, err)
	got, err := DeviceOffers(h100)
	require.NoError(t, err)
	assert.Equal(t, []sched.Trait{sched.TraitDependencyQueue}, got)
	noDQ, err := sim.NewNamed("h100", sim.WithDependencyQueue(false))
	require.NoError(t, err)
	got, err = DeviceOffers(noDQ)
	require.NoError(t, err)
	assert.Empty(t, got)
}
