package hardening

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/experiments"
)

// reduce applies the determinism test's documented rule to a simulator
// experiment file: its first workload entry, every scheduler entry, its
// first simulator device, one repetition and no warmup. Every scheduler of
// every file runs; the workloads left out are the same families at other
// sizes or variants. The file is cut before it is parsed, so the workloads
// left out are never built. It returns nil for experiments that run on a
// GPU only. Under the race detector it keeps the first scheduler entry of
// each kind (the others are the same code with other parameters).
func reduce(t *testing.T, path string) *experiments.Experiment {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(data, &doc))
	root := doc.Content[0]
	sim := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		switch key {
		case "workloads":
			val.Content = val.Content[:1]
		case "schedulers":
			if raceDetector {
				val.Content = firstOfEachKind(val.Content, baseline(root))
			}
		case "devices":
			var keep []*yaml.Node
			for _, d := range val.Content {
				if d.Value != experiments.CUDADevice && len(keep) == 0 {
					keep = append(keep, d)
				}
			}
			val.Content, sim = keep, len(keep) > 0
		case "repetitions":
			val.Value = "1"
		case "warmup":
			val.Value = "0"
		}
	}
	if !sim {
		return nil
	}
	cut, err := yaml.Marshal(&doc)
	require.NoError(t, err)
	e, err := experiments.ParseExperimentIn(cut, filepath.Base(path), filepath.Dir(path))
	require.NoError(t, err)
	e.Repetitions = 1
	zero := 0
	e.Warmup = &zero
	return e
}

// TestSimulatorExperimentsRerunByteIdentically runs every simulator
// experiment under configs/experiments twice, reduced by reduce, and
// requires the written results (Markdown, CSV, JSON, SVG) and the printed
// table to be byte-identical.
func TestSimulatorExperimentsRerunByteIdentically(t *testing.T) {
	files, err := filepath.Glob("../../configs/experiments/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	ran := 0
	for _, path := range files {
		path := path
		t.Run(filepath.Base(path), func(t *testing.T) {
			var outs [2]map[string][]byte
			var tables [2]bytes.Buffer
			for i := range runs {
				e := reduce(t, path)
				if e == nil {
					t.Skip("GPU only")
				}
				start := time.Now()
				res, err := experiments.Run(e, experiments.RunOptions{Table: &tables[i]})
				require.NoError(t, err)
				dir := t.TempDir()
				written, err := experiments.Write(dir, res, []string{"md", "csv", "json", "svg"})
				require.NoError(t, err)
				require.NotEmpty(t, written)
				outs[i] = map[string][]byte{}
				for _, f := range written {
					data, err := os.ReadFile(f)
					require.NoError(t, err)
					rel, _ := filepath.Rel(dir, f)
					outs[i][rel] = data
				}
				t.Logf("run %d: %d rows, %d files, %v", i, len(res.Rows), len(written), time.Since(start).Round(time.Millisecond))
			}
			if runs == 1 {
				return // the race detector's run; the ordinary run compares
			}
			require.Equal(t, len(outs[0]), len(outs[1]))
			for name, a := range outs[0] {
				if !bytes.Equal(a, outs[1][name]) {
					t.Errorf("%s differs between two runs: %s", name, firstDiff(a, outs[1][name]))
				}
			}
			require.Equal(t, tables[0].String(), tables[1].String(), "the printed table differs")
			ran++
		})
	}
	t.Logf("%d simulator experiments rerun byte-identically", ran)
}

// runs is how many times the test runs each file: twice to compare them,
// once under the race detector, whose run checks for data races (the
// ordinary run compares the bytes).
var runs = map[bool]int{false: 2, true: 1}[raceDetector]

// firstOfEachKind keeps the first scheduler entry of each kind, and the
// baseline entry.
func firstOfEachKind(entries []*yaml.Node, baseline string) []*yaml.Node {
	seen := map[string]bool{}
	var keep []*yaml.Node
	for _, e := range entries {
		if kind := field(e, "kind"); !seen[kind] || field(e, "name") == baseline {
			seen[kind] = true
			keep = append(keep, e)
		}
	}
	return keep
}

// field is the value of key in mapping n ("" if absent).
func field(n *yaml.Node, key string) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// baseline is the experiment's baseline entry's name.
func baseline(root *yaml.Node) string { return field(root, "baseline") }

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) && i < len(lb); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d: %q vs %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d vs %d lines", len(la), len(lb))
}
