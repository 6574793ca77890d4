package experiments

import (
	"fmt"
	"io"
	"strings"
)

// Comparison is two result sets joined row by row.
type Comparison struct {
	A, B  string // labels (file names)
	Rows  []ComparedRow
	OnlyA []string // rows (labels) in A only
	OnlyB []string
}

// ComparedRow is one row present in both sets. Ratio is B's median makespan
// over A's: below 1, B is faster.
type ComparedRow struct {
	Label            string
	MedianA, MedianB float64 // µs
	Ratio            float64
	SpeedupA         *float64
	SpeedupB         *float64
	ErrorsA, ErrorsB int
}

// Compare joins a and b by (sweep point, workload, scheduler, device), in
// a's order, then b's extra rows.
func Compare(a, b *Results, labelA, labelB string) (*Comparison, error) {
	c := &Comparison{A: labelA, B: labelB}
	inB := map[string]*Row{}
	for i := range b.Rows {
		inB[b.Rows[i].Key()] = &b.Rows[i]
	}
	inA := map[string]bool{}
	for i := range a.Rows {
		ra := &a.Rows[i]
		inA[ra.Key()] = true
		rb, ok := inB[ra.Key()]
		if !ok {
			c.OnlyA = append(c.OnlyA, rowLabel(ra))
			continue
		}
		cr := ComparedRow{Label: rowLabel(ra), SpeedupA: ra.Speedup, SpeedupB: rb.Speedup, ErrorsA: len(ra.Errors), ErrorsB: len(rb.Errors)}
		if ra.Makespan != nil && ra.Makespan.N > 0 {
			cr.MedianA = ra.Makespan.Median
		}
		if rb.Makespan != nil && rb.Makespan.N > 0 {
			cr.MedianB = rb.Makespan.Median
		}
		if cr.MedianA > 0 && cr.MedianB > 0 {
			cr.Ratio = cr.MedianB / cr.MedianA
		}
		c.Rows = append(c.Rows, cr)
	}
	for i := range b.Rows {
		if !inA[b.Rows[i].Key()] {
			c.OnlyB = append(c.OnlyB, rowLabel(&b.Rows[i]))
		}
	}
	if len(c.Rows) == 0 {
		return c, fmt.Errorf("compare: %s and %s have no row in common (rows are matched by workload, scheduler, device and sweep point)", labelA, labelB)
	}
	return c, nil
}

// Print writes the comparison as a table.
func (c *Comparison) Print(w io.Writer) error {
	rows := [][]string{{"row", "A median µs", "B median µs", "B/A", "A speedup", "B speedup", ""}}
	for _, r := range c.Rows {
		ratio := "-"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.3f", r.Ratio)
		}
		note := ""
		if r.ErrorsA > 0 || r.ErrorsB > 0 {
			note = fmt.Sprintf("errors: A %d, B %d", r.ErrorsA, r.ErrorsB)
		}
		rows = append(rows, []string{r.Label, fmtUS(r.MedianA), fmtUS(r.MedianB), ratio, fmtSpeedup(r.SpeedupA), fmtSpeedup(r.SpeedupB), note})
	}
	if err := printAligned(w, rows); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A = %s, B = %s; B/A below 1 means B is faster.\n", c.A, c.B)
	if len(c.OnlyA) > 0 {
		fmt.Fprintf(&b, "only in A: %s\n", strings.Join(c.OnlyA, "; "))
	}
	if len(c.OnlyB) > 0 {
		fmt.Fprintf(&b, "only in B: %s\n", strings.Join(c.OnlyB, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtUS(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// printAligned writes rows as columns: the first and last left-aligned
// (labels and notes), the others right-aligned (numbers).
func printAligned(w io.Writer, rows [][]string) error {
	var width []int
	for _, r := range rows {
		for i, cell := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(cell)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(cell)))
			switch {
			case i == 0:
				b.WriteString(cell + pad)
			case i == len(r)-1:
				b.WriteString("  " + cell)
			default:
				b.WriteString("  " + pad + cell)
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}
