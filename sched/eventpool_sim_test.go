package sched_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads/dnn"
)

// Round-robin reuses pooled events: an event whose waits are all issued is
// recorded again, possibly on another stream whose record completes first.
// Every wait must still hold until the record it was bound to completes.
// These dynamic DNNs (full size, two inputs) raced when a later record
// released waits bound to an earlier one.
func TestRoundRobinWithPooledEventsIsRaceFreeOnDynamicDNNs(t *testing.T) {
	for _, tc := range []struct {
		variant string
		k       int
	}{{"instanas", 4}, {"condconv", 8}, {"routing", 4}} {
		t.Run(fmt.Sprintf("%s k=%d", tc.variant, tc.k), func(t *testing.T) {
			prog, err := dnn.Dynamic(dnn.DynamicParams{Variant: tc.variant, Inputs: 2, Scale: 1}, 1)
			require.NoError(t, err)
			rr, err := sched.NewRoundRobin(tc.k)
			require.NoError(t, err)
			_, st, races := runOnSim(t, rr, prog)
			assert.Empty(t, races, "a wait bound to an earlier record must not be released by a later one")
			assert.EqualValues(t, prog.NumOps(), st.Kernels)
		})
	}
}
