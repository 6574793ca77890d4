package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var missingInk = color.RGBA{R: 0xc0, A: 0xff}

// valueGrid is light grid lines across the value axis only: lines along
// the categories would run through the bars.
func valueGrid(horizontal bool) plot.Plotter {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = light, light
	g.Vertical.Width, g.Horizontal.Width = 0.4, 0.4
	if horizontal {
		g.Horizontal.Color = nil
	} else {
		g.Vertical.Color = nil
	}
	return g
}

// refLine is a dashed line across the plot at value (on the y axis, or on
// the x axis when vertical).
type refLine struct {
	value    float64
	vertical bool
}

func (r refLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	inf := math.Inf(1)
	if r.vertical {
		return r.value, r.value, inf, -inf
	}
	return inf, -inf, r.value, r.value
}

func (r refLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := draw.LineStyle{Color: black, Width: 0.8, Dashes: []vg.Length{4, 3}}
	if r.vertical {
		x := trX(r.value)
		c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		return
	}
	y := trY(r.value)
	c.StrokeLine2(ls, c.Min.X, y, c.Max.X, y)
}

// categoryTicks labels positions 0..n-1, every step-th label shown (the
// first and the last always).
func categoryTicks(labels []string, step int) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		ticks[i] = plot.Tick{Value: float64(i)}
		if i%step == 0 || i == len(labels)-1 && (i%step) > step/2 {
			ticks[i].Label = l
		}
	}
	return ticks
}

// maxCategoryLabel is the widest a category label may be before it is
// shortened.
const maxCategoryLabel = vg.Length(130)

// categoryAxis labels a categorical axis of len(labels) positions spread
// over width points so that labels never overlap: they are shortened,
// rotated when they do not fit side by side, and thinned out when even
// rotated ones would touch.
func categoryAxis(a *plot.Axis, labels []string, width vg.Length) {
	ts := a.Tick.Label
	short := make([]string, len(labels))
	widest := vg.Length(0)
	for i, l := range labels {
		short[i] = shorten(l, ts, maxCategoryLabel)
		widest = max(widest, ts.Width(short[i]))
	}
	per := width / vg.Length(max(len(labels), 1))
	step := 1
	if widest+4 > per {
		a.Tick.Label.Rotation = math.Pi / 4
		a.Tick.Label.XAlign = draw.XRight
		a.Tick.Label.YAlign = draw.YTop
		// Rotated labels stand side by side a line height apart (times √2).
		need := ts.FontExtents().Height * 1.5
		step = int(math.Ceil(float64(need / per)))
	}
	a.Tick.Marker = categoryTicks(short, max(step, 1))
	a.Padding = 2
}

// axisLabelRoom is the extra height rotated tick labels take.
func axisLabelRoom(a *plot.Axis) vg.Length {
	if a.Tick.Label.Rotation == 0 {
		return 0
	}
	widest := vg.Length(0)
	for _, t := range a.Tick.Marker.Ticks(0, 0) {
		widest = max(widest, a.Tick.Label.Width(t.Label))
	}
	return widest * 0.71
}
