package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/workloads/file"
	"github.com/gpusched/gpusched/workloads/kineto"
)

// cmdImport writes a workload file from a recording: for now, PyTorch
// profiler traces (gpusched import kineto TRACE.json ...).
func cmdImport(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		args = append([]string{"kineto"}, args...) // the help of the one format
	}
	if len(args) == 0 || args[0] != "kineto" {
		return usagef("import: the first argument is the format: kineto (a PyTorch profiler trace)")
	}
	fs := newFlags("import kineto", stderr)
	et := fs.String("et", "", "the execution trace of the same run (torch.profiler.ExecutionTraceObserver): dependencies from data, not stream order")
	iteration := fs.Int("iteration", -1, "the ProfilerStep#N to import (default: the last)")
	rng := fs.String("range", "", "import what was launched inside this annotation or operator instead of a ProfilerStep")
	dev := fs.String("device", "", "simulator config whose figures describe the recorded GPU (default: the config that models the trace's GPU)")
	clock := fs.Int64("clock-hz", 0, "the recorded GPU's SM clock, with the trace's own figures instead of a device config")
	name := fs.String("name", "", "the workload's name (default: the trace file's)")
	out := fs.String("o", "", "the workload file to write (.yaml, or .yaml.gz)")
	pos, err := parse(fs, args[1:], 1, 1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o FILE is required")
	}
	opt := kineto.Options{Iteration: *iteration, Range: *rng, ClockHz: *clock, Name: *name, TracePath: pos[0], ETPath: *et}
	switch {
	case *dev != "" && *clock != 0:
		return usagef("give --device or --clock-hz, not both")
	case *dev != "":
		info, err := experiments.SimInfo(*dev)
		if err != nil {
			return err
		}
		d := file.DeviceOf(info)
		opt.Device = &d
	case *clock == 0:
		opt.Figures = func(gpu string, sms int) (*file.Device, error) {
			cfg, why, err := experiments.PickSimConfig(device.Info{Name: gpu, SMs: sms})
			if err != nil {
				return nil, fmt.Errorf("%w; or give --clock-hz to use the trace's own figures", err)
			}
			info, err := experiments.SimInfo(cfg)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(stderr, "import: device figures from config %s (%s)\n", cfg, why)
			d := file.DeviceOf(info)
			d.Name = gpu
			return &d, nil
		}
	}
	traceData, err := file.ReadFile(pos[0])
	if err != nil {
		return err
	}
	var etData []byte
	if *et != "" {
		if etData, err = file.ReadFile(*et); err != nil {
			return err
		}
	}
	f, rep, err := kineto.Import(traceData, etData, opt)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	fmt.Fprintln(stderr, "import:", rep)
	return writeWorkload(f, *out)
}

func writeWorkload(f *file.File, path string) error {
	body, err := f.Marshal()
	if err != nil {
		return err
	}
	header := fmt.Sprintf("# Imported by gpusched import kineto from %s; see docs/WORKLOADS.md.\n", f.Source.Trace)
	body = append([]byte(header), body...)
	if strings.HasSuffix(path, ".gz") {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		body = b.Bytes()
	}
	return os.WriteFile(path, body, 0o644)
}
