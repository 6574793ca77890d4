package experiments

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Paper is what a paper's reproduction adds to the runner (gpusched paper
// NAME run): measurements beside the makespans and checks beside the
// matrix. Everything else (interleaved rounds on a GPU, outputs poisoned
// after Prepare and compared with the serial schedule's, races, counters,
// throughput units of job workloads) is the runner's, the same for every
// paper and for gpusched run. The packages under experiments/ register
// their papers.
type Paper struct {
	Name  string // as gpusched paper NAME names it
	Title string // one line
	// Configs are its experiment files (simulator and GPU), for help.
	Configs []string
	// GPUWarmup is the warm-up repetitions on a GPU where the experiment
	// file sets none (0: the runner's default, 1).
	GPUWarmup int
	// Facts measures a row's workload on its device (once per row).
	Facts func(prog *workloads.Program, info *device.Info) map[string]float64
	// Probes runs the paper's checks on a simulator config, once per
	// simulator device of the experiment.
	Probes func(device string) ([]Probe, error)
	// Report writes the paper's page.
	Report func(w io.Writer, in *ReportInput) error
	// OnlyApplicable leaves unrun the rows whose scheduler needs what the
	// workload or device does not offer (sched.Missing), saying what in
	// Row.NotApplicable, so that one matrix of every scheduler by every
	// workload runs only where a scheduler applies.
	OnlyApplicable bool
}

// ReportInput is what a paper's report reads: results files of its runs
// (each checked to be the paper's and to hold rows), their paths, and an
// optional page of notes to include.
type ReportInput struct {
	Sets  []*Results
	Files []string
	Notes []byte
	// Dir is the directory the page is written to: links to the files
	// are relative to it.
	Dir string
	// Tables are links (relative to Dir) to each file's full table of
	// rows, where the report command wrote them; nil for none.
	Tables []string
}

var papers = map[string]*Paper{}

// RegisterPaper makes a paper available to gpusched paper.
func RegisterPaper(p *Paper) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := papers[p.Name]; dup {
		panic("experiments: paper " + p.Name + " registered twice") // programming error at init
	}
	papers[p.Name] = p
}

// Papers lists the registered papers by name.
func Papers() []*Paper {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]*Paper, 0, len(papers))
	for _, p := range papers {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PaperByName finds a registered paper.
func PaperByName(name string) (*Paper, error) {
	regMu.Lock()
	p, ok := papers[name]
	regMu.Unlock()
	if !ok {
		var names []string
		for _, q := range Papers() {
			names = append(names, q.Name)
		}
		return nil, fmt.Errorf("no paper %q (have %s)", name, strings.Join(names, ", "))
	}
	return p, nil
}

// probe runs the paper's probes on every simulator device of e.
func (p *Paper) probe(e *Experiment, res *Results) error {
	if p.Probes == nil {
		return nil
	}
	for _, d := range e.Devices {
		if IsCUDA(d) {
			continue
		}
		ps, err := p.Probes(d)
		if err != nil {
			return fmt.Errorf("%s probes on %s: %w", p.Name, d, err)
		}
		res.Probes = append(res.Probes, ps...)
	}
	return nil
}

// CheckReportInput refuses results a paper's report must not read: of
// another paper's experiment, of gpusched run's where the paper's rows
// differ from run's (sameRowsAsRun), or without rows.
func (p *Paper) CheckReportInput(in *ReportInput) error {
	if len(in.Sets) == 0 {
		return fmt.Errorf("no results files given")
	}
	for i, r := range in.Sets {
		name := in.Files[i]
		runner := "gpusched run"
		if r.Resolved.Runner != "" {
			runner = "gpusched paper " + r.Resolved.Runner
		}
		if r.Resolved.Runner != p.Name && (r.Resolved.Runner != "" || !p.sameRowsAsRun()) {
			return fmt.Errorf("%s: results of %s (experiment %s), not of gpusched paper %s", name, runner, r.Experiment, p.Name)
		}
		if len(r.Rows) == 0 {
			return fmt.Errorf("%s: no rows", name)
		}
	}
	return nil
}

// sameRowsAsRun: the paper adds nothing to gpusched run's rows (no facts,
// probes, applicability filter or GPU warm-up of its own), so its report
// may read a gpusched run of its experiment files.
func (p *Paper) sameRowsAsRun() bool {
	return p.Facts == nil && p.Probes == nil && !p.OnlyApplicable && p.GPUWarmup == 0
}

// WriteTableLinks links each results file's full table of rows, where the
// report command wrote them (nothing where it wrote none).
func WriteTableLinks(b *bytes.Buffer, in *ReportInput) {
	if len(in.Tables) == 0 {
		return
	}
	b.WriteString("## Every row\n\nEvery row of each file, as the runner reports it (makespans in microseconds; the JSON files hold every repetition in nanoseconds):\n\n")
	for i, t := range in.Tables {
		fmt.Fprintf(b, "- [%s](%s)\n", in.Files[i], t)
	}
	b.WriteString("\n")
}
