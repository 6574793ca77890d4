package experiments

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileFamilyTakesPathsRelativeToTheExperiment(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "exp")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	w, err := os.ReadFile("../workloads/file/testdata/example.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "diamond.yaml"), w, 0o644))
	exp := `name: replay
repetitions: 1
baseline: serial
workloads:
  - name: diamond
    family: file
    params: {path: ../diamond.yaml}
schedulers:
  - kind: serial
  - kind: round-robin
    params: {k: 2}
devices: [h100]
`
	path := filepath.Join(sub, "e.yaml")
	require.NoError(t, os.WriteFile(path, []byte(exp), 0o644))
	e, err := LoadExperiment(path)
	require.NoError(t, err)
	res, err := Run(e, RunOptions{})
	require.NoError(t, err)
	require.Len(t, res.Rows, 2)
	for _, r := range res.Rows {
		assert.Empty(t, r.Errors, r.Scheduler)
		require.NotNil(t, r.Races)
		assert.Zero(t, *r.Races, r.Scheduler)
	}
	require.NotNil(t, res.Rows[1].Speedup)
	assert.Greater(t, *res.Rows[1].Speedup, 1.05, "the two convolutions overlap on two streams")

	// A missing file and a bad file are errors at the entry's line.
	bad := filepath.Join(sub, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(`name: x
repetitions: 1
workloads:
  - family: file
    params: {path: nowhere.yaml}
schedulers: [{kind: serial}]
devices: [h100]
`), 0o644))
	_, err = LoadExperiment(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.yaml:5: workload \"file\"")
	assert.Contains(t, err.Error(), filepath.Join(sub, "nowhere.yaml"))
}
