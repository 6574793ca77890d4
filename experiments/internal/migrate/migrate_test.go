package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/configs"
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

// pinConfigs renames a device whose config of that name has changed to
// today's config that made the rows, and records its digest; a config that
// changed since, under any name, is an error naming the fields.
func TestPinConfigs(t *testing.T) {
	simLegacy := strings.ReplaceAll(setLegacy, `"cuda"`, `"h100"`)
	simConfig := strings.Replace(setConfig, "devices: [cuda]", "devices: [h100]", 1)
	old, err := decodeLegacy([]byte(simLegacy))
	require.NoError(t, err)
	r, err := convert(old, []byte(simConfig), "set", "configs/experiments/set-x.yaml at commit abcdef1")
	require.NoError(t, err)
	datasheet, err := configs.FS.ReadFile("devices/h100-datasheet.yaml")
	require.NoError(t, err)
	then := strings.Replace(string(datasheet), "name: h100-datasheet", "name: h100", 1)
	show := func(commit, path string) ([]byte, error) {
		assert.Equal(t, "abcdef1", commit)
		assert.Equal(t, "configs/devices/h100.yaml", path)
		return []byte("# a comment of the day\n" + then), nil
	}

	changed := strings.Replace(then, "latency_ns: 2000                    #", "latency_ns: 2100                    #", 1)
	_, err = pinConfigs(r, map[string]string{"h100": "h100-datasheet"}, func(string, string) ([]byte, error) { return []byte(changed), nil })
	assert.ErrorContains(t, err, "device h100 at commit abcdef1 is not today's h100-datasheet: copy.latency_ns differ")
	_, err = pinConfigs(r, nil, show)
	assert.ErrorContains(t, err, "is not today's h100", "today's h100 is the calibrated one")

	note, err := pinConfigs(r, map[string]string{"h100": "h100-datasheet"}, show)
	require.NoError(t, err)
	assert.Contains(t, note, "renamed h100 as h100-datasheet")
	digest, err := experiments.ConfigDigest("h100-datasheet")
	require.NoError(t, err)
	assert.Equal(t, []experiments.ResolvedDevice{{Spec: "h100-datasheet", ConfigSHA256: digest}}, r.Resolved.Devices)
	for _, row := range r.Rows {
		assert.Equal(t, "h100-datasheet", row.Device)
	}
	data, err := json.Marshal(r)
	require.NoError(t, err)
	back, err := experiments.ParseResults(data, "pinned")
	require.NoError(t, err, "its digest is its resolved experiment's")
	assert.Empty(t, back.ConfigChanges())
	_, err = pinConfigs(r, nil, show)
	assert.ErrorContains(t, err, "no simulator device without a config digest")
}
