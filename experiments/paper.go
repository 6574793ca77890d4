package experiments

import (
	"encoding/json"
	"fmt"
	"os"
)

// RunToJSON is the run step of the papers' entry points (experiments/acs,
// kesco, autograph): load an experiment file, run it with the table on
// stderr, and write the raw results as JSON to out (stdout if empty). The
// utilization time series are left out: a paper's page needs each row's
// makespans, mean utilization, kernels, races and outputs, and the series
// (hundreds of points a row) would make the committed files megabytes. A
// run with failed rows still writes its results, then returns an error
// naming the first.
func RunToJSON(config, out string, workers int) error {
	e, err := LoadExperiment(config)
	if err != nil {
		return err
	}
	res, err := Run(e, RunOptions{Workers: workers, Table: os.Stderr})
	if err != nil {
		return err
	}
	for i := range res.Rows {
		res.Rows[i].Utilization = nil
	}
	data, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if out == "" {
		_, err = os.Stdout.Write(data)
	} else {
		err = os.WriteFile(out, data, 0o644)
	}
	if err != nil {
		return err
	}
	if failed := res.Failed(); len(failed) > 0 {
		f := failed[0]
		return fmt.Errorf("%d of %d rows failed (first: %s / %s / %s: %v)", len(failed), len(res.Rows), f.Workload, f.Scheduler, f.Device, f.Errors)
	}
	return nil
}
