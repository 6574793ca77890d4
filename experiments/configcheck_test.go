package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/configs"
)

// copyConfig writes the embedded config name to dir/file and returns its path.
func copyConfig(t *testing.T, dir, name, file string) string {
	t.Helper()
	data, err := configs.FS.ReadFile("devices/" + name + ".yaml")
	require.NoError(t, err)
	path := filepath.Join(dir, file)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func editFile(t *testing.T, path, from, to string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), from)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), from, to, 1)), 0o644))
}

// A results file records its simulator config's digest; once the config of
// that name changes, gpusched run refuses the results file, and the check
// names the device and both digests.
func TestResultsRefuseAChangedConfig(t *testing.T) {
	dir := t.TempDir()
	gpu := copyConfig(t, dir, "h100-datasheet", "gpu.yaml")
	e, err := ParseExperiment([]byte(strings.Replace(small, "devices: [h100]", "devices: ["+gpu+"]", 1)), "small.yaml")
	require.NoError(t, err)
	res, err := Run(e, RunOptions{Workers: 1})
	require.NoError(t, err)
	require.Len(t, res.Resolved.Devices, 1)
	digest := res.Resolved.Devices[0].ConfigSHA256
	now, err := ConfigDigest(gpu)
	require.NoError(t, err)
	assert.Equal(t, now, digest)
	assert.Empty(t, res.ConfigChanges())
	out := filepath.Join(dir, "out")
	_, err = Write(out, res, []string{"json"})
	require.NoError(t, err)
	saved := filepath.Join(out, "results.json")
	_, err = LoadExperiment(saved)
	require.NoError(t, err, "the config is the one that made the rows")

	editFile(t, gpu, "# estimate: copy engine start-up per copy", "# a comment changes nothing")
	_, err = LoadExperiment(saved)
	require.NoError(t, err, "comments are not the config")

	editFile(t, gpu, "latency_ns: 2000                    #", "latency_ns: 2100                    #")
	changes := res.ConfigChanges()
	require.Len(t, changes, 1)
	assert.Contains(t, changes[0], "device "+gpu+": config "+gpu+" has changed since these rows were made")
	assert.Contains(t, changes[0], short(digest)+" in the results")
	_, err = LoadExperiment(saved)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would not run as it ran")
	assert.Contains(t, err.Error(), "run its experiment file (small.yaml)")

	again, err := Run(e, RunOptions{Workers: 1})
	require.NoError(t, err)
	m := ConfigMismatches(res, again)
	require.Len(t, m, 1, "same device name, two configs")
	assert.Contains(t, m[0], "ran different configs of that name")
	assert.Empty(t, ConfigMismatches(again, again))

	res.Resolved.Devices[0].ConfigSHA256 = ""
	changes = res.ConfigChanges()
	require.Len(t, changes, 1)
	assert.Contains(t, changes[0], "record no config digest")

	require.NoError(t, os.Remove(gpu))
	changes = res.ConfigChanges()
	require.Len(t, changes, 1)
	assert.Contains(t, changes[0], "no longer loads")
}

// The digest covers the kernel profile a config names: a refitted profile
// is another simulated GPU.
func TestConfigDigestCoversTheProfile(t *testing.T) {
	dir := t.TempDir()
	gpu := copyConfig(t, dir, "h100", "gpu.yaml")
	prof, err := configs.FS.ReadFile("profiles/h100.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prof.yaml"), prof, 0o644))
	editFile(t, gpu, "\nprofile: h100 ", "\nprofile: prof.yaml ")
	before, err := ConfigDigest(gpu)
	require.NoError(t, err)
	same, err := ConfigDigest(gpu)
	require.NoError(t, err)
	assert.Equal(t, before, same)

	// A figure every profile has (its default slope gains a leading 1),
	// so that the edit does not depend on one refit's numbers.
	editFile(t, filepath.Join(dir, "prof.yaml"), "\ndefault_warp_slope: ", "\ndefault_warp_slope: 1")
	after, err := ConfigDigest(gpu)
	require.NoError(t, err)
	assert.NotEqual(t, before, after)
}
