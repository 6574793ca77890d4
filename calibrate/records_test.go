package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// "records over streams" on a simulator whose records hold their queue
// shows records cutting the concurrency of 10 streams over 8 queues, and
// none with records passing; fitting either measurement from a base of the
// other finds the simulator's setting again.
func TestRecordsOverStreamsFit(t *testing.T) {
	reports := map[bool]*Report{}
	for _, pass := range []bool{false, true} {
		cfg, err := sim.LoadConfig("h100-datasheet")
		require.NoError(t, err)
		cfg.FrontEnd.RecordsPassQueue = pass
		rep, err := Measure(mustSim(t, cfg), []string{"records over streams"}, nil)
		require.NoError(t, err)
		reports[pass] = rep
		kernels, ok := rep.byName(recordsName(10, recordPatterns[0]))
		require.True(t, ok)
		recorded, ok := rep.byName(recordsName(10, recordPatterns[1]))
		require.True(t, ok)
		if pass {
			assert.InDelta(t, kernels.Value, recorded.Value, 0.01*kernels.Value, "passing records cost no concurrency")
		} else {
			assert.Less(t, recorded.Value, 0.7*kernels.Value, "records holding 8 queues serialize streams 9 and 10 behind 1 and 2")
		}
	}
	for _, pass := range []bool{false, true} {
		base, err := sim.LoadConfig("h100-datasheet")
		require.NoError(t, err)
		base.FrontEnd.RecordsPassQueue = !pass
		f := &Fitted{Config: base, Comments: map[string]string{}}
		require.NoError(t, f.fitRecordsPass(reports[pass]))
		assert.Equal(t, pass, f.Config.FrontEnd.RecordsPassQueue)
		assert.Contains(t, f.Comments["front_end.records_pass_queue"], "fits best, mean error 0%")
	}
}
