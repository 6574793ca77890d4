package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// ResultsSchema is the version of the results format (results.json) this
// gpusched writes and reads. Version 2 added schema_version, the resolved
// experiment and its digest, provenance, every row's parameters and what the
// papers' runs add (throughput units, output hashes, choices, probes);
// docs/results/*.json were converted from version 1 and the papers' own
// formats, their measurements unchanged (see Results.Migrated). Optional
// fields added since keep the version: files without them load as before
// (provenance's host, session 9).
const ResultsSchema = 2

// Results is what one run (or one shard of a sweep, or a merge of shards)
// measured. On the simulator it holds nothing that differs between two runs
// of the same experiment with the same gpusched (no wall-clock times, host
// names or paths), so its files are byte-identical across runs and machines.
type Results struct {
	SchemaVersion int    `json:"schema_version"`
	Experiment    string `json:"experiment"`
	Description   string `json:"description,omitempty"`
	Source        string `json:"source"` // experiment file, base name
	// Digest is the SHA-256 of the resolved experiment (Resolved.Digest):
	// results with equal digests ran the same matrix, so their shards may
	// merge and a rerun may resume them.
	Digest   string    `json:"digest"`
	Resolved *Resolved `json:"resolved"`
	// Provenance says which gpusched ran the rows and, on a GPU, on what.
	// One entry, or one per distinct build and machine where shards that
	// ran on several were merged.
	Provenance []Provenance `json:"provenance,omitempty"`
	// Migrated, on files converted from an earlier format, says from what
	// and how; the measurements are as recorded.
	Migrated    string       `json:"migrated,omitempty"`
	Seed        int64        `json:"seed"`
	Repetitions int          `json:"repetitions"`
	Baseline    string       `json:"baseline,omitempty"`
	Sweep       []SweepParam `json:"sweep,omitempty"`
	// Shard is set on a shard's partial results and cleared by Merge.
	Shard *Shard `json:"shard,omitempty"`
	// TotalRows is the number of rows of the whole (unsharded) matrix.
	TotalRows int   `json:"total_rows"`
	Rows      []Row `json:"rows"`
	// Probes are checks a paper runs beside the matrix (cuSync: the
	// deadlock of consumers issued before their producer).
	Probes []Probe `json:"probes,omitempty"`
}

// Row is one scheduler on one workload on one device (at one sweep point),
// over all its measured repetitions.
type Row struct {
	Index int          `json:"index"` // position in the whole matrix
	Group int          `json:"group"` // (point, workload, device); speedups compare within a group
	Point []Assignment `json:"point,omitempty"`

	Workload string `json:"workload"`
	Family   string `json:"family"`
	// WorkloadParams are every parameter of the workload with the value
	// it had (the file's or the default), as YAML scalars.
	WorkloadParams map[string]string `json:"workload_params,omitempty"`
	// Program is the program's own name where it says more than the
	// family (the shapes of a tile pair).
	Program       string `json:"program,omitempty"`
	Scheduler     string `json:"scheduler"`      // entry name
	Kind          string `json:"kind"`           // registered scheduler kind
	SchedulerDesc string `json:"scheduler_desc"` // the scheduler's own Name(), with its parameters
	// SchedulerParams are every parameter of the scheduler, as
	// WorkloadParams.
	SchedulerParams map[string]string `json:"scheduler_params,omitempty"`
	Baseline        bool              `json:"baseline,omitempty"`
	Device          string            `json:"device"`      // as the experiment names it
	DeviceName      string            `json:"device_name"` // as the device reports itself
	Warmup          int               `json:"warmup"`

	// MakespansNS are the measured repetitions' makespans in nanoseconds:
	// host time from the synchronized start to the synchronized end of the
	// scheduler's Run.
	MakespansNS []int64  `json:"makespans_ns"`
	Makespan    *Summary `json:"makespan_us,omitempty"` // microseconds
	// Speedup is the baseline's median makespan over this row's, in the
	// same group.
	Speedup *float64 `json:"speedup,omitempty"`
	// Interleaved: the row's repetitions ran in rounds with the other
	// rows of its group (GPU rows; see runInterleaved), repetition i of
	// each in round i. PairedSpeedup is then the median of the per-round
	// ratios baseline / row with its 95% interval (PairedSpeedup).
	Interleaved   bool    `json:"interleaved,omitempty"`
	PairedSpeedup *Paired `json:"paired_speedup,omitempty"`
	// Throughput is set for workloads of many jobs: makespans convert to
	// jobs per second and to the workload's own unit.
	Throughput *Throughput `json:"throughput,omitempty"`

	// From devices that observe themselves (the simulator): mean SM warp
	// occupancy over the timed region, kernels launched, races found
	// (largest count over the repetitions) and a few of them.
	SMUtil  *float64 `json:"sm_util,omitempty"`
	Kernels *int64   `json:"kernels,omitempty"`
	// KernelTiming says how the simulator timed the timed run's kernel
	// launches (its last repetition).
	KernelTiming *KernelTiming `json:"kernel_timing,omitempty"`
	Races        *int          `json:"races,omitempty"`
	RaceExamples []string      `json:"race_examples,omitempty"`
	Utilization  []UtilPoint   `json:"utilization,omitempty"`

	// SchedulerStats are the counters the scheduler reports about a
	// measured run (events waited on, syncs pruned, ...), if it reports
	// any (a Stats or Metrics method returning map[string]float64).
	SchedulerStats map[string]float64 `json:"scheduler_stats,omitempty"`
	// Choices are the scheduler's own account of what it decided and why
	// (tile synchronization: the policy picked for each pair).
	Choices []string `json:"choices,omitempty"`
	// Facts are what a paper's run measures about the workload on the
	// device (cuSync: the producer's and consumer's waves).
	Facts map[string]float64 `json:"facts,omitempty"`

	// Outputs says how the row's outputs were checked; OutputsSHA256 is
	// the hash of the checked outputs (names and bytes, sorted by name).
	Outputs       string `json:"outputs"`
	OutputsSHA256 string `json:"outputs_sha256,omitempty"`
	// Errors lists everything that went wrong: a failed run, outputs that
	// differ from the serial schedule's, a failed reference check.
	Errors []string `json:"errors,omitempty"`
	// NotApplicable lists what the scheduler needs that the workload or
	// the device does not offer (sched.Missing); such a row is not run,
	// in a paper's run that asks for applicable rows only.
	NotApplicable []string `json:"not_applicable,omitempty"`
}

// Throughput is a row's work in jobs and in the workload's own unit.
type Throughput struct {
	Jobs        int     `json:"jobs"`
	Unit        string  `json:"unit"`
	UnitsPerJob float64 `json:"units_per_job"`
}

// Probe is one check a paper runs beside the matrix, and what came of it.
type Probe struct {
	Name   string            `json:"name"`
	Device string            `json:"device"`
	Params map[string]string `json:"params,omitempty"`
	Result string            `json:"result"`
}

// UtilPoint is SM utilization over one bin of the timed region, which
// starts at T (microseconds from the start of the scheduler's run).
type UtilPoint struct {
	T     float64 `json:"t_us"`
	Warps float64 `json:"warps"` // fraction of warp slots occupied
	Busy  float64 `json:"busy"`  // fraction of SMs with a resident block
}

// Failed lists the rows with errors.
func (r *Results) Failed() []Row {
	var out []Row
	for _, row := range r.Rows {
		if len(row.Errors) > 0 {
			out = append(out, row)
		}
	}
	return out
}

// Key identifies a row across result sets: point, workload, scheduler,
// device.
func (row *Row) Key() string {
	return strings.Join([]string{pointString(row.Point), row.Workload, row.Scheduler, row.Device}, "\x00")
}

// ComputeSpeedups fills Speedup for every row whose group has a measured
// baseline, and PairedSpeedup for its interleaved rows.
func (r *Results) ComputeSpeedups() {
	base := map[int]float64{}
	baseRuns := map[int][]int64{}
	for _, row := range r.Rows {
		if row.Baseline && row.Makespan != nil && row.Makespan.Median > 0 {
			base[row.Group] = row.Makespan.Median
			if row.Interleaved {
				baseRuns[row.Group] = row.MakespansNS
			}
		}
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		b, ok := base[row.Group]
		row.Speedup = nil
		if ok && row.Makespan != nil && row.Makespan.Median > 0 {
			s := round(b/row.Makespan.Median, 4)
			row.Speedup = &s
		}
		row.PairedSpeedup = nil
		if runs, ok := baseRuns[row.Group]; ok && row.Interleaved && len(row.Errors) == 0 {
			if p, ok := PairedSpeedup(runs, row.MakespansNS); ok {
				p = Paired{N: p.N, Median: round(p.Median, 4), Lo: round(p.Lo, 4), Hi: round(p.Hi, 4)}
				row.PairedSpeedup = &p
			}
		}
	}
}

// Size limits of the files gpusched reads: an experiment file or a
// results file larger than these is a mistake (or /dev/zero), refused
// before it fills memory.
const (
	maxExperimentBytes = 16 << 20
	maxResultsBytes    = 256 << 20
)

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		// The first bytes still tell a results file from anything else.
		return data[:min(len(data), 64)], fmt.Errorf("%s: larger than %d MiB; not a file gpusched reads", path, limit>>20)
	}
	return data, nil
}

// ReadResults reads a results.json of the current schema, strictly (an
// unknown field is an error), and checks that its digest is its resolved
// experiment's.
func ReadResults(path string) (*Results, error) {
	data, err := readLimited(path, maxResultsBytes)
	if err != nil {
		return nil, err
	}
	return ParseResults(data, path)
}

// ParseResults decodes results; name is used in errors.
func ParseResults(data []byte, name string) (*Results, error) {
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: not a gpusched results file: %w", name, err)
	}
	switch {
	case probe.SchemaVersion == nil:
		return nil, fmt.Errorf("%s: not a gpusched results file of schema %d (no schema_version; files of gpusched before schema 2 convert with go run ./experiments/internal/migrate)", name, ResultsSchema)
	case *probe.SchemaVersion != ResultsSchema:
		return nil, fmt.Errorf("%s: results schema %d; this gpusched reads schema %d", name, *probe.SchemaVersion, ResultsSchema)
	}
	var r Results
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a gpusched results file: %w", name, err)
	}
	if err := r.checkDigest(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &r, nil
}

// Merge joins the partial results of the shards of one sweep. Every shard
// must come from the same resolved experiment (equal digests), every row
// index must lie in the matrix, no row may appear twice, and together they
// must cover the whole matrix; the result is what the unsharded sweep
// writes.
func Merge(parts []*Results) (*Results, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("no results given")
	}
	first := parts[0]
	out := *first
	out.Shard = nil
	out.Rows = nil
	out.Provenance = mergeProvenance(parts)
	seen := map[int]int{}
	for i, p := range parts {
		if err := checkPart(i, p, first); err != nil {
			return nil, err
		}
		for _, row := range p.Rows {
			if row.Index < 0 || row.Index >= out.TotalRows {
				return nil, fmt.Errorf("part %d: row %d (%s) is outside the matrix of %d rows", i, row.Index, rowLabel(&row), out.TotalRows)
			}
			if j, dup := seen[row.Index]; dup {
				return nil, fmt.Errorf("row %d (%s / %s / %s) is in part %d and part %d", row.Index, row.Workload, row.Scheduler, row.Device, j, i)
			}
			seen[row.Index] = i
			out.Rows = append(out.Rows, row)
		}
	}
	if len(out.Rows) != out.TotalRows {
		var missing []string
		for k := 0; k < out.TotalRows && len(missing) < 10; k++ {
			if _, ok := seen[k]; !ok {
				missing = append(missing, fmt.Sprint(k))
			}
		}
		return nil, fmt.Errorf("have %d of %d rows; missing rows %s (is a shard missing?)", len(out.Rows), out.TotalRows, strings.Join(missing, ", "))
	}
	sort.Slice(out.Rows, func(a, b int) bool { return out.Rows[a].Index < out.Rows[b].Index })
	return &out, nil
}

// checkPart checks that part i of a merge is results of first's experiment.
func checkPart(i int, p, first *Results) error {
	if p.SchemaVersion != ResultsSchema {
		return fmt.Errorf("part %d has schema %d, not %d", i, p.SchemaVersion, ResultsSchema)
	}
	if err := p.checkDigest(); err != nil {
		return fmt.Errorf("part %d: %w", i, err)
	}
	if p.Digest != first.Digest {
		return fmt.Errorf("part %d (%s, digest %s) is not from the same experiment as part 0 (%s, digest %s): their resolved experiments differ",
			i, p.Experiment, short(p.Digest), first.Experiment, short(first.Digest))
	}
	if p.TotalRows != first.TotalRows || p.TotalRows <= 0 {
		return fmt.Errorf("part %d has %d rows in its matrix, part 0 %d", i, p.TotalRows, first.TotalRows)
	}
	return nil
}

// round rounds x to the given number of decimal places, so files hold
// readable numbers (dividing by a power of ten, not multiplying by its
// inverse, gives the double nearest the decimal).
func round(x float64, places int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow10(places)
	return math.Round(x*p) / p
}

// KernelTiming counts a simulated run's kernel launches by what timed
// them (device.Stats): a kernel profile's measured point (the same launch
// measured alone on the GPU), a profile's fitted model, or the launch's
// Work estimate.
type KernelTiming struct {
	Measured  int64 `json:"measured"`
	Profiled  int64 `json:"profiled"`
	Estimated int64 `json:"estimated"`
}

// String is the counts as a phrase: "a measured point 12 (40%), ...".
func (t *KernelTiming) String() string {
	n := max(t.Measured+t.Profiled+t.Estimated, 1)
	pct := func(x int64) string { return fmt.Sprintf("%d (%.0f%%)", x, 100*float64(x)/float64(n)) }
	return fmt.Sprintf("a measured point %s, a fitted model %s, the Work estimate %s", pct(t.Measured), pct(t.Profiled), pct(t.Estimated))
}

// Add adds o's counts to t.
func (t *KernelTiming) Add(o KernelTiming) {
	t.Measured += o.Measured
	t.Profiled += o.Profiled
	t.Estimated += o.Estimated
}
