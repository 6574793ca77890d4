package main

import (
	"fmt"
	"io"
)

func cmdCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate", stderr)
	dev := fs.String("device", "cuda", "the GPU to measure")
	out := fs.String("o", "", "device config to write (required)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o FILE is required")
	}
	return fmt.Errorf("calibrate %s: the calibration package is not in this build yet", *dev)
}
