package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Host thread starts on the simulator read the config's host costs: n
// streams cost n stream creations and n destructions, and a worker runs
// as soon as its Go call returns (the simulator starts a thread at its
// parent's clock), so the first worker runs one thread_start_ns after the
// first Go; the whole round is more than its parts.
func TestThreadStartsReadTheHostCosts(t *testing.T) {
	cfg := loadConfig(t, "h100")
	cfg.Host.StreamCreateNs, cfg.Host.ThreadStartNs, cfg.Host.DestroyNs = 4000, 1500, 700
	rep, err := Measure(mustSim(t, cfg), []string{"host thread starts"}, nil)
	require.NoError(t, err)
	for _, n := range threadStartCounts {
		value := func(part string) float64 {
			name := fmt.Sprintf("host thread starts: %d threads: %s", n, part)
			m, ok := rep.byName(name)
			require.True(t, ok, name)
			return m.Value
		}
		assert.InDelta(t, 4000*float64(n), value("streams created"), 1, "%d threads", n)
		assert.InDelta(t, 700*float64(n), value("streams destroyed"), 1, "%d threads", n)
		assert.InDelta(t, 1500, value("first worker running"), 1, "%d threads", n)
		assert.GreaterOrEqual(t, value("last worker running"), value("first worker running"), "%d threads", n)
		assert.Greater(t, value("total"), value("streams created")+value("workers done")+value("streams destroyed")-1, "%d threads", n)
	}
}
