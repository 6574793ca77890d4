package experiments

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// Results is what one run (or one shard of a sweep, or a merge of shards)
// measured. It holds nothing that differs between two runs of the same
// experiment on the simulator (no wall-clock times, no host names), so its
// files are byte-identical across runs.
type Results struct {
	Experiment  string       `json:"experiment"`
	Description string       `json:"description,omitempty"`
	Source      string       `json:"source"` // experiment file, base name
	Seed        int64        `json:"seed"`
	Repetitions int          `json:"repetitions"`
	Baseline    string       `json:"baseline,omitempty"`
	Sweep       []SweepParam `json:"sweep,omitempty"`
	// Shard is set on a shard's partial results and cleared by Merge.
	Shard *Shard `json:"shard,omitempty"`
	// TotalRows is the number of rows of the whole (unsharded) matrix.
	TotalRows int   `json:"total_rows"`
	Rows      []Row `json:"rows"`
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
	Scheduler      string            `json:"scheduler"`      // entry name
	Kind           string            `json:"kind"`           // registered scheduler kind
	SchedulerDesc  string            `json:"scheduler_desc"` // the scheduler's own Name(), with its parameters
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
	// rows of its group (GPU rows; see runGPURows), repetition i of each
	// in round i. PairedSpeedup is then the median of the per-round
	// ratios baseline / row with its 95% interval (PairedSpeedup).
	Interleaved   bool    `json:"interleaved,omitempty"`
	PairedSpeedup *Paired `json:"paired_speedup,omitempty"`

	// From devices that observe themselves (the simulator): mean SM warp
	// occupancy over the timed region, kernels launched, races found
	// (largest count over the repetitions) and a few of them.
	SMUtil       *float64    `json:"sm_util,omitempty"`
	Kernels      *int64      `json:"kernels,omitempty"`
	Races        *int        `json:"races,omitempty"`
	RaceExamples []string    `json:"race_examples,omitempty"`
	Utilization  []UtilPoint `json:"utilization,omitempty"`

	// SchedulerStats are the counters the scheduler reports about its last
	// measured run (events waited on, syncs pruned, ...), if it reports any
	// (a Stats or Metrics method returning map[string]float64).
	SchedulerStats map[string]float64 `json:"scheduler_stats,omitempty"`

	// Outputs says how the row's outputs were checked.
	Outputs string `json:"outputs"`
	// Errors lists everything that went wrong: a failed run, outputs that
	// differ from the serial schedule's, a failed reference check.
	Errors []string `json:"errors,omitempty"`
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

// computeSpeedups fills Speedup for every row whose group has a measured
// baseline.
func (r *Results) computeSpeedups() {
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

// ReadResults reads a results.json.
func ReadResults(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a gpusched results file: %w", path, err)
	}
	return &r, nil
}

// Merge joins the partial results of the shards of one sweep. Every shard
// must come from the same experiment and sweep, no row may appear twice, and
// together they must cover the whole matrix; the result is what the
// unsharded sweep writes.
func Merge(parts []*Results) (*Results, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no results given")
	}
	first := parts[0]
	out := *first
	out.Shard = nil
	out.Rows = nil
	sig := func(r *Results) string {
		b, _ := json.Marshal([]any{r.Experiment, r.Source, r.Seed, r.Repetitions, r.Baseline, r.Sweep, r.TotalRows})
		return string(b)
	}
	seen := map[int]int{}
	for i, p := range parts {
		if sig(p) != sig(first) {
			return nil, fmt.Errorf("merge: part %d is from a different experiment or sweep (%s %v) than part 0 (%s %v)", i, p.Experiment, p.Sweep, first.Experiment, first.Sweep)
		}
		for _, row := range p.Rows {
			if j, dup := seen[row.Index]; dup {
				return nil, fmt.Errorf("merge: row %d (%s / %s / %s) is in part %d and part %d", row.Index, row.Workload, row.Scheduler, row.Device, j, i)
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
		return nil, fmt.Errorf("merge: have %d of %d rows; missing rows %s (is a shard missing?)", len(out.Rows), out.TotalRows, strings.Join(missing, ", "))
	}
	sort.Slice(out.Rows, func(a, b int) bool { return out.Rows[a].Index < out.Rows[b].Index })
	return &out, nil
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
