package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/experiments"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestRunAndReportOnSimulator(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(testConfig), 0o644))
	js := filepath.Join(dir, "out.json")
	require.NoError(t, runCmd(cfg, js, 2))

	data, err := os.ReadFile(js)
	require.NoError(t, err)
	var res Results
	require.NoError(t, json.Unmarshal(data, &res))
	require.Len(t, res.Rows, 6)
	byKey := map[string]Row{}
	for _, r := range res.Rows {
		byKey[r.Workload+"/"+r.Scheduler] = r
	}
	base, auto := byKey["gpt3 T=768/stream-sync"], byKey["gpt3 T=768/auto"]
	require.Empty(t, base.Errors)
	require.Empty(t, auto.Errors)
	assert.Greater(t, medianNS(base.MakespansNS)/medianNS(auto.MakespansNS), 1.1)
	assert.InDelta(t, 1.09, auto.Waves[0], 0.01)
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

	require.Len(t, res.Deadlocks, 2)
	assert.False(t, res.Deadlocks[0].WaitKernel)
	assert.Contains(t, res.Deadlocks[0].Result, "deadlock at")
	assert.Contains(t, res.Deadlocks[0].Result, "blocks spin holding their SMs")
	assert.Equal(t, "completed", res.Deadlocks[1].Result)

	md := filepath.Join(dir, "r.md")
	require.NoError(t, reportCmd(md, []string{js}))
	b, err := os.ReadFile(md)
	require.NoError(t, err)
	s := string(b)
	for _, want := range []string{"## gpt3", "## resnet38", "| gpt3 T=768 | 1.09 + 2.18 |", "wait kernel false: `deadlock at", "| gpt3 T=768 | h100 | strided |",
		"- h100: 1 fallbacks (1.000x - 1.000x); synchronized: gpt3 T=768 1."} {
		assert.True(t, strings.Contains(s, want), "report lacks %q", want)
	}
}

func TestMedian(t *testing.T) {
	assert.Equal(t, 2.0, medianNS([]int64{3, 1, 2}))
	assert.Equal(t, 2.5, medianNS([]int64{4, 1, 2, 3}))
	assert.Zero(t, medianNS(nil))
}

// plainDevice hides the simulator's Observer, so task.run takes the path a
// GPU takes: every scheduler prepared on one binding and measured in
// interleaved rounds.
type plainDevice struct{ device.Device }

func TestInterleavedRoundsMatchSequentialRunsOnTheSimulator(t *testing.T) {
	e, err := experiments.ParseExperiment([]byte(strings.Replace(testConfig, "repetitions: 1", "repetitions: 3", 1)), "cfg.yaml")
	require.NoError(t, err)
	tk := task{exp: e, device: "h100", workload: e.Workloads[0]}
	dev, err := experiments.OpenDevice("h100")
	require.NoError(t, err)
	sequential := tk.run(dev)
	interleaved := tk.run(plainDevice{dev})
	require.Len(t, interleaved, 3)
	for i, r := range interleaved {
		s := sequential[i]
		assert.Equal(t, s.Scheduler, r.Scheduler)
		assert.Equal(t, s.Errors, r.Errors, r.Scheduler)
		if len(s.Errors) > 0 {
			// A scheduler that cannot prepare (strided on GPT-3) fails
			// alone; the others are still measured in rounds.
			assert.False(t, r.Interleaved)
			continue
		}
		assert.True(t, r.Interleaved, r.Scheduler)
		assert.False(t, s.Interleaved, r.Scheduler)
		// Every simulated run starts from a synchronized device, so the
		// order of the runs cannot change their times beyond the rounding
		// of picoseconds to whole nanoseconds at other start times.
		require.Len(t, r.MakespansNS, 3)
		for k := range r.MakespansNS {
			assert.InDelta(t, s.MakespansNS[k], r.MakespansNS[k], 2, "%s run %d", r.Scheduler, k)
		}
		assert.Equal(t, s.Choices, r.Choices)
	}
}

// TestPhasesReachTheRows: a tilesync scheduler with phases reports when
// each GEMM ended in its row's stats, on both measuring paths; one without
// reports nothing.
func TestPhasesReachTheRows(t *testing.T) {
	cfg := strings.Replace(testConfig, "  - {name: strided, kind: tilesync, params: {policy: strided}}",
		"  - {name: row phases, kind: tilesync, params: {policy: row, phases: true}}", 1)
	e, err := experiments.ParseExperiment([]byte(cfg), "cfg.yaml")
	require.NoError(t, err)
	tk := task{exp: e, device: "h100", workload: e.Workloads[0]}
	dev, err := experiments.OpenDevice("h100")
	require.NoError(t, err)
	for name, d := range map[string]device.Device{"sequential": dev, "interleaved": plainDevice{dev}} {
		rows := tk.run(d)
		require.Len(t, rows, 3, name)
		assert.Nil(t, rows[0].Stats, "%s: stream-sync has no phases", name)
		ph := rows[2]
		require.Empty(t, ph.Errors, name)
		assert.Contains(t, ph.Desc, ",phases)")
		require.Len(t, ph.Stats, 2, "%s: %v", name, ph.Stats)
		assert.Less(t, ph.Stats["end_us 00 gemm1[0]"], ph.Stats["end_us 01 gemm2[0]"], name)
		assert.InDelta(t, float64(ph.MakespansNS[0])/1e3, ph.Stats["end_us 01 gemm2[0]"], 30, name)
	}
}
