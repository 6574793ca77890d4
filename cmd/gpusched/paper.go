package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/experiments"
	// The papers register themselves.
	_ "github.com/gpusched/gpusched/experiments/acs"
	_ "github.com/gpusched/gpusched/experiments/autograph"
	_ "github.com/gpusched/gpusched/experiments/cusync"
	_ "github.com/gpusched/gpusched/experiments/imported"
	_ "github.com/gpusched/gpusched/experiments/kesco"
	_ "github.com/gpusched/gpusched/experiments/set"
	_ "github.com/gpusched/gpusched/experiments/tournament"
)

const paperUsage = `NAME run FILE [-o DIR] [-j N] [--timelines] [--shard I/N] [--resume] | NAME report -o OUT.md [--notes FILE] RESULTS.json...`

// cmdPaper is gpusched paper: a paper's run (gpusched run with the paper's
// hooks) and its report.
func cmdPaper(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		var b strings.Builder
		b.WriteString("usage: gpusched paper " + paperUsage + "\n\nPapers:\n")
		for _, p := range experiments.Papers() {
			fmt.Fprintf(&b, "  %-10s %s\n             configs: %s\n", p.Name, p.Title, strings.Join(p.Configs, ", "))
		}
		fmt.Fprintf(&b, "\nrun takes gpusched run's arguments; report needs -o.\n\nexample:\n  %s\n", examples["paper"])
		if _, err := io.WriteString(stdout, b.String()); err != nil {
			return err
		}
		if len(args) == 0 {
			return usagef("name a paper and run or report")
		}
		return nil
	}
	p, err := experiments.PaperByName(args[0])
	if err != nil {
		return usagef("%v", err)
	}
	if len(args) < 2 {
		return usagef("gpusched paper %s: run or report?", p.Name)
	}
	switch args[1] {
	case "run":
		return runExperiment("paper "+p.Name+" run", p, false, args[2:], stdout, stderr)
	case "report":
		return paperReport(p, args[2:], stdout, stderr)
	}
	return usagef("gpusched paper %s: unknown step %q (run or report)", p.Name, args[1])
}

// paperReport reads the paper's results files (refusing those of another
// experiment or without rows) and writes its page to the path given.
func paperReport(p *experiments.Paper, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("paper "+p.Name+" report", stderr)
	out := fs.String("o", "", "the page to write (required; - for stdout)")
	notes := fs.String("notes", "", "a Markdown file of findings to include after the introduction")
	pos, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o OUT.md is required (the page is written only where you say)")
	}
	in := &experiments.ReportInput{Files: pos, Dir: "."}
	if *out != "-" {
		in.Dir = filepath.Dir(*out)
	}
	for _, f := range pos {
		r, err := readResultsArg(f, stderr)
		if err != nil {
			return err
		}
		in.Sets = append(in.Sets, r)
	}
	if *notes != "" {
		if in.Notes, err = os.ReadFile(*notes); err != nil {
			return err
		}
	}
	if err := p.CheckReportInput(in); err != nil {
		return err
	}
	if *out != "-" {
		if in.Tables, err = writeTables(in); err != nil {
			return err
		}
	}
	var page bytes.Buffer
	if err := p.Report(&page, in); err != nil {
		return err
	}
	if *out == "-" {
		_, err := stdout.Write(page.Bytes())
		return err
	}
	if err := experiments.WriteFile(*out, page.Bytes()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (%d lines)\n", *out, bytes.Count(page.Bytes(), []byte("\n")))
	return err
}

// writeTables writes each results file's full table of rows under
// tables/ beside the page (tables/NAME.md for NAME.json), so that the page
// can show summaries and link to every row.
func writeTables(in *experiments.ReportInput) ([]string, error) {
	dir := filepath.Join(in.Dir, "tables")
	if err := experiments.CheckOutDir(dir); err != nil {
		return nil, err
	}
	var links []string
	for i, r := range in.Sets {
		name := strings.TrimSuffix(filepath.Base(in.Files[i]), ".json") + ".md"
		if err := experiments.WriteFile(filepath.Join(dir, name), experiments.Markdown(r, false)); err != nil {
			return nil, err
		}
		links = append(links, "tables/"+name)
	}
	return links, nil
}
