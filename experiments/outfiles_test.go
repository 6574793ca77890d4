package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileNamesAreUniqueAfterReduction(t *testing.T) {
	names := FileNames([][]string{
		{"Small", "serial", "h100"},
		{"small", "serial", "h100"},
		{"小さい", "serial", "h100"},
		{"大きい", "serial", "h100"},
		{"a", "x__serial", "h100"},
		{"a__x", "serial", "h100"},
		{"dag", "round-robin(k=4)", "h100"},
		{strings.Repeat("w", 300), "serial", "h100"},
	})
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "%s twice", n)
		seen[n] = true
		assert.LessOrEqual(t, len(n), maxNameBytes+9)
		assert.NotContains(t, n, "/")
		assert.False(t, strings.HasPrefix(n, "."), n)
	}
	assert.Equal(t, "dag__round-robin-k-4__h100", names[6], "a name alone keeps its plain reduction")
	assert.True(t, strings.HasPrefix(names[0], "small__serial__h100-"), names[0])
}

func TestCheckOutDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, CheckOutDir(filepath.Join(dir, "a", "b")))
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	assert.ErrorContains(t, CheckOutDir(file), "is a file")
	assert.Error(t, CheckOutDir(filepath.Join(dir, strings.Repeat("x", 300))), "a name too long for the filesystem")
	if os.Getuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		assert.ErrorContains(t, CheckOutDir(ro), "cannot write there")
	}
}

func TestWriteFileRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	link := filepath.Join(dir, "results.json")
	require.NoError(t, os.Symlink(target, link))
	assert.ErrorContains(t, WriteFile(link, []byte("x")), "symbolic link")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
	plain := filepath.Join(dir, "plain.json")
	require.NoError(t, WriteFile(plain, []byte("x")))
	require.NoError(t, WriteFile(plain, []byte("y")))
	data, err = os.ReadFile(plain)
	require.NoError(t, err)
	assert.Equal(t, "y", string(data))
}

func TestOutDirStaysUnderResults(t *testing.T) {
	for name, want := range map[string]string{
		"quickstart": "results/quickstart",
		"../../../x": "results/x",
		"/etc":       "results/etc",
		"..":         "results/",
	} {
		e := &Experiment{Name: name}
		dir := e.OutDir()
		if strings.HasSuffix(want, "/") {
			assert.True(t, strings.HasPrefix(dir, want) && len(dir) > len(want), "%s: %s", name, dir)
		} else {
			assert.Equal(t, want, dir, name)
		}
		rel, err := filepath.Rel("results", dir)
		require.NoError(t, err)
		assert.False(t, strings.HasPrefix(rel, ".."), "%s leaves results/: %s", name, dir)
	}
}

// TestRunWritesEveryFileOnce: workloads whose names coincide after
// sanitizing ("Small", "small", two non-Latin names) get files of their
// own, plots and timelines alike.
func TestRunWritesEveryFileOnce(t *testing.T) {
	src := strings.Replace(small, `  - name: dag
    family: synthetic
    params: {layers: 3, width: 4, steps: 2, iters: 8192, max_blocks: 16}`, `  - {name: Small, family: synthetic, params: {layers: 2, width: 2, steps: 1, iters: 64, max_blocks: 4}}
  - {name: small, family: synthetic, params: {layers: 2, width: 3, steps: 1, iters: 64, max_blocks: 4}}
  - {name: 小, family: synthetic, params: {layers: 2, width: 2, steps: 1, iters: 64, max_blocks: 4}}
  - {name: 大, family: synthetic, params: {layers: 3, width: 2, steps: 1, iters: 64, max_blocks: 4}}`, 1)
	e, err := ParseExperiment([]byte(src), "names.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	res, err := Run(e, RunOptions{Workers: 2, TimelineDir: filepath.Join(dir, "timelines")})
	require.NoError(t, err)
	files, err := Write(dir, res, []string{"svg"})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, f := range files {
		assert.False(t, seen[f], "%s written twice", f)
		seen[f] = true
	}
	assert.Len(t, files, 2*4, "a speedup and a utilization plot per workload")
	timelines, err := os.ReadDir(filepath.Join(dir, "timelines"))
	require.NoError(t, err)
	assert.Len(t, timelines, len(res.Rows), "a timeline per row")
}
