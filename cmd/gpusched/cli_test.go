package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryCommandHelp: each command's -h prints its usage line, its
// flags and an example on stdout, nothing on stderr, and exits 0.
func TestEveryCommandHelp(t *testing.T) {
	for _, c := range commands {
		for _, flag := range []string{"-h", "--help"} {
			status, out, errOut := gpusched(t, c.name, flag)
			assert.Equal(t, 0, status, "%s %s", c.name, flag)
			assert.Empty(t, errOut, "%s %s", c.name, flag)
			assert.True(t, strings.HasPrefix(out, "usage: gpusched "+c.name), "%s %s: %q", c.name, flag, out)
			require.Contains(t, examples, c.name, "add an example for %s to examples in help.go", c.name)
			assert.Contains(t, out, "example:\n  "+examples[c.name], c.name)
		}
	}
	_, out, _ := gpusched(t, "run", "-h")
	assert.Contains(t, out, "-timelines", "flags are listed")
	assert.Contains(t, out, "results directory")

	// A bad flag is still a usage error on stderr, without the help.
	status, out, errOut := gpusched(t, "run", "--nope")
	assert.Equal(t, 2, status)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "flag provided but not defined: -nope")
	assert.Contains(t, errOut, "usage: gpusched run FILE")
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		status, out, errOut := gpusched(t, args...)
		require.Equal(t, 0, status, errOut)
		assert.True(t, strings.HasPrefix(out, "gpusched "), out)
		assert.Contains(t, out, "commit ")
		assert.Contains(t, out, "go1.")
	}
}

func TestListOneName(t *testing.T) {
	status, out, errOut := gpusched(t, "list", "round-robin")
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, out, "scheduler round-robin: operation k on stream k mod K")
	assert.Regexp(t, `(?m)^k +int +4$`, out)

	// kesco is a workload family and a scheduler: both, each with its own text.
	status, out, _ = gpusched(t, "list", "kesco")
	require.Equal(t, 0, status)
	assert.Contains(t, out, "workload family kesco: one KeSCo/GrCUDA benchmark")
	assert.Contains(t, out, "scheduler kesco: KeSCo distributor")
	assert.Regexp(t, `(?m)^bench +string`, out)
	assert.Regexp(t, `(?m)^no_prune +bool +false$`, out)

	status, _, errOut = gpusched(t, "list", "nope")
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, `no workload family or scheduler "nope"`)

	// Plain list: one short line each, and kesco's scheduler line is its own.
	_, out, _ = gpusched(t, "list")
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 100, line)
		if strings.HasPrefix(strings.TrimSpace(line), "kesco ") && strings.Contains(out[strings.Index(out, "Schedulers"):], line) {
			assert.Contains(t, line, "KeSCo distributor")
		}
	}
}

func TestTraceToStdout(t *testing.T) {
	f := writeExp(t, exp)
	dir := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	defer func() { require.NoError(t, os.Chdir(wd)) }()
	status, out, errOut := gpusched(t, "trace", f, "--workload", "dag", "--scheduler", "serial", "-o", "-")
	require.Equal(t, 0, status, errOut)
	var trace map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &trace), "stdout is the timeline alone")
	assert.Contains(t, trace, "traceEvents")
	assert.Contains(t, errOut, "timeline in stdout")
	_, err = os.Stat(filepath.Join(dir, "-"))
	assert.True(t, os.IsNotExist(err), "no file named -")
}

func TestReplot(t *testing.T) {
	f := writeExp(t, exp)
	run := t.TempDir()
	status, _, errOut := gpusched(t, "run", f, "-o", run)
	require.Equal(t, 0, status, errOut)

	one := t.TempDir()
	status, out, errOut := gpusched(t, "replot", filepath.Join(run, "results.json"), "-o", one)
	require.Equal(t, 0, status, errOut)
	assert.Contains(t, out, "results.json: ")
	files := readDir(t, one)
	assert.Equal(t, []string{"results-reps.csv", "results.csv", "results.md", "speedup-dag.pdf", "speedup-dag.svg",
		"util-dag-h100.pdf", "util-dag-h100.svg"}, keys(files))
	orig := readDir(t, run)
	for name, data := range files {
		assert.Equal(t, string(orig[name]), string(data), "%s: replot draws what run drew", name)
	}

	// Several files go to one directory each; two of the same name are an error.
	many := t.TempDir()
	status, _, errOut = gpusched(t, "replot", run, filepath.Join(run, "results.json"), "-o", many)
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "would both go to")
	status, _, errOut = gpusched(t, "replot", "-o", many)
	assert.Equal(t, 2, status)
	assert.Contains(t, errOut, "missing arguments")
}

func TestHostSpeedFlag(t *testing.T) {
	var o onOff
	assert.Equal(t, "off", o.String(), "off by default")
	require.NoError(t, o.Set("on"))
	assert.True(t, bool(o))
	assert.Equal(t, "on", o.String())
	require.NoError(t, o.Set("off"))
	assert.False(t, bool(o))
	assert.ErrorContains(t, o.Set("yes"), `want on or off, got "yes"`)
}

// TestCalibrateUsageListsEverySubcommand: calibrate -h's usage line names
// every sub-command the dispatcher runs, and every form it names after the
// measurement itself reaches a sub-command (its -h lists that one's flags,
// not the measurement's --only).
func TestCalibrateUsageListsEverySubcommand(t *testing.T) {
	status, out, errOut := gpusched(t, "calibrate", "-h")
	require.Equal(t, 0, status, errOut)
	usageLine, _, _ := strings.Cut(out, "\n")
	forms := strings.Split(strings.TrimPrefix(usageLine, "usage: gpusched calibrate "), " | ")
	require.Greater(t, len(forms), 1, usageLine)
	assert.Contains(t, out, "-only", "the measurement's own flags")

	var named []string
	for _, form := range forms[1:] {
		named = append(named, strings.Fields(form)[0])
	}
	var known []string
	for _, c := range calibrateSubcommands() {
		known = append(known, c.name)
	}
	assert.Equal(t, known, named, "calibrate's usage line names exactly the sub-commands it dispatches")
	assert.Subset(t, known, []string{"fit", "check", "fit-graph-lock", "tile-sync"})

	for _, name := range named {
		status, out, errOut := gpusched(t, "calibrate", name, "-h")
		assert.Equal(t, 0, status, "%s: %s", name, errOut)
		assert.Contains(t, out, "flags:", name)
		assert.NotContains(t, out, "-only", "calibrate %s -h reaches the sub-command, not the measurement", name)
	}
}
