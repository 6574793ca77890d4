package tournament

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
)

const tiny = `name: tournament-tiny
seed: 1
repetitions: 1
baseline: serial
workloads:
  - {name: dag, family: synthetic, params: {layers: 3, width: 4, steps: 1, iters: 64, max_blocks: 16}}
  - {name: jobs, family: jobs-sobel, params: {jobs: 8, size: 32}}
  - {name: pair, family: tiles-mlp, params: {model: gpt3, tokens: 64, hidden: 1024, ff: 512, no_data: true}}
schedulers:
  - {name: serial, kind: serial}
  - {name: kesco+graph, kind: kesco, params: {graph: true}}
  - {name: set, kind: set, params: {b: 2}}
  - {name: tilesync, kind: tilesync}
  - {name: portfolio, kind: portfolio, params: {check: 0}}
devices: [h100]
`

// TestTournamentOnTheSimulator runs a tiny tournament: the rows whose
// scheduler does not apply are not run and say what they lack; the others
// run; the report has one table with a winner per workload, the heatmap,
// and the portfolio, whose exact model (the simulator itself) and whose
// candidates (every other column's schedule among them) put it within 0%
// of each workload's best other scheduler.
func TestTournamentOnTheSimulator(t *testing.T) {
	p, err := experiments.PaperByName("tournament")
	require.NoError(t, err)
	e, err := experiments.ParseExperiment([]byte(tiny), "tiny.yaml")
	require.NoError(t, err)
	res, err := experiments.Run(e, experiments.RunOptions{Paper: p})
	require.NoError(t, err)
	na := map[string][]string{}
	for _, r := range res.Rows {
		assert.Empty(t, r.Errors, r.Workload+"/"+r.Scheduler)
		if len(r.NotApplicable) > 0 {
			assert.Nil(t, r.Makespan)
			na[r.Workload+"/"+r.Scheduler] = r.NotApplicable
			continue
		}
		require.NotNil(t, r.Makespan, r.Workload+"/"+r.Scheduler)
	}
	assert.Equal(t, map[string][]string{
		"dag/set": {"jobs"}, "dag/tilesync": {"tile-pairs"},
		"jobs/tilesync": {"tile-pairs"},
		"pair/set":      {"jobs"},
	}, na)

	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.json")
	_, err = experiments.Write(dir, res, []string{"json"})
	require.NoError(t, err)
	require.NoError(t, os.Rename(filepath.Join(dir, "results.json"), file))
	var page strings.Builder
	in := &experiments.ReportInput{Sets: []*experiments.Results{res}, Files: []string{file}, Dir: dir}
	require.NoError(t, p.Report(&page, in))
	text := page.String()
	assert.Contains(t, text, "| workload | serial | kesco+graph | set | tilesync | portfolio | winner |")
	assert.Contains(t, text, "| dag | 1.00x |")
	assert.Contains(t, text, "n/a")
	assert.Contains(t, text, "### portfolio, simulator: h100")
	assert.Contains(t, text, "within 3% of the best other scheduler on 3 (met)")
	svg, err := os.ReadFile(filepath.Join(dir, HeatmapFile))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(svg), "<?xml"), "an SVG")

	m := matrices(res)[0]
	for i := range m.rows {
		v, ok := m.judge(i, m.portfolios()[0])
		require.True(t, ok)
		assert.LessOrEqual(t, v.regret, 0.0, m.rows[i])
		assert.False(t, v.belowSerial)
	}
}
