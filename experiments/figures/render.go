package figures

import (
	"bytes"
	"fmt"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is a BarChart or a LineChart.
type Chart interface {
	layout() (*figure, error)
}

// Formats are the formats Render writes.
var Formats = []string{"svg", "pdf"}

// Render draws c in format (svg or pdf).
func Render(c Chart, format string) ([]byte, error) {
	f, err := c.layout()
	if err != nil {
		return nil, err
	}
	var cv vg.CanvasWriterTo
	switch format {
	case "svg":
		cv = vgsvg.New(f.width, f.height)
	case "pdf":
		cv = vgpdf.New(f.width, f.height)
	default:
		return nil, fmt.Errorf("figures: unknown format %q (known: %s)", format, strings.Join(Formats, ", "))
	}
	dc := draw.New(cv)
	dc.SetColor(white)
	dc.Fill(dc.Path())
	f.draw(f.frame.draw(dc))
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figures: write %s: %w", format, err)
	}
	if format == "svg" {
		// The text was measured in Liberation Sans; Arial and Helvetica
		// have its metrics, so a viewer without it keeps the layout.
		return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte(svgFonts)), nil
	}
	return buf.Bytes(), nil
}

const svgFonts = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// figure is a laid-out chart: its size, its frame (title, legend, note)
// and what draws inside the frame.
type figure struct {
	width, height vg.Length
	frame         frame
	draw          func(inner draw.Canvas)
}

// margin is the blank border around a figure.
const margin = vg.Length(6)

// frame is what surrounds a chart's plots: a title above, a legend under
// it, a note at the bottom, each wrapped to the figure's width.
type frame struct {
	width  vg.Length
	title  []string
	legend legend
	note   []string
}

func newFrame(width vg.Length, title, note string, lg legend) frame {
	inner := width - 2*margin
	return frame{width: width, title: wrap(title, textStyle(titleSize), inner),
		legend: lg, note: wrap(note, textStyle(noteSize), inner)}
}

func lineHeight(size vg.Length) vg.Length { return size * 1.25 }

// chrome is the height the frame takes above and below the plots.
func (f *frame) chrome() (top, bottom vg.Length) {
	top = margin + vg.Length(len(f.title))*lineHeight(titleSize)
	if h := f.legend.height(f.width - 2*margin); h > 0 {
		top += 4 + h
	}
	bottom = margin
	if len(f.note) > 0 {
		bottom += 4 + vg.Length(len(f.note))*lineHeight(noteSize)
	}
	return top + 4, bottom
}

// draw draws the frame on dc and returns the canvas left for the plots.
func (f *frame) draw(dc draw.Canvas) draw.Canvas {
	top, bottom := f.chrome()
	y := dc.Max.Y - margin
	ts := textStyle(titleSize)
	ts.YAlign = draw.YTop
	for _, line := range f.title {
		dc.FillText(ts, vg.Point{X: dc.Min.X + margin, Y: y}, line)
		y -= lineHeight(titleSize)
	}
	if h := f.legend.height(f.width - 2*margin); h > 0 {
		f.legend.draw(dc, vg.Point{X: dc.Min.X + margin, Y: y - 4}, f.width-2*margin)
	}
	ns := textStyle(noteSize)
	ns.Color = grey
	ns.YAlign = draw.YTop
	y = dc.Min.Y + margin + vg.Length(len(f.note))*lineHeight(noteSize)
	for _, line := range f.note {
		dc.FillText(ns, vg.Point{X: dc.Min.X + margin, Y: y}, line)
		y -= lineHeight(noteSize)
	}
	return draw.Crop(dc, margin, -margin, bottom, -top)
}

// wrap breaks s into lines no wider than width, at spaces.
func wrap(s string, sty interface{ Width(string) vg.Length }, width vg.Length) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		line := ""
		for _, w := range words {
			next := w
			if line != "" {
				next = line + " " + w
			}
			if line != "" && sty.Width(next) > width {
				lines = append(lines, line)
				next = w
			}
			line = next
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// seriesUse is a series a bar or line names, and where.
type seriesUse struct{ series, where string }

// seriesIndex maps each series to its position, and checks that the
// series are distinct and that every use names one of them.
func seriesIndex(series []string, used []seriesUse) (map[string]int, error) {
	idx := map[string]int{}
	for i, s := range series {
		if _, dup := idx[s]; dup {
			return nil, fmt.Errorf("figures: series %q listed twice", s)
		}
		idx[s] = i
	}
	for _, u := range used {
		if _, ok := idx[u.series]; !ok {
			return nil, fmt.Errorf("figures: series %q in %q: not in the chart's series", u.series, u.where)
		}
	}
	return idx, nil
}

// grid is the columns and rows of n panels: up to 3 columns, 2 for 4.
func grid(n int) (cols, rows int) {
	cols = min(n, 3)
	if n == 4 {
		cols = 2
	}
	return cols, (n + cols - 1) / cols
}
