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

	// A results file whose measurements changed (a rerun's) simulates
	// the same rows: the same entry.
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
	assert.Len(t, cacheEntries(t, cache), 1)
	uncached, _, err := ValidateFiles([]string{path}, ValidateOptions{})
	require.NoError(t, err)
	assert.Equal(t, pageOf(t, uncached), pageOf(t, changed))
	assert.NotEqual(t, pageOf(t, plain), pageOf(t, changed))

	// Another seed is another simulation.
	gpu.Seed++
	b, err = json.Marshal(gpu)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, _, err = ValidateFiles([]string{path}, ValidateOptions{Cache: cache})
	require.NoError(t, err)
	assert.Len(t, cacheEntries(t, cache), 2)
	// Selected rows and scaled configs are not cached.
	_, _, err = ValidateFiles([]string{path}, ValidateOptions{Cache: cache, Keep: func(*Row) bool { return true }})
	require.NoError(t, err)
	assert.Len(t, cacheEntries(t, cache), 2)
}

// keyInputs are the inputs of a cache key.
type keyInputs struct {
	sweep    []SweepParam
	configOf map[string]string
	opt      ValidateOptions
	edit     func(sub *Experiment)
}

// keyFixture is a results file and a config copy to key, the key of each
// inputs, and differs, which asserts that inputs have a key no earlier
// inputs had.
type keyFixture struct {
	dir, path, cfg string
	cfgData        []byte
	base           func() keyInputs
	differs        func(part string, in keyInputs)
}

func newKeyFixture(t *testing.T) *keyFixture {
	t.Helper()
	f := &keyFixture{dir: t.TempDir()}
	f.path = writeGPUResults(t, f.dir, small)
	gpu, err := ReadResults(f.path)
	require.NoError(t, err)
	e, err := experimentOf(gpu, "")
	require.NoError(t, err)
	f.cfg = filepath.Join(f.dir, "h100-copy.yaml")
	f.cfgData, err = os.ReadFile("../configs/devices/h100-datasheet.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f.cfg, f.cfgData, 0o644))
	key := func(in keyInputs) string {
		t.Helper()
		sub, _, err := simSubset(e, gpu, in.configOf)
		require.NoError(t, err)
		if in.edit != nil {
			in.edit(sub)
		}
		k, err := simCacheKeyOf(sub, in.sweep, in.configOf, in.opt)
		require.NoError(t, err)
		return k
	}
	gpuName := gpu.Rows[0].DeviceName
	f.base = func() keyInputs { return keyInputs{configOf: map[string]string{gpuName: f.cfg}} }
	want := key(f.base())
	require.Equal(t, want, key(f.base()), "the same inputs, the same key")
	seen := map[string]string{want: "base"}
	f.differs = func(part string, in keyInputs) {
		t.Helper()
		k := key(in)
		prev, dup := seen[k]
		assert.False(t, dup, "%s: the key of %s", part, prev)
		seen[k] = part
	}
	return f
}

// TestValidateCacheKeyFiles: the results file's sweep, the experiment
// file, the config (name and content) and a file the experiment names are
// in the key.
func TestValidateCacheKeyFiles(t *testing.T) {
	f := newKeyFixture(t)
	in := f.base()
	in.sweep = []SweepParam{{Name: "dag.iters", Values: []string{"1", "2"}}}
	f.differs("sweep", in)
	in = f.base()
	in.opt.Experiment = filepath.Join(f.dir, "small.yaml")
	f.differs("experiment file", in)
	in = f.base()
	for name := range in.configOf {
		in.configOf[name] = "h100-datasheet"
	}
	f.differs("config name", in)
	require.NoError(t, os.WriteFile(f.cfg, []byte(strings.Replace(string(f.cfgData), "launch_ns: 3300", "launch_ns: 3301", 1)), 0o644))
	f.differs("config content", f.base())
	named := filepath.Join(f.dir, "w.yaml")
	require.NoError(t, os.WriteFile(named, []byte("a"), 0o644))
	in = f.base()
	in.edit = func(sub *Experiment) { sub.Name = named } // any string naming a file
	f.differs("a named file", in)
	require.NoError(t, os.WriteFile(named, []byte("b"), 0o644))
	f.differs("a named file's content", in)
}

// TestValidateCacheKeyOptions: the variant, scheduler defaults, host
// speed, the experiment simulated and the build are in the key.
func TestValidateCacheKeyOptions(t *testing.T) {
	f := newKeyFixture(t)
	in := f.base()
	in.opt.SimVariant = "datasheet"
	f.differs("variant", in)
	in = f.base()
	in.opt.SchedulerDefaults = map[string]map[string]string{"set": {"warm": "false"}}
	f.differs("scheduler defaults", in)
	in = f.base()
	in.opt.HostSpeed = true
	f.differs("host speed", in)
	in = f.base()
	in.edit = func(sub *Experiment) { sub.Seed++ }
	f.differs("seed", in)
	in = f.base()
	in.edit = func(sub *Experiment) { sub.Source = "other.yaml" }
	f.differs("experiment source", in)
	old := buildDigest
	t.Cleanup(func() { buildDigest = old })
	buildDigest = func() (string, error) { return "another build", nil }
	f.differs("build", f.base())
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
