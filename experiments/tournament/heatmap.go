package tournament

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// panel is one matrix of the heatmap: a device's speedups, rows workloads
// and columns schedulers; NaN marks a cell that did not run.
type panel struct {
	title   string
	rows    []string
	cols    []string
	speedup [][]float64
	winner  []int // per row, the winning column (-1: none)
}

// Cell geometry and the colour scale: log2 of the speedup, from 1/4x
// (red) through 1x (white) to 4x and beyond (blue).
const (
	cellW, cellH = vg.Length(30), vg.Length(15)
	scaleLog2    = 2.0
)

var (
	black  = color.Gray{0}
	naGrey = color.Gray{225}
)

func style(size vg.Length) text.Style {
	f := plot.DefaultFont
	f.Variant = "Sans"
	return text.Style{Color: black, Font: font.From(f, size), Handler: plot.DefaultTextHandler}
}

// heat is the cell colour of speedup s.
func heat(s float64) color.Color {
	if math.IsNaN(s) || s <= 0 {
		return naGrey
	}
	x := math.Max(-1, math.Min(1, math.Log2(s)/scaleLog2))
	mix := func(a, b float64) uint8 { return uint8(math.Round(255 * (a + (b-a)*math.Abs(x)))) }
	if x < 0 { // towards red
		return color.RGBA{mix(1, 0.84), mix(1, 0.19), mix(1, 0.15), 255}
	}
	return color.RGBA{mix(1, 0.13), mix(1, 0.40), mix(1, 0.67), 255}
}

// heatmapSVG draws the panels one above the other, each with its workload names
// on the left and scheduler names above, every cell labelled with its
// speedup and the row's winner outlined.
func heatmapSVG(title string, panels []panel) ([]byte, error) {
	if len(panels) == 0 {
		return nil, fmt.Errorf("tournament: no results to draw")
	}
	label, tick, head := style(6), style(7), style(10)
	rowW := vg.Length(0)
	colH := vg.Length(0)
	for _, p := range panels {
		for _, r := range p.rows {
			rowW = max(rowW, tick.Width(r))
		}
		for _, c := range p.cols {
			colH = max(colH, tick.Width(c))
		}
	}
	// Panels one above the other (a GPU's and a simulator's matrices are
	// each some thirty columns wide), each as wide as its own columns.
	ph := func(p panel) vg.Length { return 12 + colH + 4 + cellH*vg.Length(len(p.rows)) + 14 }
	width, height := 12+tick.Width(scaleNote), vg.Length(28+36)
	for _, p := range panels {
		width = max(width, 12+rowW+8+cellW*vg.Length(len(p.cols)))
		height += ph(p)
	}
	cv := vgsvg.New(width, height)
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Path())
	top := height - 6
	dc.FillText(head, vg.Point{X: 6, Y: top - head.Height(title)}, title)
	top -= 22
	for _, p := range panels {
		drawPanel(dc, p, 6, top, rowW, colH, label, tick)
		top -= ph(p)
	}
	drawScale(dc, 6, 18, tick)
	dc.FillText(tick, vg.Point{X: 6, Y: 4}, scaleNote)
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// drawPanel draws one panel with its top-left corner at (x0, top).
func drawPanel(dc draw.Canvas, p panel, x0, top, rowW, colH vg.Length, label, tick text.Style) {
	head := style(8)
	dc.FillText(head, vg.Point{X: x0, Y: top - head.Height(p.title)}, p.title)
	gridX := x0 + rowW + 8
	gridTop := top - 12 - colH - 4
	rot := tick
	rot.Rotation = math.Pi / 2
	rot.XAlign, rot.YAlign = draw.XLeft, draw.YCenter
	for j, c := range p.cols {
		// Rotated a quarter turn: the text runs upwards from the grid.
		dc.FillText(rot, vg.Point{X: gridX + cellW*vg.Length(j) + cellW/2, Y: gridTop + 3}, c)
	}
	lab := label
	lab.XAlign, lab.YAlign = draw.XCenter, draw.YCenter
	for i, r := range p.rows {
		y := gridTop - cellH*vg.Length(i+1)
		t := tick
		t.XAlign, t.YAlign = draw.XRight, draw.YCenter
		dc.FillText(t, vg.Point{X: gridX - 4, Y: y + cellH/2}, r)
		for j := range p.cols {
			s := p.speedup[i][j]
			rect := vg.Rectangle{Min: vg.Point{X: gridX + cellW*vg.Length(j), Y: y}, Max: vg.Point{X: gridX + cellW*vg.Length(j+1), Y: y + cellH}}
			dc.SetColor(heat(s))
			dc.Fill(rect.Path())
			dc.SetColor(color.White)
			dc.SetLineWidth(0.5)
			dc.Stroke(rect.Path())
			if !math.IsNaN(s) {
				l := lab
				if math.Abs(math.Log2(s)) > 0.6*scaleLog2 {
					l.Color = color.White // on a dark cell
				}
				dc.FillText(l, vg.Point{X: rect.Min.X + cellW/2, Y: y + cellH/2}, fmt.Sprintf("%.2f", s))
			}
			if p.winner[i] == j {
				dc.SetColor(black)
				dc.SetLineWidth(1.5)
				dc.Stroke(rect.Path())
			}
		}
	}
}

// drawScale draws the colour scale along the bottom.
func drawScale(dc draw.Canvas, x, y vg.Length, tick text.Style) {
	steps := []float64{0.25, 0.5, 0.71, 1, 1.41, 2, 4}
	t := tick
	t.YAlign = draw.YCenter
	x0 := x
	for _, s := range steps {
		r := vg.Rectangle{Min: vg.Point{X: x0, Y: y}, Max: vg.Point{X: x0 + 22, Y: y + 10}}
		dc.SetColor(heat(s))
		dc.Fill(r.Path())
		c := t
		c.XAlign = draw.XCenter
		dc.FillText(c, vg.Point{X: x0 + 11, Y: y + 5}, fmt.Sprintf("%gx", s))
		x0 += 22
	}
	dc.SetColor(naGrey)
	r := vg.Rectangle{Min: vg.Point{X: x0 + 8, Y: y}, Max: vg.Point{X: x0 + 30, Y: y + 10}}
	dc.Fill(r.Path())
	dc.FillText(t, vg.Point{X: x0 + 34, Y: y + 5}, "n/a or failed")
}

const scaleNote = "Cells: speedup over serial (GPU: median of paired rounds). Outlined: the workload's winner."
