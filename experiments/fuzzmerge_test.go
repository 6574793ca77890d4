package experiments

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// shardOf is shard i of n of r, as a run with --shard i/n would write it.
func shardOf(r *Results, i, n int) *Results {
	p := *r
	p.Shard = &Shard{Index: i, Count: n}
	p.Rows = nil
	for _, row := range r.Rows {
		if p.Shard.takes(row.Group) {
			p.Rows = append(p.Rows, row)
		}
	}
	return &p
}

// handShard is shard i of n of handResults.
func handShard(i, n int) *Results { return shardOf(handResults(), i, n) }

// FuzzMerge: merge's input, a shard's results file, is any bytes. It
// never panics ReadResults' parser or Merge; a rejection names the file
// or the part; a merge that succeeds holds every row of the matrix
// exactly once, in order, with the other shard's rows unchanged: no row
// is lost, dropped or doubled, whichever order the parts come in.
// Seeds: the real second shard and edits of it (an index outside the
// matrix, a duplicated index, another experiment's digest, null, {}).
func FuzzMerge(f *testing.F) {
	first := handShard(0, 2)
	second, err := json.Marshal(handShard(1, 2))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(second)
	for _, edit := range [][2]string{
		{`"index":3`, `"index":6`},
		{`"index":3`, `"index":-1`},
		{`"index":4`, `"index":0`},
		{`"index":5`, `"index":3`},
		{`"total_rows":6`, `"total_rows":3`},
		{`"seed":1`, `"seed":2`},
		{`"schema_version":2`, `"schema_version":1`},
	} {
		f.Add(bytes.Replace(second, []byte(edit[0]), []byte(edit[1]), 1))
	}
	for _, s := range []string{"null", "{}", "[]", `{"schema_version":2}`, `{"schema_version":2,"total_rows":6,"rows":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		part, err := ParseResults(data, "fuzz.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		for _, parts := range [][]*Results{{first, part}, {part, first}} {
			merged, err := Merge(parts)
			if err != nil {
				if !strings.Contains(err.Error(), "part") && !strings.Contains(err.Error(), "row") {
					t.Fatalf("the error names neither a part nor a row: %v", err)
				}
				continue
			}
			if merged.TotalRows != first.TotalRows || len(merged.Rows) != merged.TotalRows {
				t.Fatalf("merged %d rows of a matrix of %d (the shards' matrix: %d)", len(merged.Rows), merged.TotalRows, first.TotalRows)
			}
			for i, row := range merged.Rows {
				if row.Index != i {
					t.Fatalf("merged row %d has index %d", i, row.Index)
				}
			}
			for _, row := range first.Rows {
				if !reflect.DeepEqual(merged.Rows[row.Index], row) {
					t.Fatalf("row %d of the other shard changed in the merge", row.Index)
				}
			}
		}
	})
}
