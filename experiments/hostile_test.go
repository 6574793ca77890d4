package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 23: numbers yaml.v3 decodes silently into wrong values, and sizes
// that ran for days or grew memory for minutes, are errors naming the
// line, the field and the limit, found when the file is loaded.
func TestHostileNumbersAreLineErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"NaN probability", replace(10, "      skip: .nan"), []string{"t.yaml:10:", `workload "dag"`, "params.skip is .nan; it must be a finite number"}},
		{"infinite probability", replace(10, "      skip: -.inf"), []string{"t.yaml:10:", "params.skip is -.inf"}},
		{"fraction into an int", replace(10, "      width: 1.5"), []string{"t.yaml:10:", "params.width is 1.5; it must be a whole number"}},
		{"negative cost", replace(13, "    kind: grcuda\n    params: {dep_cost_ns: -5}"), []string{"t.yaml:14:", "params.dep_cost_ns is -5; a cost must not be negative"}},
		{"NaN cost", replace(13, "    kind: grcuda\n    params: {dep_cost_ns: .nan}"), []string{"t.yaml:14:", "params.dep_cost_ns is .nan"}},
		{"width 1e9", replace(10, "      width: 1e9"), []string{"t.yaml:9:", "(layers x width = 2 x 1000000000) x steps 4 = 8000000000 operations, above the limit of 1048576 (workloads.MaxOps)"}},
		{"max_blocks 1e11", replace(10, "      max_blocks: 1e11"), []string{"t.yaml:9:", "max_blocks x threads = 100000000000 x 128"}},
		{"iters 1e14", replace(10, "      iters: 100000000000000"), []string{"t.yaml:9:", "iters must be between 0 and 1048576 (synthetic.IterLimit)"}},
		{"repetitions 1e9", replace(3, "repetitions: 1000000000"), []string{"t.yaml:3:", "at most 10000 (experiments.MaxRepetitions), got 1000000000"}},
		{"warmup 1e9", replace(3, "repetitions: 2\nwarmup: 1000000000"), []string{"t.yaml:4:", "(experiments.MaxRepetitions)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseExperiment([]byte(tc.src), "t.yaml")
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
