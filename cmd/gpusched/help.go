package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// examples holds one example command line per command, shown by -h. A new
// command adds its line here (TestEveryCommandHelp checks that it does).
var examples = map[string]string{
	"run":       "gpusched run configs/experiments/quickstart.yaml -o results/quickstart",
	"sweep":     "gpusched sweep configs/experiments/quickstart.yaml --param workloads.synthetic.width=2,4,8 --param seed=1,2,3",
	"merge":     "gpusched merge -o results/sweep results/shard-*/results.json",
	"compare":   "gpusched compare docs/results/kesco-sim.json results/kesco/results.json",
	"validate":  "gpusched validate configs/experiments/quickstart.yaml --sim h100 --gpu cuda -o results/validate",
	"trace":     "gpusched trace configs/experiments/quickstart.yaml --workload synthetic --scheduler round-robin(k=4) -o trace.json",
	"devices":   "gpusched devices",
	"list":      "gpusched list round-robin",
	"calibrate": "gpusched calibrate --device cuda -o configs/devices/measured-h100.yaml",
	"import":    "gpusched import kineto trace.json --iteration 2 -o workload.yaml",
	"profile":   "gpusched profile --device cuda -o h100-profile.yaml configs/experiments/quickstart-gpu.yaml",
	"replot":    "gpusched replot docs/results/acs-sim.json docs/results/set-sim.json -o figures",
	"version":   "gpusched --version",
	"paper":     "gpusched paper set run configs/experiments/set-sim.yaml -o results/set-sim",
}

// helpOut receives -h's help: stdout (set by run).
var helpOut = io.Discard

// printHelp prints a command's usage line, what it does, its flags and an
// example.
func printHelp(fs *flag.FlagSet) {
	// A command with a sub-command names its flag set after both
	// ("gpusched import kineto"): the table has the first.
	name := strings.Fields(strings.TrimPrefix(fs.Name(), "gpusched "))[0]
	w := helpOut
	for _, c := range commands {
		if c.name == name {
			fmt.Fprintf(w, "usage: gpusched %s %s\n\n%s.\n", c.name, c.args, strings.ToUpper(c.help[:1])+c.help[1:])
		}
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		old := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(old)
	}
	if ex, ok := examples[name]; ok {
		fmt.Fprintf(w, "\nexample:\n  %s\n", ex)
	}
}

func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionLine())
	return nil
}

// versionLine is gpusched's module version and the commit it was built
// from, as the Go toolchain recorded them in the binary ("unknown" for a
// binary built outside a git checkout, as go run and go test build).
func versionLine() string {
	version, commit, when, dirty := "unknown", "unknown", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	line := fmt.Sprintf("gpusched %s, commit %s", version, commit)
	if when != "" {
		line += " (" + when + ")"
	}
	if dirty {
		line += " with uncommitted changes"
	}
	return line + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
