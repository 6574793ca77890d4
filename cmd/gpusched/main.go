// Command gpusched runs inter-kernel scheduling experiments on the GPU
// simulator and on real GPUs, and compares them.
//
//	gpusched run FILE [-o DIR] [-j N] [--timelines]
//	gpusched sweep FILE --param NAME=V1,V2,... [--param ...] [--shard I/N] [-o DIR]
//	gpusched merge -o DIR SHARD.json...
//	gpusched compare A.json B.json
//	gpusched validate FILE.yaml | RESULTS.json... [--sim CONFIG] [--gpu DEVICE] [-o DIR]
//	gpusched trace FILE --workload W --scheduler S [--device D] -o OUT.json
//	gpusched devices
//	gpusched list
//	gpusched calibrate --device cuda -o FILE [--raw RAW.json]
//	gpusched calibrate fit RAW.json... [--profile P.yaml] -o CONFIG.yaml
//	gpusched calibrate check RAW.json... --sim CONFIG
//	gpusched calibrate fit-graph-lock RAW.json... --sim CONFIG
//	gpusched calibrate fit-graph-launch RAW.json... --sim CONFIG [--slope branches|joins]
//	gpusched calibrate tile-sync RESULTS.json [--raw RAW.json]
//	gpusched profile [fit] [--device cuda] -o PROFILE.yaml FILE...
//	gpusched replot RESULTS.json... -o DIR
//	gpusched version
//
// Every command's -h prints its arguments, flags and an example.
//
// Errors go to stderr and end the command with a non-zero status: 1 when
// the command ran but something failed (a row's error, a mismatch), 2 for a
// usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a mistake on the command line: status 2 and the usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// command is one subcommand.
type command struct {
	name, args, help string
	run              func(args []string, stdout, stderr io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"run", "FILE [-o DIR] [-j N] [--timelines] [--shard I/N] [--resume]", "run an experiment: print the table, write results (md, csv, json, svg, pdf)", cmdRun},
		{"sweep", "FILE --param NAME=V1,V2,... [--shard I/N] [--resume] [-o DIR]", "run an experiment at every point of a parameter grid, or one shard of it", cmdSweep},
		{"merge", "-o DIR SHARD.json...", "join the shards of a sweep into the results of the whole sweep", cmdMerge},
		{"compare", "A.json B.json", "two result sets side by side, with ratios", cmdCompare},
		{"validate", "FILE.yaml | RESULTS.json... [--sim CONFIG] [--gpu DEVICE] [-o DIR]", "how well the simulator predicts the GPU: an experiment run on both, or committed GPU results re-simulated", cmdValidate},
		{"trace", "FILE --workload W --scheduler S [--device D] -o OUT.json", "run one row and write its timeline (Chrome trace JSON, for Perfetto)", cmdTrace},
		{"devices", "", "list the simulator's device configs and the CUDA devices", cmdDevices},
		{"list", "", "list the workload families and schedulers experiment files can name", cmdList},
		{"calibrate", calibrateUsage(), "measure a GPU and write a simulator device config; fit one from raw measurements; check a config against them; " +
			"fit the graph lock's fields alone; fit tile_sync's costs from a GPU run", cmdCalibrate},
		{"profile", "[fit|pairs] [--device cuda] -o PROFILE.yaml FILE...", "time the kernels of experiment files alone and fit a kernel profile (pairs: two different kernels co-resident on every SM, -o PAIRS.json)", cmdProfile},
		{"import", "kineto TRACE.json [--et ET.json] [--iteration N] -o W.yaml", "turn a PyTorch profiler trace into a workload file (docs/WORKLOADS.md)", cmdImport},
		{"replot", "RESULTS.json... -o DIR", "draw the figures (SVG, PDF) and the CSVs of results files again", cmdReplot},
		{"version", "", "print gpusched's version and the commit it was built from", cmdVersion},
		{"paper", paperUsage, "a paper's reproduction: run its experiment files, write its page", cmdPaper},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gpusched COMMAND [ARGS]")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  gpusched %s %s\n      %s\n", c.name, c.args, c.help)
	}
	fmt.Fprintln(w, "\nRun gpusched COMMAND -h for a command's flags and an example; gpusched --version for the version.")
}

// run is main without os.Exit, for tests. The commands write through
// stickyWriters, which keep the first write error; a command whose output
// could not be written fails (status 1) even if it succeeded otherwise.
func run(args []string, stdoutW, stderrW io.Writer) (status int) {
	stdout, stderr := &stickyWriter{w: stdoutW}, &stickyWriter{w: stderrW}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "gpusched: internal error: %v\n%s", r, debug.Stack())
			status = 3
		}
		if err := errors.Join(stdout.err, stderr.err); err != nil && status == 0 {
			_, _ = fmt.Fprintf(stderrW, "gpusched: writing the output: %v\n", err) // nowhere else to report it
			status = 1
		}
	}()
	helpOut = stdout
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		var ue *usageError
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "gpusched %s: %v\nusage: gpusched %s %s\n", c.name, err, c.name, c.args)
			return 2
		default:
			fmt.Fprintf(stderr, "gpusched %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "gpusched: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// parse parses flags that may come before, between or after the
// positional arguments (gpusched run FILE -o DIR), and checks their count.
func parse(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printHelp(fs)
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) < minPos || (maxPos >= 0 && len(pos) > maxPos) {
		switch {
		case len(pos) < minPos:
			return nil, usagef("missing arguments")
		default:
			return nil, usagef("unexpected arguments: %s", strings.Join(pos[maxPos:], " "))
		}
	}
	return pos, nil
}

// newFlags is a command's flag set. Its errors go to stderr (the usage
// line follows, from run); -h prints the command's help on stdout (parse).
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gpusched "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return fs
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// isTerminal reports whether f is a character device (a terminal), without
// a dependency: a progress bar goes only there.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// stickyWriter passes writes to w until one fails, then keeps that error
// and fails every later write with it, as bufio.Writer does: run checks
// err once, so the many prints of the commands need no check each
// (.golangci.yml exempts cmd/'s fmt.Fprint* from errcheck for this).
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}
