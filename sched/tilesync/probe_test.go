package tilesync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/tiles"
)

func TestProbeRejectsWhatItCannotRun(t *testing.T) {
	for _, tc := range []struct {
		opt  func(*Options)
		want string
	}{
		{func(o *Options) { o.Probe = "half" }, `probe "half": want post, wait or all`},
		{func(o *Options) { o.Probe = "post"; o.Policy = "stream" }, "give a synchronizing policy"},
		{func(o *Options) { o.Probe = "all" }, "give a synchronizing policy"}, // auto
		{func(o *Options) { o.Probe = "wait"; o.Policy = "row"; o.BlocksPerSM = 1 }, "a probe does not make"},
	} {
		o := Defaults()
		tc.opt(&o)
		_, err := New(o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestProbeKeepsOnlyItsParts builds each probe of a RowSync pair on the
// simulator and checks the launches it issues: which synchronization
// arguments and Sync each kernel keeps, the name, and that the consumer
// follows its producer on one stream (the simulator then times the pair as
// stream order: one run's span is the stream-ordered span of the same
// kernels, every wait met when polled).
func TestProbeKeepsOnlyItsParts(t *testing.T) {
	prog := gpt3MLP(t, 256)
	for _, tc := range []struct {
		probe                string
		post, wait, ord, flg bool
	}{
		{ProbePost, true, false, false, false},
		{ProbeWait, false, true, false, false},
		{ProbeAll, true, true, true, true},
	} {
		o := Defaults()
		o.Policy, o.Probe = "row", tc.probe
		s, err := New(o)
		require.NoError(t, err)
		assert.Contains(t, s.Name(), ",probe="+tc.probe+")")
		_, races := runOnSim(t, prog, s)
		assert.Empty(t, races, "%s: the consumer runs after its producer", tc.probe)
		pr := s.items[0].pr
		require.NotNil(t, pr)
		isBuf := func(a device.Arg) bool { return a.Kind == device.ArgBuffer }
		assert.Equal(t, tc.post, isBuf(pr.prodL.Args[tiles.ArgPost]), "%s: producer posts", tc.probe)
		assert.Equal(t, tc.post, pr.prodL.Sync != nil, "%s: producer Sync", tc.probe)
		assert.Equal(t, tc.wait, isBuf(pr.consL.Args[tiles.ArgWait]), "%s: consumer polls", tc.probe)
		assert.Equal(t, tc.wait, pr.consL.Sync != nil, "%s: consumer Sync", tc.probe)
		// The rule's tile order: off at T = 256 (one wave of rows).
		assert.Equal(t, tc.ord && pr.choice.TileOrder, isBuf(pr.consL.Args[tiles.ArgOrderCounter]), "%s: tile order", tc.probe)
		assert.Equal(t, tc.flg, pr.choice.WaitKernel, "%s: wait kernel", tc.probe)
		if tc.probe == ProbeWait {
			ws := pr.consSync.Waits(0, nil)
			require.NotEmpty(t, ws)
			assert.Zero(t, ws[0].Target, "counters preset complete: the simulator sees a met target")
		}
	}
}
