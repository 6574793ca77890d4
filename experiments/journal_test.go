package experiments

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResumeKeepsSavedRows: a run saves every row as it completes; a run
// that stopped after its first row (the journal cut in the middle of the
// second) resumes with --resume, keeps the saved row as saved (its marker
// makespan survives) and runs only the others, and a run without --resume
// refuses to throw the saved rows away.
func TestResumeKeepsSavedRows(t *testing.T) {
	e := parseSmall(t, "")
	dir := t.TempDir()
	whole, err := Run(e, RunOptions{Workers: 1, JournalDir: dir})
	require.NoError(t, err)
	journal := filepath.Join(dir, JournalFile)
	data, err := os.ReadFile(journal)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.Len(t, lines, 4, "header, two rows, and the empty rest")

	// Interrupted: row 0 saved (with a marker makespan), row 1 half written.
	row0 := strings.Replace(lines[1], "makespans_ns\":[", "makespans_ns\":[123456789,", 1)
	require.NotEqual(t, lines[1], row0)
	require.NoError(t, os.WriteFile(journal, []byte(lines[0]+row0+lines[2][:len(lines[2])/2]), 0o644))

	_, err = Run(e, RunOptions{Workers: 1, JournalDir: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "give --resume to keep them")

	resumed, err := Run(e, RunOptions{Workers: 1, JournalDir: dir, Resume: true})
	require.NoError(t, err)
	assert.Equal(t, int64(123456789), resumed.Rows[0].MakespansNS[0], "the saved row is kept, not run again")
	assert.Equal(t, whole.Rows[1], resumed.Rows[1], "the unsaved row ran")
	back, err := os.ReadFile(journal)
	require.NoError(t, err)
	assert.Equal(t, 3, bytes.Count(back, []byte("\n")), "the journal holds both rows again, without the torn line")

	// The journal of another experiment is never resumed.
	other := parseSmall(t, "description: another\n")
	_, err = Run(other, RunOptions{Workers: 1, JournalDir: dir, Resume: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "holds rows of another experiment")

	require.NoError(t, RemoveJournal(dir))
	_, err = os.Stat(journal)
	assert.True(t, os.IsNotExist(err))
}

// TestResultsRunAgain: a results file stands for the experiment it
// records, so that the experiment file may go: loaded back, it resolves to
// the same experiment (the same digest) and runs to the same rows.
func TestResultsRunAgain(t *testing.T) {
	e := parseSmall(t, "warmup: 0\n")
	first, err := Run(e, RunOptions{Workers: 1})
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = Write(dir, first, []string{"json"})
	require.NoError(t, err)
	again, err := LoadExperiment(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	second, err := Run(again, RunOptions{Workers: 1})
	require.NoError(t, err)
	assert.Equal(t, first.Digest, second.Digest)
	assert.Equal(t, first.Rows, second.Rows)
}
