package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidatePageCache: --cache keeps the simulated rows; a page made
// from them, and one made with -j 1, is the page made without (the command
// line it shows leaves --cache, --cpuprofile and -j out).
func TestValidatePageCache(t *testing.T) {
	f := writeExp(t, exp)
	dir := t.TempDir()
	status, _, errOut := gpusched(t, "run", f, "-o", dir)
	require.Equal(t, 0, status, errOut)
	res := filepath.Join(dir, "results.json")
	cache := filepath.Join(dir, "cache")
	page := func(extra ...string) string {
		t.Helper()
		p := filepath.Join(dir, "page.md")
		args := append([]string{"validate", res, "--page", p}, extra...)
		status, _, errOut := gpusched(t, args...)
		require.Equal(t, 0, status, errOut)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		rows, err := os.ReadFile(filepath.Join(dir, "page-rows.csv"))
		require.NoError(t, err)
		return string(b) + string(rows)
	}
	plain := page()
	assert.Equal(t, plain, page("--cache", cache, "--cpuprofile", filepath.Join(dir, "cpu.prof")))
	entries, err := filepath.Glob(filepath.Join(cache, "*.json"))
	require.NoError(t, err)
	assert.Len(t, entries, 1)
	assert.FileExists(t, filepath.Join(dir, "cpu.prof"))
	assert.Equal(t, plain, page("--cache="+cache, "-j", "1"), "from the cache")
}

func TestPageArgs(t *testing.T) {
	args := []string{"a.json", "--cache", "d", "-j", "2", "--page", "p.md", "--cache=d", "-cpuprofile", "x", "--rows"}
	assert.Equal(t, []string{"a.json", "--page", "p.md", "--rows"}, pageArgs(args))
}
