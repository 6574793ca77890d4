package acs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Params.CallStats adds the launches by the other threads in the driver and
// the window thread's parts, and changes nothing of the schedule: the same
// run with and without it takes the same simulated time. Every launch lands
// in exactly one bucket of each kind; the parts of the window thread's time
// stay within its busy time.
func TestCallStats(t *testing.T) {
	prog := smallRL(t)
	n := float64(prog.NumOps())
	run := func(p Params) (map[string]float64, float64) {
		s, err := NewSW(p)
		require.NoError(t, err)
		var took float64
		runPrepared(t, prog, s, func(h device.Host, in *workloads.Instance) error {
			t0 := h.Now()
			err := s.Run(h, in)
			took = float64(h.Now() - t0)
			return err
		})
		return s.Stats(), took
	}
	for _, p := range []Params{DefaultParams(), {Window: 32, Threads: 4, Completion: CompletionEvent, InFlight: 4, Dispatch: DispatchWindow, CheckCost: true}, graphParams(32, "")} {
		plain, plainTook := run(p)
		p.CallStats = true
		assert.Contains(t, p.Name(), ",call-stats")
		got, took := run(p)
		require.Equal(t, plainTook, took, "%s: call stats must not change the schedule", p.Name())
		for k, v := range plain {
			assert.Equal(t, v, got[k], "%s: %s", p.Name(), k)
		}
		assert.Positive(t, got["window_check_ns_per_op"], p.Name())
		parts := got["window_check_ns_per_op"] + got["window_put_ns_per_op"] + got["window_retire_ns_per_op"] + got["window_dispatch_ns_per_op"]
		assert.LessOrEqual(t, parts, got["window_busy_ns_per_op"]+1, p.Name())
		if p.Dispatch == DispatchGraph {
			assert.Positive(t, got["window_dispatch_ns_per_op"])
			// The split: updates and launches, within the dispatch.
			upd, launch := got["window_graph_update_ns_per_update"], got["window_graph_launch_ns_per_launch"]
			assert.Positive(t, launch)
			assert.Positive(t, got["node_updates"])
			assert.Positive(t, upd)
			split := upd*got["node_updates"] + launch*got["batches"]
			assert.LessOrEqual(t, split, got["window_dispatch_ns_per_op"]*n+1, p.Name())
			assert.NotContains(t, plain, "window_graph_launch_ns_per_launch", "without call stats")
			assert.NotContains(t, got, "thread_launches_others_launching_0")
			continue
		}
		var byLaunching, bySyncing float64
		for k, v := range got {
			switch {
			case strings.HasPrefix(k, "thread_launches_others_launching_"):
				byLaunching += v
			case strings.HasPrefix(k, "thread_launches_others_syncing_"):
				bySyncing += v
			}
		}
		assert.Equal(t, n, byLaunching, p.Name())
		assert.Equal(t, n, bySyncing, p.Name())
	}
}
