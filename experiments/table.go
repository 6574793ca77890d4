package experiments

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// printer writes the results table a row at a time, in matrix order, as
// soon as a row and its group's baseline are both done, and keeps a
// progress bar on a terminal.
type printer struct {
	err       error // the first failed write
	w, bar    io.Writer
	jobs      []*job
	done      []bool
	next      int
	completed int
	cols      []column
	baseOf    map[int]int // group -> job position of its baseline
	started   time.Time   // for the progress bar's ETA (stderr only)
}

type column struct {
	title string
	width int
	right bool
}

func newPrinter(opt RunOptions, jobs []*job) *printer {
	p := &printer{w: opt.Table, bar: opt.Progress, jobs: jobs, done: make([]bool, len(jobs)), baseOf: map[int]int{}, started: time.Now()}
	var pointNames []string
	if len(jobs) > 0 {
		for _, a := range jobs[0].point {
			pointNames = append(pointNames, a.Name)
		}
	}
	for k, name := range pointNames {
		c := column{title: name, width: len(name)}
		for _, j := range jobs {
			c.width = max(c.width, len(j.point[k].Value))
		}
		p.cols = append(p.cols, c)
	}
	wl, sc, dv := column{title: "workload", width: 8}, column{title: "scheduler", width: 9}, column{title: "device", width: 6}
	for i, j := range jobs {
		wl.width = max(wl.width, len(j.workload.Name))
		sc.width = max(sc.width, len(j.sched.Name))
		dv.width = max(dv.width, len(j.device))
		if j.sched.Name == j.exp.Baseline && j.exp.Baseline != "" {
			p.baseOf[j.group] = i
		}
	}
	p.cols = append(p.cols, wl, sc, dv,
		column{title: "makespan µs median [min-max]", width: 32, right: true},
		column{title: "speedup", width: 7, right: true},
		column{title: "SM util", width: 7, right: true},
		column{title: "kernels", width: 7, right: true},
		column{title: "races", width: 5, right: true},
		column{title: "notes", width: 5})
	if p.w != nil {
		titles := make([]string, len(p.cols))
		for i, c := range p.cols {
			titles[i] = c.title
		}
		p.print(p.w, "%s\n", p.line(titles))
		rule := make([]string, len(p.cols))
		for i, c := range p.cols {
			rule[i] = strings.Repeat("-", c.width)
		}
		p.print(p.w, "%s\n", p.line(rule))
	}
	p.drawBar()
	return p
}

func (p *printer) line(cells []string) string {
	var b strings.Builder
	for i, c := range p.cols {
		if i > 0 {
			b.WriteString("  ")
		}
		cell := cells[i]
		pad := c.width - len([]rune(cell))
		if i == len(p.cols)-1 {
			pad = 0 // no trailing blanks
		}
		if c.right {
			b.WriteString(strings.Repeat(" ", max(pad, 0)) + cell)
		} else {
			b.WriteString(cell + strings.Repeat(" ", max(pad, 0)))
		}
	}
	return strings.TrimRight(b.String(), " ")
}

func (p *printer) complete(i int, rows []Row) {
	p.done[i] = true
	p.completed++
	for p.next < len(p.jobs) && p.done[p.next] {
		j := p.jobs[p.next]
		b, hasBase := p.baseOf[j.group]
		if hasBase && !p.done[b] {
			break
		}
		var base *Row
		if hasBase {
			base = &rows[b]
		}
		p.printRow(&rows[p.next], base)
		p.next++
	}
	p.drawBar()
}

func (p *printer) printRow(r, base *Row) {
	if p.w == nil {
		return
	}
	cells := make([]string, 0, len(p.cols))
	for _, a := range r.Point {
		cells = append(cells, a.Value)
	}
	cells = append(cells, r.Workload, r.Scheduler, r.Device, fmtMakespan(r.Makespan))
	speed := "-"
	if base != nil && base.Makespan != nil && base.Makespan.N > 0 && r.Makespan != nil && r.Makespan.N > 0 {
		speed = fmt.Sprintf("%.3fx", base.Makespan.Median/r.Makespan.Median)
	}
	cells = append(cells, speed, fmtPct(r.SMUtil), fmtInt(r.Kernels), fmtRaces(r.Races))
	note := "ok"
	if r.Races != nil && *r.Races > 0 && len(r.RaceExamples) > 0 {
		note = "RACE: " + r.RaceExamples[0]
	}
	if len(r.NotApplicable) > 0 {
		note = "n/a: needs " + strings.Join(r.NotApplicable, ", ")
	}
	if len(r.Errors) > 0 {
		note = "ERROR: " + r.Errors[0]
		if len(r.Errors) > 1 {
			note += fmt.Sprintf(" (+%d more)", len(r.Errors)-1)
		}
	}
	cells = append(cells, note)
	p.clearBar()
	p.print(p.w, "%s\n", p.line(cells))
}

func (p *printer) drawBar() {
	if p.bar == nil || len(p.jobs) == 0 {
		return
	}
	const width = 30
	filled := p.completed * width / len(p.jobs)
	elapsed := time.Since(p.started)
	eta := "ETA -"
	if p.completed > 0 {
		left := elapsed / time.Duration(p.completed) * time.Duration(len(p.jobs)-p.completed)
		eta = "ETA " + clock(left)
	}
	p.print(p.bar, "\r\033[K[%s%s] %d/%d rows, %s elapsed, %s", strings.Repeat("#", filled), strings.Repeat(" ", width-filled),
		p.completed, len(p.jobs), clock(elapsed), eta)
}

// clock formats d as m:ss or h:mm:ss.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func (p *printer) clearBar() {
	if p.bar != nil {
		p.print(p.bar, "\r\033[K")
	}
}

func (p *printer) finish() { p.clearBar() }

// print writes to the table or the bar, keeping the first error (a closed
// pipe), which the run returns.
func (p *printer) print(w io.Writer, format string, a ...any) {
	if _, err := fmt.Fprintf(w, format, a...); err != nil && p.err == nil {
		p.err = err
	}
}

func fmtMakespan(s *Summary) string {
	if s == nil || s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f [%.1f-%.1f]", s.Median, s.Min, s.Max)
}

func fmtPct(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *f*100)
}

func fmtInt(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

func fmtRaces(n *int) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

func fmtSpeedup(s *float64) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%.3fx", *s)
}

// sanitize makes a string safe as a file name.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
