package experiments

import (
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// bigNumber finds numbers of four or more digits. The fuzzers skip inputs
// with one: a valid file may legitimately ask for a program of millions of
// kernels, which is a slow input, not a crash; the fuzzers look for panics
// and unclear errors within sizes that build in milliseconds.
var bigNumber = regexp.MustCompile(`[0-9]{4,}|[0-9][eE][0-9]`)

const fuzzSeedExperiment = `name: fuzz
seed: 1
repetitions: 1
baseline: serial
workloads:
  - {name: s, family: synthetic, params: {layers: 2, width: 2, steps: 1}}
  - {name: j, family: jobs-sobel, params: {jobs: 2, size: 32}}
schedulers:
  - {kind: serial}
  - {kind: round-robin, params: {k: 2}}
devices: [h100]
outputs: {dir: results/fuzz, formats: [md]}
`

// FuzzParseExperiment: an experiment file never panics the parser, and
// every rejection names the file.
func FuzzParseExperiment(f *testing.F) {
	f.Add([]byte(fuzzSeedExperiment))
	f.Add([]byte("name: x\nworkloads: [{family: nope}]\n"))
	f.Add([]byte("name: x\nschedulers: {kind: serial}\n"))
	f.Add([]byte("workloads:\n  - family: synthetic\n    params: [1, 2]\n"))
	f.Add([]byte("name: x\ndevices: [h100, cuda, ./none.yaml]\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 || bigNumber.Match(data) {
			t.Skip()
		}
		_, err := ParseExperiment(data, "fuzz.yaml")
		if err != nil && !strings.Contains(err.Error(), "fuzz.yaml") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// FuzzWorkloadParams: every registered workload family decodes any
// parameter mapping without panicking, and rejects bad ones with an error
// that names the family.
func FuzzWorkloadParams(f *testing.F) {
	families := Workloads()
	f.Add(uint8(0), "{layers: 2, width: 2, steps: 1}")
	f.Add(uint8(1), "{bench: VEC, scale: 0.05, blocks: 2}")
	f.Add(uint8(2), "{tasks: 2, scale: 0.05}")
	f.Add(uint8(3), "{env: ant, envs: 8, envs_per_group: 4, steps: 1}")
	f.Add(uint8(4), "{model: squeezenet, scale: 8}")
	f.Add(uint8(5), "{jobs: 2, size: 32}")
	f.Add(uint8(6), "{model: gpt3, tokens: 1, hidden: 256, ff: 256, no_data: true}")
	f.Add(uint8(7), "{typo: 1}")
	f.Add(uint8(8), "[1]")
	f.Add(uint8(9), "{size: -5}")
	f.Fuzz(func(t *testing.T, which uint8, params string) {
		if len(params) > 512 || bigNumber.MatchString(params) {
			t.Skip()
		}
		family := families[int(which)%len(families)]
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(params), &doc); err != nil {
			return
		}
		var n *yaml.Node
		if len(doc.Content) > 0 {
			n = doc.Content[0]
		}
		p, err := NewWorkload(family, n, 1)
		if err != nil {
			if !strings.Contains(err.Error(), family) {
				t.Fatalf("error does not name the family %s: %v", family, err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%s%s built an invalid program: %v", family, params, err)
		}
	})
}

// FuzzParseSweepParam and FuzzParseShard: the command line's sweep and
// shard arguments.
func FuzzParseSweepParam(f *testing.F) {
	for _, s := range []string{"k=1,2,4", "window=8", "=", "a=", "a=1,,2", "x=1,2=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseSweepParam(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if p.Name == "" || len(p.Values) == 0 {
			t.Fatalf("accepted %q as %+v", s, p)
		}
	})
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/4", "4/4", "-1/2", "1/0", "a/b", "1/2/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("accepted %q as %+v", s, sh)
		}
	})
}
