package figures

import (
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legend names the series of a chart in a grid of equal columns that
// wraps into as many rows as the width needs, so it never leaves the
// canvas; a name too long for the width is shortened.
type legend struct {
	names []string
	lines bool // line-and-marker keys (line charts) instead of swatches
}

const (
	keyWidth = vg.Length(16)
	keyGap   = vg.Length(4)
	colGap   = vg.Length(12)
)

// grid is the legend's column width and column and row counts.
func (l *legend) grid(width vg.Length) (colW vg.Length, cols, rows int) {
	if len(l.names) == 0 {
		return 0, 0, 0
	}
	ts := textStyle(legendSize)
	for _, n := range l.names {
		colW = max(colW, keyWidth+keyGap+ts.Width(n)+colGap)
	}
	colW = min(colW, width)
	cols = max(1, min(len(l.names), int(math.Floor(float64(width/colW)))))
	rows = (len(l.names) + cols - 1) / cols
	return colW, cols, rows
}

func (l *legend) height(width vg.Length) vg.Length {
	_, _, rows := l.grid(width)
	return vg.Length(rows) * lineHeight(legendSize+2)
}

// draw draws the legend with its top left corner at at.
func (l *legend) draw(dc draw.Canvas, at vg.Point, width vg.Length) {
	colW, cols, _ := l.grid(width)
	ts := textStyle(legendSize)
	ts.YAlign = draw.YCenter
	rowH := lineHeight(legendSize + 2)
	for i, name := range l.names {
		x := at.X + vg.Length(i%cols)*colW
		y := at.Y - vg.Length(i/cols)*rowH - rowH/2
		st := styleOf(i)
		if l.lines {
			drawLineKey(dc, st, x, y)
		} else {
			r := vg.Rectangle{Min: vg.Point{X: x, Y: y - 4}, Max: vg.Point{X: x + keyWidth, Y: y + 4}}
			fillBar(dc, r, st)
		}
		dc.FillText(ts, vg.Point{X: x + keyWidth + keyGap, Y: y}, shorten(name, ts, colW-keyWidth-keyGap-colGap/2))
	}
}

func drawLineKey(dc draw.Canvas, st seriesStyle, x, y vg.Length) {
	ls := draw.LineStyle{Color: st.color, Width: 1.2, Dashes: st.dashes}
	dc.StrokeLine2(ls, x, y, x+keyWidth, y)
	dc.DrawGlyphNoClip(draw.GlyphStyle{Color: st.color, Radius: 2.5, Shape: st.glyph}, vg.Point{X: x + keyWidth/2, Y: y})
}

// fillBar fills r in the series' colour and hatch, with a thin outline.
func fillBar(dc draw.Canvas, r vg.Rectangle, st seriesStyle) {
	dc.SetColor(st.color)
	dc.Fill(r.Path())
	hatch(dc, r, st.pattern)
	dc.SetLineStyle(draw.LineStyle{Color: grey, Width: 0.4})
	dc.Stroke(r.Path())
}

// hatch draws pattern p inside r.
func hatch(dc draw.Canvas, r vg.Rectangle, p pattern) {
	const step = vg.Length(3.5)
	ls := draw.LineStyle{Color: hatchInk, Width: 0.5}
	x0, y0, x1, y1 := r.Min.X, r.Min.Y, r.Max.X, r.Max.Y
	switch p {
	case hatchHorizontal:
		for y := y0 + step/2; y < y1; y += step {
			dc.StrokeLine2(ls, x0, y, x1, y)
		}
	case hatchVertical:
		for x := x0 + step/2; x < x1; x += step {
			dc.StrokeLine2(ls, x, y0, x, y1)
		}
	case hatchSlash, hatchBackslash, hatchCross:
		d := step * 1.4142
		if p != hatchBackslash { // lines y = x + c
			for c := y0 - x1 + d/2; c < y1-x0; c += d {
				xa, xb := max(x0, y0-c), min(x1, y1-c)
				if xa < xb {
					dc.StrokeLine2(ls, xa, xa+c, xb, xb+c)
				}
			}
		}
		if p != hatchSlash { // lines y = -x + c
			for c := x0 + y0 + d/2; c < x1+y1; c += d {
				xa, xb := max(x0, c-y1), min(x1, c-y0)
				if xa < xb {
					dc.StrokeLine2(ls, xa, c-xa, xb, c-xb)
				}
			}
		}
	case hatchDots:
		dot := draw.GlyphStyle{Color: hatchInk, Radius: 0.6, Shape: draw.CircleGlyph{}}
		for y := y0 + step/2; y < y1; y += step {
			for x := x0 + step/2; x < x1; x += step {
				dc.DrawGlyphNoClip(dot, vg.Point{X: x, Y: y})
			}
		}
	}
}
