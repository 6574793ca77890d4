package figures

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarChart is one value per (group, series), each with an optional 95%
// interval, for example each scheduler's speedup on each device.
type BarChart struct {
	Title      string
	ValueLabel string // the value axis's label
	Note       string // a caption line under the chart: how values and intervals were computed
	// Reference draws a dashed line at this value (the baseline's 1.0); 0
	// draws none.
	Reference float64
	// Series lists every series in the order they get styles; bars of a
	// series not listed are an error.
	Series []string
	Groups []BarGroup
}

// BarGroup is one group of bars (one panel in small multiples).
type BarGroup struct {
	Label string
	Bars  []Bar
}

// Bar is one value. A NaN Value is a missing bar, marked with Missing (for
// example "error"); NaN Lo and Hi mean no interval.
type Bar struct {
	Series  string
	Value   float64
	Lo, Hi  float64
	Missing string
}

// groupedMax is the most series drawn as grouped bars with a legend; more
// are drawn as small multiples.
const groupedMax = 8

func (c *BarChart) validate() (map[string]int, error) {
	if len(c.Series) == 0 || len(c.Groups) == 0 {
		return nil, errors.New("figures: a bar chart needs series and groups")
	}
	var used []seriesUse
	for _, g := range c.Groups {
		for _, b := range g.Bars {
			used = append(used, seriesUse{b.Series, g.Label})
		}
	}
	return seriesIndex(c.Series, used)
}

func (c *BarChart) layout() (*figure, error) {
	idx, err := c.validate()
	if err != nil {
		return nil, err
	}
	if len(c.Series) <= groupedMax {
		return c.grouped(idx), nil
	}
	return c.multiples(idx), nil
}

// grouped is vertical bars, the groups along the x axis, a legend above.
func (c *BarChart) grouped(idx map[string]int) *figure {
	var bars []placedBar
	labels := make([]string, len(c.Groups))
	perGroup := 0
	for _, g := range c.Groups {
		perGroup = max(perGroup, len(g.Bars))
	}
	w := 0.8 / float64(max(perGroup, 1))
	for gi, g := range c.Groups {
		labels[gi] = g.Label
		for k, b := range g.Bars {
			pos := float64(gi) + (float64(k)-float64(len(g.Bars)-1)/2)*w
			bars = append(bars, placedBar{Bar: b, pos: pos, width: w * 0.92, style: idx[b.Series]})
		}
	}
	nbars := len(bars)
	width := clampLen(vg.Length(nbars)*9+vg.Length(len(c.Groups))*12+90, 7*vg.Inch, 24*vg.Inch)
	p := newPanel("", "", c.ValueLabel)
	p.Add(valueGrid(false))
	p.Add(&barsPlotter{bars: bars, valueLabels: true})
	if c.Reference != 0 {
		p.Add(refLine{value: c.Reference})
	}
	categoryAxis(&p.X, labels, width-90)
	fr := newFrame(width, c.Title, c.Note, legend{names: c.Series})
	top, bottom := fr.chrome()
	plotH := 3 * vg.Inch
	return &figure{width: width, height: top + bottom + plotH + axisLabelRoom(&p.X), frame: fr,
		draw: func(inner draw.Canvas) { p.Draw(inner) }}
}

// multiples is one panel of horizontal bars per group, the series named
// on each panel's axis.
func (c *BarChart) multiples(idx map[string]int) *figure {
	cols, rows := grid(len(c.Groups))
	width := vg.Length(cols) * 3.6 * vg.Inch
	most := 0
	for _, g := range c.Groups {
		most = max(most, len(g.Bars))
	}
	tileH := vg.Length(most)*13 + 62
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	nameW := vg.Length(1.6 * vg.Inch)
	// One value scale for every panel, so that bars compare across them.
	var all []placedBar
	for _, g := range c.Groups {
		for _, b := range g.Bars {
			all = append(all, placedBar{Bar: b})
		}
	}
	_, vmax, _, _ := (&barsPlotter{bars: all, horizontal: true}).DataRange()
	for gi, g := range c.Groups {
		p := newPanel(g.Label, c.ValueLabel, "")
		var bars []placedBar
		names := make([]string, len(g.Bars))
		for k, b := range g.Bars {
			pos := float64(len(g.Bars) - 1 - k) // the first series on top
			bars = append(bars, placedBar{Bar: b, pos: pos, width: 0.72, style: idx[b.Series]})
			names[len(g.Bars)-1-k] = shorten(b.Series, p.Y.Tick.Label, nameW)
		}
		p.Add(valueGrid(true))
		p.Add(&barsPlotter{bars: bars, horizontal: true, valueLabels: true})
		if c.Reference != 0 {
			p.Add(refLine{value: c.Reference, vertical: true})
		}
		p.X.Min, p.X.Max = 0, vmax
		p.Y.Tick.Marker = categoryTicks(names, 1)
		p.Y.Tick.Length = 0
		p.Y.Padding = 2
		plots[gi/cols][gi%cols] = p
	}
	fr := newFrame(width, c.Title, c.Note, legend{})
	top, bottom := fr.chrome()
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 14, PadY: 10}
	return &figure{width: width, height: top + bottom + vg.Length(rows)*tileH + vg.Length(rows-1)*10, frame: fr,
		draw: func(inner draw.Canvas) { drawTiles(plots, tiles, inner) }}
}

// drawTiles draws a grid of panels aligned on their data areas; nil
// panels are left blank.
func drawTiles(plots [][]*plot.Plot, tiles draw.Tiles, dc draw.Canvas) {
	// plot.Align needs a panel in every cell; blank cells borrow the
	// first panel's shape and are not drawn.
	full := make([][]*plot.Plot, len(plots))
	for r := range plots {
		full[r] = make([]*plot.Plot, len(plots[r]))
		for c := range plots[r] {
			full[r][c] = plots[r][c]
			if full[r][c] == nil {
				full[r][c] = plots[0][0]
			}
		}
	}
	canvases := plot.Align(full, tiles, dc)
	for r := range plots {
		for c, p := range plots[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
}

func clampLen(v, lo, hi vg.Length) vg.Length { return max(lo, min(hi, v)) }

// newPanel is a plot with the package's fonts, a title and axis labels.
func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	styleAxes(p)
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	return p
}

// placedBar is a bar at a position on the category axis.
type placedBar struct {
	Bar
	pos, width float64
	style      int
}

// barsPlotter draws bars from zero, their intervals as whiskers and their
// values as labels.
type barsPlotter struct {
	bars        []placedBar
	horizontal  bool
	valueLabels bool
}

func (b *barsPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	cmin, cmax, vmax := math.Inf(1), math.Inf(-1), 0.0
	for _, bar := range b.bars {
		cmin = math.Min(cmin, bar.pos-0.5)
		cmax = math.Max(cmax, bar.pos+0.5)
		for _, v := range []float64{bar.Value, bar.Hi} {
			if !math.IsNaN(v) {
				vmax = math.Max(vmax, v)
			}
		}
	}
	// Room for the value labels past the longest bar.
	vmax *= 1.12
	if b.horizontal {
		return 0, vmax, cmin, cmax
	}
	return cmin, cmax, 0, vmax
}

func (b *barsPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	at := func(pos, v float64) vg.Point {
		if b.horizontal {
			return vg.Point{X: trX(v), Y: trY(pos)}
		}
		return vg.Point{X: trX(pos), Y: trY(v)}
	}
	vs := textStyle(valueSize)
	for _, bar := range b.bars {
		if math.IsNaN(bar.Value) {
			ms := vs
			ms.Color = missingInk
			ms.XAlign, ms.YAlign = draw.XCenter, draw.YBottom
			if b.horizontal {
				ms.XAlign, ms.YAlign = draw.XLeft, draw.YCenter
			}
			c.FillText(ms, at(bar.pos, 0).Add(nudge(b.horizontal, 2)), bar.Missing)
			continue
		}
		lo, hi := at(bar.pos-bar.width/2, 0), at(bar.pos+bar.width/2, bar.Value)
		r := vg.Rectangle{Min: vg.Point{X: min(lo.X, hi.X), Y: min(lo.Y, hi.Y)}, Max: vg.Point{X: max(lo.X, hi.X), Y: max(lo.Y, hi.Y)}}
		fillBar(c, r, styleOf(bar.style))
		end := bar.Value
		if !math.IsNaN(bar.Lo) && !math.IsNaN(bar.Hi) {
			b.whisker(c, at, bar)
			end = math.Max(end, bar.Hi)
		}
		if b.valueLabels {
			b.valueLabel(c, at(bar.pos, end), r, bar.Value)
		}
	}
}

// nudge is a small offset away from the bar's base.
func nudge(horizontal bool, d vg.Length) vg.Point {
	if horizontal {
		return vg.Point{X: d}
	}
	return vg.Point{Y: d}
}

func (b *barsPlotter) whisker(c draw.Canvas, at func(pos, v float64) vg.Point, bar placedBar) {
	ls := draw.LineStyle{Color: black, Width: 0.8}
	lo, hi := at(bar.pos, bar.Lo), at(bar.pos, bar.Hi)
	c.StrokeLine2(ls, lo.X, lo.Y, hi.X, hi.Y)
	capHalf := vg.Length(2.5)
	for _, e := range []vg.Point{lo, hi} {
		if b.horizontal {
			c.StrokeLine2(ls, e.X, e.Y-capHalf, e.X, e.Y+capHalf)
		} else {
			c.StrokeLine2(ls, e.X-capHalf, e.Y, e.X+capHalf, e.Y)
		}
	}
}

// valueLabel writes v past the bar's end (or its whisker's), where it fits.
func (b *barsPlotter) valueLabel(c draw.Canvas, end vg.Point, r vg.Rectangle, v float64) {
	vs := textStyle(valueSize)
	s := formatValue(v)
	if b.horizontal {
		vs.XAlign, vs.YAlign = draw.XLeft, draw.YCenter
		c.FillText(vs, end.Add(vg.Point{X: 3}), s)
		return
	}
	if vs.Width(s) > r.Max.X-r.Min.X+4 {
		return // too narrow to label: the axis says it
	}
	vs.XAlign, vs.YAlign = draw.XCenter, draw.YBottom
	c.FillText(vs, end.Add(vg.Point{Y: 2}), s)
}

func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
