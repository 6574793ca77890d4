package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gpusched/gpusched/experiments"
)

func cmdList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", stderr)
	pos, err := parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		return listOne(pos[0], stdout)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Workload families (workloads[].family):")
	for _, n := range experiments.Workloads() {
		fmt.Fprintf(tw, "  %s\t%s\n", n, summary(experiments.WorkloadDoc(n)))
	}
	fmt.Fprintln(tw, "\nSchedulers (schedulers[].kind):")
	for _, n := range experiments.Schedulers() {
		fmt.Fprintf(tw, "  %s\t%s\n", n, summary(experiments.SchedulerDoc(n)))
	}
	fmt.Fprintln(tw, "\ngpusched list NAME shows a family's or a scheduler's description and parameters.")
	return tw.Flush()
}

// summaryWidth is the longest one-line summary plain list prints.
const summaryWidth = 60

// summary is a description's first clause, without its parameter list,
// cut to summaryWidth characters.
func summary(doc string) string {
	if i := strings.Index(doc, " (params"); i > 0 {
		doc = doc[:i]
	}
	if i := strings.Index(doc, "; "); i > 0 {
		doc = doc[:i]
	}
	if r := []rune(doc); len(r) > summaryWidth {
		doc = strings.TrimRight(string(r[:summaryWidth-1]), " ,;:") + "…"
	}
	return doc
}

// listOne describes the workload family and the scheduler called name
// (both, where they share it).
func listOne(name string, w io.Writer) error {
	found := false
	for _, kind := range []string{"workload family", "scheduler"} {
		doc := experiments.WorkloadDoc(name)
		params := experiments.WorkloadParams
		if kind == "scheduler" {
			doc, params = experiments.SchedulerDoc(name), experiments.SchedulerParams
		}
		if doc == "" {
			continue
		}
		if found {
			fmt.Fprintln(w)
		}
		found = true
		ps, err := params(name)
		if err != nil {
			return fmt.Errorf("%s %s: %w", kind, name, err)
		}
		fmt.Fprintf(w, "%s %s: %s\n\n", kind, name, doc)
		if len(ps) == 0 {
			fmt.Fprintln(w, "No parameters.")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "parameter\ttype\tdefault")
		for _, p := range ps {
			def := p.Default
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Type, def)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if !found {
		return usagef("no workload family or scheduler %q (gpusched list names them all)", name)
	}
	return nil
}
