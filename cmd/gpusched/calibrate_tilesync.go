package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gpusched/gpusched/calibrate"
)

// cmdCalibrateTileSync fits the simulator's tile_sync costs from a GPU run
// of configs/experiments/tilecost-gpu.yaml and writes them as a partial
// calibration report, which `calibrate fit FULL.json TILESYNC.json` adds
// to a full one.
func cmdCalibrateTileSync(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate tile-sync", stderr)
	raw := fs.String("raw", "", "write the fitted figures as a raw report (JSON) here, for `calibrate fit`")
	report := fs.String("report", "", "write them as Markdown to this file instead of stdout")
	files, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return err
	}
	rep, err := calibrate.FitTileSync(data, files[0])
	if err != nil {
		return err
	}
	if err := writeReports(rep, *raw, *report, stdout); err != nil {
		return err
	}
	if *raw != "" {
		fmt.Fprintf(stderr, "calibrate tile-sync: wrote %s\n", *raw)
	}
	return nil
}
