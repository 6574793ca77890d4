package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/workloads/file"
)

// miniTrace is a Kineto trace of one iteration: two kernels on one stream.
const miniTrace = `{"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
  "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerMultiprocessor": 65536, "warpSize": 32,
  "sharedMemPerMultiprocessor": 233472, "sharedMemPerBlockOptin": 232448, "numSms": 132}],
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 3, "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "void relu_kernel<float>(float*)", "pid": 0, "tid": 7, "ts": 50, "dur": 12.5,
   "args": {"stream": 7, "correlation": 5, "device": 0, "registers per thread": 24, "shared memory": 0, "grid": [64, 1, 1], "block": [256, 1, 1]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 30, "dur": 3, "args": {"correlation": 6}},
  {"ph": "X", "cat": "kernel", "name": "void gemm(float*)", "pid": 0, "tid": 7, "ts": 64, "dur": 20,
   "args": {"stream": 7, "correlation": 6, "device": 0, "registers per thread": 128, "shared memory": 49152, "grid": [132, 1, 1], "block": [128, 1, 1]}}
 ]}`

func TestImportKineto(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "model.trace.json")
	require.NoError(t, os.WriteFile(tr, []byte(miniTrace), 0o644))
	w := filepath.Join(dir, "model.yaml.gz")
	status, _, stderr := gpusched(t, "import", "kineto", tr, "-o", w)
	require.Equal(t, 0, status, stderr)
	assert.Contains(t, stderr, "device figures from config h100")
	assert.Contains(t, stderr, "ProfilerStep#1: 2 kernels, 0 copies, 0 memsets on 1 streams")
	exp := `name: imported
repetitions: 1
workloads:
  - {name: model, family: file, params: {path: model.yaml.gz}}
schedulers: [{kind: serial}]
devices: [h100]
outputs: {dir: ` + filepath.Join(dir, "res") + `}
`
	e := filepath.Join(dir, "e.yaml")
	require.NoError(t, os.WriteFile(e, []byte(exp), 0o644))
	status, stdout, stderr := gpusched(t, "run", e)
	require.Equal(t, 0, status, stderr)
	assert.Contains(t, stdout, "model")

	status, _, stderr = gpusched(t, "import", "nvprof", tr, "-o", w)
	assert.Equal(t, 2, status)
	assert.Contains(t, stderr, "the first argument is the format: kineto")
	status, _, stderr = gpusched(t, "import", "kineto", tr, "--iteration", "4", "-o", w)
	assert.Equal(t, 1, status)
	assert.Contains(t, stderr, "no ProfilerStep#4 in the trace (it has #1)")
}

// TestCommittedImportsAreCurrent imports every committed PyTorch capture
// (workloads/kineto/testdata/pytorch: model.trace.json.gz with its
// model.et.json.gz, and model.graph.trace.json.gz) and requires the result
// to equal the committed workload file (configs/workloads/pytorch), which
// the experiment files replay. GPUSCHED_UPDATE=1 rewrites the files.
func TestCommittedImportsAreCurrent(t *testing.T) {
	traces, err := filepath.Glob("../../workloads/kineto/testdata/pytorch/*.trace.json.gz")
	require.NoError(t, err)
	if len(traces) == 0 {
		t.Skip("no committed captures")
	}
	update := os.Getenv("GPUSCHED_UPDATE") != ""
	for _, tr := range traces {
		model := strings.TrimSuffix(filepath.Base(tr), ".trace.json.gz")
		args := []string{"import", "kineto", tr, "--name", model}
		if et := strings.TrimSuffix(tr, ".trace.json.gz") + ".et.json.gz"; fileExists(et) {
			args = append(args, "--et", et)
		}
		fresh := filepath.Join(t.TempDir(), model+".yaml")
		status, _, stderr := gpusched(t, append(args, "-o", fresh)...)
		require.Equal(t, 0, status, "%s: %s", model, stderr)
		got, err := os.ReadFile(fresh)
		require.NoError(t, err)
		committed := filepath.Join("../../configs/workloads/pytorch", model+".yaml.gz")
		if update {
			status, _, stderr = gpusched(t, append(args, "-o", committed)...)
			require.Equal(t, 0, status, stderr)
			continue
		}
		want, err := file.ReadFile(committed)
		require.NoError(t, err, "GPUSCHED_UPDATE=1 go test ./cmd/gpusched -run Committed writes it")
		assert.Equal(t, string(want), string(got), "%s: the committed workload file is not what the importer writes now (GPUSCHED_UPDATE=1 go test ./cmd/gpusched -run Committed)", model)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
