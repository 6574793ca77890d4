package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
devices: [h100]
`

func TestRunAndReportOnTheSimulator(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tiny.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(tinyExperiment), 0o644))
	raw := filepath.Join(dir, "tiny.json")
	require.NoError(t, runCmd(cfg, raw, 2))

	data, err := os.ReadFile(raw)
	require.NoError(t, err)
	var r Results
	require.NoError(t, json.Unmarshal(data, &r))
	require.Len(t, r.Rows, 3)
	for _, row := range r.Rows {
		assert.Empty(t, row.Errors, row.Scheduler)
		assert.Len(t, row.MakespansNS, 2, "two measured repetitions")
		assert.Equal(t, row.MakespansNS[0], row.MakespansNS[1], "the simulator is deterministic")
		require.NotNil(t, row.Races)
		assert.Zero(t, *row.Races)
		assert.Equal(t, 8, row.Jobs)
		assert.Equal(t, "edge relaxations", row.Unit)
		assert.Equal(t, float64(1024*4*4), row.UnitsPerJob)
		assert.Equal(t, 8.0, row.Metrics["jobs"])
		assert.Positive(t, row.Metrics["t_schedule_s"])
	}
	assert.Equal(t, "set(b=2)", r.Rows[2].Desc)

	md := filepath.Join(dir, "set.md")
	notes := filepath.Join(dir, "notes.md")
	require.NoError(t, os.WriteFile(notes, []byte("## Findings\n\nSET wins.\n"), 0o644))
	require.NoError(t, reportCmd(md, notes, []string{raw}))
	page, err := os.ReadFile(md)
	require.NoError(t, err)
	text := string(page)
	assert.Contains(t, text, "## Findings\n\nSET wins.")
	assert.Contains(t, text, "## set-tiny on h100")
	assert.Contains(t, text, "| sssp-8 | 2 |", "the SET vs Queue vs Batching pair at b=2")
	assert.Contains(t, text, "**mean** (1 pairs)")
	assert.Contains(t, text, "| set(b=2) |")
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

func TestMedian(t *testing.T) {
	assert.Equal(t, 2.0, median([]int64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]int64{4, 1, 2, 3}))
	assert.True(t, median(nil) != median(nil), "NaN for no repetitions")
}
