package calibrate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
)

// tileSyncExperiment is configs/experiments/tilecost-gpu.yaml's
// schedulers on two small one-wave MLPs, on simulator config dev.
const tileSyncExperiment = `name: tilecost-test
seed: 1
repetitions: 1
warmup: 0
baseline: stream
workloads:
  - {name: gpt3 small, family: tiles-mlp, params: {model: gpt3, tokens: 256, hidden: 1024, ff: 2048, no_data: true}}
  - {name: llama small, family: tiles-mlp, params: {model: llama, tokens: 128, hidden: 1024, ff: 1024, no_data: true}}
schedulers:
  - {name: stream, kind: tilesync, params: {policy: stream, phases: true}}
  - {name: row, kind: tilesync, params: {policy: row, phases: true}}
  - {name: probe post, kind: tilesync, params: {policy: row, probe: post, phases: true}}
  - {name: probe wait, kind: tilesync, params: {policy: row, probe: wait, phases: true}}
  - {name: probe all, kind: tilesync, params: {policy: row, probe: all, phases: true}}
devices: [%s]
`

// Fitting the simulator's own run gives back its tile_sync costs: the
// experiment on an h100-datasheet config with post_fraction 0.05 and
// poll_fraction 0.2, its results fitted. Each kernel's time as the phases
// see it includes a few microseconds the fractions do not scale (the
// launch gap before it), so the fit comes out a little under the config.
func TestFitTileSyncGivesBackTheSimulatorsCosts(t *testing.T) {
	cfg, err := sim.LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.Name = "h100-tilesync"
	cfg.TileSync = sim.TileSyncCosts{PostFraction: 0.05, PollFraction: 0.2}
	dir := t.TempDir()
	data, err := cfg.Marshal()
	require.NoError(t, err)
	path := filepath.Join(dir, "h100-tilesync.yaml")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	e, err := experiments.ParseExperimentIn([]byte(fmt.Sprintf(tileSyncExperiment, path)), "tilecost-test.yaml", dir)
	require.NoError(t, err)
	res, err := experiments.Run(e, experiments.RunOptions{DropSeries: true})
	require.NoError(t, err)
	js, err := json.Marshal(res)
	require.NoError(t, err)

	rep, err := FitTileSync(js, "test")
	require.NoError(t, err)
	post, ok := rep.Get("tile_sync.post_fraction")
	require.True(t, ok)
	poll, ok := rep.Get("tile_sync.poll_fraction")
	require.True(t, ok)
	assert.Len(t, poll.Rounds, 2, "one per workload")
	assert.InDelta(t, 0.05, post.Value, 0.01)
	assert.LessOrEqual(t, post.Value, 0.05)
	assert.InDelta(t, 0.2, poll.Value, 0.03)
	assert.LessOrEqual(t, poll.Value, 0.2)
	assert.Equal(t, cfg.Info.Name, rep.Info.Name, "the rows' device, for calibrate fit's merge")

	// calibrate fit takes the measured fields from the report and keeps
	// release_ns, not fitted, from the base config.
	_, k, _ := upgrade(rep)
	assert.False(t, k["tile_sync.poll_fraction"], "measured: not kept")
	assert.True(t, k["tile_sync.release_ns"], "not fitted: kept from the base config")
}

func TestFitTileSyncNeedsTheProbes(t *testing.T) {
	_, err := FitTileSync([]byte(`{"rows": []}`), "empty.json")
	assert.ErrorContains(t, err, "no workload has the stream, probe post and probe wait rows")
	_, err = FitTileSync([]byte(`{"rows": 3}`), "bad.json")
	assert.ErrorContains(t, err, "bad.json")
}
