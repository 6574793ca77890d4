package calibrate

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// threadedBuildLoop is the loop of "host threads at once" that builds
// graphs, which host.graph_lock_fraction and host.graph_lock_handoff_ns
// are fitted to.
const threadedBuildLoop = "graph build of 4"

func threadedName(loop string, n int) string {
	return fmt.Sprintf("%s, %d host thread(s) at once", loop, n)
}

// threadedScaling is, per thread count above one, loop's aggregate time
// per iteration over its time on one thread: how the loop scales with
// threads, whatever one thread's costs are (fitted elsewhere, and on
// another host than a later probe's).
func threadedScaling(rep *Report, loop string) map[int]float64 {
	out := map[int]float64{}
	one, ok := rep.byName(threadedName(loop, 1))
	if !ok || one.Value <= 0 {
		return out
	}
	for _, n := range threadedCounts[1:] {
		if m, ok := rep.byName(threadedName(loop, n)); ok && m.Value > 0 {
			out[n] = m.Value / one.Value
		}
	}
	return out
}

// Candidate values of the graph lock fit: fractions in twentieths, hand-offs
// in 250 ns steps up to 8 us.
var (
	graphLockFractions = func() (fs []float64) {
		for i := 1; i <= 20; i++ {
			fs = append(fs, float64(i)/20)
		}
		return fs
	}()
	graphLockHandoffs = func() (hs []float64) {
		for h := 0; h <= 8000; h += 250 {
			hs = append(hs, float64(h))
		}
		return hs
	}()
)

// fitGraphLock sets host.graph_lock_fraction and host.graph_lock_handoff_ns
// to the pair whose simulated graph-build loop of "host threads at once"
// scales with threads (threadedScaling: 2, 4 and 8 threads over one)
// closest to the measured one (mean absolute log ratio; the first of
// equals, fractions before hand-offs, smallest first).
func (f *Fitted) fitGraphLock(rep *Report) error {
	want := threadedScaling(rep, threadedBuildLoop)
	if len(want) == 0 {
		f.Notes = append(f.Notes, "no graph builds over host threads at once measured: host.graph_lock_fraction and host.graph_lock_handoff_ns kept from the base config")
		return nil
	}
	bestF, bestH, bestErr := 0.0, 0.0, math.Inf(1)
	var bestGot map[int]float64
	for _, h := range graphLockHandoffs {
		for _, v := range graphLockFractions {
			cfg := *f.Config
			cfg.Host.GraphLockFraction, cfg.Host.GraphLockHandoffNs = v, h
			got, err := simulateLoop(&cfg, threadedBuildLoop)
			if err != nil {
				return err
			}
			if e := meanLogError(want, func(n int) float64 { return got[n] }); e < bestErr-1e-9 {
				bestF, bestH, bestErr, bestGot = v, h, e, got
			}
		}
	}
	f.Config.Host.GraphLockFraction, f.Config.Host.GraphLockHandoffNs = bestF, bestH
	var rows []string
	for _, n := range threadedCounts[1:] {
		if w, ok := want[n]; ok {
			rows = append(rows, fmt.Sprintf("%d threads %.2f (simulated %.2f)", n, w, bestGot[n]))
		}
	}
	what := fmt.Sprintf("\"host threads at once\", %s: aggregate time per graph on 2, 4, 8 host threads over one thread's, simulated with fractions 0.05 to 1 "+
		"and hand-offs 0 to 8 us; fraction %.2f and hand-off %.0f ns fit best, mean error %.1f%%: %s",
		threadedBuildLoop, bestF, bestH, 100*(math.Exp(bestErr)-1), strings.Join(rows, ", "))
	f.Comments["host.graph_lock_fraction"] = "fitted with host.graph_lock_handoff_ns: " + what
	f.Comments["host.graph_lock_handoff_ns"] = "fitted with host.graph_lock_fraction: " + what
	return nil
}

// FitGraphLock fits host.graph_lock_fraction and host.graph_lock_handoff_ns
// alone to a report's "host threads at once", simulated with cfg's every
// other field (the config the two fields go into: the scaling they give
// there is what is fitted); the result's Comments say where they come
// from and their error.
func FitGraphLock(rep *Report, cfg *sim.Config) (*Fitted, error) {
	c := *cfg
	f := &Fitted{Config: &c, Comments: map[string]string{}}
	if len(threadedScaling(rep, threadedBuildLoop)) == 0 {
		return nil, fmt.Errorf("the report has no %q over 1 and more host threads (gpusched calibrate --only \"host threads at once\")", threadedBuildLoop)
	}
	if err := f.fitGraphLock(rep); err != nil {
		return nil, err
	}
	return f, nil
}

// simulateLoop runs one loop of "host threads at once" on a simulator of
// cfg and returns its scaling.
func simulateLoop(cfg *sim.Config, loop string) (map[int]float64, error) {
	rep, err := simulateOn(cfg, loop, func(c *calibrator, h device.Host) error {
		c.threadedOnly = loop
		return c.threadedHostCalls(h)
	})
	if err != nil {
		return nil, err
	}
	return threadedScaling(rep, loop), nil
}
