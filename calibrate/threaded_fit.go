package calibrate

import (
	"fmt"
	"math"
	"strings"
)

// threadedGraphLoops are the loops of "host threads at once" that time
// graph calls, which host.graph_lock_fraction is fitted to.
var threadedGraphLoops = []string{"graph build of 4", "graph update of 4"}

func threadedName(loop string, n int) string {
	return fmt.Sprintf("%s, %d host thread(s) at once", loop, n)
}

// threadedScaling is, per graph loop and thread count above one, the
// aggregate time per iteration over the loop's on one thread: how the
// loop scales with threads, whatever one thread's costs are (fitted
// elsewhere, and on another host than a later probe's).
func threadedScaling(rep *Report) map[string]float64 {
	out := map[string]float64{}
	for _, loop := range threadedGraphLoops {
		one, ok := rep.byName(threadedName(loop, 1))
		if !ok || one.Value <= 0 {
			continue
		}
		for _, n := range threadedCounts[1:] {
			if m, ok := rep.byName(threadedName(loop, n)); ok && m.Value > 0 {
				out[m.Name] = m.Value / one.Value
			}
		}
	}
	return out
}

// fitGraphLockFraction sets host.graph_lock_fraction to the one (0.05 to 1
// in twentieths) whose simulated graph loops of "host threads at once"
// scale with threads (threadedScaling) closest to the measured ones (mean
// absolute log ratio; the first of equals).
func (f *Fitted) fitGraphLockFraction(rep *Report) error {
	want := threadedScaling(rep)
	if len(want) == 0 {
		f.Notes = append(f.Notes, "no graph loops over host threads at once measured: host.graph_lock_fraction kept from the base config")
		return nil
	}
	best, bestErr := 0.0, math.Inf(1)
	var bestGot map[string]float64
	for i := 1; i <= 20; i++ {
		v := float64(i) / 20
		cfg := *f.Config
		cfg.Host.GraphLockFraction = v
		rep, err := simulate(&cfg, "host threads at once")
		if err != nil {
			return err
		}
		got := threadedScaling(rep)
		e := 0.0
		for name, w := range want {
			e += math.Abs(math.Log(got[name] / w))
		}
		if e /= float64(len(want)); e < bestErr-1e-9 {
			best, bestErr, bestGot = v, e, got
		}
	}
	f.Config.Host.GraphLockFraction = best
	var rows []string
	for _, loop := range threadedGraphLoops {
		for _, n := range threadedCounts[1:] {
			if w, ok := want[threadedName(loop, n)]; ok {
				rows = append(rows, fmt.Sprintf("%s x%d %.2f (simulated %.2f)", loop, n, w, bestGot[threadedName(loop, n)]))
			}
		}
	}
	f.Comments["host.graph_lock_fraction"] = fmt.Sprintf("fitted: the graph loops of \"host threads at once\", aggregate time per iteration on 2, 4, 8 host threads over one thread's, "+
		"simulated with fractions 0.05 to 1; %.2f fits best, mean error %.0f%%: %s", best, 100*(math.Exp(bestErr)-1), strings.Join(rows, ", "))
	return nil
}
