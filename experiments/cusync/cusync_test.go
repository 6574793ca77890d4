package cusync

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/stats"
)

const testConfig = `name: cusync-test
description: two rows on the simulated H100
seed: 1
repetitions: 1
warmup: 0
baseline: stream-sync
workloads:
  - {name: gpt3 T=768, family: tiles-mlp, params: {model: gpt3, tokens: 768, no_data: true}}
  - {name: resnet38 L0 b1, family: tiles-convpair, params: {model: resnet38, layer: 0, batch: 1, no_data: true}}
schedulers:
  - {name: stream-sync, kind: stream-sync}
  - {name: auto, kind: tilesync, params: {policy: auto}}
  - {name: strided, kind: tilesync, params: {policy: strided}}
devices: [h100]
`

// runPaper runs an experiment as gpusched paper cusync run does.
func runPaper(t *testing.T, config string) *experiments.Results {
	t.Helper()
	e, err := experiments.ParseExperiment([]byte(config), "cfg.yaml")
	require.NoError(t, err)
	p, err := experiments.PaperByName("cusync")
	require.NoError(t, err)
	res, err := experiments.Run(e, experiments.RunOptions{Paper: p, Workers: 2})
	require.NoError(t, err)
	return res
}

func TestRunAndReportOnSimulator(t *testing.T) {
	res := runPaper(t, testConfig)
	require.Len(t, res.Rows, 6)
	byKey := map[string]experiments.Row{}
	for _, r := range res.Rows {
		byKey[r.Workload+"/"+r.Scheduler] = r
	}
	base, auto := byKey["gpt3 T=768/stream-sync"], byKey["gpt3 T=768/auto"]
	require.Empty(t, base.Errors)
	require.Empty(t, auto.Errors)
	assert.Greater(t, stats.MedianOrZero(base.MakespansNS)/stats.MedianOrZero(auto.MakespansNS), 1.1)
	assert.InDelta(t, 1.09, auto.Facts["producer_waves"], 0.01)
	assert.Contains(t, auto.Choices[0], "row wait=true")
	// Both convolutions fit one wave: the rule falls back to stream order,
	// the baseline's schedule, so the same simulated time.
	rb, ra := byKey["resnet38 L0 b1/stream-sync"], byKey["resnet38 L0 b1/auto"]
	assert.Contains(t, ra.Choices[0], ": stream (both fit one wave")
	assert.Equal(t, rb.MakespansNS, ra.MakespansNS)
	require.NotNil(t, base.Races)
	assert.Zero(t, *base.Races)
	assert.NotEmpty(t, byKey["gpt3 T=768/strided"].Errors, "strided does not apply to GPT-3")
	assert.Contains(t, byKey["gpt3 T=768/strided"].Errors[0], "SwiGLU")

	require.Len(t, res.Probes, 2)
	assert.Equal(t, "false", res.Probes[0].Params["wait_kernel"])
	assert.Contains(t, res.Probes[0].Result, "deadlock at")
	assert.Contains(t, res.Probes[0].Result, "blocks spin holding their SMs")
	assert.Equal(t, "completed", res.Probes[1].Result)

	var page bytes.Buffer
	require.NoError(t, report(&page, &experiments.ReportInput{Sets: []*experiments.Results{res}, Files: []string{"out.json"}}))
	s := page.String()
	for _, want := range []string{"## gpt3", "## resnet38", "| gpt3 T=768 | 1.09 + 2.18 |", "wait kernel false: `deadlock at",
		"- h100: 1 fallbacks (1.000x - 1.000x); synchronized: gpt3 T=768 1."} {
		assert.True(t, strings.Contains(s, want), "report lacks %q", want)
	}
	assert.Regexp(t, `\| gpt3 T=768 \|[^\n]*\| error \|`, s, "strided's error shows in GPT-3's table")
}

// TestPhasesReachTheRows: a tilesync scheduler with phases reports when
// each GEMM ended in its row's stats; one without reports nothing.
func TestPhasesReachTheRows(t *testing.T) {
	cfg := strings.Replace(testConfig, "  - {name: strided, kind: tilesync, params: {policy: strided}}",
		"  - {name: row phases, kind: tilesync, params: {policy: row, phases: true}}", 1)
	rows := runPaper(t, cfg).Rows
	require.Len(t, rows, 6)
	assert.Nil(t, rows[0].SchedulerStats, "stream-sync has no phases")
	ph := rows[2]
	require.Empty(t, ph.Errors)
	assert.Contains(t, ph.SchedulerDesc, ",phases)")
	require.Len(t, ph.SchedulerStats, 2, "%v", ph.SchedulerStats)
	assert.Less(t, ph.SchedulerStats["end_us 00 gemm1[0]"], ph.SchedulerStats["end_us 01 gemm2[0]"])
	assert.InDelta(t, float64(ph.MakespansNS[0])/1e3, ph.SchedulerStats["end_us 01 gemm2[0]"], 30)
}
