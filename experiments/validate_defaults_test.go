package experiments

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A default takes KIND.PARAM=VALUE or FILEGLOB:KIND.PARAM=VALUE (the glob's
// dots are not the kind's) and names what it wants otherwise.
func TestSchedulerDefaultsSet(t *testing.T) {
	d := SchedulerDefaults{}
	require.NoError(t, d.Set("set.warm=false"))
	require.NoError(t, d.Set("heldout1[0-6]-set-gpu*.json:queue.per_run_threads=true"))
	assert.Equal(t, SchedulerDefaults{"set": {"warm": "false"}, "heldout1[0-6]-set-gpu*.json:queue": {"per_run_threads": "true"}}, d)
	assert.Equal(t, "heldout1[0-6]-set-gpu*.json:queue.per_run_threads=true,set.warm=false", d.String())
	for _, bad := range []string{"set.warm", ":queue.b=2", "x.json:queue=2", "heldout[1-:queue.b=2"} {
		assert.Error(t, d.Set(bad), bad)
	}
}

func TestLoadSchedulerDefaults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.txt")
	require.NoError(t, os.WriteFile(p, []byte("# old runs\nset.warm=false\n\n  a-*.json:queue.per_run_threads=true\n"), 0o644))
	d, err := LoadSchedulerDefaults(p)
	require.NoError(t, err)
	assert.Equal(t, SchedulerDefaults{"set": {"warm": "false"}, "a-*.json:queue": {"per_run_threads": "true"}}, d)

	require.NoError(t, os.WriteFile(p, []byte("set.warm=false\nqueue.per_run_threads\n"), 0o644))
	_, err = LoadSchedulerDefaults(p)
	assert.ErrorContains(t, err, "d.txt:2: want KIND.PARAM=VALUE")
	_, err = LoadSchedulerDefaults(filepath.Join(t.TempDir(), "none.txt"))
	assert.Error(t, err)

	// The committed file parses, and its Queue globs reach the files the
	// fidelity page simulates the old Queue on.
	d, err = LoadSchedulerDefaults(filepath.Join("..", "docs", "results", "fidelity-defaults.txt"))
	require.NoError(t, err)
	got, err := defaultsFor(d, "docs/results/heldout12-set-gpu-h100-r2.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{"set": {"warm": "false"}, "queue": {"per_run_threads": "true"}}, got)
	got, err = defaultsFor(d, "docs/results/heldout17-set-gpu-h100.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{"set": {"warm": "false"}}, got)
}

// A scheduler default written GLOB:KIND applies to the results files whose
// base name matches GLOB, over the plain kind's value; the others get the
// plain kinds only; a bad pattern is an error that names it.
func TestSchedulerDefaultsForAFile(t *testing.T) {
	all := map[string]map[string]string{
		"set":                               {"warm": "false"},
		"queue":                             {"b": "2"},
		"heldout1[0-6]-set-gpu*.json:queue": {"per_run_threads": "true", "b": "3"},
	}
	got, err := defaultsFor(all, "docs/results/heldout12-set-gpu-h100-r2.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{"set": {"warm": "false"}, "queue": {"b": "3", "per_run_threads": "true"}}, got)
	got, err = defaultsFor(all, "docs/results/heldout17-set-gpu-h100.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{"set": {"warm": "false"}, "queue": {"b": "2"}}, got)
	_, err = defaultsFor(map[string]map[string]string{"heldout[1-:queue": {"b": "3"}}, "x.json")
	assert.ErrorContains(t, err, `scheduler default "heldout[1-:queue": bad file pattern`)
}
