package calibrate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
)

// simulateGraphSteps runs "graph steps" on a simulator of cfg for shapes
// (one timed round: the simulator is deterministic).
func simulateGraphSteps(cfg *sim.Config, shapes []graphStepShape) (*Report, error) {
	return simulateOn(cfg, "graph steps", func(c *calibrator, h device.Host) error {
		c.rounds = 1
		return c.graphStepsOf(h, shapes)
	})
}

// segmentFit is one per-segment field fitted to one part of a step.
type segmentFit struct {
	part, field string
	set         func(h *sim.HostCosts, v float64)
}

var segmentFits = []segmentFit{
	{"instantiate", "host.instantiate_per_segment_ns", func(h *sim.HostCosts, v float64) { h.InstantiatePerSegmentNs = v }},
	{"exec destroy", "host.destroy_exec_per_segment_ns", func(h *sim.HostCosts, v float64) { h.DestroyExecPerSegmentNs = v }},
}

// fitGraphSteps fits host.instantiate_per_segment_ns and
// host.destroy_exec_per_segment_ns to the "graph steps" measurements: on
// the sweep's layered DAGs (8 to 512 nodes on 1 to 64 branches), per
// round, the least squares (relative) of what the GPU's isolated step
// took beyond the simulator without the field, over the segments the
// simulator counts in each captured graph (its time with the field at 1
// us, less without); the config gets the median over rounds, and the
// comment the error on the DAG campaign's shapes, which the fit leaves out.
// Without those measurements the base config's values stay.
func (f *Fitted) fitGraphSteps(rep *Report) error {
	sweep := sweepShapes()
	if _, ok := rep.byName(gsName(sweep[0].name, "instantiate")); !ok {
		return nil
	}
	shapes := append(sweep, campaignShapes()...)
	without := *f.Config
	for _, s := range segmentFits {
		s.set(&without.Host, 0)
	}
	unit := without
	for _, s := range segmentFits {
		s.set(&unit.Host, 1000)
	}
	r0, err := simulateGraphSteps(&without, shapes)
	if err != nil {
		return err
	}
	r1, err := simulateGraphSteps(&unit, shapes)
	if err != nil {
		return err
	}
	for _, s := range segmentFits {
		v, comment, err := fitSegments(rep, r0, r1, s.part, sweep)
		if err != nil {
			return err
		}
		s.set(&f.Config.Host, v)
		f.Comments[s.field] = comment + "; " + segmentCheck(rep, r0, r1, s.part, v)
	}
	return nil
}

func gsName(shape, part string) string { return GraphStepPrefix + shape + ": " + part }

// segmentsOf is the segments r0 and r1 (without and with 1 us a segment)
// tell for shape's part, and the part's time without the field.
func segmentsOf(r0, r1 *Report, shape, part string) (segments, rest float64) {
	a, _ := r0.byName(gsName(shape, part))
	b, _ := r1.byName(gsName(shape, part))
	return (b.Value - a.Value) / 1000, a.Value
}

func fitSegments(rep, r0, r1 *Report, part string, fit []graphStepShape) (float64, string, error) {
	var perRound []float64
	for r := 0; ; r++ {
		var sxy, sxx float64
		for _, sh := range fit {
			m, ok := rep.byName(gsName(sh.name, part))
			if !ok || r >= len(m.Rounds) {
				return 0, "", fmt.Errorf("graph steps: %s has no round %d of %s", sh.name, r, part)
			}
			x, rest := segmentsOf(r0, r1, sh.name, part)
			g := m.Rounds[r]
			sxy += (g - rest) * x / (g * g)
			sxx += x * x / (g * g)
		}
		if sxx == 0 {
			return 0, "", fmt.Errorf("graph steps: the simulator counts no segments in the sweep's graphs")
		}
		perRound = append(perRound, sxy/sxx)
		if m, _ := rep.byName(gsName(fit[0].name, part)); r+1 >= len(m.Rounds) {
			break
		}
	}
	mm := measurement(part, "", "ns", "", perRound)
	v := math.Round(max(0, mm.Value))
	return v, fmt.Sprintf("fitted: graph steps, the %s of one step of the sweep's %d layered DAGs (8 to 512 nodes on 1 to 64 branches, 8 streams) beyond the simulator's per-node cost, "+
		"least squares (relative) over the segments of each captured graph: median of %d rounds, %s-%s ns", part, len(fit), len(perRound), num(mm.Min), num(mm.Max)), nil
}

// segmentCheck is the error of part with v a segment against the GPU's
// median, on the sweep (fitted) and on the campaign's shapes (left out).
func segmentCheck(rep, r0, r1 *Report, part string, v float64) string {
	errs := func(shapes []graphStepShape) (med, worst float64, each []string) {
		var abs []float64
		for _, sh := range shapes {
			m, _ := rep.byName(gsName(sh.name, part))
			x, rest := segmentsOf(r0, r1, sh.name, part)
			e := (rest + v*x - m.Value) / m.Value
			abs = append(abs, math.Abs(e))
			each = append(each, fmt.Sprintf("%s %+.0f%%", sh.name, 100*e))
		}
		sort.Float64s(abs)
		return stats.UpperMedian(abs), abs[len(abs)-1], each
	}
	sm, sw, _ := errs(sweepShapes())
	cm, cw, each := errs(campaignShapes())
	return fmt.Sprintf("after the fit the sweep's %s within %.0f%% median, %.0f%% max; the campaign's shapes (not fitted) %.0f%% median, %.0f%% max (%s)",
		part, 100*sm, 100*sw, 100*cm, 100*cw, strings.Join(each, ", "))
}
