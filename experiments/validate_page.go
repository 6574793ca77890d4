package experiments

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/experiments/fidelity"
	"github.com/gpusched/gpusched/internal/stats"
)

// PageInput is what the fidelity page says beyond the validation itself.
type PageInput struct {
	Command string          // the command that wrote the page
	RowsCSV string          // where the per-row CSV was written
	Checks  []FidelityCheck // the regression test's checks
	Limits  string          // the file they come from
	// Before, if set, is the same GPU rows simulated on other configs
	// (the datasheet ones, before calibration), shown beside each
	// summary line; BeforeRowsCSV is where its rows were written.
	Before        *Validation
	BeforeRowsCSV string
}

// Targets are issue #18's: makespan MAPE, median speedup error, clearly
// separated pairs ordered right, the same best scheduler everywhere.
const (
	targetMAPE      = 10.0
	targetSpeedup   = 5.0
	targetPairsSame = 90.0
)

// paperOf is the paper (or campaign) an experiment belongs to: its name
// before "-gpu" (acs-gpu-confirm: acs).
func paperOf(experiment string) string {
	if i := strings.Index(experiment, "-gpu"); i > 0 {
		return experiment[:i]
	}
	return experiment
}

func isCampaign(experiment string) bool { return strings.HasPrefix(experiment, "fidelity-") }

// isHeldOut marks the campaign's random DAGs: shapes drawn from a seed
// fresh at the run, which no calibration or profile was fitted to.
func isHeldOut(experiment string) bool { return strings.HasPrefix(experiment, "fidelity-dags-random") }

// summarize is the summary of the included rows keep selects.
func (v *Validation) summarize(keep func(*ValidatedRow) bool) fidelity.Summary {
	return fidelity.Summarize(v.included(keep), v.Options)
}

// configsOf lists the distinct "GPU -> config" pairs of the rows keep
// selects.
func (v *Validation) configsOf(keep func(*ValidatedRow) bool) string {
	return strings.Join(v.distinctWhere(keep, func(r *ValidatedRow) string { return shortGPU(r.GPUDevice) + " → " + r.SimConfig }), ", ")
}

// shortGPU drops the vendor from a GPU's name.
func shortGPU(name string) string { return strings.TrimPrefix(name, "NVIDIA ") }

var pageHeader = []string{"rows", "makespan MAPE", "median err", "max err", "bias", "sim faster", "speedup err med", "max",
	"pairs >5%", "same", "tied", "reversed", "best agrees", "regret med", "max", "GPU spread med", "rerun MAPE", "targets met"}

// pageCells are a summary's cells under pageHeader.
func pageCells(s fidelity.Summary) []string {
	c := summaryCells(s)
	// summaryCells: rows, MAPE, med, max, bias, faster, sp med, sp max,
	// pairs, same, tied, rev, best, regret med, max, spread med, spread
	// max, rerun; the page leaves out the largest spread.
	return append(append(c[:16:16], c[17]), targetsMet(s))
}

// targetsMet counts the targets a summary meets.
func targetsMet(s fidelity.Summary) string {
	met := 0
	if s.MakespanMAPE.Valid() && float64(s.MakespanMAPE) <= targetMAPE {
		met++
	}
	if s.SpeedupMedianErr.Valid() && float64(s.SpeedupMedianErr) <= targetSpeedup {
		met++
	}
	if p := PairsSamePct(s); p.Valid() && float64(p) >= targetPairsSame {
		met++
	}
	if s.Groups > 0 && s.BestAgree == s.Groups {
		met++
	}
	return strconv.Itoa(met) + "/4"
}

// Page is docs/results/fidelity.md: the summary per paper and GPU (with
// in.Before beside it), the held-out DAGs apart, per DAG shape, per
// scheduler kind, the bimodal rows, where the simulator's picks cost
// most, the regression checks, per experiment and workload, and how it
// was made.
func (v *Validation) Page(in PageInput) []byte {
	var b strings.Builder
	b.WriteString("# Simulator fidelity: how well the simulator predicts the GPU\n\n")
	b.WriteString("Every committed GPU row below was simulated again, on the simulator config of its GPU, and joined with its GPU measurement " +
		"(same experiment, workload, scheduler and parameters; rows that are not the same are left out and listed). ")
	fmt.Fprintf(&b, "Errors are (simulated − GPU) / GPU, of the median makespan. Pairs: scheduler pairs of one workload more than %.0f%% apart on the GPU, "+
		"and whether the simulator orders them the same way, ties them (within %.0f%%) or reverses them. Best agrees: workloads where the GPU's fastest scheduler "+
		"is among the simulator's fastest (within the tie); regret: how much slower, on the GPU, the worst of the simulator's picks ran than the GPU's best. "+
		"GPU spread: the range of a row's repetitions over their median; rerun MAPE: the same rows (workload, scheduler and their parameters, GPU, seed, "+
		"and the gpusched commit where the files record one) measured in another results file, against this one (files converted from the earlier formats "+
		"record no commit, so their reruns may include code changes). "+
		"Errors below the GPU's spread mean nothing. GPU run timed: \"warm\" rows timed the run after an untimed one, as the simulator does; "+
		"\"first run\" rows (files converted from the earlier formats) timed the first run after Prepare, so their errors include first-launch costs "+
		"the simulator does not time.\n\n", v.Options.Separation*100, v.Options.Tie*100)
	fmt.Fprintf(&b, "Targets (issue #18), on every paper and DAG shape with the default configs: makespan MAPE at most %.0f%%, median speedup error at most %.0f%%, "+
		"at least %.0f%% of clearly separated pairs ordered right, the same best scheduler on every workload (\"targets met\" counts them).\n\n",
		targetMAPE, targetSpeedup, targetPairsSame)
	b.WriteString("## Workloads whose kernels were profiled\n\n")
	v.pageSummary(&b, in, func(r *ValidatedRow) bool { return !isHeldOut(r.Experiment) })
	b.WriteString(v.uncalibratedNote())
	b.WriteString("## Held-out random DAGs\n\n")
	b.WriteString("Random DAG shapes drawn at the run from a seed no calibration or profile had seen (their kernel, synthetic.synth_node, is profiled " +
		"at the grids of other draws): how the simulator does on DAGs nobody tuned it on.\n\n")
	v.pageSummary(&b, in, func(r *ValidatedRow) bool { return isHeldOut(r.Experiment) })
	v.pageShapes(&b)
	v.pageKinds(&b)
	v.pageModes(&b)
	v.pageWorst(&b, 15)
	if len(in.Checks) > 0 {
		v.pageChecks(&b, in)
	}
	b.WriteString("## Per experiment and workload\n\n")
	writeMarkdownTable(&b, v.summaryTable())
	v.pageSources(&b, in)
	return []byte(b.String())
}

// pageSummary is a table per paper (the campaign's experiments under
// their own names) and GPU of the rows keep selects: a line on the
// configs v simulated, and one on in.Before's.
func (v *Validation) pageSummary(b *strings.Builder, in PageInput, keep func(*ValidatedRow) bool) {
	key := func(r *ValidatedRow) string {
		return paperOf(r.Experiment) + "\x00" + r.GPUDevice + "\x00" + v.timedRun(r)
	}
	groups := v.distinctWhere(keep, key)
	if len(groups) == 0 {
		b.WriteString("No GPU results of this kind were given.\n\n")
		return
	}
	rows := [][]string{append([]string{"paper", "GPU", "GPU run timed", "simulator", "kernel profile"}, pageHeader...)}
	vs := []*Validation{v}
	if in.Before != nil {
		vs = append(vs, in.Before)
	}
	for _, g := range groups {
		f := strings.Split(g, "\x00")
		paper, gpu, timed := f[0], f[1], f[2]
		for _, x := range vs {
			sel := func(r *ValidatedRow) bool { return keep(r) && key(r) == g }
			cfgs := x.distinctWhere(sel, func(r *ValidatedRow) string { return r.SimConfig })
			rows = append(rows, append([]string{paper, shortGPU(gpu), timed, strings.Join(cfgs, ", "), profilesOf(cfgs)}, pageCells(x.summarize(sel))...))
		}
	}
	writeMarkdownTable(b, rows)
	b.WriteString("\n")
}

// timedRun says which run of a row its GPU repetitions timed: "warm" (the
// run after an untimed one, as the simulator times it) or "first run" (the
// first after Prepare, in files converted from an earlier format).
func (v *Validation) timedRun(r *ValidatedRow) string {
	if r.source >= 0 && r.source < len(v.Sources) && v.Sources[r.source].FirstRun {
		return "first run"
	}
	return "warm"
}

// uncalibratedNote says, for each default config the rows were simulated
// on that has no kernel profile while a datasheet variant of it exists, that
// it is still its GPU's datasheet config, not calibrated on that GPU.
func (v *Validation) uncalibratedNote() string {
	var b strings.Builder
	for _, c := range v.distinct(func(r *ValidatedRow) string { return r.SimConfig }) {
		cfg, err := loadSimConfig(c)
		if err != nil || cfg.Profile != nil || strings.HasSuffix(c, "-datasheet") {
			continue
		}
		if _, err := loadSimConfig(c + "-datasheet"); err != nil {
			continue
		}
		fmt.Fprintf(&b, "`%s` is the datasheet config (the figures of `%s-datasheet`): it is not calibrated on an %s, "+
			"so its rows show the uncalibrated simulator.\n\n", c, c, strings.ToUpper(c))
	}
	return b.String()
}

// profilesOf names the kernel profiles of simulator configs ("none": each
// kernel timed from its Work estimate at peak rates).
func profilesOf(configs []string) string {
	var out []string
	for _, c := range configs {
		p := "?"
		if cfg, err := loadSimConfig(c); err == nil {
			p = "none"
			if cfg.Profile != nil {
				p = fmt.Sprintf("%s (%d kernels)", cfg.ProfileName, len(cfg.Profile.Kernels))
			}
		}
		out = append(out, p)
	}
	return strings.Join(out, ", ")
}

// pageShapes is the table per DAG shape of the fidelity campaign.
func (v *Validation) pageShapes(b *strings.Builder) {
	b.WriteString("## Per DAG shape (the fidelity campaign)\n\n")
	inCampaign := func(r *ValidatedRow) bool { return isCampaign(r.Experiment) }
	shapes := v.distinctWhere(inCampaign, func(r *ValidatedRow) string { return r.Experiment + "\x00" + r.Workload + "\x00" + r.Point })
	if len(shapes) == 0 {
		b.WriteString("No campaign results yet: `scripts/gpu/fidelity-campaign.sh` runs configs/experiments/fidelity-dags-gpu.yaml " +
			"(seven shapes) and fidelity-dags-random-gpu.yaml (held-out random shapes) on a GPU.\n\n")
		return
	}
	rows := [][]string{append([]string{"experiment", "shape", "GPU → simulator"}, pageHeader...)}
	for _, sh := range shapes {
		parts := strings.SplitN(sh, "\x00", 3)
		keep := func(r *ValidatedRow) bool {
			return r.Experiment == parts[0] && r.Workload == parts[1] && r.Point == parts[2]
		}
		name := parts[1]
		if parts[2] != "" {
			name += " (" + parts[2] + ")"
		}
		rows = append(rows, append([]string{parts[0], name, v.configsOf(keep)}, pageCells(v.summarize(keep))...))
	}
	rows = append(rows, append([]string{"all shapes", "", v.configsOf(inCampaign)}, pageCells(v.summarize(inCampaign))...))
	writeMarkdownTable(b, rows)
	b.WriteString("\n")
}

// schedulerKind is the scheduler a row ran, without its parameters: its
// description up to the first parenthesis (set(b=4,warm): set).
func schedulerKind(r *ValidatedRow) string {
	d := r.SchedulerDesc
	if d == "" {
		d = r.Scheduler
	}
	if i := strings.IndexByte(d, '('); i > 0 {
		d = d[:i]
	}
	return d
}

// pageKinds is the error per scheduler kind and GPU over every paper's warm
// rows and the random DAGs: a bias that follows a scheduler across
// workloads and papers points at a cost of its own runtime (its calls,
// threads, streams) that the simulator lacks, where one that follows a
// workload points at its kernels.
func (v *Validation) pageKinds(b *strings.Builder) {
	b.WriteString("## Per scheduler kind\n\n")
	b.WriteString("Every warm row of every paper and the random DAGs, by the scheduler that ran it (its kind, without its parameters) " +
		"and GPU. Bias is the median signed error: negative where the simulator runs that scheduler faster than the GPU.\n\n")
	warm := func(r *ValidatedRow) bool { return v.timedRun(r) == "warm" }
	key := func(r *ValidatedRow) string { return schedulerKind(r) + "\x00" + r.GPUDevice }
	groups := v.distinctWhere(warm, key)
	sort.Strings(groups)
	rows := [][]string{{"scheduler kind", "GPU", "experiments", "rows", "makespan MAPE", "median err", "max err", "bias", "sim faster",
		"speedup err med", "max", "GPU spread med"}}
	for _, g := range groups {
		sel := func(r *ValidatedRow) bool { return warm(r) && key(r) == g }
		s := v.summarize(sel)
		if s.Rows == 0 {
			continue
		}
		c := summaryCells(s)
		kind, gpu, _ := strings.Cut(g, "\x00")
		exps := len(v.distinctWhere(sel, func(r *ValidatedRow) string { return r.Experiment }))
		// Speedups are over each workload's baseline, which is of
		// another kind: the rows' own errors, not the selection's.
		var sp []float64
		for i := range v.Rows {
			if r := &v.Rows[i]; !r.Excluded && sel(r) && r.SpeedupErr != nil {
				sp = append(sp, math.Abs(*r.SpeedupErr))
			}
		}
		spMed, spMax := "-", "-"
		if len(sp) > 0 {
			spMed, spMax = fidelity.Pct(stats.Median(sp)).String(), fidelity.Pct(slices.Max(sp)).String()
		}
		rows = append(rows, append([]string{kind, shortGPU(gpu), strconv.Itoa(exps)}, append(c[:6:6], spMed, spMax, c[15])...))
	}
	writeMarkdownTable(b, rows)
	b.WriteString("\n")
}

// pageWorst lists the n workloads (of one results file, point and GPU)
// where running the simulator's pick costs most on the GPU, then those
// with the most clearly separated pairs reversed.
func (v *Validation) pageWorst(b *strings.Builder, n int) {
	type group struct {
		label    []string
		s        fidelity.Summary
		gpu, sim string
	}
	var gs []group
	for _, g := range v.distinctWhere(func(r *ValidatedRow) bool { return !r.Excluded }, func(r *ValidatedRow) string { return r.fid.Group }) {
		sel := func(r *ValidatedRow) bool { return r.fid.Group == g }
		s := v.summarize(sel)
		if s.Groups == 0 {
			continue
		}
		r := v.firstWhere(sel)
		name := r.Workload
		if r.Point != "" {
			name += " (" + r.Point + ")"
		}
		gpu, sim := v.fastest(sel)
		gs = append(gs, group{[]string{filepath.Base(v.Sources[r.source].GPU), name, shortGPU(r.GPUDevice), r.SimConfig}, s, gpu, sim})
	}
	head := []string{"GPU results", "workload", "GPU", "simulator", "rows", "makespan MAPE", "GPU's fastest", "simulator's fastest", "regret", "pairs >5%", "reversed"}
	table := func(less func(a, b *group) bool) {
		sort.SliceStable(gs, func(i, j int) bool { return less(&gs[i], &gs[j]) })
		rows := [][]string{head}
		for i := 0; i < len(gs) && i < n; i++ {
			g := &gs[i]
			rows = append(rows, append(append([]string(nil), g.label...), strconv.Itoa(g.s.Rows), g.s.MakespanMAPE.String(), g.gpu, g.sim,
				g.s.RegretMax.String(), strconv.Itoa(g.s.Pairs), share(g.s.Reversed, g.s.Pairs)))
		}
		writeMarkdownTable(b, rows)
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "## Where the simulator's choice costs most on the GPU\n\nThe %d workloads with the largest regret (the GPU makespan of the "+
		"simulator's slowest tied pick over the GPU's best):\n\n", n)
	table(func(a, b *group) bool { return pctMore(a.s.RegretMax, b.s.RegretMax) })
	fmt.Fprintf(b, "The %d workloads with the most clearly separated pairs in reverse order:\n\n", n)
	table(func(a, b *group) bool { return a.s.Reversed > b.s.Reversed })
}

// pctMore orders percentages largest first, missing ones last.
func pctMore(a, b fidelity.Pct) bool {
	if !b.Valid() {
		return a.Valid()
	}
	return a.Valid() && float64(a) > float64(b)
}

// firstWhere is the first row keep selects.
func (v *Validation) firstWhere(keep func(*ValidatedRow) bool) *ValidatedRow {
	for i := range v.Rows {
		if keep(&v.Rows[i]) {
			return &v.Rows[i]
		}
	}
	return nil
}

// fastest names the schedulers with the smallest GPU and simulated
// makespans among the included rows keep selects.
func (v *Validation) fastest(keep func(*ValidatedRow) bool) (gpu, sim string) {
	var bestGPU, bestSim float64
	for i := range v.Rows {
		r := &v.Rows[i]
		if r.Excluded || !keep(r) || r.GPUMakespan <= 0 || r.SimMakespan <= 0 {
			continue
		}
		if gpu == "" || r.GPUMakespan < bestGPU {
			gpu, bestGPU = r.Scheduler, r.GPUMakespan
		}
		if sim == "" || r.SimMakespan < bestSim {
			sim, bestSim = r.Scheduler, r.SimMakespan
		}
	}
	return gpu, sim
}

// pageChecks lists the regression checks with their limits and what the
// simulator achieves now.
func (v *Validation) pageChecks(b *strings.Builder, in PageInput) {
	b.WriteString("## The regression test\n\n")
	fmt.Fprintf(b, "`make test` runs TestFidelityRegression (experiments/validate_regression_test.go): it simulates these rows of committed GPU results "+
		"and fails when an error grows past its limit, set in %s from what the simulator achieves (tighten them when it improves).\n\n", in.Limits)
	rows := [][]string{{"check", "results", "rows", "makespan MAPE", "limit", "max err", "limit", "speedup err med", "limit", "pairs same", "limit", "best agrees", "limit", "regret max", "limit"}}
	lim := func(x *float64) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", *x)
	}
	for i := range in.Checks {
		c := &in.Checks[i]
		exp := strings.TrimSuffix(filepath.Base(c.Results), ".json")
		s := v.summarize(func(r *ValidatedRow) bool {
			return r.source >= 0 && filepath.Base(v.Sources[r.source].GPU) == filepath.Base(c.Results) && c.Keep(&Row{Workload: r.Workload, Scheduler: r.Scheduler})
		})
		best := "-"
		if c.Limits.BestAgree != nil {
			best = strconv.Itoa(*c.Limits.BestAgree)
		}
		rows = append(rows, []string{c.Name, exp, strconv.Itoa(s.Rows), s.MakespanMAPE.String(), lim(c.Limits.MakespanMAPE), s.MaxErr.String(), lim(c.Limits.MaxErr),
			s.SpeedupMedianErr.String(), lim(c.Limits.SpeedupMedian), PairsSamePct(s).String(), lim(c.Limits.PairsSame),
			fmt.Sprintf("%d/%d", s.BestAgree, s.Groups), best, s.RegretMax.String(), lim(c.Limits.RegretMax)})
	}
	writeMarkdownTable(b, rows)
	b.WriteString("\n")
}

// pageSources says how the page was made and where the raw data is.
func (v *Validation) pageSources(b *strings.Builder, in PageInput) {
	b.WriteString("\n## How this page is made\n\n")
	fmt.Fprintf(b, "    %s\n\n", in.Command)
	b.WriteString("No GPU is needed: the experiment each results file records (its resolved experiment) runs again on the simulator, restricted to the file's rows, " +
		"at the file's seed and sweep, one repetition (the simulator is deterministic). ")
	if in.RowsCSV != "" {
		fmt.Fprintf(b, "Every joined row, with its errors and problems: %s", in.RowsCSV)
		if in.BeforeRowsCSV != "" {
			fmt.Fprintf(b, " (on the configs before calibration: %s)", in.BeforeRowsCSV)
		}
		b.WriteString(". ")
	}
	b.WriteString("How each GPU file was measured (device, driver, date, command, raw output): docs/results/gpu-runs.md and each paper's page.\n\n")
	b.WriteString("Launches timed from: the simulated kernel launches of each file's rows, by what timed them " +
		"(a kernel profile's measured point, its fitted model, the Work estimate; docs/SIMULATOR.md).\n\n")
	b.WriteString("| GPU results | experiment | rows | left out | simulated on | launches timed from (point / model / estimate) | notes |\n" +
		"|---|---|--:|--:|---|---|---|\n")
	for _, s := range v.Sources {
		timing := "-"
		if t := s.KernelTiming; t != nil {
			timing = fmt.Sprintf("%d / %d / %d", t.Measured, t.Profiled, t.Estimated)
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s | %s |\n", mdEscape(s.GPU), mdEscape(s.ExperimentFile), s.Rows, s.Excluded,
			mdEscape(strings.Join(s.Sim, ", ")), timing, mdEscape(strings.Join(s.Notes, "; ")))
	}
	var left []string
	for i := range v.Rows {
		if r := &v.Rows[i]; r.Excluded {
			left = append(left, fmt.Sprintf("- %s / %s: %s", r.Experiment, r.Label(), strings.Join(r.Problems, "; ")))
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(b, "\nRows left out (%d):\n\n%s\n", len(left), strings.Join(left, "\n"))
	}
}
