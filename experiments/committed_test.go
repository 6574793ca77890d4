package experiments

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommittedResults loads every results file under docs/results, as
// gpusched compare and merge do, and checks that each is a whole matrix in
// the current schema, encoded as gpusched writes it, that its shards merge
// back into it, that it compares with itself row for row, that it
// replots (figures and CSVs), and that its simulator configs are today's
// configs of their names.
func TestCommittedResults(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "results", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := ReadResults(f)
			require.NoError(t, err)
			require.NotEmpty(t, r.Rows)
			require.Equal(t, r.TotalRows, len(r.Rows), "a whole matrix")
			for i, row := range r.Rows {
				require.Equal(t, i, row.Index, "rows in matrix order")
			}
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			assert.Equal(t, string(data), string(encodeResults(t, r)), "encoded as gpusched writes results.json")
			// gpusched run FILE runs the configs that made the rows: a
			// config changed since is renamed in the file
			// (migrate -pin-configs -rename) or the file is run again.
			if why, stale := staleConfigs[filepath.Base(f)]; stale {
				assert.NotEmpty(t, r.ConfigChanges(), "its configs match again: remove it from staleConfigs")
				t.Logf("config changed since its rows were made (%s): %v", why, r.ConfigChanges())
			} else {
				assert.Empty(t, r.ConfigChanges(), "its simulator configs are the ones that made its rows")
			}

			shards := make([]*Results, 3)
			for k := range shards {
				shards[k] = shardOf(r, k, 3)
			}
			merged, err := Merge([]*Results{shards[2], shards[0], shards[1]})
			require.NoError(t, err)
			assert.Equal(t, r, merged)

			c, err := Compare(r, r, "a", "b")
			require.NoError(t, err)
			assert.Len(t, c.Rows, len(r.Rows))
			assert.Empty(t, c.OnlyA)
			for _, cr := range c.Rows {
				if cr.MedianA > 0 {
					assert.Equal(t, 1.0, cr.Ratio, cr.Label)
				}
			}

			// gpusched replot: the figures and both CSVs.
			plots, err := Plots(r, []string{"svg"})
			require.NoError(t, err)
			assert.NotEmpty(t, plots)
			_, err = CSV(r)
			require.NoError(t, err)
			_, err = RepetitionsCSV(r)
			require.NoError(t, err)
		})
	}
}

// staleConfigs are committed files whose simulator config (h100's kernel
// profile, refitted in a3d7f8d) has changed since their rows were made,
// left to their owners to run again; each must still be stale, so the
// list only shrinks.
var staleConfigs = map[string]string{}

func encodeResults(t *testing.T, r *Results) []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	require.NoError(t, err)
	return append(b, '\n')
}

// TestMergeRefusesShardsOfAnotherExperiment: two committed files of
// different experiments never merge, whatever their names.
func TestMergeRefusesShardsOfAnotherExperiment(t *testing.T) {
	a, err := ReadResults(filepath.Join("..", "docs", "results", "set-gpu-v9.json"))
	require.NoError(t, err)
	b, err := ReadResults(filepath.Join("..", "docs", "results", "set-gpu-v10.json"))
	require.NoError(t, err)
	b.Experiment = a.Experiment
	_, err = Merge([]*Results{a, b})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not from the same experiment")
}

// TestResolvedYAMLRoundTrips: the experiment file a results file stands
// for (what gpusched run RESULTS.json reads) resolves to the experiment
// that made the rows, for every committed results file.
func TestResolvedYAMLRoundTrips(t *testing.T) {
	t.Chdir("..") // the committed files ran at the repository root, their file paths relative to it
	files, err := filepath.Glob(filepath.Join("docs", "results", "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := ReadResults(f)
			require.NoError(t, err)
			_, stale := staleConfigs[filepath.Base(f)]
			var e *Experiment
			if stale { // LoadExperiment refuses it: its configs changed since
				data, err := r.Resolved.YAML()
				require.NoError(t, err)
				e, err = parseExperiment(data, filepath.Base(f), "")
				require.NoError(t, err)
			} else {
				e, err = LoadExperiment(f) // as gpusched run RESULTS.json does
				require.NoError(t, err)
			}
			again, err := Resolve(e, r.Resolved.Sweep, r.Resolved.Runner)
			require.NoError(t, err)
			want := r.Resolved
			if stale {
				again.Devices = want.Devices // digests differ by design
			}
			assert.Equal(t, want.Digest(), again.Digest())
		})
	}
}
