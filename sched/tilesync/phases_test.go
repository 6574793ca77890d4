package tilesync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPhasesOnSimulator: with Phases, Stats says when GEMM1 and GEMM2
// ended after each run's start. In stream order GEMM2 starts where GEMM1
// ends and ends with the run; synchronized, GEMM2 still ends last and
// sooner, and the producer ends no sooner: on the simulator exactly when
// it did (its blocks go first, at high priority, and a tile takes the same
// time whatever shares its SM), on a GPU later if consumer tiles beside
// its last wave slow it. The events change nothing else: the makespan
// equals the run without them.
func TestPhasesOnSimulator(t *testing.T) {
	prog := gpt3MLP(t, 768)
	ends := map[string][2]float64{}
	for _, pol := range []string{"stream", "row"} {
		plain := Defaults()
		plain.Policy = pol
		withPh := plain
		withPh.Phases = true
		s0, err := New(plain)
		require.NoError(t, err)
		s, err := New(withPh)
		require.NoError(t, err)
		assert.Contains(t, s.Name(), ",phases)")
		assert.Nil(t, s0.Stats(), "no phases, no stats")
		span0, _ := runOnSim(t, prog, s0)
		span, races := runOnSim(t, prog, s)
		assert.Empty(t, races)
		st := s.Stats()
		require.Len(t, st, 2, "%v", st)
		g1, g2 := st["end_us 00 gemm1[0]"], st["end_us 01 gemm2[0]"]
		require.Positive(t, g1, "%v", st)
		assert.Less(t, g1, g2, "the consumer ends after its producer")
		assert.InDelta(t, float64(span.Microseconds()), g2, 30, "the consumer's end is the run's end, up to the launch and synchronize")
		assert.InDelta(t, float64(span0.Nanoseconds()), float64(span.Nanoseconds()), 0.01*float64(span0.Nanoseconds()), "the timing events cost the run next to nothing")
		ends[pol] = [2]float64{g1, g2}
	}
	assert.Equal(t, ends["stream"][0], ends["row"][0], "the producer's blocks go first and take as long beside consumer tiles")
	assert.Less(t, ends["row"][1], ends["stream"][1], "and the consumer ends sooner")
}
