package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A paper's report reads a gpusched run's results only where the paper
// adds nothing to the rows, and never another paper's.
func TestCheckReportInputRunner(t *testing.T) {
	input := func(runner string) *ReportInput {
		r := &Results{Experiment: "x", Resolved: &Resolved{Runner: runner}, Rows: []Row{{Workload: "w"}}}
		return &ReportInput{Sets: []*Results{r}, Files: []string{"x.json"}}
	}
	plain := &Paper{Name: "plain"}
	require.NoError(t, plain.CheckReportInput(input("plain")))
	require.NoError(t, plain.CheckReportInput(input("")), "gpusched run gives the rows gpusched paper plain run gives")
	require.ErrorContains(t, plain.CheckReportInput(input("other")), "not of gpusched paper plain")

	filtered := &Paper{Name: "filtered", OnlyApplicable: true}
	require.ErrorContains(t, filtered.CheckReportInput(input("")), "results of gpusched run (experiment x), not of gpusched paper filtered")
	probed := &Paper{Name: "probed", Probes: func(string) ([]Probe, error) { return nil, nil }}
	require.Error(t, probed.CheckReportInput(input("")))
}
