package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/calibrate"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
)

// calibrateSubcommand is one of calibrate's sub-commands and its arguments.
type calibrateSubcommand struct {
	name, args string
	run        func(args []string, stdout, stderr io.Writer) error
}

// calibrateSubcommands is what cmdCalibrate dispatches on, and
// calibrateUsage lists it: a new sub-command is in the usage line by being
// here.
func calibrateSubcommands() []calibrateSubcommand {
	return []calibrateSubcommand{
		{"fit", "RAW.json... [--profile P.yaml] -o CONFIG.yaml", cmdCalibrateFit},
		{"check", "RAW.json... --sim CONFIG", cmdCalibrateCheck},
		{"fit-graph-lock", "RAW.json... --sim CONFIG", cmdCalibrateFitGraphLock},
		{"fit-graph-launch", "RAW.json... --sim CONFIG [--slope branches|joins]", cmdCalibrateFitGraphLaunch},
		{"fit-queue-lock", "RAW.json... --sim CONFIG", cmdCalibrateFitQueueLock},
		{"fit-thread-calls", "RAW.json... --sim CONFIG", cmdCalibrateFitThreadCalls},
		{"fit-run-syncs", "RAW.json... --sim CONFIG", cmdCalibrateFitRunSyncs},
		{"tile-sync", "RESULTS.json [--raw RAW.json]", cmdCalibrateTileSync},
	}
}

// calibrateUsage is calibrate's usage line after "gpusched calibrate": the
// measurement itself, then every sub-command.
func calibrateUsage() string {
	forms := []string{"--device cuda -o FILE [--raw RAW.json]"}
	for _, c := range calibrateSubcommands() {
		forms = append(forms, c.name+" "+c.args)
	}
	return strings.Join(forms, " | ")
}

func cmdCalibrate(args []string, stdout, stderr io.Writer) (err error) {
	if len(args) > 0 {
		for _, c := range calibrateSubcommands() {
			if args[0] == c.name {
				return c.run(args[1:], stdout, stderr)
			}
		}
	}
	fs := newFlags("calibrate", stderr)
	dev := fs.String("device", experiments.CUDADevice, "the device to measure: cuda, or a simulator config (which must give back that config: a self-check)")
	base := fs.String("base", "", "config whose unmeasured parts (SM model, dependency queue) are kept (default: the simulator config that models the device)")
	out := fs.String("o", "", "device config to write (required), e.g. configs/devices/measured-h100.yaml; its name is the file's")
	report := fs.String("report", "", "write the measurements as Markdown to this file instead of stdout")
	raw := fs.String("raw", "", "also write every measurement with its rounds as JSON (what `calibrate fit` reads)")
	var only multiFlag
	fs.Var(&only, "only", "run only this measurement (repeatable; `gpusched calibrate --only list` lists them) and write its report "+
		"(--raw, --report), no config: `calibrate fit FULL.json PART.json` adds it to a full report")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if len(only) > 0 {
		return calibrateOnly(*dev, only, *out, *raw, *report, stdout, stderr)
	}
	if *out == "" {
		return usagef("-o FILE is required")
	}
	if ext := filepath.Ext(*out); ext != ".yaml" && ext != ".yml" {
		return usagef("-o %s: a device config file ends in .yaml", *out)
	}
	d, err := experiments.OpenDevice(*dev)
	if err != nil {
		return fmt.Errorf("open %s: %w", *dev, err)
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	info := d.Info()
	baseName := *base
	if baseName == "" {
		name, why, err := experiments.PickSimConfig(info)
		if err != nil {
			return fmt.Errorf("%w; or pass --base", err)
		}
		fmt.Fprintf(stderr, "calibrate: fields not measured come from config %s (%s)\n", name, why)
		baseName = name
	}
	baseCfg, err := sim.LoadConfig(baseName)
	if err != nil {
		return err
	}
	cfg, rep, err := calibrate.Run(d, baseCfg, stderr)
	if err != nil {
		return err
	}
	cfg.Name = strings.TrimSuffix(filepath.Base(*out), filepath.Ext(*out))
	body, err := cfg.Marshal()
	if err != nil {
		return err
	}
	var file bytes.Buffer
	fmt.Fprintf(&file, "# %s, measured by `gpusched calibrate --device %s` through the Device\n", info.Name, *dev)
	fmt.Fprintf(&file, "# interface; the SM model and the dependency queue are kept from config %s\n", baseName)
	fmt.Fprintf(&file, "# (not measurable this way). The measurements and their methods are in the\n# calibration report.\n")
	file.Write(body)
	if err := os.WriteFile(*out, file.Bytes(), 0o644); err != nil {
		return err
	}
	// What was written must load as the simulator will load it.
	if _, err := sim.LoadConfig(*out); err != nil {
		return fmt.Errorf("the written config does not load: %w", err)
	}
	if err := writeReports(rep, *raw, *report, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "calibrate: wrote %s\n", *out)
	return nil
}

// calibrateOnly runs the measurements named by --only on dev and writes
// their report.
func calibrateOnly(dev string, only []string, out, raw, report string, stdout, stderr io.Writer) (err error) {
	if len(only) == 1 && only[0] == "list" {
		for _, n := range calibrate.MeasurementNames() {
			fmt.Fprintln(stdout, n)
		}
		return nil
	}
	if out != "" {
		return usagef("--only writes no config: leave -o out (its report goes to --raw and --report)")
	}
	if raw == "" {
		return usagef("--only needs --raw FILE (the measurements `calibrate fit` adds to a full report)")
	}
	d, err := experiments.OpenDevice(dev)
	if err != nil {
		return fmt.Errorf("open %s: %w", dev, err)
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	rep, err := calibrate.Measure(d, only, stderr)
	if err != nil {
		return err
	}
	return writeReports(rep, raw, report, stdout)
}

// writeReports writes the calibration report as JSON to raw (if set) and
// as Markdown to report, or stdout.
func writeReports(rep *calibrate.Report, raw, report string, stdout io.Writer) error {
	if raw != "" {
		var js bytes.Buffer
		if err := rep.WriteJSON(&js); err != nil {
			return err
		}
		if err := os.WriteFile(raw, js.Bytes(), 0o644); err != nil {
			return err
		}
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		return err
	}
	if report != "" {
		return os.WriteFile(report, md.Bytes(), 0o644)
	}
	_, err := stdout.Write(md.Bytes())
	return err
}

// cmdCalibrateFit turns raw measurements (calibrate --raw, and a profile)
// into a device config, every fitted field with its source and error as a
// comment.
func cmdCalibrateFit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate fit", stderr)
	base := fs.String("base", "", "config whose unmeasured parts are kept (default: the datasheet config of the measured GPU's model)")
	profile := fs.String("profile", "", "kernel profile (gpusched profile) the config names and the achieved fractions are fitted to")
	out := fs.String("o", "", "device config to write (required), e.g. configs/devices/h100.yaml; its name is the file's")
	var leave multiFlag
	fs.Var(&leave, "leave", "keep this optional field (e.g. host.capture_event_ns) from the base config although the reports measure it: "+
		"its measurement is reported only (repeatable)")
	files, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o FILE is required")
	}
	rep, err := readReports(files)
	if err != nil {
		return err
	}
	for _, f := range leave {
		if !calibrate.Leave(rep, f) {
			return usagef("--leave %s: no measurement sets that field", f)
		}
		fmt.Fprintf(stdout, "- %s\n", rep.Notes[len(rep.Notes)-1])
	}
	baseCfg, baseName, err := fitBase(*base, rep, stderr)
	if err != nil {
		return err
	}
	var prof *sim.Profile
	if *profile != "" {
		if prof, err = sim.LoadProfile(*profile, ""); err != nil {
			return err
		}
	}
	fitted, err := calibrate.Fit(rep, baseCfg, prof)
	if err != nil {
		return err
	}
	cfg := fitted.Config
	cfg.Name = strings.TrimSuffix(filepath.Base(*out), filepath.Ext(*out))
	if prof != nil {
		cfg.ProfileName = profileRef(*profile, *out)
		fitted.Comments["profile"] = fmt.Sprintf("measured kernel profile: %d kernels (%s)", len(prof.Kernels), prof.Source)
	}
	header := fmt.Sprintf("# %s, fitted by `gpusched calibrate fit %s` to measurements on the GPU\n"+
		"# (%s). Fields not measured are kept from config %s. Each fitted field says\n"+
		"# where it comes from and its error; docs/SIMULATOR.md describes the measurements.\n",
		rep.Info.Name, strings.Join(args, " "), rep.Device, baseName)
	data, err := fitted.Marshal(header)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return err
	}
	if _, err := sim.LoadConfig(*out); err != nil {
		return fmt.Errorf("the written config does not load: %w", err)
	}
	for _, n := range fitted.Notes {
		fmt.Fprintf(stdout, "- %s\n", n)
	}
	fmt.Fprintf(stderr, "calibrate fit: wrote %s\n", *out)
	return nil
}

// readReports reads raw calibration reports, each later one's
// measurements added to the first's (calibrate.Merge: a measurement of
// the same name replaces the earlier one).
func readReports(files []string) (*calibrate.Report, error) {
	rep, err := calibrate.ReadReport(files[0])
	if err != nil {
		return nil, err
	}
	for _, f := range files[1:] {
		add, err := calibrate.ReadReport(f)
		if err != nil {
			return nil, err
		}
		if rep, err = calibrate.Merge(rep, add); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return rep, nil
}

// fitBase loads the base config: the named one, else the datasheet
// config of the measured GPU's model (h100-datasheet for an H100), else
// the config that models it.
func fitBase(name string, rep *calibrate.Report, stderr io.Writer) (*sim.Config, string, error) {
	if name == "" {
		picked, why, err := experiments.PickSimConfig(rep.Info)
		if err != nil {
			return nil, "", fmt.Errorf("%w; or pass --base", err)
		}
		name = picked
		if _, err := sim.LoadConfig(picked + "-datasheet"); err == nil {
			name, why = picked+"-datasheet", "the datasheet config of "+picked
		}
		fmt.Fprintf(stderr, "calibrate fit: fields not measured come from config %s (%s)\n", name, why)
	}
	cfg, err := sim.LoadConfig(name)
	return cfg, name, err
}

// profileRef is how a config written to out names profile: the embedded
// name for configs/profiles/NAME.yaml, else the path relative to out.
func profileRef(profile, out string) string {
	abs, err := filepath.Abs(profile)
	if err == nil && filepath.Base(filepath.Dir(abs)) == "profiles" && filepath.Base(filepath.Dir(filepath.Dir(abs))) == "configs" {
		return strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	}
	absOut, err2 := filepath.Abs(filepath.Dir(out))
	if rel, err3 := filepath.Rel(absOut, abs); err == nil && err2 == nil && err3 == nil {
		return rel
	}
	return profile
}

// reportsAndSim parses NAME's arguments (raw report files and a required
// --sim CONFIG, described by simUsage, and whatever flags more adds to the
// flag set) and reads both.
func reportsAndSim(args []string, stderr io.Writer, name, simUsage string, more ...func(fs *flag.FlagSet)) (*calibrate.Report, *sim.Config, error) {
	fs := newFlags(name, stderr)
	simCfg := fs.String("sim", "", simUsage)
	for _, m := range more {
		m(fs)
	}
	files, err := parse(fs, args, 1, -1)
	if err != nil {
		return nil, nil, err
	}
	if *simCfg == "" {
		return nil, nil, usagef("--sim CONFIG is required")
	}
	rep, err := readReports(files)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := sim.LoadConfig(*simCfg)
	if err != nil {
		return nil, nil, err
	}
	return rep, cfg, nil
}

// cmdCalibrateCheck runs every calibration measurement on a simulator
// config and compares it with a GPU's raw measurements.
func cmdCalibrateCheck(args []string, stdout, stderr io.Writer) error {
	rep, cfg, err := reportsAndSim(args, stderr, "calibrate check", "simulator config to check (required)")
	if err != nil {
		return err
	}
	rows, err := calibrate.Check(rep, cfg)
	if err != nil {
		return err
	}
	return calibrate.WriteCheck(stdout, rep.Device, rows)
}

// hostLine is one host field as a fit-* command prints it: its name in
// the config's host section and its fitted value.
type hostLine struct {
	field string
	value float64
}

// fitHostFields is what every calibrate fit-* command does: it parses
// NAME's arguments (raw report files, --sim CONFIG and the flags more
// adds), fits some host fields alone on that config (every other field
// as it is), and prints the fields lines picks from the fitted config's
// host costs as the config's host lines, each with its comment.
func fitHostFields(args []string, stdout, stderr io.Writer, name string,
	fit func(rep *calibrate.Report, cfg *sim.Config) (*calibrate.Fitted, error),
	lines func(h sim.HostCosts) []hostLine, more ...func(fs *flag.FlagSet)) error {
	rep, cfg, err := reportsAndSim(args, stderr, name,
		"the simulator config the fields go into, simulated with every other field as it is (required)", more...)
	if err != nil {
		return err
	}
	f, err := fit(rep, cfg)
	if err != nil {
		return err
	}
	var out strings.Builder
	for _, l := range lines(f.Config.Host) {
		fmt.Fprintf(&out, "  %s: %g # %s\n", l.field, l.value, f.Comments["host."+l.field])
	}
	_, err = io.WriteString(stdout, out.String())
	return err
}

// cmdCalibrateFitGraphLock fits the graph lock's two fields alone to a
// report's "host threads at once" on a given config (the one they go
// into) and prints them as the config's host lines, with their comments.
func cmdCalibrateFitGraphLock(args []string, stdout, stderr io.Writer) error {
	return fitHostFields(args, stdout, stderr, "calibrate fit-graph-lock", calibrate.FitGraphLock,
		func(h sim.HostCosts) []hostLine {
			return []hostLine{{"graph_lock_fraction", h.GraphLockFraction}, {"graph_lock_handoff_ns", h.GraphLockHandoffNs}}
		})
}

// cmdCalibrateFitQueueLock fits the queue lock's two fields and the
// hand-off alone to a report's "scheduler threads behind a window" and
// "host thread hand-off" on a given config (the one they go into) and
// prints them as the config's host lines, with their comments.
func cmdCalibrateFitQueueLock(args []string, stdout, stderr io.Writer) error {
	return fitHostFields(args, stdout, stderr, "calibrate fit-queue-lock", calibrate.FitQueueLock,
		func(h sim.HostCosts) []hostLine {
			return []hostLine{{"handoff_ns", h.HandoffNs}, {"queue_lock_ns", h.QueueLockNs}, {"queue_lock_handoff_ns", h.QueueLockHandoffNs}}
		})
}

// cmdCalibrateFitThreadCalls fits the scheduler threads' call costs (the
// untimed record, the driver lock's and the queue lock's hand-offs) alone
// to a report's "event records without timing", "launches over threads"
// and "queue calls over threads" on a given config (the one they go into)
// and prints them as the config's host lines, with their comments.
func cmdCalibrateFitThreadCalls(args []string, stdout, stderr io.Writer) error {
	return fitHostFields(args, stdout, stderr, "calibrate fit-thread-calls", calibrate.FitThreadCalls,
		func(h sim.HostCosts) []hostLine {
			return []hostLine{{"untimed_record_ns", h.UntimedRecordNs}, {"driver_lock_fraction", h.DriverLockFraction}, {"driver_lock_handoff_ns", h.DriverLockHandoffNs},
				{"handoff_ns", h.HandoffNs}, {"queue_lock_ns", h.QueueLockNs}, {"queue_lock_handoff_ns", h.QueueLockHandoffNs}}
		})
}

// cmdCalibrateFitRunSyncs fits host.sync_switch_ns alone to a report's
// "runs over streams" (the synchronizes of every stream at the end of a
// multi-stream run) on a given config (the one it goes into) and prints it
// as the config's host line, with its comment.
func cmdCalibrateFitRunSyncs(args []string, stdout, stderr io.Writer) error {
	return fitHostFields(args, stdout, stderr, "calibrate fit-run-syncs", calibrate.FitRunSyncs,
		func(h sim.HostCosts) []hostLine { return []hostLine{{"sync_switch_ns", h.SyncSwitchNs}} })
}

// cmdCalibrateFitGraphLaunch fits the graph launch's fixed field and its
// per-branch or per-join field alone to a report's "graph chunks over
// streams" launch calls on a given config (the one they go into) and
// prints them as the config's host lines, with their comments.
func cmdCalibrateFitGraphLaunch(args []string, stdout, stderr io.Writer) error {
	var slope string
	return fitHostFields(args, stdout, stderr, "calibrate fit-graph-launch",
		func(rep *calibrate.Report, cfg *sim.Config) (*calibrate.Fitted, error) {
			return calibrate.FitGraphLaunch(rep, cfg, slope)
		},
		func(h sim.HostCosts) []hostLine {
			if slope == "joins" {
				return []hostLine{{"graph_launch_ns", h.GraphLaunchNs}, {"graph_launch_join_ns", h.GraphLaunchJoinNs}}
			}
			return []hostLine{{"graph_launch_ns", h.GraphLaunchNs}, {"graph_launch_branch_ns", h.GraphLaunchBranchNs}}
		},
		func(fs *flag.FlagSet) {
			fs.StringVar(&slope, "slope", "branches", "what the launch call grows with beyond its fixed part: "+
				strings.Join(calibrate.GraphLaunchSlopes, " or ")+" (host.graph_launch_branch_ns or host.graph_launch_join_ns)")
		})
}
