package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/calibrate"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
)

func cmdCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate", stderr)
	dev := fs.String("device", experiments.CUDADevice, "the device to measure: cuda, or a simulator config (which must give back that config: a self-check)")
	base := fs.String("base", "", "config whose unmeasured parts (SM model, dependency queue) are kept (default: the simulator config that models the device)")
	out := fs.String("o", "", "device config to write (required), e.g. configs/devices/measured-h100.yaml; its name is the file's")
	report := fs.String("report", "", "write the measurements as Markdown to this file instead of stdout")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
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
	defer d.Close()
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
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		return err
	}
	if *report != "" {
		if err := os.WriteFile(*report, md.Bytes(), 0o644); err != nil {
			return err
		}
	} else if _, err := stdout.Write(md.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "calibrate: wrote %s\n", *out)
	return nil
}
