package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func node(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(src), &doc))
	return doc.Content[0]
}

func TestACSRegistrations(t *testing.T) {
	s, err := NewScheduler("acs-sw", nil)
	require.NoError(t, err)
	assert.Equal(t, "acs-sw(N=32,K=4,sync)", s.Name(), "defaults are the paper's")

	s, err = NewScheduler("acs-sw", node(t, "{window: 0, threads: 8, completion: callback, inflight: 4, batch: 4, graph_cache: true}"))
	require.NoError(t, err)
	assert.Equal(t, "acs-sw(N=inf,K=8,callback,inflight=4,batch=4,cached)", s.Name())

	_, err = NewScheduler("acs-sw", node(t, "{windw: 16}"))
	assert.ErrorContains(t, err, "windw", "a misspelt parameter is an error")
	s, err = NewScheduler("acs-sw", node(t, "{dispatch: graph, threads: 1, graph_key: kernels, window: 8}"))
	require.NoError(t, err)
	assert.Equal(t, "acs-sw(N=8,dispatch=graph,key=kernels)", s.Name())
	_, err = NewScheduler("acs-sw", node(t, "{dispatch: graph}"))
	assert.ErrorContains(t, err, "threads must be 1, got 4", "dispatch graph says which parameter conflicts")
	s, err = NewScheduler("acs-sw", node(t, "{dispatch: graph, threads: 1, window: 64, lanes: 4}"))
	require.NoError(t, err)
	assert.Equal(t, "acs-sw(N=64,dispatch=graph,key=width,lanes=4)", s.Name())
	_, err = NewScheduler("acs-sw", node(t, "{lanes: 2}"))
	assert.ErrorContains(t, err, `lanes needs dispatch graph, got dispatch "window"`)
	_, err = NewScheduler("acs-sw", node(t, "{completion: poll}"))
	assert.ErrorContains(t, err, "completion must be sync, event or callback")

	s, err = NewScheduler("acs-hw", node(t, "{stale_list: 128}"))
	require.NoError(t, err)
	assert.Equal(t, "acs-hw(M=128)", s.Name())

	p, err := NewWorkload("rl-physics", node(t, "{env: walker2d, envs: 32, envs_per_group: 8, steps: 2}"), 1)
	require.NoError(t, err)
	assert.Len(t, p.Steps, 2)
	require.NoError(t, p.Validate())
	_, err = NewWorkload("rl-physics", node(t, "{env: spider}"), 1)
	assert.ErrorContains(t, err, `unknown environment "spider"`)
	_, err = NewWorkload("rl-physics", node(t, "{envs_per_grup: 8}"), 1)
	assert.ErrorContains(t, err, "envs_per_grup")
}
