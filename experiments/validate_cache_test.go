package experiments

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cacheEntries are the cached files of dir.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	return m
}

// pageOf is the validation's page, its rows and its summaries, which a
// cached run must give byte for byte.
func pageOf(t *testing.T, v *Validation) string {
	t.Helper()
	rows, err := v.RowsCSV()
	require.NoError(t, err)
	js, err := v.JSON()
	require.NoError(t, err)
	return string(v.Page(PageInput{Command: "gpusched validate x.json", RowsCSV: "p-rows.csv"})) + string(rows) + string(js)
}

// TestValidateCacheHitAndMiss: the first run simulates and keeps the
// rows; the second reads them (a cached row edited by hand shows); a
// changed results file misses; a cached page is the uncached one.
func TestValidateCacheHitAndMiss(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	path := writeGPUResults(t, dir, small)
	plain, _, err := ValidateFiles([]string{path}, ValidateOptions{})
	require.NoError(t, err)
	cold, _, err := ValidateFiles([]string{path}, ValidateOptions{Cache: cache})
	require.NoError(t, err)
	entries := cacheEntries(t, cache)
	require.Len(t, entries, 1)
	warm, _, err := ValidateFiles([]string{path}, ValidateOptions{Cache: cache})
	require.NoError(t, err)
	assert.Equal(t, pageOf(t, plain), pageOf(t, cold))
	assert.Equal(t, pageOf(t, plain), pageOf(t, warm), "rows read back from the cache make the same page")
	assert.Len(t, cacheEntries(t, cache), 1, "a hit writes nothing")

	// The rows are read from the entry: one edited shows.
	cached, err := ReadResults(entries[0])
	require.NoError(t, err)
	cached.Rows[0].Makespan.Median = 12345
	b, err := json.Marshal(cached)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(entries[0], b, 0o644))
	hit, _, err := ValidateFiles([]string{path}, ValidateOptions{Cache: cache})
	require.NoError(t, err)
	assert.InDelta(t, 12345, hit.Rows[0].SimMakespan, 0)
	// An entry that does not read back is simulated again.
	require.NoError(t, os.WriteFile(entries[0], []byte("{"), 0o644))
	again, _, err := ValidateFiles([]string{path}, ValidateOptions{Cache: cache})
	require.NoError(t, err)
	assert.Equal(t, pageOf(t, plain), pageOf(t, again))

	// A changed results file (a GPU median) is another key.
	gpu, err := ReadResults(path)
	require.NoError(t, err)
	for i := range gpu.Rows[0].MakespansNS {
		gpu.Rows[0].MakespansNS[i] *= 2
	}
	b, err = json.Marshal(gpu)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	changed, _, err := ValidateFiles([]string{path}, ValidateOptions{Cache: cache})
	require.NoError(t, err)
	assert.Len(t, cacheEntries(t, cache), 2)
	uncached, _, err := ValidateFiles([]string{path}, ValidateOptions{})
	require.NoError(t, err)
	assert.Equal(t, pageOf(t, uncached), pageOf(t, changed))
	assert.NotEqual(t, pageOf(t, plain), pageOf(t, changed))

	// Selected rows and scaled configs are not cached.
	_, _, err = ValidateFiles([]string{path}, ValidateOptions{Cache: cache, Keep: func(*Row) bool { return true }})
	require.NoError(t, err)
	assert.Len(t, cacheEntries(t, cache), 2)
}

// TestValidateCacheKeyParts: every part of the key changes it.
func TestValidateCacheKeyParts(t *testing.T) {
	dir := t.TempDir()
	path := writeGPUResults(t, dir, small)
	gpu, err := ReadResults(path)
	require.NoError(t, err)
	e, err := experimentOf(gpu, "")
	require.NoError(t, err)
	cfg := filepath.Join(dir, "h100-copy.yaml")
	data, err := os.ReadFile("../configs/devices/h100-datasheet.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, data, 0o644))
	workloadFile := filepath.Join(dir, "w.yaml")
	require.NoError(t, os.WriteFile(workloadFile, []byte("a"), 0o644))

	type inputs struct {
		path     string
		configOf map[string]string
		opt      ValidateOptions
		edit     func(sub *Experiment)
	}
	key := func(in inputs) string {
		t.Helper()
		sub, _, err := simSubset(e, gpu, in.configOf)
		require.NoError(t, err)
		if in.edit != nil {
			in.edit(sub)
		}
		k, err := simCacheKeyOf(in.path, sub, in.configOf, in.opt)
		require.NoError(t, err)
		return k
	}
	gpuName := gpu.Rows[0].DeviceName
	base := func() inputs { return inputs{path: path, configOf: map[string]string{gpuName: cfg}} }
	want := key(base())
	assert.Equal(t, want, key(base()), "the same inputs, the same key")

	seen := map[string]string{want: "base"}
	differs := func(part string, in inputs) {
		t.Helper()
		k := key(in)
		prev, dup := seen[k]
		assert.False(t, dup, "%s: the key of %s", part, prev)
		seen[k] = part
	}
	// The results file's bytes.
	other := filepath.Join(dir, "other-gpu.json")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(other, append(raw, '\n'), 0o644))
	in := base()
	in.path = other
	differs("results file", in)
	// The experiment file given.
	in = base()
	in.opt.Experiment = filepath.Join(dir, "small.yaml")
	differs("experiment file", in)
	// The config named, and its content.
	in = base()
	in.configOf = map[string]string{gpuName: "h100-datasheet"}
	differs("config name", in)
	require.NoError(t, os.WriteFile(cfg, []byte(strings.Replace(string(data), "launch_ns: 3300", "launch_ns: 3301", 1)), 0o644))
	differs("config content", base())
	// The options.
	in = base()
	in.opt.SimVariant = "datasheet"
	differs("variant", in)
	in = base()
	in.opt.SchedulerDefaults = map[string]map[string]string{"set": {"warm": "false"}}
	differs("scheduler defaults", in)
	in = base()
	in.opt.HostSpeed = true
	differs("host speed", in)
	// The experiment simulated (its seed), and a file it names.
	in = base()
	in.edit = func(sub *Experiment) { sub.Seed++ }
	differs("seed", in)
	in = base()
	in.edit = func(sub *Experiment) { sub.Name = workloadFile } // any string naming a file
	differs("a named file", in)
	require.NoError(t, os.WriteFile(workloadFile, []byte("b"), 0o644))
	differs("a named file's content", in)
	// The simulator build.
	old := buildDigest
	t.Cleanup(func() { buildDigest = old })
	buildDigest = func() (string, error) { return "another build", nil }
	differs("build", base())
}

// TestValidateFilesWorkersSamePage: files simulated one at a time or
// several at once make the same validation, joined in the order given.
func TestValidateFilesWorkersSamePage(t *testing.T) {
	dir := t.TempDir()
	a := writeGPUResults(t, dir, small)
	var paths []string
	for i, seed := range []string{"seed: 7", "seed: 8", "seed: 9"} {
		sub := filepath.Join(dir, string(rune('a'+i)))
		require.NoError(t, os.Mkdir(sub, 0o755))
		paths = append(paths, writeGPUResults(t, sub, strings.Replace(small, "seed: 7", seed, 1)))
	}
	paths = append(paths, a)
	one, sims1, err := ValidateFiles(paths, ValidateOptions{Run: RunOptions{Workers: 1}})
	require.NoError(t, err)
	many, sims3, err := ValidateFiles(paths, ValidateOptions{Run: RunOptions{Workers: 3}})
	require.NoError(t, err)
	assert.Equal(t, pageOf(t, one), pageOf(t, many))
	require.Len(t, sims3, len(paths))
	for i := range paths {
		assert.Equal(t, sims1[i].Seed, sims3[i].Seed)
		assert.Equal(t, paths[i], many.Sources[i].GPU, "joined in the order given")
	}
	assert.Equal(t, int64(8), sims3[1].Seed)
}
