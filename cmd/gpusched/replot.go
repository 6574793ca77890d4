package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/experiments"
)

// cmdReplot draws the figures and writes the CSVs of results files again:
// of one file into DIR, of several into DIR/NAME, NAME being each file's
// name without .json (or its directory's, for DIR/results.json).
func cmdReplot(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replot", stderr)
	out := fs.String("o", "", "directory to write into (required)")
	formats := fs.String("formats", "svg,pdf,csv,md", "formats to write: any of svg, pdf, csv, md, json")
	pos, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o DIR is required")
	}
	fmts := strings.Split(*formats, ",")
	names := map[string]string{}
	for _, p := range pos {
		p = resultsPath(p)
		r, err := readResultsArg(p, stderr)
		if err != nil {
			return err
		}
		dir := *out
		if len(pos) > 1 {
			name := strings.TrimSuffix(filepath.Base(p), ".json")
			if name == "results" {
				name = filepath.Base(filepath.Dir(p))
			}
			if prev, dup := names[name]; dup {
				return usagef("%s and %s would both go to %s: replot them separately", prev, p, filepath.Join(*out, name))
			}
			names[name] = p
			dir = filepath.Join(*out, name)
		}
		files, err := experiments.Write(dir, r, fmts)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		fmt.Fprintf(stdout, "%s: %s\n", p, summarizeFiles(files))
	}
	return nil
}
