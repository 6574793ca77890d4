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

// chunkLaunchRow is one measured launch-call time of "graph chunks over
// streams" without host functions: its shape's width and the time per
// launch.
type chunkLaunchRow struct {
	name      string
	branches  int
	perLaunch float64
}

// GraphLaunchSlopes are what the chunk graphs' launch calls may grow with
// (FitGraphLaunch's slope).
var GraphLaunchSlopes = []string{"branches", "joins"}

// slopeProbeNs is the step by which fitGraphLaunch moves the slope's field
// to read off how many times each launch pays it.
const slopeProbeNs = 1000

// chunkLaunchRows are rep's launch-call times of the chunk graphs without
// host functions ("..., issue" and "..., gated, issue"), per launch. The
// host-function rows are left out: their calls hold a cuLaunchHostFunc
// each, which host.host_func_ns models.
func chunkLaunchRows(rep *Report) []chunkLaunchRow {
	var out []chunkLaunchRow
	for _, sh := range gsShapes {
		for _, s := range gsStreams {
			for _, suffix := range []string{", issue", ", gated, issue"} {
				name := chunkStreamsName(sh.name, s, false) + suffix
				if m, ok := rep.byName(name); ok && m.Value > 0 {
					out = append(out, chunkLaunchRow{name: name, branches: sh.branches, perLaunch: m.Value / gsLaunches})
				}
			}
		}
	}
	return out
}

// simulateChunkLaunches runs "graph chunks over streams" on a simulator of
// cfg and returns its launch-call rows by name.
func simulateChunkLaunches(cfg *sim.Config) (map[string]float64, error) {
	rep, err := simulateOn(cfg, "graph chunks over streams", func(c *calibrator, h device.Host) error {
		return c.graphChunksOverStreams(h)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, r := range chunkLaunchRows(rep) {
		out[r.name] = r.perLaunch
	}
	return out, nil
}

// chunkFitError is the mean absolute relative error of sim against rows.
func chunkFitError(rows []chunkLaunchRow, sim map[string]float64) float64 {
	e := 0.0
	for _, r := range rows {
		e += math.Abs(sim[r.name]-r.perLaunch) / r.perLaunch
	}
	return e / float64(len(rows))
}

// fitGraphLaunch fits the launch calls of SET-batch's chunk graphs (1 MiB
// copies around 64 empty kernels as 16, 4 and 1 branches) in rep: the
// residuals, measured less simulated on f's config per launch, are fitted
// by least squares to a line whose intercept goes into
// host.graph_launch_ns and whose slope, by slope, into
// host.graph_launch_branch_ns (per branch) or host.graph_launch_join_ns
// (per fork or join: 2 (w - 1) + 1 for w branches between copies). How
// many times a row pays the slope's field is read off the simulator (the
// field moved by slopeProbeNs). The chunk graphs all have
// the same nodes (64 kernels, 2 copies), so the per-node and
// per-copy-node fields cannot be told from the fixed part here, nor
// branches from joins: what slope to fit is the caller's model (joins
// keeps the per-branch cost that host API costs' graphs of independent
// kernels measure). The fit is checked by simulating the probe again with
// the fitted fields.
func (f *Fitted) fitGraphLaunch(rep *Report, slope string) error {
	h := &f.Config.Host
	var slopeField *float64
	var slopeName string
	switch slope {
	case "branches":
		slopeField, slopeName = &h.GraphLaunchBranchNs, "host.graph_launch_branch_ns"
	case "joins":
		slopeField, slopeName = &h.GraphLaunchJoinNs, "host.graph_launch_join_ns"
	default:
		return fmt.Errorf("unknown graph launch slope %q (one of %s)", slope, strings.Join(GraphLaunchSlopes, ", "))
	}
	rows := chunkLaunchRows(rep)
	widths := map[int]bool{}
	for _, r := range rows {
		widths[r.branches] = true
	}
	if len(widths) < 2 {
		return fmt.Errorf("the report has launch calls of %d chunk graph width(s), the fit needs two or more "+
			"(gpusched calibrate --only \"graph chunks over streams\", a binary that records \"..., issue\")", len(widths))
	}
	before, err := simulateChunkLaunches(f.Config)
	if err != nil {
		return err
	}
	*slopeField += slopeProbeNs
	moved, err := simulateChunkLaunches(f.Config)
	*slopeField -= slopeProbeNs
	if err != nil {
		return err
	}
	// Least squares of the residual r = da + ds x, x the times a launch
	// pays the slope's field.
	var n, sx, sr, sxx, sxr float64
	for _, r := range rows {
		x, res := (moved[r.name]-before[r.name])/slopeProbeNs, r.perLaunch-before[r.name]
		n, sx, sr, sxx, sxr = n+1, sx+x, sr+res, sxx+x*x, sxr+x*res
	}
	ds := (n*sxr - sx*sr) / (n*sxx - sx*sx)
	da := (sr - ds*sx) / n
	oldA, oldS := h.GraphLaunchNs, *slopeField
	h.GraphLaunchNs, *slopeField = math.Round(oldA+da), math.Round(oldS+ds)
	if h.GraphLaunchNs < 0 || *slopeField < 0 {
		return fmt.Errorf("the chunk graphs' launch calls fit a negative cost (fixed %.0f ns, per %s %.0f ns): not a launch-call model", h.GraphLaunchNs, map[string]string{"branches": "branch", "joins": "join"}[slope], *slopeField)
	}
	after, err := simulateChunkLaunches(f.Config)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("\"graph chunks over streams\": the launch calls of 16 warmed chunk graphs (1 MiB copies around 64 empty kernels as 16, 4 and 1 branches) "+
		"over 1-8 streams, gated and not, no host functions (%d measurements), per launch: %s; measured less simulated fitted by least squares to a line in the %s "+
		"(fixed %.0f -> %.0f ns, per %s %.0f -> %.0f ns; per-node and per-copy-node fields kept: every chunk has the same nodes); mean error %.1f%% -> %.1f%%",
		len(rows), chunkShapeSummary(rows, after), slope, oldA, h.GraphLaunchNs, map[string]string{"branches": "branch", "joins": "join"}[slope], oldS, *slopeField,
		100*chunkFitError(rows, before), 100*chunkFitError(rows, after))
	f.Comments["host.graph_launch_ns"] = "fitted with " + slopeName + ": " + what
	f.Comments[slopeName] = "fitted with host.graph_launch_ns: " + what
	f.Notes = append(f.Notes, slopeName)
	return nil
}

// chunkShapeSummary is, per width, the median measured launch call and the
// simulated one of the same rows.
func chunkShapeSummary(rows []chunkLaunchRow, sim map[string]float64) string {
	meas, got := map[int][]float64{}, map[int][]float64{}
	for _, r := range rows {
		meas[r.branches] = append(meas[r.branches], r.perLaunch)
		got[r.branches] = append(got[r.branches], sim[r.name])
	}
	var ws []int
	for w := range meas {
		ws = append(ws, w)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ws)))
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%d-branch %.0f ns (simulated %.0f)", w, stats.Median(meas[w]), stats.Median(got[w])))
	}
	return strings.Join(parts, ", ")
}

// FitGraphLaunch fits host.graph_launch_ns and, by slope ("branches" or
// "joins"), host.graph_launch_branch_ns or host.graph_launch_join_ns alone
// to a report's "graph chunks over streams" launch calls, simulated with
// cfg's every other field (the config the two fields go into); the
// result's Comments say where they come from and their error, its Notes
// name the slope's field.
func FitGraphLaunch(rep *Report, cfg *sim.Config, slope string) (*Fitted, error) {
	c := *cfg
	f := &Fitted{Config: &c, Comments: map[string]string{}}
	if err := f.fitGraphLaunch(rep, slope); err != nil {
		return nil, err
	}
	return f, nil
}
