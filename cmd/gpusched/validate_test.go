package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/experiments/fidelity"
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

// TestValidateMarksBimodalRows: a GPU row whose repetitions fall in two
// modes (issue #18: plain SET's often do) shows them in -rows, and the
// summary counts it in a line of its own after the table, whose total
// line stays as it was; -o's JSON carries the counts.
func TestValidateMarksBimodalRows(t *testing.T) {
	f := writeExp(t, strings.Replace(exp, "repetitions: 2", "repetitions: 5", 1))
	dir := t.TempDir()
	status, _, errOut := gpusched(t, "run", f, "-o", dir)
	require.Equal(t, 0, status, errOut)
	res := filepath.Join(dir, "results.json")
	r, err := experiments.ReadResults(res)
	require.NoError(t, err)
	require.Equal(t, "serial", r.Rows[0].Scheduler)
	ns := r.Rows[0].MakespansNS[0]
	r.Rows[0].MakespansNS = []int64{ns * 5 / 2, ns, ns * 51 / 50, ns * 49 / 50, ns * 12 / 5} // 3 fast, 2 slow near 2.45x
	b, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(res, b, 0o644))

	out := filepath.Join(dir, "v")
	status, stdout, errOut := gpusched(t, "validate", res, "-rows", "-o", out)
	require.Equal(t, 0, status, errOut)
	slow := float64(ns*5/2+ns*12/5) / 2e3
	assert.Contains(t, stdout, fmt.Sprintf("fast %.1f (3 reps) / slow %.1f (2 reps), median fast", float64(ns)/1e3, slow), "the serial row's modes")
	assert.Equal(t, 1, strings.Count(stdout, "median fast"), "round-robin's repetitions are one mode")
	assert.Regexp(t, `(?m)^total +2 +[0-9.]+% +`, stdout)
	assert.Regexp(t, `(?m)^bimodal rows: 1 of 2 \(.*\); median in the slow mode on 0, sim nearer the fast mode on 1; `+
		`MAPE on them [0-9.]+% against the median, [0-9.]+% against the nearer mode's$`, stdout)
	total := validationTotal(t, out)
	assert.Equal(t, 1, total.BimodalRows)
	assert.Equal(t, 0, total.BimodalMedianSlow)
	assert.Equal(t, 1, total.BimodalSimFast)
	assert.True(t, total.BimodalModeMAPE.Valid())

	// A larger gap than the jump: nothing is bimodal, and nothing is said.
	status, stdout, errOut = gpusched(t, "validate", res, "-rows", "--mode-gap", "3")
	require.Equal(t, 0, status, errOut)
	assert.NotContains(t, stdout, "median fast")
	assert.NotContains(t, stdout, "bimodal")
	status, _, errOut = gpusched(t, "validate", res, "--mode-gap", "1")
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "--mode-gap must be a ratio above 1")
}

// validationTotal is the total summary of the validation.json in dir.
func validationTotal(t *testing.T, dir string) fidelity.Summary {
	t.Helper()
	var v struct {
		Total fidelity.Summary `json:"total"`
	}
	js, err := os.ReadFile(filepath.Join(dir, "validation.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &v))
	return v.Total
}
