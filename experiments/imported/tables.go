package imported

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// baseline is the schedule the targets and speedups compare with: one
// stream, launched as a CUDA graph, as PyTorch's graph replay is.
const baseline = "serial+graph"

// counter tallies a target over the models.
type counter struct{ met, n int }

func (c *counter) add(a, ref float64) string {
	c.n++
	if within10(a, ref) {
		c.met++
	}
	return verdict(a, ref)
}

func (c counter) String() string { return fmt.Sprintf("%d of %d", c.met, c.n) }

// writeTargets is the table: per model, PyTorch's times, the GPU
// replay under serial and serial+graph against PyTorch's graph replay, and
// the simulator's prediction of those rows against the GPU's.
func writeTargets(b *bytes.Buffer, c capture, d *data, h string) {
	b.WriteString(h + " Targets, per model\n\n")
	b.WriteString("Times in µs (medians). \"vs PyTorch graph\": the GPU replay against PyTorch's CUDA-graph replay; " +
		"\"vs GPU\": the simulator against the GPU replay's same row; each against the 10% target.\n\n")
	b.WriteString("| model | batch | kernels | PyTorch eager | PyTorch graph | GPU serial | vs PyTorch graph | GPU serial+graph | vs PyTorch graph | sim serial | vs GPU | sim serial+graph | vs GPU |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var cnt [4]counter
	for _, m := range c.Models {
		if m.Error != "" || m.Eager == nil || m.Graph == nil {
			fmt.Fprintf(b, "| %s | %d | capture failed: %s |\n", m.Model, m.Batch, m.Error)
			continue
		}
		w := m.Tag
		k, okK := d.kernels(w)
		cells := []string{m.Model, fmt.Sprint(m.Batch), cell(okK, func() string { return fmt.Sprint(k) }),
			us(m.Eager.Median, true), us(m.Graph.Median, true)}
		for i, s := range []string{"serial", baseline} {
			g, okG := d.gpu.median(w, s)
			cells = append(cells, us(g, okG), cell(okG, func() string { return cnt[i].add(g, m.Graph.Median) }))
		}
		for i, s := range []string{"serial", baseline} {
			g, okG := d.gpu.median(w, s)
			sm, okS := d.sim.median(w, s)
			cells = append(cells, us(sm, okS), cell(okG && okS, func() string { return cnt[2+i].add(sm, g) }))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	fmt.Fprintf(b, "\nTargets met: GPU serial within 10%% of PyTorch's graph replay %s; GPU serial+graph %s; "+
		"simulator within 10%% of the GPU, serial %s, serial+graph %s.\n\n", cnt[0], cnt[1], cnt[2], cnt[3])
}

// label names a model in a table: a chain of spin kernels by its tag,
// which says its kernels' cycles.
func (m model) label() string {
	if m.Model == "chain" {
		return m.Tag
	}
	return m.Model
}

func cell(ok bool, f func() string) string {
	if !ok {
		return "-"
	}
	return f()
}

// writeGraphTraces puts the replays of the traces recorded during
// PyTorch's graph replays (workloads "<tag>.graph", ordered by what ran
// after what, their durations the graph replay's own) beside PyTorch's
// graph replay, then splits the difference per kernel: what the device
// model adds to the recorded durations, the replay kernel's floor, and
// what the GPU's replay costs beyond the simulator's.
func writeGraphTraces(b *bytes.Buffer, c capture, d *data, h string) {
	var targets, split []string
	var cnt [2]counter
	chains := false
	for _, m := range append(append([]model(nil), c.Models...), c.Chains...) {
		w := m.Tag + ".graph"
		g, okG := d.gpu.median(w, baseline)
		sm, okS := d.sim.median(w, baseline)
		if m.Graph == nil || (!okG && !okS) {
			continue
		}
		pg := m.Graph.Median
		k, okK := d.kernels(w)
		chains = chains || m.Model == "chain"
		targets = append(targets, fmt.Sprintf("| %s | %d | %s | %.1f | %s | %s | %s | %s |", m.label(), m.Batch,
			cell(okK, func() string { return fmt.Sprint(k) }), pg,
			us(g, okG), cell(okG, func() string { return cnt[0].add(g, pg) }),
			us(sm, okS), cell(okS && okG, func() string { return cnt[1].add(sm, g) })))
		g0, okG0 := d.gpu0.median(w, baseline)
		s0, okS0 := d.sim0.median(w, baseline)
		per := func(a, ref float64, ok bool) string {
			if !ok || !okK || k == 0 {
				return "-"
			}
			return fmt.Sprintf("%+.2f", (a-ref)/float64(k))
		}
		split = append(split, fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s |", m.label(), m.Batch,
			per(s0, pg, okS0), per(sm, s0, okS && okS0), per(g, sm, okG && okS), per(g, pg, okG), per(g0, g, okG0 && okG)))
	}
	if len(targets) == 0 {
		return
	}
	b.WriteString(h + " Replays of the graph-replay traces\n\n")
	b.WriteString("The same models traced while PyTorch replayed its CUDA graph (the kernels of one graph launch, ordered by what ran " +
		"after what, their durations the graph replay's own), replayed under serial+graph.")
	if chains {
		b.WriteString(" The chains (scripts/gpu/imported-chain-probe.py, raw/imported-chain-capture.json) are a model whose kernels are known: " +
			"torch.cuda._sleep spin kernels of one thread, each after the one before, captured, traced and replayed the same way.")
	}
	b.WriteString("\n\n")
	b.WriteString("| model | batch | kernels | PyTorch graph | GPU serial+graph | vs PyTorch graph | sim serial+graph | vs GPU |\n|---|---|---|---|---|---|---|---|\n")
	b.WriteString(strings.Join(targets, "\n") + "\n\n")
	fmt.Fprintf(b, "Targets met: GPU serial+graph within 10%% of PyTorch's graph replay %s; simulator within 10%% of the GPU %s.\n\n", cnt[0], cnt[1])
	b.WriteString("Where the difference to PyTorch's graph replay goes, in µs per kernel (serial+graph): the simulator at overhead_ns 0 " +
		"(each block lasts its recorded share of the duration) against PyTorch's graph replay, which is what the recorded durations and the " +
		"calibrated device's launch and dependency costs add up to; the replay kernel's floor (the simulator at the measured overhead_ns and floor_ns against " +
		"at 0: blocks recorded shorter than the replay kernel's own cost last that long); the GPU's replay beyond the simulator's; " +
		"their sum, the GPU's replay against PyTorch's; and how the GPU's replay moved with none of the overhead taken off its blocks' spin.\n\n")
	b.WriteString("| model | batch | device model | replay floor | GPU beyond the simulator | GPU vs PyTorch graph | GPU at overhead_ns 0 vs measured |\n|---|---|---|---|---|---|---|\n")
	b.WriteString(strings.Join(split, "\n") + "\n\n")
}

// bestOf is the fastest schedule in t for w other than serial and the
// baseline: the multi-stream strategies.
func bestOf(t table, w string, schedulers []string) (string, float64, bool) {
	name, v := "", 0.0
	for _, s := range schedulers {
		if s == "serial" || s == baseline {
			continue
		}
		if m, ok := t.median(w, s); ok && (name == "" || m < v) {
			name, v = s, m
		}
	}
	return name, v, name != ""
}

// writeBest names, per model, the fastest multi-stream strategy on the GPU
// and on the simulator, and what it gains over the replay's serial+graph
// and over PyTorch's graph replay.
func writeBest(b *bytes.Buffer, c capture, d *data, h string) {
	b.WriteString(h + " Which strategy speeds each model up\n\n")
	b.WriteString("The fastest multi-stream strategy per model. \"over serial+graph\": its speedup over the replay's own serial+graph, " +
		"the median of the per-round ratios (the GPU's rows ran interleaved) with their sign-test bounds and confidence; " +
		"this is what the strategy's schedule gains over one stream of the same kernels in a graph, which is what PyTorch's graph replay is. " +
		"\"over PyTorch graph\": PyTorch's graph replay time over the strategy's GPU time, bounded by both medians' order-statistic " +
		"bounds (joint confidence). \"speeds it up\": the lower bound over serial+graph above 1. \"regret\": the simulator's pick on the GPU against the GPU's best.\n\n")
	b.WriteString("| model | batch | best on the GPU | GPU µs | over serial+graph | over PyTorch graph | speeds it up | simulator's pick | sim over its serial+graph | the pick on the GPU, over serial+graph | regret |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range c.Models {
		if m.Error != "" || m.Graph == nil {
			continue
		}
		cells := []string{m.Model, fmt.Sprint(m.Batch)}
		cells = append(cells, bestGPU(d, m)...)
		cells = append(cells, bestSim(d, m)...)
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
}

func bestGPU(d *data, m model) []string {
	name, v, ok := bestOf(d.gpu, m.Tag, d.schedulers)
	base, okB := d.gpu.row(m.Tag, baseline)
	if !ok || !okB {
		return []string{"-", "-", "-", "-", "-"}
	}
	r, _ := d.gpu.row(m.Tag, name)
	over, overPT, up := "-", "-", "-"
	if p, ok := paired(base, r); ok {
		over = fmt.Sprintf("%s (%.0f%%)", p, 100*p.conf)
		up = "no"
		if p.lo > 1 {
			up = fmt.Sprintf("yes, %.1f%%", 100*(p.med-1))
		}
	}
	if p, ok := overPyTorch(m.Graph, r); ok {
		overPT = fmt.Sprintf("%s (%.0f%%)", p, 100*p.conf)
	}
	return []string{name, us(v, true), over, overPT, up}
}

func bestSim(d *data, m model) []string {
	name, _, ok := bestOf(d.sim, m.Tag, d.schedulers)
	base, okB := d.sim.row(m.Tag, baseline)
	if !ok || !okB {
		return []string{"-", "-", "-", "-"}
	}
	r, _ := d.sim.row(m.Tag, name)
	pred, onGPU, regret := "-", "-", "-"
	if p, ok := paired(base, r); ok {
		pred = fmt.Sprintf("%.3fx", p.med)
	}
	gb, okGB := d.gpu.row(m.Tag, baseline)
	gr, okGR := d.gpu.row(m.Tag, name)
	if okGB && okGR {
		if p, ok := paired(gb, gr); ok {
			onGPU = p.String()
		}
		if _, best, ok := bestOf(d.gpu, m.Tag, d.schedulers); ok {
			regret = pct(gr.Makespan.Median, best)
		}
	}
	return []string{name, pred, onGPU, regret}
}

// writeModels is every schedule of every model on the GPU and the
// simulator, fastest on the GPU first.
func writeModels(b *bytes.Buffer, c capture, d *data) {
	b.WriteString("## Every schedule, per model\n\n")
	b.WriteString("GPU µs: median [min-max] over the interleaved rounds. Speedups over the replay's serial+graph (per-round ratios) " +
		"and over PyTorch's graph replay (median over median); \"sim vs GPU\": the simulator's error on the row against the 10% target.\n\n")
	for _, m := range c.Models {
		if m.Error != "" || m.Graph == nil {
			continue
		}
		fmt.Fprintf(b, "### %s, batch %d\n\n", m.Model, m.Batch)
		b.WriteString("| schedule | GPU µs | over serial+graph | over PyTorch graph | sim µs | sim over its serial+graph | sim vs GPU | notes |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
		rows := append([]string(nil), d.schedulers...)
		sort.SliceStable(rows, func(i, j int) bool {
			a, okA := d.gpu.median(m.Tag, rows[i])
			c, okC := d.gpu.median(m.Tag, rows[j])
			return okA && (!okC || a < c)
		})
		for _, s := range rows {
			if d.gpu[[2]string{m.Tag, s}] == nil && d.sim[[2]string{m.Tag, s}] == nil {
				continue
			}
			b.WriteString(scheduleRow(d, m, s))
		}
		b.WriteString("\n")
	}
}

func scheduleRow(d *data, m model, s string) string {
	g, okG := d.gpu.row(m.Tag, s)
	sm, okS := d.sim.row(m.Tag, s)
	gpuCell, over, overPT, simCell, simOver, err := "-", "-", "-", "-", "-", "-"
	if okG {
		gpuCell = fmt.Sprintf("%.1f [%.1f-%.1f]", g.Makespan.Median, g.Makespan.Min, g.Makespan.Max)
		overPT = fmt.Sprintf("%.3fx", m.Graph.Median/g.Makespan.Median)
		if base, ok := d.gpu.row(m.Tag, baseline); ok {
			if p, ok := paired(base, g); ok {
				over = p.String()
			}
		}
	}
	if okS {
		simCell = us(sm.Makespan.Median, true)
		if base, ok := d.sim.row(m.Tag, baseline); ok {
			simOver = fmt.Sprintf("%.3fx", base.Makespan.Median/sm.Makespan.Median)
		}
	}
	if okG && okS {
		err = verdict(sm.Makespan.Median, g.Makespan.Median)
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", s, gpuCell, over, overPT, simCell, simOver, err, notes(d, m.Tag, s))
}

// notes says what went wrong on a row, if anything.
func notes(d *data, w, s string) string {
	var out []string
	for _, t := range []struct {
		name string
		t    table
	}{{"GPU", d.gpu}, {"sim", d.sim}} {
		r := t.t[[2]string{w, s}]
		if r == nil {
			continue
		}
		if len(r.Errors) > 0 {
			out = append(out, t.name+": "+r.Errors[0])
		}
		if r.Races != nil && *r.Races > 0 {
			out = append(out, fmt.Sprintf("%s: %d races", t.name, *r.Races))
		}
	}
	return strings.Join(out, "; ")
}

// writePredicted sets the leading run's simulator serial+graph (its rows
// made before the GPU ran them: a prediction) beside the GPU's as measured
// and the GPU's of the run before it, each against PyTorch's graph replay,
// then the prediction against the measurement: the eager imports and the
// graph-replay traces, one table each, after intro (predictedIntro).
func writePredicted(b *bytes.Buffer, c capture, p, before *data, intro string) {
	b.WriteString(intro)
	for _, graph := range []bool{false, true} {
		what, suffix := "Eager imports", ""
		if graph {
			what, suffix = "Graph-replay traces", ".graph"
		}
		fmt.Fprintf(b, "%s, serial+graph, µs (medians):\n\n", what)
		b.WriteString("| model | batch | PyTorch graph | before | vs PyTorch graph | predicted | vs PyTorch graph | measured | vs PyTorch graph | predicted vs measured |")
		sep := "|---|---|---|---|---|---|---|---|---|---|"
		if p.measured {
			b.WriteString(" sim at measured | vs measured |")
			sep += "---|---|"
		}
		b.WriteString("\n" + sep + "\n")
		var cnt [5]counter
		for _, m := range c.Models {
			if m.Graph == nil {
				continue
			}
			w, pg := m.Tag+suffix, m.Graph.Median
			cells := []string{m.label(), fmt.Sprint(m.Batch), us(pg, true)}
			for i, t := range []table{before.gpu, p.pred, p.gpu} {
				v, ok := t.median(w, baseline)
				cells = append(cells, us(v, ok), cell(ok, func() string { return cnt[i].add(v, pg) }))
			}
			sm, okS := p.pred.median(w, baseline)
			g, okG := p.gpu.median(w, baseline)
			cells = append(cells, cell(okS && okG, func() string { return cnt[3].add(sm, g) }))
			if p.measured {
				sm, okS := p.sim.median(w, baseline)
				cells = append(cells, us(sm, okS), cell(okS && okG, func() string { return cnt[4].add(sm, g) }))
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		fmt.Fprintf(b, "\n%s within 10%% of PyTorch's graph replay: before %s, predicted %s, measured %s; prediction within 10%% of the measurement %s",
			what, cnt[0], cnt[1], cnt[2], cnt[3])
		if p.measured {
			fmt.Fprintf(b, "; the simulator at the measured values within 10%% of the measurement %s", cnt[4])
		}
		b.WriteString(".\n\n")
	}
}
