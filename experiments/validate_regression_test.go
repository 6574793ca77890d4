package experiments

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments/fidelity"
)

// TestFidelityRegression simulates a representative subset of the
// committed GPU rows (docs/results/fidelity-regression.yaml) and fails
// when the simulator's errors on them grow past the documented limits.
// GPUSCHED_FIDELITY_CHECKS, a regular expression, runs only the checks
// whose names it matches (trying a model change on the rows it touches;
// make test runs every check).
func TestFidelityRegression(t *testing.T) {
	checks, err := LoadFidelityChecks(filepath.Join("..", "docs", "results", "fidelity-regression.yaml"))
	require.NoError(t, err)
	if expr := os.Getenv("GPUSCHED_FIDELITY_CHECKS"); expr != "" {
		only, err := regexp.Compile(expr)
		require.NoError(t, err, "GPUSCHED_FIDELITY_CHECKS")
		checks = slices.DeleteFunc(checks, func(c FidelityCheck) bool { return !only.MatchString(c.Name) })
		require.NotEmpty(t, checks, "GPUSCHED_FIDELITY_CHECKS %q matches no check", expr)
	}
	// As the fidelity page: the older runs simulated as they ran.
	defaults, err := LoadSchedulerDefaults(filepath.Join("..", "docs", "results", "fidelity-defaults.txt"))
	require.NoError(t, err)
	for i := range checks {
		c := &checks[i]
		v, _, err := ValidateFiles([]string{c.Results}, ValidateOptions{Keep: c.Keep, SchedulerDefaults: defaults})
		require.NoError(t, err, c.Name)
		for _, r := range v.Rows {
			assert.False(t, r.Excluded, "%s: %s: %s", c.Name, r.Label(), strings.Join(r.Problems, "; "))
		}
		s := v.Total
		t.Logf("%s: %d rows, makespan MAPE %s, max %s, speedup median %s, pairs same %s of %d, best %d/%d, regret max %s",
			c.Name, s.Rows, s.MakespanMAPE, s.MaxErr, s.SpeedupMedianErr, PairsSamePct(s), s.Pairs, s.BestAgree, s.Groups, s.RegretMax)
		assert.Empty(t, c.Violations(s), "the simulator got worse on committed GPU rows; if that is intended, say why and raise the limits in docs/results/fidelity-regression.yaml")
	}
}

func TestFidelityCheckViolations(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	two := 2
	c := FidelityCheck{Name: "c", Limits: FidelityLimits{MakespanMAPE: f(20), MaxErr: f(50), SpeedupMedian: f(5), PairsSame: f(80), BestAgree: &two, RegretMax: f(10)}}
	s := fidelity.Summary{MakespanMAPE: 19.9, MaxErr: 50, SpeedupMedianErr: 4, Pairs: 10, Same: 8, Groups: 3, BestAgree: 2, RegretMax: 10}
	assert.Empty(t, c.Violations(s), "at the limits")
	s.MakespanMAPE, s.Same, s.BestAgree, s.RegretMax = 20.1, 7, 1, 10.5
	v := c.Violations(s)
	require.Len(t, v, 4)
	assert.Equal(t, "c: makespan MAPE 20.1%, limit 20.0%", v[0])
	assert.Contains(t, v[1], "largest regret")
	assert.Contains(t, v[2], "pairs ordered as on the GPU 70.0%, limit at least 80.0%")
	assert.Contains(t, v[3], "best scheduler agrees on 1 of 3 groups, limit at least 2")
	// A metric with nothing to measure breaks its limit: the rows it
	// bounded are gone.
	assert.Len(t, c.Violations(fidelity.Summary{MakespanMAPE: fidelity.Pct(math.NaN()), SpeedupMedianErr: 1, MaxErr: 1, RegretMax: 1, Pairs: 1, Same: 1, BestAgree: 2}), 1)
	assert.Empty(t, (&FidelityCheck{}).Violations(s), "no limits, nothing checked")
}

func TestLoadFidelityChecks(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "r.yaml")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	cs, err := LoadFidelityChecks(write("checks:\n  - {name: a, results: x.json, workloads: [w], limits: {makespan_mape_pct: 3}}\n"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "x.json"), cs[0].Results)
	assert.Equal(t, 3.0, *cs[0].Limits.MakespanMAPE)
	assert.True(t, cs[0].Keep(&Row{Workload: "w", Scheduler: "any"}))
	assert.False(t, cs[0].Keep(&Row{Workload: "v"}))
	_, err = LoadFidelityChecks(write("checks:\n  - {name: a, results: x.json, workloads: [w], limits: {mape: 3}}\n"))
	assert.ErrorContains(t, err, "field mape not found")
	_, err = LoadFidelityChecks(write("checks:\n  - {name: a, workloads: [w]}\n"))
	assert.ErrorContains(t, err, "check 0 needs")
}
