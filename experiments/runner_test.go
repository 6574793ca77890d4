package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Test-only schedulers: one that ignores dependencies (two streams, no
// events), so the simulator's race checker must catch it, and one that fails.
func init() {
	RegisterScheduler("test-racy", "test only: op k on stream k mod 2, no events", func(p *yaml.Node) (sched.Scheduler, error) {
		return racy{}, DecodeParams(p, &struct{}{})
	})
	RegisterScheduler("test-fail", "test only: fails", func(p *yaml.Node) (sched.Scheduler, error) {
		return failing{}, DecodeParams(p, &struct{}{})
	})
}

type racy struct{}

func (racy) Name() string { return "racy" }
func (racy) Run(h device.Host, in *workloads.Instance) (err error) {
	var streams [2]device.Stream
	for i := range streams {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, h.Destroy(s)) }()
		streams[i] = s
	}
	for k := 0; k < in.N(); k++ {
		if err := in.Issue(h, streams[k%2], k); err != nil {
			return err
		}
	}
	return h.Synchronize()
}

type failing struct{}

func (failing) Name() string                               { return "failing" }
func (failing) Run(device.Host, *workloads.Instance) error { return errors.New("refuses to schedule") }

// small is a fast experiment: a small DAG, serial against round-robin.
const small = `name: small
seed: 7
repetitions: 2
baseline: serial
workloads:
  - name: dag
    family: synthetic
    params: {layers: 3, width: 4, steps: 2, iters: 8192, max_blocks: 16}
schedulers:
  - kind: serial
  - kind: round-robin
    params: {k: 4}
devices: [h100]
`

func parseSmall(t *testing.T, extra string) *Experiment {
	t.Helper()
	e, err := ParseExperiment([]byte(small+extra), "small.yaml")
	require.NoError(t, err)
	return e
}

func TestRunSmall(t *testing.T) {
	e := parseSmall(t, "")
	var table bytes.Buffer
	res, err := Run(e, RunOptions{Table: &table, Workers: 2})
	require.NoError(t, err)
	require.Len(t, res.Rows, 2)
	assert.Equal(t, 2, res.TotalRows)
	serial, rr := res.Rows[0], res.Rows[1]
	for _, row := range res.Rows {
		assert.Empty(t, row.Errors)
		require.NotNil(t, row.Makespan)
		assert.Equal(t, 2, row.Makespan.N)
		assert.Len(t, row.MakespansNS, 2)
		assert.Positive(t, row.Makespan.Median)
		require.NotNil(t, row.Races)
		assert.Zero(t, *row.Races, "the baselines are race-free")
		require.NotNil(t, row.SMUtil)
		assert.Greater(t, *row.SMUtil, 0.0)
		assert.LessOrEqual(t, *row.SMUtil, 1.0)
		assert.Len(t, row.Utilization, utilBins)
		assert.Equal(t, "NVIDIA H100 80GB HBM3", row.DeviceName)
	}
	assert.Equal(t, "serial", serial.Scheduler)
	assert.True(t, serial.Baseline)
	assert.Equal(t, "round-robin(k=4)", rr.Scheduler)
	require.NotNil(t, serial.Kernels)
	assert.Equal(t, int64(3*4*2), *serial.Kernels, "layers x width x steps kernels")
	assert.Equal(t, *serial.Kernels, *rr.Kernels, "same program, same kernels")
	// Every timed launch is counted by what timed it: synth_node is in
	// h100's profile, but not at this size (its fitted model).
	require.NotNil(t, serial.KernelTiming)
	assert.Equal(t, KernelTiming{Profiled: *serial.Kernels}, *serial.KernelTiming)
	assert.Equal(t, 1.0, *serial.Speedup)
	assert.InDelta(t, serial.Makespan.Median/rr.Makespan.Median, *rr.Speedup, 1e-3)
	assert.Greater(t, *rr.Speedup, 1.0, "four streams beat one on a DAG four wide of small kernels")
	// The scheduler's own counters come along: round-robin waits on events
	// for its cross-stream dependencies; serial reports none.
	assert.Nil(t, serial.SchedulerStats)
	assert.Positive(t, rr.SchedulerStats["waits"])
	// The simulator is deterministic: repetitions agree exactly.
	assert.Equal(t, serial.MakespansNS[0], serial.MakespansNS[1])

	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	require.Len(t, lines, 4, "header, rule, two rows")
	assert.Contains(t, lines[0], "makespan µs median [min-max]")
	assert.True(t, strings.HasPrefix(lines[2], "dag"))
	assert.Contains(t, lines[2], "serial")
	assert.Contains(t, lines[2], "1.000x")
	assert.Contains(t, lines[3], "round-robin(k=4)")
	assert.True(t, strings.HasSuffix(lines[3], "ok"))
}

func TestRunReportsRacesAndFailures(t *testing.T) {
	e := parseSmall(t, "")
	e2, err := ParseExperiment([]byte(strings.Replace(small, "  - kind: round-robin\n    params: {k: 4}\n",
		"  - kind: test-racy\n  - kind: test-fail\n", 1)), "small.yaml")
	require.NoError(t, err)
	_ = e
	var table bytes.Buffer
	res, err := Run(e2, RunOptions{Table: &table})
	require.NoError(t, err, "a failing row does not stop the run")
	require.Len(t, res.Rows, 3)
	racyRow, failRow := res.Rows[1], res.Rows[2]
	require.NotNil(t, racyRow.Races)
	assert.Positive(t, *racyRow.Races, "ignoring dependencies across two streams races")
	require.NotEmpty(t, racyRow.RaceExamples)
	assert.Contains(t, racyRow.RaceExamples[0], "overlap on")
	require.Len(t, failRow.Errors, 1)
	assert.Contains(t, failRow.Errors[0], "refuses to schedule")
	assert.Nil(t, failRow.Speedup)
	assert.Len(t, res.Failed(), 1)
	assert.Contains(t, table.String(), "ERROR: repetition 0: failing: refuses to schedule")
	assert.Contains(t, table.String(), "RACE: ", "a racy row is flagged in the table")
	md := string(Markdown(res, false))
	assert.Contains(t, md, "dag / failing / h100: repetition 0: failing: refuses to schedule")
	assert.Contains(t, md, "dag / racy / h100: ")
}

// files reads every file under dir, by relative path.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel], err = os.ReadFile(p)
		return err
	}))
	return out
}

func fileNames(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestRunTwiceIsByteIdentical(t *testing.T) {
	e := parseSmall(t, "")
	var dirs []string
	for _, workers := range []int{1, 3} {
		dir := t.TempDir()
		res, err := Run(e, RunOptions{Workers: workers, TimelineDir: filepath.Join(dir, "timelines")})
		require.NoError(t, err)
		_, err = Write(dir, res, allFormats)
		require.NoError(t, err)
		dirs = append(dirs, dir)
	}
	a, b := files(t, dirs[0]), files(t, dirs[1])
	assert.Equal(t, []string{"results-reps.csv", "results.csv", "results.json", "results.md", "speedup-dag.pdf", "speedup-dag.svg",
		"timelines/dag__round-robin-k-4__h100.json", "timelines/dag__serial__h100.json", "util-dag-h100.pdf", "util-dag-h100.svg"}, fileNames(a))
	require.Equal(t, fileNames(a), fileNames(b))
	for name := range a {
		assert.True(t, bytes.Equal(a[name], b[name]), "%s differs between two runs", name)
	}
	var trace any
	require.NoError(t, json.Unmarshal(a["timelines/dag__serial__h100.json"], &trace), "timelines are JSON")
}

func TestSweepShardsMergeToTheUnshardedSweep(t *testing.T) {
	e := parseSmall(t, "")
	sweep := []SweepParam{
		{Name: "workloads.dag.width", Values: []string{"2", "4"}},
		{Name: "seed", Values: []string{"1", "2", "3"}},
	}
	whole, err := Run(e, RunOptions{Sweep: sweep})
	require.NoError(t, err)
	require.Len(t, whole.Rows, 2*3*2)
	assert.Equal(t, []Assignment{{"workloads.dag.width", "4"}, {"seed", "2"}}, whole.Rows[8].Point)
	wholeDir := t.TempDir()
	_, err = Write(wholeDir, whole, allFormats)
	require.NoError(t, err)

	var parts []*Results
	for i := 0; i < 3; i++ {
		part, err := Run(e, RunOptions{Sweep: sweep, Shard: Shard{Index: i, Count: 3}})
		require.NoError(t, err)
		assert.Len(t, part.Rows, 4, "6 groups of 2 rows over 3 shards")
		// Through the file a shard writes, as merge reads it.
		dir := t.TempDir()
		_, err = Write(dir, part, []string{"json"})
		require.NoError(t, err)
		back, err := ReadResults(filepath.Join(dir, "results.json"))
		require.NoError(t, err)
		parts = append(parts, back)
	}
	merged, err := Merge([]*Results{parts[2], parts[0], parts[1]})
	require.NoError(t, err)
	mergedDir := t.TempDir()
	_, err = Write(mergedDir, merged, allFormats)
	require.NoError(t, err)

	a, b := files(t, wholeDir), files(t, mergedDir)
	require.Equal(t, fileNames(a), fileNames(b))
	for name := range a {
		assert.True(t, bytes.Equal(a[name], b[name]), "%s: merged shards differ from the unsharded sweep", name)
	}
	// The sweep really varied the workload: width 4 has twice the kernels of width 2.
	assert.Equal(t, 2*(*whole.Rows[0].Kernels), *whole.Rows[6].Kernels)
}

func TestSweepErrors(t *testing.T) {
	e := parseSmall(t, "")
	for _, tt := range []struct {
		param SweepParam
		want  string
	}{
		{SweepParam{"workloads.nope.width", []string{"2"}}, `no workload named "nope" (have: dag)`},
		{SweepParam{"workloads.dag.widht", []string{"2"}}, `small.yaml:8: workload "dag": unknown field "widht"`},
		{SweepParam{"workloads.dag.width", []string{"0"}}, "width must be at least 1"},
		{SweepParam{"schedulers.serial.k", []string{"2"}}, "unknown field \"k\""},
		{SweepParam{"seed", []string{"x"}}, `"x" is not an integer`},
		{SweepParam{"layers", []string{"2"}}, "want seed, repetitions, workloads.<name>.<param>"},
	} {
		_, err := Run(e, RunOptions{Sweep: []SweepParam{tt.param}})
		require.Error(t, err, tt.param.Name)
		assert.Contains(t, err.Error(), tt.want)
	}
}

func TestSweepRenamesAutoNamedSchedulers(t *testing.T) {
	e := parseSmall(t, "")
	// As the command line gives it: the name's '=' and '.' inside
	// parentheses belong to the scheduler's name.
	p, err := ParseSweepParam("schedulers.round-robin(k=4).k=2,8")
	require.NoError(t, err)
	assert.Equal(t, SweepParam{"schedulers.round-robin(k=4).k", []string{"2", "8"}}, p)
	res, err := Run(e, RunOptions{Sweep: []SweepParam{p}})
	require.NoError(t, err)
	require.Len(t, res.Rows, 4)
	assert.Equal(t, "round-robin(k=2)", res.Rows[1].Scheduler, "the label follows the swept parameter")
	assert.Equal(t, "round-robin(k=8)", res.Rows[3].Scheduler)
	assert.True(t, res.Rows[2].Baseline)
	require.NotNil(t, res.Rows[3].Speedup)
}

func TestTrace(t *testing.T) {
	e := parseSmall(t, "")
	var buf bytes.Buffer
	row, err := Trace(e, "dag", "round-robin(k=4)", "", &buf)
	require.NoError(t, err)
	assert.Equal(t, 1, row.Makespan.N)
	var trace any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &trace))

	_, err = Trace(e, "dag", "fastest", "", &buf)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no scheduler "fastest" in small (have serial, round-robin(k=4))`)
}

func TestCompareOutputs(t *testing.T) {
	want := map[string][]byte{"a": {1, 2, 3, 4}, "b": {9}}
	for _, tt := range []struct {
		name string
		got  map[string][]byte
		msg  string
	}{
		{"equal", map[string][]byte{"a": {1, 2, 3, 4}, "b": {9}}, ""},
		{"two bytes differ", map[string][]byte{"a": {1, 7, 3, 8}, "b": {9}}, "output a differs from serial's in 2 of 4 bytes, first at byte 1"},
		{"missing", map[string][]byte{"a": {1, 2, 3, 4}}, "output b missing"},
		{"short", map[string][]byte{"a": {1, 2, 3}, "b": {9}}, "output a has 3 bytes, serial's has 4"},
		{"extra", map[string][]byte{"a": {1, 2, 3, 4}, "b": {9}, "c": {0}}, "output c not produced by serial"},
	} {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.msg, compareOutputs(want, tt.got)) })
	}
}

// TestOutputMismatchIsAnError drives the GPU path of a row (outputs read
// back and compared with the serial reference) on the simulator, with a
// reference that differs in one byte: the row must say so, never hide it.
func TestOutputMismatchIsAnError(t *testing.T) {
	// Short kernels: the workload's CPU check is cheap.
	e, err := ParseExperiment([]byte(strings.Replace(small, "iters: 8192", "iters: 16", 1)), "small.yaml")
	require.NoError(t, err)
	jobs, _, err := plan(e, nil, Shard{})
	require.NoError(t, err)
	j := jobs[1] // round-robin
	dev, err := openSim("h100", false)
	require.NoError(t, err)
	defer func() { require.NoError(t, dev.Close()) }()

	prog, _, err := j.program()
	require.NoError(t, err)
	s, err := j.scheduler()
	require.NoError(t, err)
	r, err := runOnce(dev, prog, s, true)
	require.NoError(t, err)
	require.NotEmpty(t, r.outputs, "the workload marks outputs")

	// Equal to the reference: bit-identical outputs pass the workload's
	// check exactly when the reference did (serialReference checked it
	// once), so nothing is re-checked and nothing is reported.
	same := &reference{outputs: r.outputs}
	row := j.execute(dev, same, nil)
	assert.Equal(t, "equal to serial", row.Outputs)
	assert.Empty(t, row.Errors)

	changed := map[string][]byte{}
	var name string
	for n, b := range r.outputs {
		changed[n] = append([]byte(nil), b...)
		name = n
	}
	changed[name][0] ^= 0xff
	row = j.execute(dev, &reference{outputs: changed}, nil)
	assert.Equal(t, "DIFFERENT from serial", row.Outputs)
	// The difference, and how the different outputs fare against the
	// workload's own check (zeros on the simulator: they fail it), each
	// reported once although every repetition repeats them.
	require.Len(t, row.Errors, 2, "the same difference in every repetition is reported once")
	assert.Contains(t, row.Errors[0], "output "+name+" differs from serial's in 1 of")
	assert.Contains(t, row.Errors[1], "workload check: ")
	require.NotNil(t, row.Makespan, "the row is still measured")

	row = j.execute(dev, &reference{err: errors.New("serial reference run: boom")}, nil)
	assert.Equal(t, "not compared (no serial reference)", row.Outputs)
	assert.Contains(t, row.Errors, "serial reference run: boom")
}

// preparedFailure is a Preparer whose Run fails; it records its Cleanup.
type preparedFailure struct{ prepared, cleaned bool }

func (p *preparedFailure) Name() string { return "prepared-failure" }
func (p *preparedFailure) Prepare(device.Host, *workloads.Instance) error {
	p.prepared = true
	return nil
}
func (p *preparedFailure) Cleanup(device.Host) error { p.cleaned = true; return nil }
func (p *preparedFailure) Run(device.Host, *workloads.Instance) error {
	return errors.New("lost a dependency")
}

func TestRunOnceCleansUpAfterAFailure(t *testing.T) {
	e := parseSmall(t, "")
	jobs, _, err := plan(e, nil, Shard{})
	require.NoError(t, err)
	prog, _, err := jobs[0].program()
	require.NoError(t, err)
	dev, err := openSim("h100", false)
	require.NoError(t, err)
	defer func() { require.NoError(t, dev.Close()) }()
	s := &preparedFailure{}
	_, err = runOnce(dev, prog, s, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "prepared-failure: lost a dependency")
	assert.True(t, s.prepared)
	assert.True(t, s.cleaned, "Cleanup runs even when Run fails")
}

// interleavedOnTheSimulator measures e's two rows (one workload) in
// interleaved rounds on an h100 simulator, as a GPU's are, with sink
// receiving their timelines, and returns them once both reported done.
func interleavedOnTheSimulator(t *testing.T, e *Experiment, sink timelineSink) []Row {
	t.Helper()
	jobs, _, err := plan(e, nil, Shard{})
	require.NoError(t, err)
	dev, err := openSim("h100", false)
	require.NoError(t, err)
	defer func() { require.NoError(t, dev.Close()) }()
	rows := make([]Row, len(jobs))
	done := make(chan int, len(jobs))
	runInterleaved(dev, jobs, []int{0, 1}, rows, sink, done, func(*job) *reference { return nil })
	assert.Len(t, done, 2, "every row reported done")
	return rows
}

// TestInterleavedRowsOnTheSimulator drives the GPU rows' interleaved
// measurement on the simulator: every round runs one repetition of each
// row, and since every simulated repetition starts from a fresh binding,
// the rows must measure what back-to-back repetitions measure, now paired
// with the baseline's round by round.
func TestInterleavedRowsOnTheSimulator(t *testing.T) {
	e, err := ParseExperiment([]byte(strings.Replace(small, "repetitions: 2", "repetitions: 6", 1)), "small.yaml")
	require.NoError(t, err)
	seq, err := Run(e, RunOptions{Workers: 1})
	require.NoError(t, err)

	rows := interleavedOnTheSimulator(t, e, nil)
	res := &Results{Rows: rows}
	res.ComputeSpeedups()
	for i, row := range res.Rows {
		assert.Empty(t, row.Errors)
		assert.True(t, row.Interleaved)
		assert.False(t, seq.Rows[i].Interleaved)
		require.Len(t, row.MakespansNS, 6)
		for k := range row.MakespansNS {
			assert.InDelta(t, seq.Rows[i].MakespansNS[k], row.MakespansNS[k], 2, "%s repetition %d", row.Scheduler, k)
		}
		require.NotNil(t, row.PairedSpeedup)
		assert.Equal(t, 6, row.PairedSpeedup.N)
		assert.InDelta(t, *seq.Rows[i].Speedup, row.PairedSpeedup.Median, 1e-3)
		assert.LessOrEqual(t, row.PairedSpeedup.Lo, row.PairedSpeedup.Median)
		assert.GreaterOrEqual(t, row.PairedSpeedup.Hi, row.PairedSpeedup.Median)
	}
	assert.Nil(t, seq.Rows[1].PairedSpeedup, "back-to-back rows are not paired")
}

// TestInterleavedRowsKeepTheirOwnTimelines: in interleaved rounds the
// rows finish after the last round, when the device's last timeline is the
// last row's; each row's timeline must still be its own last repetition
// (the serial row's has no cross-stream waits, round-robin's has).
func TestInterleavedRowsKeepTheirOwnTimelines(t *testing.T) {
	timelines := map[string]string{}
	rows := interleavedOnTheSimulator(t, parseSmall(t, ""), func(row *Row, data []byte) error {
		timelines[row.Scheduler] = string(data)
		return nil
	})
	require.Len(t, timelines, 2)
	for _, row := range rows {
		assert.Empty(t, row.Errors)
	}
	assert.False(t, strings.Contains(timelines["serial"], "cuStreamWaitEvent"), "the serial row's timeline is its own")
	assert.True(t, strings.Contains(timelines["round-robin(k=4)"], "cuStreamWaitEvent"), "round-robin's timeline is its own")
}

// TestSimulatedRowsNeedNoInputData: the simulator binds without
// generating device inputs (it moves no data), and times every row exactly
// as a binding with the inputs does; a device the runner does not know to
// be the simulator (here the simulator behind a wrapper) gets them.
// workloads' TestBindWithoutDeviceData checks that none are generated.
func TestSimulatedRowsNeedNoInputData(t *testing.T) {
	e, err := ParseExperiment([]byte(`name: nodata
seed: 3
repetitions: 1
baseline: serial
workloads:
  - {name: VEC, family: kesco, params: {bench: VEC}}
schedulers:
  - {kind: serial}
  - {kind: round-robin, params: {k: 4}}
  - {kind: graph-per-step}
devices: [h100]
`), "nodata.yaml")
	require.NoError(t, err)
	jobs, _, err := plan(e, nil, Shard{})
	require.NoError(t, err)
	dev, err := openSim("h100", false)
	require.NoError(t, err)
	defer func() { require.NoError(t, dev.Close()) }()
	wrapped := struct{ device.Device }{dev}
	for _, j := range jobs {
		s, err := j.scheduler()
		require.NoError(t, err)
		var got [2]once
		for i, d := range []device.Device{dev, wrapped} {
			prog, _, err := j.program()
			require.NoError(t, err)
			got[i], err = runOnce(d, prog, s, false)
			require.NoError(t, err)
		}
		assert.Positive(t, got[0].makespan)
		got[0].stats0 = device.Stats{} // the wrapper hides the simulator's counters
		assert.Equal(t, got[1], got[0], s.Name())
	}
}
