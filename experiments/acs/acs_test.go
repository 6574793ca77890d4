package acs

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
)

const tinyExperiment = `
name: acs-tiny
seed: 1
repetitions: 1
baseline: serial
workloads:
  - {name: ant, family: rl-physics, params: {env: ant, envs: 32, envs_per_group: 8, steps: 2, warmup: 5}}
  - {name: walker2d, family: rl-physics, params: {env: walker2d, envs: 32, envs_per_group: 8, steps: 2, warmup: 5}}
schedulers:
  - {name: serial, kind: serial}
  - {name: acs-sw, kind: acs-sw}
  - {name: acs-sw-N8, kind: acs-sw, params: {window: 8}}
  - {name: acs-sw-K2, kind: acs-sw, params: {threads: 2}}
  - {name: acs-sw-inflight4, kind: acs-sw, params: {inflight: 4}}
  - {name: acs-sw-shared, kind: acs-sw, params: {dispatch: shared}}
  - {name: acs-hw, kind: acs-hw}
  - {name: acs-hw-checkers2, kind: acs-hw, params: {checkers: 2}}
devices: [h100]
`

func TestRunAndReport(t *testing.T) {
	e, err := experiments.ParseExperiment([]byte(tinyExperiment), "acs-tiny.yaml")
	require.NoError(t, err)
	p, err := experiments.PaperByName("acs")
	require.NoError(t, err)
	res, err := experiments.Run(e, experiments.RunOptions{Paper: p, Workers: 2, DropSeries: true})
	require.NoError(t, err)
	require.Len(t, res.Rows, 16)
	for _, row := range res.Rows {
		assert.Empty(t, row.Errors, row.Scheduler)
		require.NotNil(t, row.Races, row.Scheduler)
		assert.Zero(t, *row.Races, "%s/%s", row.Workload, row.Scheduler)
		assert.Nil(t, row.Utilization, "the series are left out")
	}

	var out bytes.Buffer
	require.NoError(t, report(&out, &experiments.ReportInput{Sets: []*experiments.Results{res}, Files: []string{"acs-tiny.json"}}))
	page := out.String()
	for _, want := range []string{
		"## Targets",
		"| ACS-HW above ACS-SW, both as the paper configures them (simulator) | h100 | ACS-HW (one host thread) over ACS-SW (N=32, K=4, sync): faster on ",
		"| ACS-HW above ACS-SW, the best variant of each beyond the paper (simulator) | h100 | best ACS-HW over best ACS-SW: faster on ",
		"; ACS-HW with one host thread over best ACS-SW: faster on ",
		"| acs-sw-shared |",
		"| acs-hw-checkers2 |",
		"### rl-physics on h100 (NVIDIA H100",
		"Window sweep (K = 4):",
		"Thread sweep (N = 32):",
		"| N = 8 |",
		"| K = 2 |",
		"no GPU results in this report yet",
		"Race checker: 0 races over 16 simulator rows.",
		"## Commands",
	} {
		assert.Contains(t, page, want)
	}
}

// Two GPU runs of one experiment are told apart in the targets table by
// the GPU's model and the day each ran.
func TestGPURunLabelNamesModelAndDay(t *testing.T) {
	r := &experiments.Results{Experiment: "acs-gpu-confirm",
		Rows:       []experiments.Row{{Device: "cuda", DeviceName: "NVIDIA H200"}},
		Provenance: []experiments.Provenance{{Gpusched: "devel", Date: "2026-11-26"}}}
	assert.Equal(t, "cuda (acs-gpu-confirm, NVIDIA H200, 2026-11-26)", gpuRunLabel(r, "cuda"))
	r.Provenance = nil
	assert.Equal(t, "cuda (acs-gpu-confirm, NVIDIA H200)", gpuRunLabel(r, "cuda"), "a converted file records no day")
}
