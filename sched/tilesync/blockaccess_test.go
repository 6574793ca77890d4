package tilesync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// racesOnSim runs s twice on prog on a fresh H100 simulator, after tamper
// (if not nil) has tampered with the prepared pairs, and returns the races.
func racesOnSim(t *testing.T, prog *workloads.Program, s *Scheduler, tamper func(pr *pairRun)) []device.Race {
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	err = dev.Run(func(h device.Host) error {
		hh := infoHost{h, dev.Info()}
		inst, err := workloads.Bind(hh, prog)
		if err != nil {
			return err
		}
		if err := s.Prepare(hh, inst); err != nil {
			return err
		}
		synced := 0
		for _, it := range s.items {
			if it.pr != nil {
				synced++
				if tamper != nil {
					tamper(it.pr)
				}
			}
		}
		require.Positive(t, synced, "the pair is synchronized")
		for rep := 0; rep < 2; rep++ {
			if err := s.Run(hh, inst); err != nil {
				return err
			}
		}
		return s.Cleanup(hh)
	})
	require.NoError(t, err)
	return dev.Races()
}

// wrongRow waits for the producer row above the one the tile reads (row 0
// waits for nothing).
type wrongRow struct{ *ConsumerSync }

func (w wrongRow) Waits(b int, buf []device.CounterWait) []device.CounterWait {
	if tileOf(w.Order, b) < w.Pair.Cons.TilesN() {
		return buf
	}
	// The waits of the tile above, whatever block computes it.
	above := *w.ConsumerSync
	above.Order = nil
	return above.Waits(tileOf(w.Order, b)-w.Pair.Cons.TilesN(), buf)
}

// lowTarget waits one post short on every counter.
type lowTarget struct{ *ConsumerSync }

func (w lowTarget) Waits(b int, buf []device.CounterWait) []device.CounterWait {
	n := len(buf)
	buf = w.ConsumerSync.Waits(b, buf)
	for i := n; i < len(buf); i++ {
		buf[i].Target--
	}
	return buf
}

// noHalo waits, as cuSync's published Conv2DTileSync does, on the tile's own
// producer row tile only, missing the rows its 3x3 window reaches.
type noHalo struct{ *ConsumerSync }

func (w noHalo) Waits(b int, buf []device.CounterWait) []device.CounterWait {
	t := tileOf(w.Order, b)
	tm := t / w.Pair.Cons.TilesN()
	target := w.Iter * uint32(w.Pair.PerCounter)
	for _, g := range w.Pair.WaitGroups(nil) {
		buf = append(buf, device.CounterWait{Counter: device.Counter{Buf: w.Counters, Index: tm*w.Pair.WaitRowStride + g}, Target: target})
	}
	return buf
}

// Synchronized pairs are checked block by block (BlockAccess): each
// consumer tile reads rows whose producer tiles have finished, so no race;
// a broken policy lets consumer tiles read rows still being written, and
// the checker must say so. (Broken policies that the simulator's lockstep
// waves happen to hide, such as RowSync one post short when a row's tiles
// all finish at one instant, are not listed: they do not race here.)
func TestTileSyncIsRaceFreeAndBrokenPoliciesRace(t *testing.T) {
	mlp := func(p tiles.MLPParams) *workloads.Program {
		p.Steps, p.CheckRows, p.NoData = 1, 1, true
		m, err := tiles.NewMLP(p, 1)
		require.NoError(t, err)
		return m.Program
	}
	convPair := func(batch int) *workloads.Program {
		c, err := tiles.NewConvPair(tiles.ConvPairParams{Channels: 64, Size: 56, Batch: batch, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
		require.NoError(t, err)
		return c.Program
	}
	// GPT-3 T = 1024: several waves, wait kernel and tile order; T = 768:
	// the rule's own choice synchronizes it (RowSync). A small
	// MLP in 64x64 tiles (4 x 16 tiles per GEMM at T = 256): one wave, so
	// consumer tiles are resident and spinning while producer rows run.
	gpt := mlp(tiles.MLPParams{Model: "gpt3", Tokens: 1024, Tile: "auto"})
	gpt768 := mlp(tiles.MLPParams{Model: "gpt3", Tokens: 768, Tile: "auto"})
	small := mlp(tiles.MLPParams{Model: "gpt3", Tokens: 256, Hidden: 1024, FF: 1024, Tile: "64x64"})
	llama := mlp(tiles.MLPParams{Model: "llama", Tokens: 1024, Tile: "auto"})
	given := func(policy string) Options {
		return Options{Policy: policy, WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "on"}
	}
	wrong := func(pr *pairRun) { pr.consL.Sync = wrongRow{pr.consSync} }
	low := func(pr *pairRun) { pr.consL.Sync = lowTarget{pr.consSync} }
	halo := func(pr *pairRun) { pr.consL.Sync = noHalo{pr.consSync} }
	for _, tc := range []struct {
		name   string
		prog   *workloads.Program
		opt    Options
		tamper func(pr *pairRun)
	}{
		{"gpt3 row", gpt, given("row"), nil},
		{"gpt3 tile", gpt, given("tile"), nil},
		{"gpt3 T=768 auto", gpt768, Defaults(), nil},
		{"small tile", small, given("tile"), nil},
		{"small row", small, given("row"), nil},
		{"llama strided", llama, given("strided"), nil},
		{"conv b8 conv2d", convPair(8), given("conv2d"), nil},
		{"conv b11 row", convPair(11), given("row"), nil},
		{"conv b1 conv2d", convPair(1), given("conv2d"), nil},
		{"small tile waiting on the row above", small, given("tile"), wrong},
		{"small row waiting on the row above", small, given("row"), wrong},
		{"small tile one post short", small, given("tile"), low},
		{"conv b1 conv2d one post short", convPair(1), given("conv2d"), low},
		{"conv b8 conv2d without the halo (as published)", convPair(8), given("conv2d"), halo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.opt)
			require.NoError(t, err)
			races := racesOnSim(t, tc.prog, s, tc.tamper)
			if tc.tamper == nil {
				assert.Empty(t, races, "synchronized tiles never read rows still being written")
				return
			}
			// One race per run: the producer and the consumer, named by
			// the first blocks found racing.
			require.Len(t, races, 2, "the broken policy lets a consumer tile read rows still being written")
			for _, r := range races {
				assert.Contains(t, r.A.Name+" "+r.B.Name, "(block ")
				assert.Less(t, r.B.Start, r.A.End)
				assert.Less(t, r.Lo, r.Hi)
			}
		})
	}
}
