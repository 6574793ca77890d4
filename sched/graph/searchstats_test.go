package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads/kesco"
)

// The searched schedulers' Stats go into simulator results, which must be
// byte-identical across reruns: two fresh runs on fresh simulators give the
// same Stats, and the search's wall-clock time is reported apart
// (IOS.SearchTime, AutoGraph.LastSearch.Elapsed), never as a statistic.
func TestSearchStatsAreDeterministic(t *testing.T) {
	p, err := kesco.New("M1", kesco.Params{Scale: 1.0 / 256}, 1)
	require.NoError(t, err)
	type run struct {
		s      sched.Scheduler
		search func() float64
	}
	fresh := []func() run{
		func() run {
			s, err := NewIOS(DefaultIOSOptions())
			require.NoError(t, err)
			return run{s, func() float64 { return float64(s.SearchTime) }}
		},
		func() run {
			s, err := NewAutoGraph(DefaultSearchOptions())
			require.NoError(t, err)
			return run{s, func() float64 { return float64(s.LastSearch.Elapsed) }}
		},
	}
	for _, mk := range fresh {
		var stats []map[string]float64
		var name string
		for range 2 {
			r := mk()
			name = r.s.Name()
			simRun(t, newH100(t), r.s, p)
			st, ok := r.s.(interface{ Stats() map[string]float64 })
			require.True(t, ok, name)
			stats = append(stats, st.Stats())
			assert.Positive(t, r.search(), "%s: search time is still measured", name)
		}
		assert.Equal(t, stats[0], stats[1], "%s: Stats differ between identical simulator runs", name)
		for k := range stats[0] {
			assert.NotEqual(t, "search_ms", k, "%s: wall-clock search time in Stats", name)
		}
	}
}
