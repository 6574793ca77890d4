package experiments

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// JournalFile is where a run saves each row as it completes, in the
// output directory, so that an interrupted run (Ctrl-C, a crash, a job's
// time limit) loses no finished row and --resume continues it. It is
// removed once the run's results are written.
const JournalFile = "rows.jsonl"

// journalHeader is the journal's first line: what the rows belong to.
type journalHeader struct {
	Journal    int    `json:"gpusched_journal"`
	Experiment string `json:"experiment"`
	Digest     string `json:"digest"`
	Shard      *Shard `json:"shard,omitempty"`
}

// Journal appends rows to a run's journal, each line synced to disk.
type Journal struct{ f *os.File }

// OpenJournal starts the journal of the run res describes (before any row
// ran) in dir. With resume, rows a journal there already holds for the
// same experiment (digest) and shard are returned, to be kept; without,
// an existing journal is an error, since it holds finished rows that a new
// run would throw away.
func OpenJournal(dir string, res *Results, resume bool) (*Journal, map[int]Row, error) {
	path := filepath.Join(dir, JournalFile)
	head := journalHeader{Journal: 1, Experiment: res.Experiment, Digest: res.Digest, Shard: res.Shard}
	done := map[int]Row{}
	_, statErr := os.Lstat(path)
	switch {
	case statErr == nil && !resume:
		return nil, nil, fmt.Errorf("%s holds the rows of an interrupted run: give --resume to keep them and run the rest, or remove it", path)
	case statErr == nil:
		var err error
		if done, err = readJournal(path, head); err != nil {
			return nil, nil, err
		}
	case !errors.Is(statErr, os.ErrNotExist):
		return nil, nil, statErr
	}
	// The journal is written afresh (header and kept rows), so that a
	// torn last line of an earlier crash does not stay in it.
	var buf bytes.Buffer
	for _, v := range append([]any{head}, rowsByIndex(done)...) {
		line, err := json.Marshal(v)
		if err != nil {
			return nil, nil, err
		}
		buf.Write(append(line, '\n'))
	}
	if err := WriteFile(path, buf.Bytes()); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, err
	}
	return &Journal{f: f}, done, nil
}

func rowsByIndex(done map[int]Row) []any {
	var out []any
	for i := 0; len(out) < len(done); i++ {
		if r, ok := done[i]; ok {
			out = append(out, r)
		}
	}
	return out
}

// readJournal reads the rows of a journal of the run head describes. A
// last line cut short by a crash is dropped; any other bad line is an
// error.
func readJournal(path string, head journalHeader) (map[int]Row, error) {
	data, err := readLimited(path, maxResultsBytes)
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	var got journalHeader
	if err := json.Unmarshal(lines[0], &got); err != nil || got.Journal != 1 {
		return nil, fmt.Errorf("%s: not a gpusched journal", path)
	}
	if got.Digest != head.Digest {
		return nil, fmt.Errorf("%s holds rows of another experiment (%s, digest %s; this one is %s, digest %s): remove it or give another -o",
			path, got.Experiment, short(got.Digest), head.Experiment, short(head.Digest))
	}
	if fmt.Sprint(got.Shard) != fmt.Sprint(head.Shard) {
		return nil, fmt.Errorf("%s holds rows of shard %v, not of %v", path, got.Shard, head.Shard)
	}
	done := map[int]Row{}
	for k, line := range lines[1:] {
		var row Row
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			if k == len(lines)-2 && !bytes.HasSuffix(data, []byte("\n")) {
				break // the line being written when the run stopped
			}
			return nil, fmt.Errorf("%s line %d: %w", path, k+2, err)
		}
		done[row.Index] = row
	}
	return done, nil
}

// Add saves a completed row.
func (j *Journal) Add(row *Row) error {
	line, err := json.Marshal(row)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(j.f)
	if _, err := w.Write(append(line, '\n')); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return j.f.Sync()
}

// Close closes the journal (RemoveJournal removes it).
func (j *Journal) Close() error { return j.f.Close() }

// RemoveJournal removes dir's journal once the run's results are written.
func RemoveJournal(dir string) error {
	err := os.Remove(filepath.Join(dir, JournalFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
