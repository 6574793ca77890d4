package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
)

// TestCommittedSimResultsReproduce runs one workload group (a workload on
// a device, every scheduler: the one of least simulated time, to keep the
// test cheap) of every committed simulator results file again, with its own paper's runner, and requires
// the very makespans the file holds. A change to the simulator's model
// that alters committed rows fails here, so the file is run again with the
// change, not left describing a simulator that no longer exists (config
// digests alone cannot see a model change). Files whose configs changed on
// purpose (experiments' staleConfigs list) are refused by LoadExperiment
// and skipped by name here.
func TestCommittedSimResultsReproduce(t *testing.T) {
	t.Chdir("../..") // committed files ran at the repository root
	files, err := filepath.Glob("docs/results/*-sim*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, err := experiments.ReadResults(f)
			require.NoError(t, err)
			e, err := experiments.LoadExperiment(f)
			if err != nil {
				t.Skipf("not runnable as it ran: %v", err)
			}
			opt := experiments.RunOptions{DropSeries: true}
			if name := want.Resolved.Runner; name != "" {
				opt.Paper, err = experiments.PaperByName(name)
				require.NoError(t, err)
			}
			opt.Shard = cheapestGroup(want)
			got, err := experiments.Run(e, opt)
			require.NoError(t, err)
			require.NotEmpty(t, got.Rows)
			for _, row := range got.Rows {
				w := want.Rows[row.Index]
				label := fmt.Sprintf("row %d (%s, %s, %s)", row.Index, w.Workload, w.Scheduler, w.Device)
				assert.Equal(t, w.Workload+w.Scheduler+w.Device, row.Workload+row.Scheduler+row.Device, label)
				assert.Equal(t, w.MakespansNS, row.MakespansNS, "%s: the committed makespans", label)
				assert.Equal(t, w.Errors, row.Errors, "%s: the committed outcome", label)
				assert.Equal(t, w.NotApplicable, row.NotApplicable, "%s", label)
			}
		})
	}
}

// cheapestGroup is the shard of r's matrix that holds only the group whose
// rows simulated the least time in all (as many shards as groups).
func cheapestGroup(r *experiments.Results) experiments.Shard {
	total := map[int]int64{}
	groups := 0
	for _, row := range r.Rows {
		groups = max(groups, row.Group+1)
		for _, ns := range row.MakespansNS {
			total[row.Group] += ns
		}
	}
	best := r.Rows[0].Group
	for g, ns := range total {
		if ns < total[best] || (ns == total[best] && g < best) {
			best = g
		}
	}
	return experiments.Shard{Index: best, Count: groups}
}
