package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestEveryRegisteredNameDescribesItsParameters(t *testing.T) {
	for _, n := range Workloads() {
		_, err := WorkloadParams(n)
		assert.NoError(t, err, "workload family %s: its factory must decode its parameters with one DecodeParams call", n)
	}
	for _, n := range Schedulers() {
		_, err := SchedulerParams(n)
		assert.NoError(t, err, "scheduler %s: its factory must decode its parameters with one DecodeParams call", n)
	}
}

func TestParamsDescribeTypesAndDefaults(t *testing.T) {
	ps, err := SchedulerParams("round-robin")
	require.NoError(t, err)
	assert.Equal(t, []Param{{Name: "k", Type: "int", Default: "4"}}, ps)

	ps, err = SchedulerParams("serial")
	require.NoError(t, err)
	assert.Empty(t, ps)

	ps, err = WorkloadParams("synthetic")
	require.NoError(t, err)
	byName := map[string]Param{}
	for _, p := range ps {
		byName[p.Name] = p
	}
	assert.Equal(t, Param{Name: "width", Type: "int", Default: "8"}, byName["width"])
	assert.Equal(t, "float", byName["skip"].Type)

	_, err = SchedulerParams("no-such")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown scheduler kind "no-such"`)
}

func TestResolvedParamsOverrideDefaults(t *testing.T) {
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("{width: 3, skip: 0.5}"), &n))
	got, err := ResolvedWorkloadParams("synthetic", n.Content[0])
	require.NoError(t, err)
	assert.Equal(t, "3", got["width"])
	assert.Equal(t, "0.5", got["skip"])
	assert.Equal(t, "8", got["layers"], "a parameter the file does not set has its default")

	got, err = ResolvedSchedulerParams("round-robin", nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "4"}, got)

	require.NoError(t, yaml.Unmarshal([]byte("{kk: 3}"), &n))
	_, err = ResolvedSchedulerParams("round-robin", n.Content[0])
	require.Error(t, err, "a typo is an error, as when the scheduler is built")
	assert.Contains(t, err.Error(), `unknown field "kk"`)
}
