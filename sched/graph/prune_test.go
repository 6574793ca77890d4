package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPruneOnOtherAssignments: Options.Prune keeps Nimble's streams and
// its 7 waits on M1 (one foreign parent per join, three for the reduce)
// but records an event only after the 7 nodes waited on, not all 17; on
// Taskflow it removes the waits a stream already waited past.
func TestPruneOnOtherAssignments(t *testing.T) {
	d := mustDAG(t, 17, m1Edges()...)
	plain, err := BuildPlan(d, Options{Policy: PolicyNimble})
	require.NoError(t, err)
	pruned, err := BuildPlan(d, Options{Policy: PolicyNimble, Prune: true})
	require.NoError(t, err)
	require.NoError(t, pruned.Verify(d))
	assert.Equal(t, "nimble+prune", pruned.Policy)
	assert.Equal(t, plain.Stream, pruned.Stream)
	assert.Equal(t, 7, pruned.NumWaits())
	waited := map[int]bool{}
	for _, ws := range pruned.Waits {
		for _, u := range ws {
			waited[u] = true
		}
	}
	assert.Equal(t, len(waited), pruned.NumRecords(), "an event only where a wait needs one")
	assert.Less(t, pruned.NumRecords(), plain.NumRecords())

	tf, err := BuildPlan(d, Options{Policy: PolicyTaskflow, Streams: 2})
	require.NoError(t, err)
	tfp, err := BuildPlan(d, Options{Policy: PolicyTaskflow, Streams: 2, Prune: true})
	require.NoError(t, err)
	require.NoError(t, tfp.Verify(d))
	assert.Equal(t, tf.Stream, tfp.Stream)
	assert.LessOrEqual(t, tfp.NumWaits(), tf.NumWaits())
	assert.Equal(t, tfp.CrossEdges-tfp.NumWaits(), tfp.WaitsRemoved)

	s, err := New(Options{Policy: PolicyTaskflow, Streams: 4, Graph: true, Prune: true})
	require.NoError(t, err)
	assert.Equal(t, "taskflow(s=4)+prune+graph", s.Name())
	_, err = New(Options{Policy: PolicyKeSCo, Prune: true})
	assert.ErrorContains(t, err, "prune applies only to the taskflow and nimble policies")
}
