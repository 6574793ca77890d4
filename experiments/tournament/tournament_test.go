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
	in := &experiments.ReportInput{Sets: []*experiments.Results{res}, Files: []string{file}, Dir: dir, Notes: []byte("Which run is which.\n")}
	require.NoError(t, p.Report(&page, in))
	text := page.String()
	assert.Contains(t, text, "Which run is which.", "the notes")
	assert.Contains(t, text, "| simulator: h100 (NVIDIA H100 80GB HBM3), tiny | 3 | 3 (met) | - | 3 (met) |", "the targets of every run in one table")
	assert.Contains(t, text, "| workload | serial | kesco+graph | set | tilesync | portfolio | winner |")
	assert.Contains(t, text, "| dag | 1.00x |")
	assert.Contains(t, text, "n/a")
	assert.Contains(t, text, "### portfolio, simulator: h100 (NVIDIA H100 80GB HBM3), tiny")
	assert.Contains(t, text, "within 3% of the best other scheduler (median regret) on 3 (met)")
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

// row is a measured row of the tests' hand-built matrices.
func row(sched, kind string, params map[string]string, ns ...int64) *experiments.Row {
	s := make([]float64, len(ns))
	for i, v := range ns {
		s[i] = float64(v) / 1e3
	}
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	r := &experiments.Row{Scheduler: sched, Kind: kind, SchedulerParams: params, MakespansNS: ns, Interleaved: len(ns) > 1,
		Makespan: &experiments.Summary{N: len(ns), Median: med}}
	return r
}

// On the GPU the portfolio is strictly faster than a paper's strategy only
// where the paired interval says so, and its regret carries that interval;
// on the simulator a difference under simTie is a tie, and a tie does not
// make the portfolio the row's winner.
func TestJudgeIntervalsAndTies(t *testing.T) {
	kesco := map[string]string{"graph": "false"}
	gpu := &matrix{rows: []string{"w"}, cols: []string{"serial", "kesco", "portfolio"}, kinds: []string{"serial", "kesco", "portfolio"}}
	// Portfolio faster in the median (100 against 101) but slower in one
	// round of six: the interval of kesco/portfolio reaches below 1.
	gpu.cell = [][]*experiments.Row{{
		row("serial", "serial", nil, 200, 200, 200, 200, 200, 200),
		row("kesco", "kesco", kesco, 101, 101, 101, 101, 101, 99),
		row("portfolio", "portfolio", nil, 100, 100, 100, 100, 100, 100),
	}}
	v, ok := gpu.judge(0, 2)
	require.True(t, ok)
	assert.False(t, v.beatsPapers, "one round of six slower: not shown faster")
	require.NotNil(t, v.regretCI)
	assert.InDelta(t, 100.0/101, v.regretCI.Median, 1e-9)
	assert.InDelta(t, 100.0/101, v.regretCI.Lo, 1e-9)
	assert.InDelta(t, 100.0/99, v.regretCI.Hi, 1e-9)
	assert.Equal(t, 1, v.closest)
	assert.Equal(t, 1, gpu.winner(0), "not shown faster: the best other wins the row")
	gpu.cell[0][1] = row("kesco", "kesco", kesco, 101, 101, 101, 101, 101, 102)
	v, _ = gpu.judge(0, 2)
	assert.True(t, v.beatsPapers, "every round faster")
	assert.Equal(t, 2, gpu.winner(0))

	sim := &matrix{rows: []string{"w"}, cols: gpu.cols, kinds: gpu.kinds}
	sim.cell = [][]*experiments.Row{{row("serial", "serial", nil, 200000), row("kesco", "kesco", kesco, 100050), row("portfolio", "portfolio", nil, 100000)}}
	v, _ = sim.judge(0, 2)
	assert.False(t, v.beatsPapers, "0.05% apart on the simulator: a tie")
	assert.Nil(t, v.regretCI)
	assert.Equal(t, 1, sim.winner(0))
	sim.cell[0][1] = row("kesco", "kesco", kesco, 100200)
	v, _ = sim.judge(0, 2)
	assert.True(t, v.beatsPapers, "0.2% apart")
}
