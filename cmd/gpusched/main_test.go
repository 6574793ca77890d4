package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

const exp = `name: cli
seed: 5
repetitions: 2
baseline: serial
workloads:
  - name: dag
    family: synthetic
    params: {layers: 2, width: 4, steps: 1, iters: 4096, max_blocks: 16}
schedulers:
  - kind: serial
  - kind: round-robin
    params: {k: 4}
devices: [h100]
`

// gpusched runs the command in-process and returns status, stdout, stderr.
func gpusched(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status := run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

func writeExp(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cli.yaml")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	return p
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = b
	}
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestRun(t *testing.T) {
	f := writeExp(t, exp)
	dir := t.TempDir()
	status, out, errOut := gpusched(t, "run", f, "-o", dir, "--timelines")
	require.Equal(t, 0, status, errOut)
	assert.Empty(t, errOut, "no progress bar when stderr is not a terminal")
	assert.Contains(t, out, "makespan µs median [min-max]")
	assert.Contains(t, out, "round-robin(k=4)")
	assert.Contains(t, out, "wrote "+filepath.Join(dir, "results.md"))
	files := readDir(t, dir)
	assert.Equal(t, []string{"results-reps.csv", "results.csv", "results.json", "results.md", "speedup-dag.pdf", "speedup-dag.svg",
		"util-dag-h100.pdf", "util-dag-h100.svg"}, keys(files))
	tl, err := os.ReadDir(filepath.Join(dir, "timelines"))
	require.NoError(t, err)
	assert.Len(t, tl, 2)
}

func TestRunErrors(t *testing.T) {
	broken := writeExp(t, strings.Replace(exp, "    params: {k: 4}", "    params: {streams: 4}", 1))
	good := writeExp(t, exp)
	aFile := filepath.Join(t.TempDir(), "results")
	require.NoError(t, os.WriteFile(aFile, nil, 0o644))
	for _, tt := range []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{"no command", nil, 2, ""},
		{"unknown command", []string{"rnu"}, 2, `unknown command "rnu"`},
		{"missing file argument", []string{"run"}, 2, "missing arguments"},
		{"two files", []string{"run", "a.yaml", "b.yaml"}, 2, "unexpected arguments: b.yaml"},
		{"unknown flag", []string{"run", "--fast", "a.yaml"}, 2, "flag provided but not defined: -fast"},
		{"missing file", []string{"run", "/nonexistent/x.yaml"}, 1, "/nonexistent/x.yaml"},
		{"broken file names line and field", []string{"run", broken}, 1, `cli.yaml:12: scheduler "round-robin": unknown field "streams" in params (known fields: k)`},
		{"sweep without --param", []string{"sweep", broken}, 2, "--param"},
		{"bad shard", []string{"sweep", broken, "--param", "seed=1", "--shard", "4/3"}, 2, "1 <= I <= N"},
		{"shard from 0 out of range", []string{"run", broken, "--shard-index", "3", "--shard-count", "3"}, 2, "want 0 <= index < count"},
		{"two ways to shard", []string{"run", broken, "--shard", "1/3", "--shard-count", "3"}, 2, "not both"},
		{"slurm shard outside an array", []string{"run", broken, "--shard", "slurm"}, 2, "SLURM_ARRAY_TASK_ID"},
		{"merge without -o", []string{"merge", "x.json"}, 2, "-o DIR is required"},
		{"output directory is a file", []string{"run", good, "-o", aFile}, 1, "is a file"},
		{"run /dev/zero", []string{"run", "/dev/zero"}, 1, "larger than 16 MiB"},
		{"merge null", []string{"merge", "-o", t.TempDir(), writeExp(t, "null")}, 1, "no schema_version"},
		{"compare missing file", []string{"compare", "/nonexistent/a.json", "/nonexistent/b.json"}, 1, "/nonexistent/a.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, errOut := gpusched(t, tt.args...)
			assert.Equal(t, tt.status, status, errOut)
			assert.Contains(t, errOut, tt.stderr)
			assert.NotContains(t, errOut, "panic")
		})
	}
}

// TestShardedSweepMergesToTheUnshardedSweep is the cluster workflow: three
// array tasks each run a shard, merge joins them, and the result is the
// unsharded sweep's files, byte for byte.
func TestShardedSweepMergesToTheUnshardedSweep(t *testing.T) {
	f := writeExp(t, exp)
	params := []string{"--param", "workloads.dag.width=2,3,4", "--param", "seed=1,2"}
	whole := t.TempDir()
	status, _, errOut := gpusched(t, append([]string{"sweep", f, "-o", whole}, params...)...)
	require.Equal(t, 0, status, errOut)

	// The three ways to name a shard: from 1, from 0, and a Slurm array's.
	t.Setenv("SLURM_ARRAY_TASK_ID", "7")
	t.Setenv("SLURM_ARRAY_TASK_MIN", "5")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
	var shards []string
	for _, shard := range [][]string{{"--shard", "1/3"}, {"--shard-index", "1", "--shard-count", "3"}, {"--shard", "slurm"}} {
		dir := filepath.Join(t.TempDir(), "shard")
		status, _, errOut := gpusched(t, append(append([]string{"sweep", f, "-o", dir}, shard...), params...)...)
		require.Equal(t, 0, status, errOut)
		assert.Equal(t, []string{"results.json"}, keys(readDir(t, dir)), "a shard writes only what merge reads")
		shards = append(shards, filepath.Join(dir, "results.json"))
	}
	// Shards count from 1 in I/N: 0/3 is a mistake, not the first shard.
	status, _, errOut = gpusched(t, append([]string{"sweep", f, "--shard", "0/3"}, params...)...)
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "want I/N with 1 <= I <= N")
	merged := t.TempDir()
	status, out, errOut := gpusched(t, "merge", "-o", merged, shards[1], shards[2], shards[0])
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, out, "merged 3 parts, 12 rows")

	a, b := readDir(t, whole), readDir(t, merged)
	require.Equal(t, keys(a), keys(b))
	assert.Contains(t, keys(a), "results.json")
	for name := range a {
		assert.True(t, bytes.Equal(a[name], b[name]), "%s: merged shards differ from the unsharded sweep", name)
	}

	// Two shards are not the sweep.
	status, _, errOut = gpusched(t, "merge", "-o", t.TempDir(), shards[0], shards[1])
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, "missing rows")
}

func TestCompare(t *testing.T) {
	f := writeExp(t, exp)
	a, b := t.TempDir(), t.TempDir()
	status, _, errOut := gpusched(t, "run", f, "-o", a)
	require.Equal(t, 0, status, errOut)
	status, _, errOut = gpusched(t, "run", writeExp(t, strings.Replace(exp, "[h100]", "[h100]\n", 1)), "-o", b)
	require.Equal(t, 0, status, errOut)
	status, out, errOut := gpusched(t, "compare", filepath.Join(a, "results.json"), b)
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, out, "dag / round-robin(k=4) / h100")
	assert.Contains(t, out, "1.000", "identical runs: ratio 1")
}

func TestValidate(t *testing.T) {
	f := writeExp(t, exp)
	dir := t.TempDir()
	status, out, errOut := gpusched(t, "validate", f, "--sim", "h200", "--gpu", "h100", "-o", dir)
	require.Equal(t, 0, status, errOut)
	assert.Regexp(t, `(?m)^total +2 +[0-9.]+%`, out, "two rows compared")
	assert.Contains(t, out, "h100 (cli, ")
	var v struct {
		Total struct {
			Rows        int `json:"rows"`
			SpeedupRows int `json:"speedup_rows"`
		} `json:"total"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "validation.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	assert.Equal(t, 2, v.Total.Rows)
	assert.Equal(t, 1, v.Total.SpeedupRows)
	for _, name := range []string{"validation.csv", "validation-rows.csv", "validation.md", "gpu/results.json", "sim/results.json"} {
		assert.FileExists(t, filepath.Join(dir, name))
	}

	// Committed results, no GPU: the results file runs again on h200.
	gpuRes := filepath.Join(dir, "gpu", "results.json")
	status, out, errOut = gpusched(t, "validate", gpuRes, "--experiment", f, "--sim", "h200", "--schedulers", "serial", "--page", filepath.Join(dir, "page.md"))
	require.Equal(t, 0, status, errOut)
	assert.Regexp(t, `(?m)^total +1 `, out, "only serial")
	page, err := os.ReadFile(filepath.Join(dir, "page.md"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "# Simulator fidelity")
	assert.FileExists(t, filepath.Join(dir, "page-rows.csv"))
	status, _, errOut = gpusched(t, "validate", gpuRes, f)
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "not both")

	// With no GPU in this build, validate says so.
	status, _, errOut = gpusched(t, "validate", f)
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, "no CUDA device")
}

func TestTrace(t *testing.T) {
	f := writeExp(t, exp)
	out := filepath.Join(t.TempDir(), "trace.json")
	status, stdout, errOut := gpusched(t, "trace", f, "--workload", "dag", "--scheduler", "serial", "-o", out)
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, stdout, "dag / serial / h100: makespan")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var trace any
	require.NoError(t, json.Unmarshal(b, &trace))

	status, _, errOut = gpusched(t, "trace", f, "--workload", "dag", "-o", out)
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "--scheduler")
}

func TestDevicesAndList(t *testing.T) {
	status, out, errOut := gpusched(t, "devices")
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, out, "h100")
	assert.Contains(t, out, "NVIDIA H100 SXM5 80GB")
	assert.Contains(t, out, "132")
	assert.Contains(t, out, "CUDA devices")

	status, out, errOut = gpusched(t, "list")
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, out, "synthetic")
	assert.Contains(t, out, "round-robin")
}

// TestCalibrateTheSimulator wires calibrate end to end without a GPU:
// measuring the simulated H100 writes a config that loads, is named after
// its file, and gives back the H100 config's host costs.
func TestCalibrateTheSimulator(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "measured-h100.yaml")
	full := filepath.Join(dir, "full.json")
	status, _, errOut := gpusched(t, "calibrate", "--device", "h100", "-o", out, "--report", filepath.Join(dir, "report.md"), "--raw", full)
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, errOut, "fields not measured come from config h100")
	got, err := sim.LoadConfig(out)
	require.NoError(t, err)
	want, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	assert.Equal(t, "measured-h100", got.Name)
	assert.Equal(t, want.Info.Name, got.Info.Name)
	assert.InEpsilon(t, want.Host.LaunchNs, got.Host.LaunchNs, 0.02)
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(report), "host.launch_ns")

	status, _, errOut = gpusched(t, "calibrate", "--device", "h100", "-o", filepath.Join(dir, "x.json"))
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "ends in .yaml")
	calibrateSomeAndFitThem(t, dir, full)
}

// calibrateSomeAndFitThem: --only runs a few measurements into a raw
// report, `calibrate fit FULL PART` adds them to full's, and --leave keeps
// a measured optional field from the base config.
func calibrateSomeAndFitThem(t *testing.T, dir, full string) {
	t.Helper()
	status, out, errOut := gpusched(t, "calibrate", "--only", "list")
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, out, "cross-stream dependencies\n")
	part := filepath.Join(dir, "part.json")
	status, _, errOut = gpusched(t, "calibrate", "--device", "h100", "--only", "captured chains over streams", "--raw", part, "--report", filepath.Join(dir, "p.md"))
	require.Equal(t, 0, status, errOut)
	cfg := filepath.Join(dir, "fitted.yaml")
	status, out, errOut = gpusched(t, "calibrate", "fit", full, part, "--base", "h100-datasheet", "--leave", "host.capture_event_ns", "-o", cfg)
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, out, "host.capture_event_ns measured 1413 ns but left to the base config")
	got, err := sim.LoadConfig(cfg)
	require.NoError(t, err)
	assert.Zero(t, got.Host.CaptureEventNs, "left to the base config")
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"calibrate", "--device", "h100", "--only", "graphs", "-o", cfg}, "--only writes no config"},
		{[]string{"calibrate", "--device", "h100", "--only", "graphs"}, "--only needs --raw FILE"},
		{[]string{"calibrate", "fit", full, "--leave", "host.nope_ns", "-o", cfg}, "--leave host.nope_ns: no measurement sets that field"},
	} {
		status, _, errOut := gpusched(t, tt.args...)
		assert.Equal(t, 2, status, "%v: %s", tt.args, errOut)
		assert.Contains(t, errOut, tt.stderr, "%v", tt.args)
	}
}

// TestPaperReportRefusals: a paper's report writes only where -o says,
// and reads only results of that paper's runs, with rows.
func TestPaperReportRefusals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "acs.md")
	for _, tt := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"paper", "acs", "report", "../../docs/results/acs-sim.json"}, 2, "-o OUT.md is required"},
		{[]string{"paper", "acs", "report", "-o", out, "../../docs/results/kesco-sim.json"}, 1, "results of gpusched paper kesco"},
		{[]string{"paper", "acs", "report", "-o", out, writeExp(t, "null")}, 1, "no schema_version"},
		{[]string{"paper", "nope", "run", "x.yaml"}, 2, `no paper "nope"`},
	} {
		status, _, errOut := gpusched(t, tt.args...)
		assert.Equal(t, tt.status, status, "%v: %s", tt.args, errOut)
		assert.Contains(t, errOut, tt.stderr, "%v", tt.args)
	}
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
	status, stdout, errOut := gpusched(t, "paper", "acs", "report", "-o", out, "../../docs/results/acs-gpu-lanes.json")
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, stdout, "wrote "+out)
	_, err = os.Stat(filepath.Join(filepath.Dir(out), "tables", "acs-gpu-lanes.md"))
	assert.NoError(t, err, "every row in a table beside the page")
}

// failAfter accepts n writes, then fails every later one.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, os.ErrClosed
	}
	f.n--
	return len(p), nil
}

// A command whose output cannot be written fails, naming the write error,
// even though it did everything else (a table cut short is not a result).
func TestFailedOutputWriteFailsTheCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"list"}, {"devices"}} {
		var errOut bytes.Buffer
		assert.Equal(t, 0, run(args, &failAfter{n: 1 << 20}, &errOut), args)
		errOut.Reset()
		assert.Equal(t, 1, run(args, &failAfter{n: 0}, &errOut), args)
		assert.Contains(t, errOut.String(), os.ErrClosed.Error(), args)
	}
	var errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"version"}, &failAfter{n: 0}, &errOut))
	assert.Equal(t, "gpusched: writing the output: "+os.ErrClosed.Error()+"\n", errOut.String())
}

// A results file whose simulator config has changed since its rows were
// made: compare, merge and replot warn, run refuses it.
func TestChangedConfig(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "configs", "devices", "h100-datasheet.yaml"))
	require.NoError(t, err)
	gpu := filepath.Join(dir, "gpu.yaml")
	require.NoError(t, os.WriteFile(gpu, data, 0o644))
	f := writeExp(t, strings.Replace(exp, "[h100]", "["+gpu+"]", 1))
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	status, _, errOut := gpusched(t, "run", f, "-o", a)
	require.Equal(t, 0, status, errOut)
	require.NoError(t, os.WriteFile(gpu, bytes.Replace(data, []byte("launch_latency_ns: 2000 "), []byte("launch_latency_ns: 3000 "), 1), 0o644))
	status, _, errOut = gpusched(t, "run", f, "-o", b)
	require.Equal(t, 0, status, errOut)

	status, _, errOut = gpusched(t, "compare", a, b)
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, errOut, "warning: "+filepath.Join(a, "results.json")+": device "+gpu+": config "+gpu+" has changed since these rows were made")
	assert.Contains(t, errOut, "the two files ran different configs of that name")
	assert.NotContains(t, errOut, filepath.Join(b, "results.json")+": device", "b ran today's config")
	status, _, errOut = gpusched(t, "merge", "-o", filepath.Join(dir, "m"), "--formats", "json", a)
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, errOut, "has changed since these rows were made")

	status, _, errOut = gpusched(t, "run", filepath.Join(a, "results.json"), "-o", filepath.Join(dir, "again"))
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, "would not run as it ran")
	status, _, errOut = gpusched(t, "run", filepath.Join(b, "results.json"), "-o", filepath.Join(dir, "again"))
	assert.Equal(t, 0, status, errOut)
}

// calibrate fit-graph-lock needs the config the fields go into and a
// report with the graph builds of "host threads at once"; the fit itself
// is calibrate's TestGraphLockFitRecoversTheSimulatedPair.
func TestCalibrateFitGraphLockRefusals(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "graphs.json")
	status, _, errOut := gpusched(t, "calibrate", "--device", "h100", "--only", "graphs", "--raw", part, "--report", filepath.Join(dir, "g.md"))
	require.Equal(t, 0, status, errOut)
	status, _, errOut = gpusched(t, "calibrate", "fit-graph-lock", part)
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "--sim CONFIG is required")
	status, _, errOut = gpusched(t, "calibrate", "fit-graph-lock", part, "--sim", "h100")
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, `the report has no "graph build of 4" over 1 and more host threads`)
}

// calibrate fit-graph-launch needs the config the fields go into, a known
// slope and a report with the chunk graphs' launch calls; the fit itself
// is calibrate's TestGraphLaunchFitRecoversTheSimulatedFields.
func TestCalibrateFitGraphLaunchRefusals(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "callbacks.json")
	status, _, errOut := gpusched(t, "calibrate", "--device", "h100", "--only", "host callbacks", "--raw", part, "--report", filepath.Join(dir, "c.md"))
	require.Equal(t, 0, status, errOut)
	status, _, errOut = gpusched(t, "calibrate", "fit-graph-launch", part)
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "--sim CONFIG is required")
	status, _, errOut = gpusched(t, "calibrate", "fit-graph-launch", part, "--sim", "h100")
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, "the report has launch calls of 0 chunk graph width(s), the fit needs two or more")
	status, _, errOut = gpusched(t, "calibrate", "fit-graph-launch", part, "--sim", "h100", "--slope", "nodes")
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, `unknown graph launch slope "nodes"`)
}
