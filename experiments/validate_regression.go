package experiments

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/experiments/fidelity"
)

// FidelityCheck is one entry of the fidelity regression file
// (docs/results/fidelity-regression.yaml): a selection of committed GPU
// rows and the limits the simulator's errors on them must stay within.
type FidelityCheck struct {
	Name       string         `yaml:"name"`
	Results    string         `yaml:"results"` // GPU results file, relative to the regression file
	Workloads  []string       `yaml:"workloads"`
	Schedulers []string       `yaml:"schedulers"` // empty: all
	Limits     FidelityLimits `yaml:"limits"`
}

// FidelityLimits bound a check's summary: errors at most, agreement at
// least. A limit left out is not checked.
type FidelityLimits struct {
	MakespanMAPE  *float64 `yaml:"makespan_mape_pct"`          // at most
	MaxErr        *float64 `yaml:"makespan_max_abs_err_pct"`   // at most
	SpeedupMedian *float64 `yaml:"speedup_median_abs_err_pct"` // at most
	PairsSame     *float64 `yaml:"pairs_same_pct"`             // at least, of the clearly separated pairs
	BestAgree     *int     `yaml:"best_agree"`                 // at least, groups
	RegretMax     *float64 `yaml:"regret_max_pct"`             // at most
}

// LoadFidelityChecks reads a regression file strictly; Results paths come
// back relative to the working directory.
func LoadFidelityChecks(path string) ([]FidelityCheck, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Checks []FidelityCheck `yaml:"checks"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Checks) == 0 {
		return nil, fmt.Errorf("%s: no checks", path)
	}
	for i := range f.Checks {
		c := &f.Checks[i]
		if c.Name == "" || c.Results == "" || len(c.Workloads) == 0 {
			return nil, fmt.Errorf("%s: check %d needs a name, a results file and workloads", path, i)
		}
		c.Results = filepath.Join(filepath.Dir(path), c.Results)
	}
	return f.Checks, nil
}

// Keep selects the check's rows.
func (c *FidelityCheck) Keep(r *Row) bool {
	return contains(c.Workloads, r.Workload) && (len(c.Schedulers) == 0 || contains(c.Schedulers, r.Scheduler))
}

// Violations lists the limits s breaks (none: the check passes).
func (c *FidelityCheck) Violations(s fidelity.Summary) []string {
	var out []string
	most := func(what string, got fidelity.Pct, limit *float64) {
		if limit != nil && (!got.Valid() || float64(got) > *limit) {
			out = append(out, fmt.Sprintf("%s: %s %s, limit %.1f%%", c.Name, what, got, *limit))
		}
	}
	most("makespan MAPE", s.MakespanMAPE, c.Limits.MakespanMAPE)
	most("largest makespan error", s.MaxErr, c.Limits.MaxErr)
	most("median speedup error", s.SpeedupMedianErr, c.Limits.SpeedupMedian)
	most("largest regret", s.RegretMax, c.Limits.RegretMax)
	if l := c.Limits.PairsSame; l != nil {
		same := PairsSamePct(s)
		if !same.Valid() || float64(same) < *l {
			out = append(out, fmt.Sprintf("%s: pairs ordered as on the GPU %s, limit at least %.1f%%", c.Name, same, *l))
		}
	}
	if l := c.Limits.BestAgree; l != nil && s.BestAgree < *l {
		out = append(out, fmt.Sprintf("%s: best scheduler agrees on %d of %d groups, limit at least %d", c.Name, s.BestAgree, s.Groups, *l))
	}
	return out
}

// PairsSamePct is the share of clearly separated pairs the simulator
// orders as the GPU does.
func PairsSamePct(s fidelity.Summary) fidelity.Pct {
	if s.Pairs == 0 {
		return fidelity.Pct(math.NaN())
	}
	return fidelity.Pct(float64(s.Same) / float64(s.Pairs) * 100)
}
