package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/gpusched/gpusched/calibrate"
	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/experiments"
)

func cmdRun(args []string, stdout, stderr io.Writer) error {
	return runExperiment("run", nil, false, args, stdout, stderr)
}

func cmdSweep(args []string, stdout, stderr io.Writer) error {
	return runExperiment("sweep", nil, true, args, stdout, stderr)
}

// runFlags are the arguments of gpusched run, sweep and paper NAME run.
type runFlags struct {
	out, shard            string
	jobs, shardIndex, cnt int
	timelines, resume     bool
	countShards           bool
	params                multiFlag
}

func (f *runFlags) register(fs *flag.FlagSet, sweep bool) {
	fs.StringVar(&f.out, "o", "", "results directory (default: the file's outputs.dir, or results/NAME; with a shard, .../shard-I-of-N)")
	fs.IntVar(&f.jobs, "j", 0, "simulator rows to run at once (default: one per CPU)")
	fs.BoolVar(&f.timelines, "timelines", false, "write a timeline per row (also outputs.timelines in the file)")
	fs.StringVar(&f.shard, "shard", "", "I/N: run only shard I of N, counting from 1 (3/8 is the third of eight); slurm: the shard of this Slurm array task, however the array counts; merge the shards with gpusched merge")
	fs.IntVar(&f.shardIndex, "shard-index", -1, "run only shard I of --shard-count, counting from 0 (as $SLURM_ARRAY_TASK_ID of --array=0-N-1)")
	fs.IntVar(&f.cnt, "shard-count", 0, "the number of shards, with --shard-index")
	fs.BoolVar(&f.resume, "resume", false, "keep the rows an interrupted run of the same experiment saved in the results directory, and run the rest")
	fs.BoolVar(&f.countShards, "count-shards", false, "print how many shards the matrix splits into (its groups: sweep point x workload x device) and exit, for --array=1-N")
	if sweep {
		fs.Var(&f.params, "param", "NAME=V1,V2,...: seed, repetitions, workloads.W.P or schedulers.S.P (repeatable; points are the cartesian product)")
	}
}

// shardOf is the shard the flags name (Count 0: the whole matrix).
func (f *runFlags) shardOf() (experiments.Shard, error) {
	switch {
	case f.shard != "" && (f.shardIndex >= 0 || f.cnt != 0):
		return experiments.Shard{}, usagef("give --shard I/N or --shard-index and --shard-count, not both")
	case f.shard != "":
		sh, err := experiments.ParseShard(f.shard)
		if err != nil {
			return sh, usagef("%v", err)
		}
		return sh, nil
	case f.shardIndex >= 0 || f.cnt != 0:
		sh, err := experiments.NewShard(f.shardIndex, f.cnt)
		if err != nil {
			return sh, usagef("%v", err)
		}
		return sh, nil
	}
	return experiments.Shard{}, nil
}

// runExperiment is gpusched run and sweep, and with a paper gpusched
// paper NAME run: the same arguments, table, progress and files. The
// output directory is checked before the first row; rows are saved as
// they finish (experiments.JournalFile), so Ctrl-C or a crash loses no
// finished row and --resume continues.
func runExperiment(name string, paper *experiments.Paper, sweep bool, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlags(name, stderr)
	f.register(fs, sweep)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	opt := experiments.RunOptions{Workers: f.jobs, Table: stdout, Progress: progressTo(stderr), Paper: paper, DropSeries: paper != nil, Resume: f.resume,
		HostProbe: hostLaunchProbe}
	if opt.Shard, err = f.shardOf(); err != nil {
		return err
	}
	if opt.Sweep, err = parseSweep(f.params, sweep); err != nil {
		return err
	}
	e, err := experiments.LoadExperiment(pos[0])
	if err != nil {
		return err
	}
	if f.countShards {
		n, err := experiments.Groups(e, opt.Sweep)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, n)
		return err
	}
	dir, formats := outputOf(e, &f, opt.Shard, sweep)
	if err := experiments.CheckOutDir(dir); err != nil {
		return err
	}
	opt.JournalDir = dir
	if f.timelines || e.Outputs.Timelines {
		opt.TimelineDir = filepath.Join(dir, "timelines")
	}
	stop := onInterrupt(dir, stderr)
	defer stop()
	res, err := experiments.Run(e, opt)
	if err != nil {
		return err
	}
	files, err := experiments.Write(dir, res, formats)
	if err != nil {
		return fmt.Errorf("%w (the finished rows are in %s; fix the cause and rerun with --resume)", err, filepath.Join(dir, experiments.JournalFile))
	}
	if err := experiments.RemoveJournal(dir); err != nil {
		return err
	}
	if opt.TimelineDir != "" {
		files = append(files, opt.TimelineDir+"/")
	}
	return report(res, files, stdout, stderr)
}

// parseSweep parses the --param flags; a sweep needs one.
func parseSweep(params []string, sweep bool) ([]experiments.SweepParam, error) {
	if sweep && len(params) == 0 {
		return nil, usagef("give at least one --param NAME=V1,V2,...")
	}
	var out []experiments.SweepParam
	for _, p := range params {
		sp, err := experiments.ParseSweepParam(p)
		if err != nil {
			return nil, usagef("%v", err)
		}
		out = append(out, sp)
	}
	return out, nil
}

// outputOf is where a run writes and what: the file's directory, or
// .../sweep for a sweep, or for a shard .../shard-I-of-N with only
// results.json (what merge reads; the merged results write the rest).
func outputOf(e *experiments.Experiment, f *runFlags, shard experiments.Shard, sweep bool) (string, []string) {
	dir, formats := e.OutDir(), e.Formats()
	if sweep {
		dir = filepath.Join(dir, "sweep")
	}
	if shard.Count > 0 {
		dir = filepath.Join(e.OutDir(), fmt.Sprintf("shard-%d-of-%d", shard.Index+1, shard.Count))
		formats = []string{"json"}
	}
	if f.out != "" {
		dir = f.out
	}
	return dir, formats
}

// onInterrupt says, on Ctrl-C or SIGTERM, where the finished rows are and
// exits; the returned function stops listening.
func onInterrupt(dir string, stderr io.Writer) func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			// The process ends here; stderr is where the user looks.
			_, _ = fmt.Fprintf(stderr, "\ngpusched: %v: the finished rows are saved in %s; rerun with --resume to run the rest\n",
				sig, filepath.Join(dir, experiments.JournalFile))
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// hostLaunchProbe is calibrate's launch API cost, timed before a GPU run's
// first row and after its last (Provenance.Host): how fast this host
// issues launches, which host-bound rows depend on.
func hostLaunchProbe(dev device.Device) (experiments.LaunchProbe, error) {
	m, err := calibrate.HostLaunchProbe(dev)
	if err != nil {
		return experiments.LaunchProbe{}, err
	}
	return experiments.LaunchProbe{Ns: m.Value, Spread: m.Spread(), Rounds: m.Rounds}, nil
}
