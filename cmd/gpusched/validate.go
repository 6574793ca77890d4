package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/experiments/fidelity"
)

// validateFlags are validate's options.
type validateFlags struct {
	sim, gpu, experiment, out string
	workloads, schedulers     string
	page, limits, variant     string
	cpuProfile, cache         string
	args                      []string
	defaults                  experiments.SchedulerDefaults
	jobs                      int
	rows                      bool
	hostSpeed                 onOff
	opt                       fidelity.Options
}

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", stderr)
	var f validateFlags
	fs.StringVar(&f.sim, "sim", "", "simulator config (name or path; default: for results files, the built-in config of each row's GPU model; "+
		"for an experiment file, a measured config of the GPU where one exists)")
	fs.StringVar(&f.gpu, "gpu", experiments.CUDADevice, "experiment file only: the device to validate against (cuda; a simulator config compares two configs)")
	fs.StringVar(&f.experiment, "experiment", "", "results files only: the experiment file that wrote them (default: the file they name)")
	fs.StringVar(&f.out, "o", "", "also write validation.json, validation.csv (summaries), validation-rows.csv, validation.md and the result sets here")
	fs.StringVar(&f.workloads, "workloads", "", "results files only: validate only these workloads (comma-separated names)")
	fs.StringVar(&f.schedulers, "schedulers", "", "results files only: validate only these schedulers (comma-separated names)")
	fs.StringVar(&f.page, "page", "", "results files only: write the fidelity page (Markdown) here, and its rows beside it as NAME-rows.csv")
	fs.StringVar(&f.limits, "limits", "", "with --page: the regression checks to report (docs/results/fidelity-regression.yaml)")
	fs.StringVar(&f.variant, "compare-variant", "", "results files only: also simulate every row on its GPU's default config's variant NAME "+
		"(datasheet: h100-datasheet for H100 rows, the config before calibration) and print it, and put it beside each summary line of the page")
	f.defaults = experiments.SchedulerDefaults{}
	fs.Var(f.defaults, "scheduler-default", "results files only: [FILEGLOB:]KIND.PARAM=VALUE simulates every KIND entry that leaves PARAM out with VALUE (with FILEGLOB, in the results files whose base name matches it), "+
		"as an older GPU run ran it (set.warm=false for SET rows measured before SET warmed its execs; repeatable)")
	fs.IntVar(&f.jobs, "j", 0, "simulator rows to run at once (default: one per CPU; results files are simulated that many at a time)")
	fs.BoolVar(&f.rows, "rows", false, "also print the per-row table")
	fs.StringVar(&f.cache, "cache", "", "results files only: keep each file's simulated rows in this directory and reuse them while the file, "+
		"the configs and profiles, the options and the gpusched executable are unchanged (make fidelity-page: .cache/validate; default: none)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the command here (go tool pprof)")
	fs.Var(&f.hostSpeed, "host-speed", "results files only: on: simulate the rows of a file whose provenance has a host probe (gpusched run times the "+
		"launch cost before and after GPU rows) with the config's host costs scaled by the probe over the config's host.launch_ns; "+
		"off (default: on the first probed file it made ACS's rows worse, docs/results/calibration-h100.md): as the config says, noting the probe")
	f.opt = fidelity.DefaultOptions()
	fs.Float64Var(&f.opt.Separation, "separation", f.opt.Separation, "GPU makespans further apart than this fraction make a clearly separated pair")
	fs.Float64Var(&f.opt.Tie, "tie", f.opt.Tie, "simulated makespans within this fraction are a tie")
	fs.Float64Var(&f.opt.ModeGap, "mode-gap", f.opt.ModeGap, "a row whose sorted GPU repetitions jump by at least this ratio between neighbours, "+
		"with two or more on each side, is bimodal (plain SET's often are, issue #18): -rows shows its modes, the summary counts such rows "+
		"and their error against the nearer mode")
	pos, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if f.opt.Separation < 0 || f.opt.Tie < 0 || f.opt.Separation != f.opt.Separation || f.opt.Tie != f.opt.Tie {
		return usagef("--separation and --tie must be fractions >= 0")
	}
	if !(f.opt.ModeGap > 1) {
		return usagef("--mode-gap must be a ratio above 1 (got %g)", f.opt.ModeGap)
	}
	f.args = args
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	results := strings.HasSuffix(pos[0], ".json")
	for _, p := range pos {
		if strings.HasSuffix(p, ".json") != results {
			return usagef("give either one experiment file (runs it on the GPU and the simulator) or GPU results files (.json), not both")
		}
	}
	if results {
		return validateResults(pos, &f, stdout, stderr)
	}
	if len(pos) > 1 {
		return usagef("one experiment file at a time (got %d)", len(pos))
	}
	return validateOnline(pos[0], &f, stdout, stderr)
}

// validateResults simulates committed GPU results: no GPU needed.
func validateResults(paths []string, f *validateFlags, stdout, stderr io.Writer) error {
	opt := experiments.ValidateOptions{Run: experiments.RunOptions{Workers: f.jobs, Progress: progressTo(stderr)},
		Sim: f.sim, Experiment: f.experiment, Fidelity: f.opt, Keep: keepNamed(f.workloads, f.schedulers), SchedulerDefaults: f.defaults,
		HostSpeed: bool(f.hostSpeed), Cache: f.cache}
	v, sims, err := experiments.ValidateFiles(paths, opt)
	if err != nil {
		return err
	}
	if err := printValidation(v, f.rows, stdout); err != nil {
		return err
	}
	var before *experiments.Validation
	if f.variant != "" {
		if f.sim != "" {
			return usagef("--compare-variant compares each GPU's default config with its variant: leave --sim out")
		}
		opt.SimVariant = f.variant
		if before, _, err = experiments.ValidateFiles(paths, opt); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nthe same rows on the %s variants of the configs:\n", f.variant)
		if err := printValidation(before, f.rows, stdout); err != nil {
			return err
		}
	}
	if f.page != "" {
		if err := writePage(v, before, f, stdout); err != nil {
			return err
		}
	}
	if f.out == "" {
		return nil
	}
	for i, s := range sims {
		name := strings.TrimSuffix(filepath.Base(paths[i]), ".json")
		if _, err := experiments.Write(filepath.Join(f.out, "sim", name), s, []string{"json", "csv"}); err != nil {
			return err
		}
	}
	return writeValidation(v, f.out, stdout)
}

// startCPUProfile profiles the process's CPU into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close() //nolint:errcheck // the start's error is the one to report
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close() //nolint:errcheck // best effort: a diagnostic file
	}, nil
}

// writePage writes the fidelity page and its rows.
func writePage(v, before *experiments.Validation, f *validateFlags, stdout io.Writer) error {
	base := strings.TrimSuffix(f.page, ".md")
	in := experiments.PageInput{Command: "gpusched validate " + strings.Join(pageArgs(f.args), " "),
		RowsCSV: base + "-rows.csv", Limits: f.limits, Before: before}
	if before != nil {
		in.BeforeRowsCSV = base + "-" + f.variant + "-rows.csv"
		rows, err := before.RowsCSV()
		if err != nil {
			return err
		}
		if err := os.WriteFile(in.BeforeRowsCSV, rows, 0o644); err != nil {
			return err
		}
	}
	if f.limits != "" {
		checks, err := experiments.LoadFidelityChecks(f.limits)
		if err != nil {
			return err
		}
		in.Checks = checks
	}
	rows, err := v.RowsCSV()
	if err != nil {
		return err
	}
	if err := os.WriteFile(in.RowsCSV, rows, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(f.page, v.Page(in), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s, %s\n", f.page, in.RowsCSV)
	return nil
}

// pageArgs are validate's arguments as the page shows them: without the
// flags that change how, not what, it computes (--cache, --cpuprofile,
// -j), so a page is the same with them or not.
func pageArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || (name != "cache" && name != "cpuprofile" && name != "j") {
			out = append(out, args[i])
			continue
		}
		if !hasValue {
			i++ // its value
		}
	}
	return out
}

// keepNamed selects rows by workload and scheduler names (empty lists
// select all); nil when both are empty.
func keepNamed(workloads, schedulers string) func(*experiments.Row) bool {
	if workloads == "" && schedulers == "" {
		return nil
	}
	set := func(list string) map[string]bool {
		m := map[string]bool{}
		for _, x := range strings.Split(list, ",") {
			if x = strings.TrimSpace(x); x != "" {
				m[x] = true
			}
		}
		return m
	}
	ws, ss := set(workloads), set(schedulers)
	return func(r *experiments.Row) bool {
		return (len(ws) == 0 || ws[r.Workload]) && (len(ss) == 0 || ss[r.Scheduler])
	}
}

// validateOnline runs an experiment on the GPU and on the simulator.
func validateOnline(path string, f *validateFlags, stdout, stderr io.Writer) error {
	e, err := experiments.LoadExperiment(path)
	if err != nil {
		return err
	}
	simSpec := f.sim
	if simSpec == "" {
		dev, err := experiments.OpenDevice(f.gpu)
		if err != nil {
			return fmt.Errorf("open %s: %w", f.gpu, err)
		}
		info := dev.Info()
		if err := dev.Close(); err != nil {
			return fmt.Errorf("close %s: %w", f.gpu, err)
		}
		name, why, err := experiments.PickSimConfig(info)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "validate: simulating %s with config %s (%s)\n", info.Name, name, why)
		simSpec = name
	}
	v, simRes, gpuRes, err := experiments.Validate(e, simSpec, f.gpu, experiments.RunOptions{Workers: f.jobs, Progress: progressTo(stderr)})
	if err != nil {
		return err
	}
	if err := printValidation(v, f.rows, stdout); err != nil {
		return err
	}
	if f.out != "" {
		if _, err := experiments.Write(filepath.Join(f.out, "gpu"), gpuRes, e.Formats()); err != nil {
			return err
		}
		if _, err := experiments.Write(filepath.Join(f.out, "sim"), simRes, e.Formats()); err != nil {
			return err
		}
		if err := writeValidation(v, f.out, stdout); err != nil {
			return err
		}
	}
	failed := len(gpuRes.Failed()) + len(simRes.Failed())
	if failed > 0 {
		return fmt.Errorf("%d rows failed (see the table)", failed)
	}
	return nil
}

func printValidation(v *experiments.Validation, rows bool, stdout io.Writer) error {
	if rows {
		if err := v.PrintRows(stdout); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	return v.Print(stdout)
}

// writeValidation writes the validation's files into dir.
func writeValidation(v *experiments.Validation, dir string, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := v.JSON()
	if err != nil {
		return err
	}
	sum, err := v.SummaryCSV()
	if err != nil {
		return err
	}
	rows, err := v.RowsCSV()
	if err != nil {
		return err
	}
	files := map[string][]byte{"validation.json": js, "validation.csv": sum, "validation-rows.csv": rows, "validation.md": v.Markdown()}
	for _, name := range []string{"validation.json", "validation.csv", "validation-rows.csv", "validation.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "wrote %s\n", dir)
	return nil
}

// onOff is a flag of "on" or "off".
type onOff bool

func (o *onOff) String() string {
	if o != nil && bool(*o) {
		return "on"
	}
	return "off"
}

func (o *onOff) Set(s string) error {
	switch s {
	case "on":
		*o = true
	case "off":
		*o = false
	default:
		return fmt.Errorf("want on or off, got %q", s)
	}
	return nil
}
