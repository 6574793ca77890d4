package experiments

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/workloads"
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

// hostileValues are numbers a careless or hostile user writes: not
// numbers at all, out of every range, or overflowing every product.
var hostileValues = []string{".nan", ".inf", "-.inf", "-1", "1e9", "1e11", "1e14", "2147483648", "4611686018427387904", "9223372036854775807", "-9223372036854775808", "1e300"}

// knownParams lists a family's parameters, from the error its decoder
// gives for an unknown one.
func knownParams(t *testing.T, family string) []string {
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("{zz_unknown: 1}"), &n))
	_, err := NewWorkload(family, n.Content[0], 1)
	require.Error(t, err)
	_, list, ok := strings.Cut(err.Error(), "known fields: ")
	if !ok {
		return nil
	}
	return strings.Split(strings.TrimSuffix(list, ")"), ", ")
}

// hostileParam builds family with one parameter set to a hostile value
// (and the family's required choice, if it has one).
func hostileParam(family, param, value string) (*workloads.Program, error) {
	src := fmt.Sprintf("{%s: %s}", param, value)
	if req, ok := requiredParams[family]; ok && !strings.HasPrefix(req, param+":") {
		src = fmt.Sprintf("{%s, %s: %s}", req, param, value)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		return nil, err
	}
	return NewWorkload(family, n.Content[0], 1)
}

// requiredParams are the parameters without which a family refuses to
// build at all.
var requiredParams = map[string]string{
	"dynamic-dnn": "variant: routing", "nas-static": "model: squeezenet", "dnn-static": "model: squeezenet",
	"kesco": "bench: VEC",
}

// TestHostileWorkloadParams sets every parameter of every registered
// family, one at a time, to each hostile value whose magnitude is beyond
// any limit. Each must be refused, naming the family, before the program
// is built (a few megabytes allocated at most), or, where the value is
// harmless to that parameter, build a program within the limits.
func TestHostileWorkloadParams(t *testing.T) {
	tried := 0
	for _, family := range Workloads() {
		if family == "file" {
			continue // reads a workload file named by its path parameter
		}
		for _, param := range knownParams(t, family) {
			for _, v := range hostileValues {
				if v == "-1" {
					continue // a small value may build a whole default program; see the fuzzer
				}
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				p, err := hostileParam(family, param, v)
				runtime.ReadMemStats(&ms1)
				tried++
				if err != nil {
					assert.Contains(t, err.Error(), family, "%s %s=%s", family, param, v)
					assert.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(64<<20), "%s %s=%s: refused only after %d MB", family, param, v, (ms1.TotalAlloc-ms0.TotalAlloc)>>20)
					continue
				}
				assert.NoError(t, p.Validate(), "%s %s=%s", family, param, v)
			}
		}
	}
	t.Logf("%d hostile parameter values tried", tried)
	assert.Greater(t, tried, 500)
}

// FuzzHostileWorkloadParams sets one parameter of one family to any
// value: it is refused with an error naming the family, or it builds a
// program within the limits. Seeds: every hostile value on every family.
func FuzzHostileWorkloadParams(f *testing.F) {
	for i := range Workloads() {
		for _, v := range append(hostileValues, "1.5", "0", "") {
			f.Add(uint8(i), uint8(i*7), v)
		}
	}
	families := Workloads()
	params := map[string][]string{}
	f.Fuzz(func(t *testing.T, which, param uint8, value string) {
		family := families[int(which)%len(families)]
		if family == "file" || len(value) > 32 || strings.ContainsAny(value, "{}[],:#&*!|>'\"%@`\n") {
			t.Skip()
		}
		if params[family] == nil {
			params[family] = knownParams(t, family)
		}
		ps := params[family]
		if len(ps) == 0 {
			t.Skip()
		}
		name := ps[int(param)%len(ps)]
		p, err := hostileParam(family, name, value)
		if err != nil {
			if !strings.Contains(err.Error(), family) && !strings.Contains(err.Error(), "yaml") {
				t.Fatalf("%s %s=%q: the error does not name the family: %v", family, name, value, err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%s %s=%q built an invalid program: %v", family, name, value, err)
		}
	})
}
