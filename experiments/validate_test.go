package experiments

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments/fidelity"
)

// joinHand joins handResults as the GPU with a copy whose medians are
// changed as the simulator's.
func joinHand(t *testing.T, edit func(sim *Results)) *Validation {
	t.Helper()
	gpu := handResults()
	simRes := handResults()
	simRes.Rows[0].Makespan.Median = 110 // +10%
	simRes.Rows[1].Makespan.Median = 45  // -10%
	simRes.Rows[2].Makespan.Median = 50  // +25%
	simRes.Rows[3].Makespan.Median = 90  // 0%
	simRes.Rows[4].Makespan.Median = 60  // 0%
	if edit != nil {
		edit(simRes)
	}
	v := newValidation(fidelity.DefaultOptions())
	v.add(nil, simRes, gpu, Source{GPU: "gpu.json", Experiment: "hand"}, func(*Row) string { return "h100" })
	v.finish()
	return v
}

func TestJoinValidation(t *testing.T) {
	v := joinHand(t, nil)
	require.Len(t, v.Rows, 6)
	assert.InDelta(t, 10.0, *v.Rows[0].MakespanErr, 1e-9)
	assert.InDelta(t, -10.0, *v.Rows[1].MakespanErr, 1e-9)
	assert.Nil(t, v.Rows[0].SpeedupErr, "the baseline's speedup is 1 by definition")
	assert.Equal(t, 5, v.Total.Rows, "the failed row is left out")
	assert.InDelta(t, (10+10+25+0+0)/5.0, float64(v.Total.MakespanMAPE), 1e-9)
	// Speedups: a/rr2 110/45 vs 2, a/rr4 110/50 vs 2.5, b/rr2 1.5 vs 1.5.
	require.NotNil(t, v.Rows[1].SimSpeedup)
	assert.InDelta(t, round(110.0/45, 4), *v.Rows[1].SimSpeedup, 1e-12)
	assert.InDelta(t, (round(110.0/45, 4)-2)/2*100, *v.Rows[1].SpeedupErr, 1e-9)
	assert.InDelta(t, (2.2-2.5)/2.5*100, *v.Rows[2].SpeedupErr, 1e-9)
	assert.Equal(t, 3, v.Total.SpeedupRows)
	// Group a: the GPU has rr4 < rr2 < serial, the simulator rr2 < rr4 <
	// serial: one of three pairs reversed, its pick rr2 (50 on the GPU
	// against rr4's 40). Group b orders its one pair right.
	assert.Equal(t, 4, v.Total.Pairs)
	assert.Equal(t, 3, v.Total.Same)
	assert.Equal(t, 1, v.Total.Reversed)
	assert.Equal(t, 1, v.Total.BestAgree)
	assert.InDelta(t, 25, float64(v.Total.RegretMax), 1e-9)
	// The failed row is left out and says why.
	assert.True(t, v.Rows[5].Excluded)
	assert.Nil(t, v.Rows[5].MakespanErr, "a failed row has no error figure")
	assert.Zero(t, v.Rows[5].GPUMakespan, "no measured repetition: 0, not NaN")
	_, err := v.JSON()
	require.NoError(t, err, "validate -o writes validation.json")
	assert.Contains(t, strings.Join(v.Rows[5].Problems, "; "), "gpu: deadlock")
	assert.Equal(t, 1, v.Sources[0].Excluded)
	// Sections: one experiment, two workloads.
	require.Len(t, v.Experiments, 1)
	require.Len(t, v.Experiments[0].Workloads, 2)
	assert.Equal(t, 2, v.Experiments[0].Workloads[1].Summary.Rows, "b's failed row is left out")

	var out bytes.Buffer
	require.NoError(t, v.Print(&out))
	assert.Contains(t, out.String(), "9.0%")
	assert.Contains(t, out.String(), "left out: hand / b / rr4")
	out.Reset()
	require.NoError(t, v.PrintRows(&out))
	assert.Contains(t, out.String(), "+25.0%")
}

func TestJoinRefusesOtherParameters(t *testing.T) {
	v := joinHand(t, func(sim *Results) {
		sim.Rows[1].SchedulerDesc = "round-robin(k=3)"
		sim.Rows[2].Kind = "kesco"
		sim.Rows[4].Family = "kesco"
	})
	assert.Contains(t, v.Rows[1].Problems, `scheduler parameters differ: GPU ran "rr2", the simulator "round-robin(k=3)"`)
	assert.Contains(t, v.Rows[2].Problems, `scheduler kind differs: GPU "rr4", simulator "kesco"`)
	assert.Contains(t, v.Rows[4].Problems, `workload family differs: GPU "synthetic", simulator "kesco"`)
	assert.Equal(t, 4, v.Sources[0].Excluded)
	assert.Equal(t, 2, v.Total.Rows, "only the two baselines are compared")
	assert.Equal(t, 0, v.Total.SpeedupRows)
}

func TestJoinMissingSimulatorRow(t *testing.T) {
	v := joinHand(t, func(sim *Results) { sim.Rows = sim.Rows[:4] })
	assert.True(t, v.Rows[4].Excluded)
	assert.Contains(t, v.Rows[4].Problems[0], "no simulator row")
}

func TestReruns(t *testing.T) {
	gpu, again, simRes := handResults(), handResults(), handResults()
	again.Rows[0].MakespansNS = []int64{120000, 120000} // a / serial: 100 µs in the first run
	again.Rows[1].MakespansNS = []int64{45000, 45000}   // a / rr2: 50 µs
	v := newValidation(fidelity.DefaultOptions())
	cfg := func(*Row) string { return "h100" }
	v.add(nil, simRes, gpu, Source{GPU: "one.json"}, cfg)
	v.add(nil, simRes, again, Source{GPU: "two.json"}, cfg)
	v.finish()
	require.Len(t, v.Rows, 12)
	require.NotNil(t, v.Rows[1].Rerun)
	assert.Equal(t, 45.0, *v.Rows[1].Rerun)
	assert.Equal(t, 50.0, *v.Rows[7].Rerun)
	assert.Nil(t, v.Rows[5].Rerun, "a failed row has no rerun")
	// Each run against the other: +20%, -10% (first), -16.7%, +11.1%
	// (second), and six equal rows.
	assert.Equal(t, 10, v.Total.RerunRows)
	assert.InDelta(t, (20+10+20.0/120*100+5.0/45*100)/10, float64(v.Total.RerunMAPE), 1e-9)
	assert.InDelta(t, 20, float64(v.Total.RerunMax), 1e-9)
}

func TestValidateTwoSimulatorConfigs(t *testing.T) {
	e := parseSmall(t, "")
	v, simRes, gpuRes, err := Validate(e, "h200", "h100", RunOptions{})
	require.NoError(t, err)
	require.Len(t, v.Rows, 2)
	assert.Equal(t, "h200", simRes.Rows[0].Device)
	assert.Equal(t, "h100", gpuRes.Rows[0].Device)
	assert.Equal(t, 2, v.Total.Rows)
	assert.Equal(t, 1, v.Total.SpeedupRows, "the baseline's speedup is 1 by definition and left out")
	want, _ := MAPE([]float64{simRes.Rows[0].Makespan.Median, simRes.Rows[1].Makespan.Median},
		[]float64{gpuRes.Rows[0].Makespan.Median, gpuRes.Rows[1].Makespan.Median})
	assert.InDelta(t, want, float64(v.Total.MakespanMAPE), 1e-9)
	assert.Equal(t, 0, v.Sources[0].Excluded, "the same experiment: every row is the same scheduler")
}

// writeGPUResults runs the small experiment on h100 standing in for a GPU
// and writes its results and experiment file into dir.
func writeGPUResults(t *testing.T, dir, yamlText string) string {
	t.Helper()
	yml := filepath.Join(dir, "small.yaml")
	require.NoError(t, os.WriteFile(yml, []byte(yamlText), 0o644))
	e, err := LoadExperiment(yml)
	require.NoError(t, err)
	res, err := Run(e, RunOptions{})
	require.NoError(t, err)
	res.Source = yml
	b, err := json.Marshal(res)
	require.NoError(t, err)
	path := filepath.Join(dir, "small-gpu.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestValidateFiles(t *testing.T) {
	dir := t.TempDir()
	path := writeGPUResults(t, dir, small)
	v, sims, err := ValidateFiles([]string{path}, ValidateOptions{Sim: "h100"})
	require.NoError(t, err)
	require.Len(t, sims, 1)
	assert.Equal(t, 1, sims[0].Repetitions, "the simulator is deterministic: one repetition")
	require.Len(t, v.Rows, 2)
	for _, r := range v.Rows {
		assert.False(t, r.Excluded, "%v", r.Problems)
		require.NotNil(t, r.MakespanErr)
		assert.InDelta(t, 0, *r.MakespanErr, 1e-9, "h100 simulated against h100 results")
	}
	assert.Equal(t, []string{"NVIDIA H100 80GB HBM3 -> h100"}, v.Sources[0].Sim)
	assert.Equal(t, "as recorded in the results", v.Sources[0].ExperimentFile)

	// The experiment file has changed since: round-robin over 3 streams.
	// The results' own record still says 4; the file, given, is refused
	// row by row.
	changed := strings.Replace(small, "params: {k: 4}", "params: {k: 3}\n    name: round-robin(k=4)", 1)
	yml := filepath.Join(dir, "small.yaml")
	require.NoError(t, os.WriteFile(yml, []byte(changed), 0o644))
	v, _, err = ValidateFiles([]string{path}, ValidateOptions{})
	require.NoError(t, err)
	assert.False(t, v.Rows[1].Excluded, "%v", v.Rows[1].Problems)
	v, _, err = ValidateFiles([]string{path}, ValidateOptions{Experiment: yml})
	require.NoError(t, err)
	assert.True(t, v.Rows[1].Excluded)
	assert.Contains(t, v.Rows[1].Problems, `scheduler parameters differ: GPU ran "round-robin(k=4)", the simulator "round-robin(k=3)"`)
	assert.Contains(t, v.Rows[1].Problems, "scheduler parameters differ: k=4 on the GPU, 3 on the simulator")
	assert.False(t, v.Rows[0].Excluded)

	// A workload parameter changed (a default, say): refused too.
	changed = strings.Replace(small, "iters: 8192", "iters: 4096", 1)
	require.NoError(t, os.WriteFile(yml, []byte(changed), 0o644))
	v, _, err = ValidateFiles([]string{path}, ValidateOptions{Experiment: yml})
	require.NoError(t, err)
	assert.Contains(t, v.Rows[0].Problems, "workload parameters differ: iters=8192 on the GPU, 4096 on the simulator")
}

func TestParamDiffs(t *testing.T) {
	gpu := map[string]string{"a": "1", "b": "2"}
	assert.Empty(t, paramDiffs("w", gpu, map[string]string{"a": "1", "b": "2"}, false))
	assert.Empty(t, paramDiffs("w", gpu, map[string]string{"a": "1", "b": "2", "c": "3"}, false),
		"a parameter added since the GPU ran is not a difference")
	assert.Equal(t, []string{"c=3"}, addedParams(gpu, map[string]string{"a": "1", "b": "2", "c": "3"}, false), "but it is noted")
	assert.Empty(t, addedParams(gpu, map[string]string{"a": "1", "b": "2", "c": "3"}, true), "a converted file records only what its file gave")
	assert.Equal(t, []string{"w parameters differ: b=2 on the GPU, (none) on the simulator"},
		paramDiffs("w", gpu, map[string]string{"a": "1"}, false), "a parameter the simulator no longer has is")
	assert.Empty(t, paramDiffs("w", gpu, map[string]string{"a": "1", "b": "2", "c": "3"}, true),
		"a converted file records only the parameters its file gave")
	assert.Equal(t, []string{"w parameters differ: b=2 on the GPU, (none) on the simulator"},
		paramDiffs("w", gpu, map[string]string{"a": "1"}, true))
	assert.Empty(t, paramDiffs("w", nil, map[string]string{"a": "1"}, false), "no record, nothing to compare")
}

func TestValidateFilesErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeGPUResults(t, dir, small)
	_, _, err := ValidateFiles([]string{path}, ValidateOptions{Sim: "no-such-gpu"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `simulator config "no-such-gpu"`)
	_, _, err = ValidateFiles([]string{path}, ValidateOptions{Keep: func(*Row) bool { return false }})
	assert.ErrorContains(t, err, "no row is selected")
	_, _, err = ValidateFiles([]string{path}, ValidateOptions{Experiment: filepath.Join(dir, "none.yaml")})
	assert.Error(t, err)
	_, _, err = ValidateFiles([]string{filepath.Join(dir, "none.json")}, ValidateOptions{})
	require.Error(t, err)
}

func TestDefaultSimConfig(t *testing.T) {
	for gpu, want := range map[string]string{
		"NVIDIA H100 80GB HBM3": "h100",
		"NVIDIA H200":           "h200",
		"NVIDIA A100-SXM4-80GB": "a100",
	} {
		got, err := DefaultSimConfig(gpu)
		require.NoError(t, err, gpu)
		assert.Equal(t, want, got, gpu)
	}
	_, err := DefaultSimConfig("NVIDIA GH200 480GB")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no built-in simulator config")
}

func TestRerunsNeedTheSameBuild(t *testing.T) {
	a, b, simRes := handResults(), handResults(), handResults()
	a.Provenance = []Provenance{{Gpusched: "devel", Commit: "abc"}}
	b.Provenance = []Provenance{{Gpusched: "devel", Commit: "def"}}
	cfg := func(*Row) string { return "h100" }
	v := newValidation(fidelity.DefaultOptions())
	v.add(nil, simRes, a, Source{GPU: "a.json"}, cfg)
	v.add(nil, simRes, b, Source{GPU: "b.json"}, cfg)
	v.finish()
	assert.Equal(t, 0, v.Total.RerunRows, "other code, not a rerun")
	b.Provenance[0].Commit = "abc"
	v = newValidation(fidelity.DefaultOptions())
	v.add(nil, simRes, a, Source{GPU: "a.json"}, cfg)
	v.add(nil, simRes, b, Source{GPU: "b.json"}, cfg)
	v.finish()
	assert.Equal(t, 10, v.Total.RerunRows)
}

func TestSchedulerDefaults(t *testing.T) {
	dir := t.TempDir()
	path := writeGPUResults(t, dir, small)
	// The GPU ran round-robin(k=4); a default that the entry sets is not
	// applied, so the rows still join.
	v, _, err := ValidateFiles([]string{path}, ValidateOptions{SchedulerDefaults: map[string]map[string]string{"round-robin": {"k": "2"}}})
	require.NoError(t, err)
	assert.False(t, v.Rows[1].Excluded, "%v", v.Rows[1].Problems)
	assert.Empty(t, v.Sources[0].Notes)
	// Without k in the entry, the default applies only to rows that do
	// not record k (made before rows recorded every parameter): rows that
	// record it say how they ran, and a default standing for older files'
	// rows does not apply to them.
	noK := strings.Replace(small, "  - kind: round-robin\n    params: {k: 4}\n", "  - kind: round-robin\n    name: round-robin(k=4)\n", 1)
	yml := filepath.Join(dir, "nok.yaml")
	require.NoError(t, os.WriteFile(yml, []byte(noK), 0o644))
	v, _, err = ValidateFiles([]string{path}, ValidateOptions{Experiment: yml, SchedulerDefaults: map[string]map[string]string{"round-robin": {"k": "2"}}})
	require.NoError(t, err)
	assert.Empty(t, v.Sources[0].Notes, "the rows record k=4")
	res, err := ReadResults(path)
	require.NoError(t, err)
	for i := range res.Rows {
		delete(res.Rows[i].SchedulerParams, "k")
	}
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	v, _, err = ValidateFiles([]string{path}, ValidateOptions{Experiment: yml, SchedulerDefaults: map[string]map[string]string{"round-robin": {"k": "4"}}})
	require.NoError(t, err)
	assert.False(t, v.Rows[1].Excluded, "k=4 by default, as the GPU ran: %v", v.Rows[1].Problems)
	assert.Contains(t, v.Sources[0].Notes, "scheduler round-robin(k=4) simulated with k=4")
	v, _, err = ValidateFiles([]string{path}, ValidateOptions{Experiment: yml, SchedulerDefaults: map[string]map[string]string{"round-robin": {"k": "2"}}})
	require.NoError(t, err)
	assert.True(t, v.Rows[1].Excluded)
}

// TestValidateFilesSimVariant: each row's GPU default config's variant
// (h100-datasheet for an H100's rows), refused where none exists.
func TestValidateFilesSimVariant(t *testing.T) {
	dir := t.TempDir()
	path := writeGPUResults(t, dir, small)
	v, _, err := ValidateFiles([]string{path}, ValidateOptions{SimVariant: "datasheet"})
	require.NoError(t, err)
	assert.Equal(t, []string{"NVIDIA H100 80GB HBM3 -> h100-datasheet"}, v.Sources[0].Sim)
	for _, r := range v.Rows {
		assert.Equal(t, "h100-datasheet", r.SimConfig)
	}
	_, _, err = ValidateFiles([]string{path}, ValidateOptions{SimVariant: "nonesuch"})
	assert.ErrorContains(t, err, `no nonesuch variant of config h100 (for GPU "NVIDIA H100 80GB HBM3")`)
	_, _, err = ValidateFiles([]string{path}, ValidateOptions{Sim: "h100", SimVariant: "datasheet"})
	assert.ErrorContains(t, err, "not both")
}

// TestPageBesideTheConfigsBeforeCalibration: the page's summary has a line
// per paper and GPU on each set of configs, with the kernel profile each
// loads; the held-out section says when there is nothing held out; the
// page is the same every time.
func TestPageBesideTheConfigsBeforeCalibration(t *testing.T) {
	dir := t.TempDir()
	path := writeGPUResults(t, dir, small)
	v, _, err := ValidateFiles([]string{path}, ValidateOptions{})
	require.NoError(t, err)
	before, _, err := ValidateFiles([]string{path}, ValidateOptions{SimVariant: "datasheet"})
	require.NoError(t, err)
	in := PageInput{Command: "gpusched validate x.json", RowsCSV: "p-rows.csv", Before: before, BeforeRowsCSV: "p-datasheet-rows.csv"}
	page := string(v.Page(in))
	assert.Equal(t, page, string(v.Page(in)))
	profiled, heldOut, ok := strings.Cut(page, "## Held-out random DAGs")
	require.True(t, ok)
	assert.Regexp(t, `\| small \| H100 80GB HBM3 \| warm \| h100 \| h100 \(\d+ kernels\) \| 2 \| 0\.0% \|`, profiled, "h100 results against h100: no error")
	assert.Regexp(t, `\| small \| H100 80GB HBM3 \| warm \| h100-datasheet \| none \| 2 \| `, profiled)
	assert.Contains(t, heldOut, "No GPU results of this kind were given.")
	assert.Contains(t, page, "## Where the simulator's choice costs most on the GPU")
	assert.Contains(t, page, "## Per scheduler kind")
	assert.Contains(t, page, "| small-gpu.json | dag | H100 80GB HBM3 | h100 | 2 | 0.0% |")
	assert.Contains(t, page, "(on the configs before calibration: p-datasheet-rows.csv)")
	// Each file's simulated launches by what timed them: synth_node at
	// this size is in no profile point (2 rows x 24 launches, its model).
	assert.Contains(t, page, "| NVIDIA H100 80GB HBM3 -> h100 | 0 / 48 / 0 |")
	assert.NotContains(t, page, "is the datasheet config", "h100 is calibrated")
}

// TestPageSeparatesFirstRunRows: rows of a file converted from an earlier
// format timed the first run after Prepare, not the warm run the simulator
// times; the page summarizes them on their own line, so the paper's line of
// comparable rows is not mixed with them.
func TestPageSeparatesFirstRunRows(t *testing.T) {
	dir := t.TempDir()
	warm := writeGPUResults(t, dir, small)
	r, err := ReadResults(warm)
	require.NoError(t, err)
	r.Migrated = "a test's earlier format"
	b, err := json.Marshal(r)
	require.NoError(t, err)
	old := filepath.Join(dir, "small-gpu-old.json")
	require.NoError(t, os.WriteFile(old, b, 0o644))
	v, _, err := ValidateFiles([]string{warm, old}, ValidateOptions{})
	require.NoError(t, err)
	require.Len(t, v.Sources, 2)
	assert.False(t, v.Sources[0].FirstRun)
	assert.True(t, v.Sources[1].FirstRun)
	page := string(v.Page(PageInput{}))
	assert.Regexp(t, `\| small \| H100 80GB HBM3 \| warm \| h100 \| h100 \(\d+ kernels\) \| 2 \| `, page)
	assert.Regexp(t, `\| small \| H100 80GB HBM3 \| first run \| h100 \| h100 \(\d+ kernels\) \| 2 \| `, page)
}

// The page says in words which default configs are not calibrated: since
// the H200 was calibrated, none of the GPUs with a datasheet variant.
func TestPageNamesUncalibratedDefaults(t *testing.T) {
	v := &Validation{Rows: []ValidatedRow{{SimConfig: "h100"}, {SimConfig: "h200"}, {SimConfig: "h200-datasheet"}, {SimConfig: "a100"}}}
	assert.Empty(t, v.uncalibratedNote(), "h100 and h200 have kernel profiles; a100 has no datasheet variant to compare")
}

// TestValidateFilesNotesParametersAddedSince: a parameter the GPU's code
// did not have (its row records every parameter it had) is simulated at its
// default, and the source says so; the row is compared.
func TestValidateFilesNotesParametersAddedSince(t *testing.T) {
	dir := t.TempDir()
	path := writeGPUResults(t, dir, small)
	r, err := ReadResults(path)
	require.NoError(t, err)
	for i := range r.Rows {
		require.Equal(t, "16", r.Rows[i].WorkloadParams["max_blocks"])
		delete(r.Rows[i].WorkloadParams, "max_blocks")
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	v, _, err := ValidateFiles([]string{path}, ValidateOptions{})
	require.NoError(t, err)
	for _, r := range v.Rows {
		assert.False(t, r.Excluded, "%v", r.Problems)
	}
	assert.Contains(t, v.Sources[0].Notes, "parameters the GPU rows do not record (added since they ran), simulated as: synthetic max_blocks=16")
}

// TestPageKindsFollowASchedulerAcrossFiles: the page's per-kind table pools
// a scheduler's rows over experiments and parameters (set-2 of one file and
// set-8 of another are both "set"), leaves excluded rows out, and signs the
// bias: hand-computed errors -20% and -40% give MAPE 30%, bias -30%.
func TestPageKindsFollowASchedulerAcrossFiles(t *testing.T) {
	const h100 = "NVIDIA H100 80GB HBM3"
	row := func(exp, desc, group string, base bool, gpu, sim float64) ValidatedRow {
		r := ValidatedRow{Experiment: exp, SchedulerDesc: desc, GPUDevice: h100,
			fid: fidelity.Row{Group: group, Scheduler: desc, Baseline: base, GPU: []float64{gpu}, Sim: sim}}
		if !base {
			// Over the baseline of its file (GPU 200, simulated 220).
			r.SpeedupErr = finite(((220/sim)/(200/gpu) - 1) * 100)
		}
		return r
	}
	v := &Validation{Rows: []ValidatedRow{
		row("a-gpu", "synchronous", "a", true, 200, 220),
		row("a-gpu", "set(b=2,warm)", "a", false, 100, 80),
		row("b-gpu", "set(b=8,warm)", "b", false, 100, 60),
		row("b-gpu", "set(b=4,warm)", "b", false, 100, 1000),
	}}
	v.Rows[3].Excluded = true
	var b strings.Builder
	v.pageKinds(&b)
	page := b.String()
	// Speedups over synchronous: set-2 2.0x on the GPU, 2.75x simulated
	// (+37.5%); set-8 2.0x and 3.67x (+83.3%).
	assert.Contains(t, page, "| set | H100 80GB HBM3 | 2 | 2 | 30.0% | 30.0% | 40.0% | -30.0% | 2 | 60.4% | 83.3% | - |")
	assert.Contains(t, page, "| synchronous | H100 80GB HBM3 | 1 | 1 | 10.0% | 10.0% | 10.0% | +10.0% | 0 | - | - | - |")
	assert.Less(t, strings.Index(page, "| set |"), strings.Index(page, "| synchronous |"), "kinds in order")
}

// TestValidationShowsBimodalRows: a row whose GPU repetitions fall in two
// modes (fidelity.Row.Modes) is marked in the rows table, CSV and JSON,
// and counted in a line under the summary table and in the page's table
// of bimodal rows. a / rr2 ran 98, 100, 102 | 200, 210 µs (median 102, in
// the fast mode); simulated at 180 µs, +76.5% against the median and
// -12.2% against the slow mode's median 205, the nearer one.
func TestValidationShowsBimodalRows(t *testing.T) {
	gpu, simRes := handResults(), handResults()
	gpu.Rows[1].MakespansNS = []int64{100000, 102000, 98000, 200000, 210000}
	simRes.Rows[1].Makespan.Median = 180
	v := newValidation(fidelity.DefaultOptions())
	v.add(nil, simRes, gpu, Source{GPU: "gpu.json", Experiment: "hand"}, func(*Row) string { return "h100" })
	v.finish()
	require.NotNil(t, v.Rows[1].GPUModes)
	assert.Equal(t, GPUModes{Fast: 100, FastReps: 3, Slow: 205, SlowReps: 2, Median: "fast"}, *v.Rows[1].GPUModes)
	for i, r := range v.Rows {
		if i != 1 {
			assert.Nil(t, r.GPUModes, r.Label())
		}
	}
	assert.Equal(t, 1, v.Total.BimodalRows)
	assert.InDelta(t, 78.0/102*100, float64(v.Total.BimodalMAPE), 1e-9)
	assert.InDelta(t, 25.0/205*100, float64(v.Total.BimodalModeMAPE), 1e-9)

	var out bytes.Buffer
	require.NoError(t, v.PrintRows(&out))
	assert.Regexp(t, `hand +a / rr2 +102\.0 +180\.0 +\+76\.5% +[0-9.]+% +fast 100\.0 \(3 reps\) / slow 205\.0 \(2 reps\), median fast +`, out.String())
	out.Reset()
	require.NoError(t, v.Print(&out))
	assert.Regexp(t, `(?m)^total +5 +`, out.String(), "the summary table as before")
	assert.Contains(t, out.String(), "\nbimodal rows: 1 of 5 (GPU repetitions in two modes, a 1.5x+ jump with 2+ on each side; issue #18); "+
		"median in the slow mode on 0, sim nearer the fast mode on 0; MAPE on them 76.5% against the median, 12.2% against the nearer mode's\n")
	assert.Contains(t, string(v.Markdown()), "\nBimodal rows: 1 of 5 (GPU repetitions")
	csv, err := v.RowsCSV()
	require.NoError(t, err)
	assert.Contains(t, string(csv), ",problems,gpu_fast_mode_us,gpu_slow_mode_us,gpu_median_mode\n")
	assert.Contains(t, string(csv), ",false,,100,205,fast\n")
	js, err := v.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(js), `"gpu_modes": {`)
	assert.Contains(t, string(js), `"bimodal_nearest_mode_mape_pct": 12.2`)
	var b strings.Builder
	v.pageModes(&b)
	assert.Contains(t, b.String(), "| hand | H100 SXM5 80GB | warm | 5 | 1 | 0 | 0 | 76.5% | 12.2% |\n| all |  |  | 5 | 1 | 0 | 0 | 76.5% | 12.2% |\n")

	// Without a bimodal row: no line, no table.
	v = joinHand(t, nil)
	out.Reset()
	require.NoError(t, v.Print(&out))
	assert.NotContains(t, out.String(), "bimodal")
	b.Reset()
	v.pageModes(&b)
	assert.Contains(t, b.String(), "No row is bimodal.")
}
