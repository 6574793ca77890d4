package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
)

const setConfig = `name: set-x
seed: 1
repetitions: 6
baseline: queue-2
workloads:
  - {name: sssp-8, family: jobs-sssp, params: {jobs: 8, vertices: 1024}}
  - {name: gemm-8, family: jobs-gemm, params: {jobs: 8}}
schedulers:
  - {name: queue-2, kind: queue, params: {b: 2}}
  - {name: set-2, kind: set, params: {b: 2, ring: 2}}
devices: [cuda]
`

// A split GPU campaign's file: only the second workload ran, SET's format.
const setLegacy = `{"experiment": "set-x", "source": "configs/experiments/set-x.yaml", "seed": 1, "repetitions": 6, "rows": [
 {"workload": "gemm-8", "family": "jobs-gemm", "jobs": 8, "unit": "flops", "units_per_job": 1000, "scheduler": "queue-2", "kind": "queue",
  "desc": "queue(b=2)", "device": "cuda", "device_name": "NVIDIA H100", "makespans_ns": [2000, 4000, 2000, 4000, 2000, 4000], "metrics": {"jobs": 8},
  "outputs": "every job equal to its CPU reference", "interleaved": true},
 {"workload": "gemm-8", "family": "jobs-gemm", "jobs": 8, "unit": "flops", "units_per_job": 1000, "scheduler": "set-2", "kind": "set",
  "desc": "set(b=2,depth=2,ring=2)", "device": "cuda", "device_name": "NVIDIA H100", "makespans_ns": [1000, 1000, 1000, 1000, 1000, 1000], "metrics": {"jobs": 8},
  "outputs": "every job equal to its CPU reference", "interleaved": true}]}`

func TestConvertKeepsMeasurementsAndPlacesRows(t *testing.T) {
	old, err := decodeLegacy([]byte(setLegacy))
	require.NoError(t, err)
	assert.Equal(t, "set", old.format)
	r, err := convert(old, []byte(setConfig), "set", "set-x.yaml")
	require.NoError(t, err)
	data, err := json.Marshal(r)
	require.NoError(t, err)
	back, err := experiments.ParseResults(data, "converted")
	require.NoError(t, err, "a converted file loads, its digest its resolved experiment's")

	require.Len(t, back.Rows, 2)
	assert.Equal(t, 2, back.TotalRows, "the workload that did not run is not in the matrix")
	require.Len(t, back.Resolved.Workloads, 1)
	q, s := back.Rows[0], back.Rows[1]
	assert.Equal(t, []int64{2000, 4000, 2000, 4000, 2000, 4000}, q.MakespansNS, "as recorded")
	assert.Equal(t, 1, s.Index)
	assert.True(t, q.Baseline)
	assert.Equal(t, map[string]string{"b": "2", "ring": "2"}, s.SchedulerParams)
	assert.Equal(t, map[string]string{"jobs": "8"}, s.WorkloadParams)
	assert.Equal(t, &experiments.Throughput{Jobs: 8, Unit: "flops", UnitsPerJob: 1000}, s.Throughput)
	assert.Equal(t, 1, s.Warmup, "a GPU row's default warm-up")
	require.NotNil(t, s.PairedSpeedup)
	assert.Equal(t, 3.0, s.PairedSpeedup.Median, "paired with queue-2 round by round: 2x and 4x")
	assert.Contains(t, back.Migrated, "from the set format")
	assert.Contains(t, back.Migrated, "1 of its 2 workloads")

	_, err = convert(old, []byte(setConfig[:len(setConfig)-len("devices: [cuda]\n")]+"devices: [h100]\n"), "set", "x")
	assert.ErrorContains(t, err, "not in the experiment file", "a row of a device the file does not name")
	_, err = decodeLegacy([]byte(`{"schema_version": 2}`))
	assert.ErrorContains(t, err, "already schema 2")
}
