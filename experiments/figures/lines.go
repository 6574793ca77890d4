package figures

import (
	"errors"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LineChart is one or more panels of lines, one line per series, for
// example the speedup of each scheduler against a swept parameter.
type LineChart struct {
	Title, XLabel, YLabel string
	Note                  string
	// XCategories, if set, makes the x axis categorical: a point's X is
	// an index into it (a sweep's values, evenly spaced whatever they
	// are); otherwise X is numeric.
	XCategories []string
	// Reference draws a dashed horizontal line at this y (0: none).
	Reference float64
	// YFromZero starts the y axis at 0.
	YFromZero bool
	// Steps draws each line as steps (a value holds until the next
	// point) without markers: a time series of bins.
	Steps  bool
	Series []string
	Panels []LinePanel
}

// LinePanel is one panel.
type LinePanel struct {
	Title string
	Lines []Line
}

// Line is one series' points, in x order. NaN Lo and Hi mean no interval;
// a NaN Y is a gap.
type Line struct {
	Series string
	Points []Point
	// End is where the last step ends (Steps charts).
	End float64
}

// Point is one point of a line with its optional 95% interval.
type Point struct{ X, Y, Lo, Hi float64 }

func (c *LineChart) validate() (map[string]int, error) {
	if len(c.Series) == 0 || len(c.Panels) == 0 {
		return nil, errors.New("figures: a line chart needs series and panels")
	}
	var used []seriesUse
	for _, p := range c.Panels {
		for _, l := range p.Lines {
			used = append(used, seriesUse{l.Series, p.Title})
		}
	}
	return seriesIndex(c.Series, used)
}

func (c *LineChart) layout() (*figure, error) {
	idx, err := c.validate()
	if err != nil {
		return nil, err
	}
	cols, rows := grid(len(c.Panels))
	width := max(7*vg.Inch, vg.Length(cols)*2.6*vg.Inch)
	tileW := (width - 2*margin - vg.Length(cols-1)*14) / vg.Length(cols)
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	room := vg.Length(0)
	for pi, panel := range c.Panels {
		p := newPanel(panel.Title, c.XLabel, c.YLabel)
		p.Add(valueGrid(false))
		if c.XCategories != nil {
			categoryAxis(&p.X, c.XCategories, tileW-60)
			room = max(room, axisLabelRoom(&p.X))
			p.X.Min, p.X.Max = -0.4, float64(len(c.XCategories))-0.6
		}
		if c.YFromZero {
			p.Y.Min = 0
		}
		if c.Reference != 0 {
			p.Add(refLine{value: c.Reference})
		}
		for _, l := range panel.Lines {
			p.Add(&linePlotter{line: l, style: styleOf(idx[l.Series]), steps: c.Steps})
		}
		plots[pi/cols][pi%cols] = p
	}
	fr := newFrame(width, c.Title, c.Note, legend{names: c.Series, lines: true})
	top, bottom := fr.chrome()
	tileH := 2.3*vg.Inch + room
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 14, PadY: 10}
	return &figure{width: width, height: top + bottom + vg.Length(rows)*tileH + vg.Length(rows-1)*10, frame: fr,
		draw: func(inner draw.Canvas) { drawTiles(plots, tiles, inner) }}, nil
}

// linePlotter draws one line with its markers and interval whiskers.
type linePlotter struct {
	line  Line
	style seriesStyle
	steps bool
}

func (l *linePlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, pt := range l.line.Points {
		xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
		for _, v := range []float64{pt.Y, pt.Lo, pt.Hi} {
			if !math.IsNaN(v) {
				ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
			}
		}
	}
	if l.steps && l.line.End > xmax {
		xmax = l.line.End
	}
	return xmin, xmax, ymin, ymax
}

func (l *linePlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := draw.LineStyle{Color: l.style.color, Width: 1.2, Dashes: l.style.dashes}
	var seg []vg.Point
	flush := func() {
		if len(seg) > 1 {
			c.StrokeLines(ls, c.ClipLinesXY(seg)...)
		}
		seg = seg[:0]
	}
	pts := l.line.Points
	for i, pt := range pts {
		if math.IsNaN(pt.Y) {
			flush()
			continue
		}
		seg = append(seg, vg.Point{X: trX(pt.X), Y: trY(pt.Y)})
		if l.steps {
			next := l.line.End
			if i+1 < len(pts) {
				next = pts[i+1].X
			}
			seg = append(seg, vg.Point{X: trX(next), Y: trY(pt.Y)})
		}
	}
	flush()
	if l.steps {
		return
	}
	wl := draw.LineStyle{Color: l.style.color, Width: 0.8}
	for _, pt := range pts {
		if math.IsNaN(pt.Y) {
			continue
		}
		x := trX(pt.X)
		if !math.IsNaN(pt.Lo) && !math.IsNaN(pt.Hi) && pt.Hi > pt.Lo {
			lo, hi := trY(pt.Lo), trY(pt.Hi)
			c.StrokeLine2(wl, x, lo, x, hi)
			c.StrokeLine2(wl, x-2.5, lo, x+2.5, lo)
			c.StrokeLine2(wl, x-2.5, hi, x+2.5, hi)
		}
		c.DrawGlyph(draw.GlyphStyle{Color: l.style.color, Radius: 2.5, Shape: l.style.glyph}, vg.Point{X: x, Y: trY(pt.Y)})
	}
}
