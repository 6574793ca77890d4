package calibrate

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// Candidate host.sync_switch_ns of FitRunSyncs: 0 to 4 us in 50 ns steps.
var runSyncSwitches = steps(0, 4000, 50)

// runSyncFitted is which of "runs over streams"' synchronizes FitRunSyncs
// fits: the short spins' runs over 8 to 64 streams, whose work is done
// when the host reaches the synchronizes (the issue takes longer than the
// device), so that each synchronize is the call alone.
var runSyncFitted = regexp.MustCompile(`^run over streams: synchronizes, (.*), 2 us spins, (8|16|32|64) streams$`)

// FitRunSyncs fits host.sync_switch_ns to a report's "runs over streams":
// the value whose simulated synchronizes at the end of the short spins'
// runs over 8 to 64 streams (every stream the run used, in turn, as the
// multi-stream schedulers end a run) are closest to the measured ones,
// simulated with cfg's every other field (the config it goes into).
// Closest is the mean absolute log ratio; the first of equals, smallest
// first. A report without those runs is an error.
func FitRunSyncs(rep *Report, cfg *sim.Config) (*Fitted, error) {
	want := map[string]float64{}
	for _, m := range rep.Measurements {
		if runSyncFitted.MatchString(m.Name) && m.Value > 0 {
			want[m.Name] = m.Value
		}
	}
	if len(want) == 0 {
		return nil, errors.New("the report has no \"runs over streams\" (gpusched calibrate --only \"runs over streams\")")
	}
	c := *cfg
	f := &Fitted{Config: &c, Comments: map[string]string{}}
	best, bestErr, zeroErr := 0.0, math.Inf(1), math.Inf(1)
	var bestGot map[string]float64
	for _, sw := range runSyncSwitches {
		try := c
		try.Host.SyncSwitchNs = sw
		got, err := simulateRunStreams(&try)
		if err != nil {
			return nil, err
		}
		e := meanLogError(want, func(n string) float64 { return got[n] })
		if sw == 0 {
			zeroErr = e
		}
		if e < bestErr-1e-9 {
			best, bestErr, bestGot = sw, e, got
		}
	}
	c.Host.SyncSwitchNs = best
	var rows []string
	for _, n := range slices.Sorted(maps.Keys(want)) {
		m := runSyncFitted.FindStringSubmatch(n)
		rows = append(rows, fmt.Sprintf("%s over %s streams %.0f ns (simulated %.0f)", m[1], m[2], want[n], bestGot[n]))
	}
	f.Comments["host.sync_switch_ns"] = fmt.Sprintf("fitted: \"runs over streams\", the synchronizes of every stream in turn at the end of runs of 64 one-block 2 us spins "+
		"over 8 to 64 streams (four patterns, each after a warm run), simulated with 0 to %.0f ns; %.0f ns fits best, mean error %.1f%% (0: %.1f%%): %s",
		runSyncSwitches[len(runSyncSwitches)-1], best, pct(bestErr), pct(zeroErr), strings.Join(rows, "; "))
	return f, nil
}

// simulateRunStreams runs "runs over streams" on a simulator of cfg, one
// round (every round is the same), and returns every figure by name.
func simulateRunStreams(cfg *sim.Config) (map[string]float64, error) {
	return simulatedValues(cfg, "runs over streams", func(c *calibrator, h device.Host) error {
		c.rounds = 1
		return c.runStreams(h)
	})
}
