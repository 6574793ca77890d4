package set

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/experiments"
)

const tinyExperiment = `
name: set-tiny
seed: 1
repetitions: 2
workloads:
  - {name: sssp-8, family: jobs-sssp, params: {jobs: 8, vertices: 1024, degree: 4, iterations: 4}}
schedulers:
  - {name: batching-2, kind: batching, params: {b: 2}}
  - {name: queue-2, kind: queue, params: {b: 2}}
  - {name: set-2, kind: set, params: {b: 2}}
  - {name: setring-2, kind: set, params: {b: 2, ring: 2}}
devices: [h100]
`

// runTiny runs an experiment as gpusched paper set run does and returns
// the results and the report on them.
func runTiny(t *testing.T, config string) (*experiments.Results, string) {
	t.Helper()
	e, err := experiments.ParseExperiment([]byte(config), "tiny.yaml")
	require.NoError(t, err)
	p, err := experiments.PaperByName("set")
	require.NoError(t, err)
	r, err := experiments.Run(e, experiments.RunOptions{Paper: p, Workers: 2})
	require.NoError(t, err)
	var page bytes.Buffer
	in := &experiments.ReportInput{Sets: []*experiments.Results{r}, Files: []string{"tiny.json"}, Notes: []byte("## Findings\n\nSET wins.\n")}
	require.NoError(t, p.CheckReportInput(in))
	require.NoError(t, report(&page, in))
	return r, page.String()
}

func TestRunAndReportOnTheSimulator(t *testing.T) {
	r, text := runTiny(t, tinyExperiment)
	assert.Equal(t, "set", r.Resolved.Runner)
	require.Len(t, r.Rows, 4)
	for _, row := range r.Rows {
		assert.Empty(t, row.Errors, row.Scheduler)
		assert.Len(t, row.MakespansNS, 2, "two measured repetitions")
		assert.Equal(t, row.MakespansNS[0], row.MakespansNS[1], "the simulator is deterministic")
		require.NotNil(t, row.Races)
		assert.Zero(t, *row.Races)
		require.NotNil(t, row.Throughput)
		assert.Equal(t, experiments.Throughput{Jobs: 8, Unit: "edge relaxations", UnitsPerJob: 1024 * 4 * 4}, *row.Throughput)
		assert.Equal(t, 8.0, row.SchedulerStats["jobs"])
		assert.Positive(t, row.SchedulerStats["t_schedule_s"])
	}
	assert.Equal(t, "set(b=2,warm)", r.Rows[2].SchedulerDesc)
	assert.Equal(t, "set(b=2,depth=2,ring=2,warm)", r.Rows[3].SchedulerDesc)

	assert.Contains(t, text, "## Findings\n\nSET wins.")
	assert.Contains(t, text, "## set-tiny on h100")
	assert.Contains(t, text, "| sssp-8 | 2 |", "the SET vs Queue vs Batching pair at b=2")
	assert.Contains(t, text, "**mean** (1 pairs)")
	// A headline table per SET variant, the paper's first.
	paper := strings.Index(text, "### SET (the paper's: one job in flight per worker) against Queue and Batching")
	ring := strings.Index(text, "### SET-ring setring (depth=2,ring=2,warm: per-worker graph execs prepared only once complete) against Queue and Batching")
	require.GreaterOrEqual(t, paper, 0)
	require.Greater(t, ring, paper)
	assert.Equal(t, 2, strings.Count(text, "**mean** (1 pairs)"), "one pair in each variant's table")
	assert.NotContains(t, text, "## Every row", "no tables were written for this report")
}

func TestWorkersOf(t *testing.T) {
	tests := []struct {
		desc string
		want int
	}{
		{"set(b=4)", 4}, {"set(b=8,depth=2)", 8}, {"queue(b=2)", 2}, {"synchronous", 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, workersOf(tt.desc), tt.desc)
	}
}

// TestSETParams checks how the set kind's parameters become a SET: depth
// follows ring unless given, and bad combinations are refused by name.
func TestSETParams(t *testing.T) {
	tests := []struct {
		params  string
		want    string
		wantErr string
	}{
		{"{b: 4}", "set(b=4,warm)", ""},
		{"{b: 4, ring: 3}", "set(b=4,depth=3,ring=3,warm)", ""},
		{"{b: 2, ring: 4, depth: 2, coalesce: 2}", "set(b=2,depth=2,ring=4,coalesce=2,warm)", ""},
		{"{b: 8, ring: 4, threaded: true, coalesce: 4}", "set(b=8,depth=4,ring=4,threaded,coalesce=4,warm)", ""},
		{"{b: 4, ring: 9}", "", "ring is 9; it must be between 0 (off) and 8"},
		{"{b: 4, ring: 2, depth: 3}", "", "depth is 3 but ring is 2"},
		{"{b: 4, ring: 2, coalesce: 3}", "", "coalesce is 3; it must be between 1 and depth (2)"},
		{"{b: 4, depth: 2, coalesce: 2}", "", "above 1 only with threaded: true or a ring"},
		{"{b: 4, ring: 2, threaded: true, jobs_per_launch: 4}", "set(b=4,depth=2,ring=2,threaded,jobs=4,warm)", ""},
		{"{b: 8, ring: 2, coalesce: 2, jobs_per_launch: 8}", "set(b=8,depth=2,ring=2,coalesce=2,jobs=8,warm)", ""},
		{"{b: 4, ring: 2, jobs_per_launch: 1}", "set(b=4,depth=2,ring=2,warm)", ""},
		{"{b: 4, ring: 2, jobs_per_launch: 0}", "", "jobs_per_launch is 0; it must be between 1 and 32"},
		{"{b: 4, ring: 2, jobs_per_launch: 33}", "", "jobs_per_launch is 33; it must be between 1 and 32"},
		{"{b: 2, ring: 2, jobs_per_launch: 32, copies: batched}", "set(b=2,depth=2,ring=2,jobs=32,copies=batched,warm)", ""},
		{"{b: 4, jobs_per_launch: 4}", "", "jobs_per_launch is 4 but ring is 0"},
		{"{b: 4, depth: 4, threaded: true, coalesce: 2, copies: stream}", "set(b=4,depth=4,threaded,coalesce=2,copies=stream,warm)", ""},
		{"{b: 2, copies: stream}", "set(b=2,copies=stream,warm)", ""},
		{"{b: 2, copies: graph}", "set(b=2,warm)", ""},
		{"{b: 2, copies: host}", "", "copies is \"host\"; it must be graph"},
		{"{b: 4, ring: 2, copies: stream}", "", "copies is stream but ring is 2"},
		{"{b: 4, depth: 2, coalesce: 2, copies: stream}", "", "coalesce is 2; it must be between 1 and depth (2), and above 1 only with threaded: true or a ring"},
		{"{b: 4, ring: 2, threaded: true, jobs_per_launch: 8, copies: batched}", "set(b=4,depth=2,ring=2,threaded,jobs=8,copies=batched,warm)", ""},
		{"{b: 2, ring: 1, jobs_per_launch: 16, copies: batched}", "set(b=2,ring=1,jobs=16,copies=batched,warm)", ""},
		{"{b: 4, jobs_per_launch: 8, copies: batched}", "", "jobs_per_launch is 8 but ring is 0"},
		{"{b: 4, ring: 2, copies: batched}", "", "copies is batched but ring is 2 and jobs_per_launch 1"},
		{"{b: 4, ring: 2, threaded: true, jobs_per_launch: 16, copies: batched, warm: true}", "set(b=4,depth=2,ring=2,threaded,jobs=16,copies=batched,warm)", ""},
		{"{b: 2, copies: stream, warm: true}", "set(b=2,copies=stream,warm)", ""},
		{"{b: 4, rings: 2}", "", "rings"},
		{"{b: 2, ring: 2, jobs_per_launch: 16, copies: batched, branches: 4, warm: true}", "set(b=2,depth=2,ring=2,jobs=16,copies=batched,branches=4,warm)", ""},
		{"{b: 2, ring: 2, jobs_per_launch: 16, copies: batched, branches: 16}", "set(b=2,depth=2,ring=2,jobs=16,copies=batched,branches=16,warm)", ""},
		{"{b: 2, ring: 2, jobs_per_launch: 16, copies: batched, branches: 17}", "", "branches is 17; it spreads a chunk's jobs (copies: batched) over that many parallel graph branches, from 1 (one chain) to jobs_per_launch (16"},
		{"{b: 2, ring: 2, jobs_per_launch: 16, copies: batched, branches: -1}", "", "branches is -1"},
		{"{b: 2, ring: 2, jobs_per_launch: 16, branches: 4}", "", "branches is 4; it spreads a chunk's jobs (copies: batched)"},
	}
	for _, tt := range tests {
		t.Run(tt.params, func(t *testing.T) {
			var n yaml.Node
			require.NoError(t, yaml.Unmarshal([]byte(tt.params), &n))
			s, err := experiments.NewScheduler("set", n.Content[0])
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Name())
		})
	}
}

func TestVariantTitleNamesSETKGraph(t *testing.T) {
	title := variantTitle("setkg", "set(b=4,depth=4,threaded,coalesce=2,copies=stream)")
	assert.Equal(t, "SET-kgraph setkg (depth=4,threaded,coalesce=2,copies=stream: kernel-only graphs never updated, the job's copies issued on the worker's stream; gpusched's refinement)", title)
}

func TestVariantTitleNamesSETBatch(t *testing.T) {
	tests := []struct{ v, desc, want string }{
		{"setbatch8", "set(b=4,depth=2,ring=2,threaded,jobs=8,copies=batched)",
			"SET-batch setbatch8 (depth=2,ring=2,threaded,jobs=8,copies=batched: chunks of consecutive jobs per graph launch, one coalesced copy in and out per chunk, the jobs' kernels as parallel branches; gpusched's refinement)"},
		{"setbatch16s-br4", "set(b=2,depth=2,ring=2,jobs=16,copies=batched,branches=4,warm)",
			"SET-batch setbatch16s-br4 (depth=2,ring=2,jobs=16,copies=batched,branches=4,warm: chunks of consecutive jobs per graph launch, one coalesced copy in and out per chunk, the jobs' kernels in 4 parallel branches of consecutive jobs; gpusched's refinement)"},
		{"setbatch16s-br1", "set(b=8,depth=2,ring=2,jobs=16,copies=batched,branches=1,warm)",
			"SET-batch setbatch16s-br1 (depth=2,ring=2,jobs=16,copies=batched,branches=1,warm: chunks of consecutive jobs per graph launch, one coalesced copy in and out per chunk, the jobs' kernels in one chain; gpusched's refinement)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, variantTitle(tt.v, tt.desc))
	}
}

// TestReportSaysWhenRoundsWereInterleaved: a device section whose rows ran
// in interleaved rounds says so; others do not.
func TestReportSaysWhenRoundsWereInterleaved(t *testing.T) {
	for _, interleaved := range []bool{false, true} {
		r := &experiments.Results{Experiment: "x", Source: "x.yaml", Seed: 1, Repetitions: 1, Resolved: &experiments.Resolved{Runner: "set"},
			Rows: []experiments.Row{{Workload: "w", Scheduler: "queue-2", Kind: "queue", SchedulerDesc: "queue(b=2)", Device: "cuda",
				MakespansNS: []int64{1000}, SchedulerStats: map[string]float64{"jobs_per_s": 1}, Interleaved: interleaved,
				Throughput: &experiments.Throughput{Jobs: 1, Unit: "images", UnitsPerJob: 1}}}}
		var page bytes.Buffer
		require.NoError(t, report(&page, &experiments.ReportInput{Sets: []*experiments.Results{r}, Files: []string{"x.json"}}))
		assert.Equal(t, interleaved, strings.Contains(page.String(), "interleaved rounds"), "interleaved=%v", interleaved)
	}
}
