package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// good is a valid experiment; the bad cases below change one line of it.
const good = `name: t
seed: 3
repetitions: 2
baseline: serial
workloads:
  - name: dag
    family: synthetic
    params:
      layers: 2
      width: 3
schedulers:
  - name: serial
    kind: serial
  - kind: round-robin
    params: {k: 2}
devices: [h100]
outputs:
  dir: out
  formats: [json, md]
`

func TestParseExperiment(t *testing.T) {
	e, err := ParseExperiment([]byte(good), "t.yaml")
	require.NoError(t, err)
	assert.Equal(t, "t", e.Name)
	assert.Equal(t, int64(3), e.Seed)
	assert.Equal(t, 2, e.Repetitions)
	assert.Nil(t, e.Warmup, "warmup absent means the device's default")
	require.Len(t, e.Workloads, 1)
	assert.Equal(t, "dag", e.Workloads[0].Name)
	assert.Equal(t, 6, e.Workloads[0].Line)
	require.Len(t, e.Schedulers, 2)
	assert.Equal(t, "serial", e.Schedulers[0].Name)
	assert.Equal(t, "round-robin(k=2)", e.Schedulers[1].Name, "an unnamed scheduler takes its own name")
	assert.Equal(t, 14, e.Schedulers[1].Line)
	assert.Equal(t, []string{"h100"}, e.Devices)
	assert.Equal(t, []string{"md", "json"}, e.Formats(), "formats come out in a fixed order")
	assert.Equal(t, "out", e.OutDir())
}

// replace swaps one line of good (1-based) for another.
func replace(line int, with string) string {
	lines := strings.Split(good, "\n")
	lines[line-1] = with
	return strings.Join(lines, "\n")
}

func TestParseExperimentErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // substrings of the error, in order
	}{
		{"unknown top-level field", replace(3, "repetiton: 2"),
			[]string{"t.yaml:3:", `unknown field "repetiton"`, "repetitions"}},
		{"unknown field in a workload", replace(7, "    familly: synthetic"),
			[]string{"t.yaml:7:", `unknown field "familly"`, "workloads[0]", "family"}},
		{"unknown workload parameter", replace(10, "      widht: 3"),
			[]string{"t.yaml:10:", `workload "dag"`, `unknown field "widht"`, "width"}},
		{"mistyped workload parameter", replace(10, "      width: three"),
			[]string{"t.yaml:10:", `workload "dag"`, "three"}},
		{"parameter value the workload rejects", replace(10, "      width: 0"),
			[]string{"t.yaml:9:", `workload "dag"`, "width must be at least 1"}},
		{"unknown scheduler parameter", replace(15, "    params: {kk: 2}"),
			[]string{"t.yaml:15:", `unknown field "kk"`, "k"}},
		{"parameters of a scheduler that takes none", replace(13, "    kind: serial\n    params: {k: 2}"),
			[]string{"t.yaml:14:", `unknown field "k"`, "takes no fields"}},
		{"params not a mapping", replace(15, "    params: [2]"),
			[]string{"t.yaml:15:", "params must be a mapping"}},
		{"unknown family", replace(7, "    family: synthetc"),
			[]string{"t.yaml:7:", `unknown workload family "synthetc"`, "known: ", "synthetic"}},
		{"unknown scheduler kind", replace(13, "    kind: seriall"),
			[]string{"t.yaml:13:", `unknown scheduler kind "seriall"`, "round-robin", "serial"}},
		{"missing family", replace(7, "    # no family"),
			[]string{"t.yaml:6:", `missing field "family"`, "synthetic"}},
		{"duplicate key", replace(7, "    name: dag2"),
			[]string{"t.yaml:", `"name" already defined at line 6`}},
		{"baseline not a scheduler", replace(4, "baseline: fastest"),
			[]string{"t.yaml:4:", `baseline "fastest"`, "serial, round-robin(k=2)"}},
		{"no repetitions", replace(3, "repetitions: 0"),
			[]string{"t.yaml:3:", "repetitions", "at least 1"}},
		{"negative warmup", replace(3, "repetitions: 2\nwarmup: -1"),
			[]string{"t.yaml:4:", "warmup"}},
		{"duplicate scheduler names", replace(15, "    name: serial"),
			[]string{"t.yaml:14:", `scheduler name "serial" already used at line 12`}},
		{"no devices", replace(16, "devices: []"),
			[]string{"t.yaml:16:", "at least one device"}},
		{"unknown device", replace(16, "devices: [h100, nope]"),
			[]string{"t.yaml:16:", `device "nope"`}},
		{"unknown output field", replace(18, "  dir: out\n  timeline: true"),
			[]string{"t.yaml:19:", `unknown field "timeline"`, "outputs", "timelines"}},
		{"unknown format", replace(19, "  formats: [json, png]"),
			[]string{"t.yaml:17:", `"png"`, "md, csv, json, svg, pdf"}},
		{"not YAML", "name: [", []string{"t.yaml:", "yaml"}},
		{"missing name", replace(1, ""), []string{"t.yaml:1:", `missing field "name"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseExperiment([]byte(tt.src), "t.yaml")
			require.Error(t, err)
			msg := err.Error()
			rest := msg
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				require.GreaterOrEqual(t, i, 0, "error %q should contain %q (in order)", msg, w)
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestLoadExperimentNamesFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "broken.yaml")
	require.NoError(t, os.WriteFile(p, []byte(replace(3, "repetitons: 2")), 0o644))
	_, err := LoadExperiment(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "broken.yaml:3: unknown field \"repetitons\"")

	_, err = LoadExperiment(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.yaml")
}
