package pipeline

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/workloads/jobs"
)

func TestDecomposeHandComputed(t *testing.T) {
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	// Jobs 0 and 1 (batch 0) overlap on [2, 10); job 2 (batch 1) runs
	// [14, 20); job 3 (batch 1) [21, 25). Makespan 27.
	spans := []span{{us(14), us(20), 2}, {us(2), us(8), 0}, {us(5), us(10), 1}, {us(21), us(25), 3}}
	tests := []struct {
		name               string
		batch              []int
		busy, intra, inter time.Duration
	}{
		// Idle: [0,2) head, [10,14) between batches, [20,21) within batch
		// 1, [25,27) tail.
		{"batched", []int{0, 0, 1, 1}, us(8 + 6 + 4), us(2 + 1 + 2), us(4)},
		{"unbatched", nil, us(18), us(2 + 4 + 1 + 2), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy, intra, inter := decompose(spans, tt.batch, us(27))
			assert.Equal(t, tt.busy, busy)
			assert.Equal(t, tt.intra, intra)
			assert.Equal(t, tt.inter, inter)
			assert.Equal(t, us(27), busy+intra+inter, "the model's terms add up to T_measured")
		})
	}
}

func TestGapsMeasureTheOverheadModel(t *testing.T) {
	w, err := jobs.Hotspot(jobs.HotspotParams{Jobs: 16, Size: 128, Iterations: 4}, 1)
	require.NoError(t, err)
	batching, err := NewBatching(4)
	require.NoError(t, err)
	queue, err := NewQueue(4)
	require.NoError(t, err)
	set := newSET(t, with(setParams(4, 1), func(p *Params) { p.Gaps = true }))
	plus := newSET(t, with(setParams(4, 4), func(p *Params) { p.Threaded, p.Coalesce, p.Gaps = true, 2, true }))
	sync := NewSynchronous()
	sync.Gaps, batching.Gaps, queue.Gaps = true, true, true
	for _, s := range []metricser{sync, batching, queue, set, plus} {
		t.Run(s.Name(), func(t *testing.T) {
			m, races := runOn(t, w.Program, s)
			require.Empty(t, races)
			require.Contains(t, m, "t_ideal_s")
			total := m["t_ideal_s"] + m["gaps_intra_s"] + m["gaps_inter_s"]
			assert.Positive(t, m["t_ideal_s"])
			assert.LessOrEqual(t, total, m["makespan_s"]*1.0000001, "the terms never exceed T_measured")
			assert.Greater(t, total, 0.9*m["makespan_s"], "and account for nearly all of it")
			switch s.(type) {
			case *Synchronous, *Batching:
				assert.Positive(t, m["gaps_inter_s"], "a batched schedule idles between batches")
			default:
				assert.Zero(t, m["gaps_inter_s"], "no batches, no inter-batch gaps")
			}
		})
	}
	// Without Gaps the terms are not reported.
	m, _ := runOn(t, w.Program, newSET(t, setParams(4, 1)))
	assert.NotContains(t, m, "t_ideal_s")
}
