package dnn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/workloads"
)

// structure is a step's kernel sequence by layer name, with the input's
// index (the only part of a name that differs by construction) removed.
func structure(s workloads.Step) string {
	var b strings.Builder
	for _, op := range s.Ops {
		name := op.Name
		if i := strings.LastIndexByte(name, '/'); i >= 0 && (strings.HasPrefix(name, "logits/") || strings.HasPrefix(name, "ctrl/probs/")) {
			name = name[:i]
		}
		fmt.Fprintf(&b, "%s:%s;", name, op.Kernel.Name)
	}
	return b.String()
}

func TestDynamicNetworks(t *testing.T) {
	tests := []struct {
		variant   string
		scale     int
		dynamic   bool // step structures differ between inputs
		minOps    int
		outputsOf int // output buffers per input
	}{
		{"instanas", 4, true, 60, 2},
		{"routing", 2, true, 60, 1},
		{"condconv", 4, false, 80, 1},
	}
	for _, tc := range tests {
		t.Run(tc.variant, func(t *testing.T) {
			const inputs = 4
			n, err := dynamicNet(DynamicParams{Variant: tc.variant, Inputs: inputs, Scale: tc.scale}, 5)
			require.NoError(t, err)
			p, err := n.Finish()
			require.NoError(t, err)
			require.NoError(t, p.Validate())
			require.Len(t, p.Steps, inputs, "one step per input")
			plausibleWork(t, p)
			shapes := map[string]bool{}
			for _, s := range p.Steps {
				assert.GreaterOrEqual(t, len(s.Ops), tc.minOps)
				shapes[structure(s)] = true
			}
			if tc.dynamic {
				assert.Greater(t, len(shapes), 1, "inputs choose different graphs")
			} else {
				assert.Len(t, shapes, 1)
			}
			ref := referenceOutputs(t, n, p)
			assert.Len(t, ref, inputs*tc.outputsOf)
			for i := 1; i < inputs; i++ {
				assert.NotEqual(t, ref["logits/0"], ref[fmt.Sprintf("logits/%d", i)])
			}
		})
	}
}

func TestInstaNASRunsWhatItsControllerChooses(t *testing.T) {
	const scale, seed = 4, 9
	n, err := dynamicNet(DynamicParams{Variant: "instanas", Inputs: 3, Scale: scale}, seed)
	require.NoError(t, err)
	p, err := n.Finish()
	require.NoError(t, err)
	ref, err := n.Reference()
	require.NoError(t, err)
	for step := range p.Steps {
		probs := ref[fmt.Sprintf("ctrl/probs/%d", step)]
		require.Len(t, probs, len(instaCells)*len(instaModules))
		ran := map[string]bool{}
		for _, op := range p.Steps[step].Ops {
			ran[op.Name] = true
		}
		for c := range instaCells {
			anyRan := false
			for m := range instaModules {
				on := ran[fmt.Sprintf("cell%d/m%d/expand", c, m)]
				anyRan = anyRan || on
				if probs[c*len(instaModules)+m] > 0.5 {
					assert.True(t, on, "step %d cell %d module %d has p > 0.5 and must run", step, c, m)
				}
			}
			assert.True(t, anyRan, "every cell runs a module")
		}
	}
}

func TestRoutingGatesWeightThePaths(t *testing.T) {
	n, err := dynamicNet(DynamicParams{Variant: "routing", Inputs: 2, Scale: 2}, 3)
	require.NoError(t, err)
	p, err := n.Finish()
	require.NoError(t, err)
	// Every aggregation of a gated path reads its gate (a one-float range of
	// a gate_act buffer), so the dependency graph orders it after the gate.
	gates := map[int]bool{}
	for i, b := range p.Buffers {
		if strings.HasSuffix(b.Name, "/gate_act") {
			gates[i] = true
		}
	}
	aggs, gated := 0, 0
	for _, op := range p.Steps[0].Ops {
		if !strings.HasSuffix(op.Name, "/agg") {
			continue
		}
		aggs++
		for _, a := range op.Args {
			if a.Buf >= 0 && gates[a.Buf] {
				assert.Equal(t, int64(4), a.Len)
				gated++
			}
		}
	}
	assert.Positive(t, aggs)
	assert.GreaterOrEqual(t, gated, aggs)
}

func TestDynamicErrors(t *testing.T) {
	_, err := Dynamic(DynamicParams{Variant: "skipnet", Inputs: 1, Scale: 1}, 1)
	assert.ErrorContains(t, err, "unknown dynamic variant")
	_, err = Dynamic(DynamicParams{Variant: "routing", Inputs: 0, Scale: 1}, 1)
	assert.ErrorContains(t, err, "inputs")
	// Issue 23: a billion inputs allocated their images before anything
	// was checked.
	_, err = Dynamic(DynamicParams{Variant: "routing", Inputs: 1e9, Scale: 1}, 1)
	assert.ErrorContains(t, err, "inputs must be at most 1024 (dnn.MaxInputs), got 1000000000")
}
