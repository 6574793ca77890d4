package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func dnnParams(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(src), &doc))
	return doc.Content[0]
}

func TestDNNWorkloadsRegistered(t *testing.T) {
	tests := []struct {
		name, params string
		steps        int
	}{
		{"dynamic-dnn", "{variant: routing, inputs: 2, scale: 4}", 2},
		{"nas-static", "{model: squeezenet, inputs: 3, scale: 8}", 3},
		{"dnn-static", "{model: bert, scale: 8, seq_len: 64, layers: 2}", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewWorkload(tc.name, dnnParams(t, tc.params), 1)
			require.NoError(t, err)
			require.NoError(t, p.Validate())
			assert.Len(t, p.Steps, tc.steps)
			assert.NotNil(t, p.Check)
		})
	}
}

func TestDNNWorkloadParamErrors(t *testing.T) {
	tests := []struct {
		name, params, want string
	}{
		{"dynamic-dnn", "{variant: routing, input: 2}", "input"},
		{"dynamic-dnn", "{inputs: 2}", "variant is required"},
		{"nas-static", "{model: bert}", "want one of"},
		{"nas-static", "{model: randwire, seq_len: 4}", "seq_len"},
		{"dnn-static", "{scale: 2}", "model is required"},
		{"dnn-static", "{model: resnext-50, scale: 0}", "scale"},
	}
	for _, tc := range tests {
		_, err := NewWorkload(tc.name, dnnParams(t, tc.params), 1)
		assert.ErrorContains(t, err, tc.want, "%s %s", tc.name, tc.params)
	}
}

func TestDNNGPUCheckFileParses(t *testing.T) {
	e, err := LoadExperiment("../workloads/dnn/testdata/gpu-check.yaml")
	require.NoError(t, err)
	assert.Equal(t, "dnn-gpu-check", e.Name)
}
