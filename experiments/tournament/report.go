package tournament

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/experiments"
)

// HeatmapFile is the figure Report writes beside the page.
const HeatmapFile = "tournament-heatmap.svg"

const intro = `# The tournament

Every scheduler that applies, on a representative workload of every
family, and gpusched's own portfolio scheduler (sched/portfolio). Whether
a scheduler applies is computed, not listed: each scheduler says what it
needs (sched.Needer: independent jobs, tile pairs, every step known ahead,
a hardware dependency queue) and the program and device say what they
offer (sched.ProgramTraits, tile pairs, sched.DeviceTraits); the runner
leaves the other cells unrun (n/a). Every scheduler is timed on its second
run after Prepare (sched.Warm), outputs compared with serial's bit for bit
on the GPU. Speedups are over serial: on the GPU the median of the
round-by-round ratios with its sign-test 95% interval, on the simulator
(deterministic) the ratio of makespans. The portfolio predicts every
applicable candidate schedule on the simulator, checks the best few on the
device and keeps the fastest; "portfolio model" keeps the model's pick
unchecked; one with model auto-datasheet keeps the pick of the
datasheet-only config, which shows what calibration buys the selection.
On the simulator the portfolio's prepare column is the simulated time of
its device check (the selection's own host time is left out so that the
results stay byte-identical); on the GPU it is the wall time of the whole
selection. On the simulator, models of other GPUs (a100, h200) stand in for
an inaccurate simulator: the simulated H100 is the truth their picks are
measured on.
The portfolio's regret is its makespan over the best other scheduler's,
less one; on the GPU with the 95% interval of that ratio round by round.
The best other scheduler is the fastest median of some twenty, so on the
GPU it is biased fast (the luckiest of many noisy medians) and the regret
against it errs high. "Strictly faster" than a paper's strategy means, on
the GPU, the paired 95% interval of that strategy's makespan over the
portfolio's wholly above 1; on the simulator, faster by more than 0.1%
(the same schedule can end a few nanoseconds apart in two rows there).
A row's winner is a portfolio only where it is strictly faster, in that
sense, than the best other scheduler.
The papers' own strategies, which the portfolio is to beat on a third of
the workloads, are KeSCo's streams, AutoGraph, ACS-SW's window, ACS-HW,
cuSync's tile synchronization and SET as the paper runs it; KeSCo captured
into a graph, SET's ring and batched variants and ACS-SW's graph dispatch
are combinations and refinements of gpusched's. chunk-graph is gpusched's
own (added in the fourth session, a candidate of the portfolio too): a
job pipeline as one graph of the whole program launched once, chunks of
consecutive jobs each copied in and out with one coalesced copy as in
SET-batch, pipelined inside the graph (copies in on one lane, the jobs on
kernel lanes, copies out on another).
`

// Report writes docs/results/tournament.md from the tournament's results
// files (the GPU's and the simulator's), and the heatmap beside it.
func Report(w io.Writer, in *experiments.ReportInput) error {
	var ms []*matrix
	var files []string
	for i, r := range in.Sets {
		for _, m := range matrices(r) {
			m.run = strings.TrimSuffix(filepath.Base(in.Files[i]), ".json")
			ms = append(ms, m)
			files = append(files, in.Files[i])
		}
	}
	// GPU first, then the simulators, each in file order.
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ms[order[a]].gpu && !ms[order[b]].gpu })
	var panels []panel
	b := &strings.Builder{}
	b.WriteString(intro)
	if len(in.Notes) > 0 {
		b.WriteString("\n")
		b.Write(in.Notes)
	}
	writeCommands(b, in)
	writeTargets(b, ms, order)
	fmt.Fprintf(b, "\n![speedup over serial, GPU and simulator side by side](%s)\n", HeatmapFile)
	for _, i := range order {
		m := ms[i]
		panels = append(panels, m.panel(m.deviceTitle()))
		writeMatrix(b, m, in.Sets[setOf(in, files[i])], relPath(in.Dir, files[i]))
	}
	b.WriteString("\n## The portfolio against each workload's winner\n")
	for _, i := range order {
		writePortfolio(b, ms[i])
	}
	writeSensitivity(b, ms, order)
	writeRaw(b, in)
	svg, err := heatmapSVG("Speedup over serial; rows: workloads, columns: schedulers", panels)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(in.Dir, HeatmapFile), svg, 0o644); err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// writeRaw links each results file's table of every row and, where one
// lies in raw/ under the file's name (NAME.json: raw/NAME.tgz), the GPU
// run's raw output as it came back.
func writeRaw(b *strings.Builder, in *experiments.ReportInput) {
	var raw []string
	for _, f := range in.Files {
		name := strings.TrimSuffix(filepath.Base(f), ".json") + ".tgz"
		if _, err := os.Stat(filepath.Join(filepath.Dir(f), "raw", name)); err == nil {
			raw = append(raw, filepath.ToSlash(filepath.Join("raw", name)))
		}
	}
	tb := bytes.NewBufferString("\n")
	experiments.WriteTableLinks(tb, in)
	b.Write(tb.Bytes())
	if len(raw) > 0 {
		b.WriteString("## Raw output\n\n")
		for _, r := range raw {
			fmt.Fprintf(b, "- [%s](%s): the GPU call's tarball (results, the table on stdout, stderr, nvidia-smi, the config)\n", r, r)
		}
		b.WriteString("\n")
	}
}

func setOf(in *experiments.ReportInput, file string) int {
	for i, f := range in.Files {
		if f == file {
			return i
		}
	}
	return 0
}

func relPath(dir, file string) string {
	if r, err := filepath.Rel(dir, file); err == nil {
		return r
	}
	return file
}

func writeCommands(b *strings.Builder, in *experiments.ReportInput) {
	b.WriteString("\n```sh\ngpusched paper tournament run configs/experiments/tournament-sim.yaml -o results/tournament-sim\n")
	b.WriteString("bash scripts/gpu/tournament.sh     # on a GPU host: gpusched paper tournament run configs/experiments/tournament-gpu.yaml\n")
	fmt.Fprintf(b, "gpusched paper tournament report -o docs/results/tournament.md%s %s\n```\n", notesFlag(in), strings.Join(in.Files, " "))
}

// notesFlag is the report command's --notes, where the page has notes.
func notesFlag(in *experiments.ReportInput) string {
	if len(in.Notes) == 0 {
		return ""
	}
	return " --notes docs/results/tournament-notes.md"
}

// writeTargets is the portfolio's three targets (issue #20) on every run,
// in one table: the checked portfolio column of each device and file.
func writeTargets(b *strings.Builder, ms []*matrix, order []int) {
	b.WriteString("\n## The portfolio's targets, every run\n\n")
	b.WriteString("The portfolio column (checked on the device) of each results file; details below.\n\n")
	b.WriteString("| run | workloads | within 3% of the best other (median regret) | regret interval wholly <= 3% | never below serial | strictly faster than every paper's strategy (target: a third) |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|\n")
	for _, k := range order {
		m := ms[k]
		for _, j := range m.portfolios() {
			if m.cols[j] != "portfolio" {
				continue
			}
			var t tally
			for i := range m.rows {
				if v, ok := m.judge(i, j); ok {
					t.add(v)
				}
			}
			shown := "-"
			if m.gpu {
				shown = fmt.Sprint(t.shownWithin)
			}
			fmt.Fprintf(b, "| %s | %d | %d (%s) | %s | %d (%s) | %d (%s) |\n", m.deviceTitle(), t.rows,
				t.within, met(t.within == t.rows), shown, t.never, met(t.never == t.rows), t.beats, met(3*t.beats >= t.rows))
		}
	}
}

// writeMatrix writes one device's table: a cell per workload and
// scheduler, the winner in bold and named in the last column.
func writeMatrix(b *strings.Builder, m *matrix, r *experiments.Results, file string) {
	fmt.Fprintf(b, "\n## %s\n\n", m.deviceTitle())
	fmt.Fprintf(b, "From [%s](%s), experiment %s, %d repetitions per row", filepath.Base(file), file, r.Experiment, r.Repetitions)
	for _, p := range r.Provenance {
		if p.GPU != nil {
			fmt.Fprintf(b, "; %s, driver %s, CUDA %s, %s", p.GPU.Name, p.GPU.Driver, p.GPU.CUDA, p.Date)
		}
		if p.Commit != "" {
			fmt.Fprintf(b, "; gpusched %s", p.Commit)
		}
	}
	b.WriteString(".\n\n| workload |")
	for _, c := range m.cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString(" winner |\n|---|")
	b.WriteString(strings.Repeat("--:|", len(m.cols)))
	b.WriteString("---|\n")
	for i, w := range m.rows {
		fmt.Fprintf(b, "| %s |", w)
		win := m.winner(i)
		for j := range m.cols {
			fmt.Fprintf(b, " %s |", cellText(m.cell[i][j], j == win))
		}
		if win >= 0 {
			fmt.Fprintf(b, " %s |\n", m.cols[win])
		} else {
			b.WriteString(" - |\n")
		}
	}
}

// cellText is a row's speedup with its interval, "n/a" where the scheduler
// does not apply and "error" where the row failed.
func cellText(r *experiments.Row, win bool) string {
	switch {
	case r == nil:
		return ""
	case len(r.NotApplicable) > 0:
		return "n/a"
	case !ran(r):
		return "error"
	}
	s := fmt.Sprintf("%.2fx", speedup(r))
	if p := r.PairedSpeedup; p != nil {
		s += fmt.Sprintf(" [%.2f, %.2f]", p.Lo, p.Hi)
	}
	if win {
		s = "**" + s + "**"
	}
	return s
}

// regret is how much slower row r is than row best, as a fraction.
func regret(r, best *experiments.Row) float64 {
	if !ran(r) || !ran(best) {
		return math.NaN()
	}
	return r.Makespan.Median/best.Makespan.Median - 1
}
