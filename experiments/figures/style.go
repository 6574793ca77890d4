package figures

import (
	"image/color"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func init() {
	// gonum's PDF canvas writes the current time into every file and
	// walks maps in its catalogue; fixed dates and a sorted catalogue make
	// a chart's PDF depend on the chart alone.
	epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	fpdf.SetDefaultCreationDate(epoch)
	fpdf.SetDefaultModificationDate(epoch)
	fpdf.SetDefaultCatalogSort(true)
}

// palette is Tableau 10: distinct hues that stay apart for the common
// forms of colour blindness.
var palette = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x76, 0xb7, 0xb2, 0xff},
	{0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff},
	{0x9c, 0x75, 0x5f, 0xff}, {0xba, 0xb0, 0xac, 0xff},
}

// pattern is a bar's hatching.
type pattern int

const (
	solid pattern = iota
	hatchSlash
	hatchBackslash
	hatchCross
	hatchHorizontal
	hatchVertical
	hatchDots
	numPatterns
)

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{}, draw.BoxGlyph{},
}

var dashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(2)}, {vg.Points(1.5), vg.Points(1.5)}}

// seriesStyle is how series i of a chart looks. Colour, pattern and marker
// cycle with coprime periods (10, 7, 8), so no two of the first 70 series
// share colour and pattern, nor of the first 40 colour and marker.
type seriesStyle struct {
	color   color.RGBA
	pattern pattern
	glyph   draw.GlyphDrawer
	dashes  []vg.Length
}

func styleOf(i int) seriesStyle {
	return seriesStyle{
		color:   palette[i%len(palette)],
		pattern: pattern(i % int(numPatterns)),
		glyph:   glyphs[i%len(glyphs)],
		dashes:  dashes[(i/len(palette))%len(dashes)],
	}
}

var (
	black = color.Gray{Y: 0}
	grey  = color.Gray{Y: 0x60}
	light = color.Gray{Y: 0xd8}
)

// textStyle is Liberation Sans (metrically Arial and Helvetica) at size.
// Titles are not bold: gonum's PDF canvas cannot find bold faces.
func textStyle(size vg.Length) text.Style {
	f := plot.DefaultFont
	f.Variant = "Sans"
	return text.Style{Color: black, Font: font.From(f, size), Handler: plot.DefaultTextHandler}
}

// Font sizes in points: a 7-inch-wide figure shrunk to a paper's column
// keeps them readable.
const (
	titleSize  = 11
	labelSize  = 9
	tickSize   = 8
	legendSize = 8
	noteSize   = 7
	valueSize  = 7
)

// styleAxes sets a panel's fonts and grid.
func styleAxes(p *plot.Plot) {
	p.Title.TextStyle = textStyle(labelSize)
	p.Title.TextStyle.XAlign = draw.XCenter
	p.Title.TextStyle.YAlign = draw.YTop
	// Only the fonts change: gonum's alignments and rotations stay.
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = textStyle(labelSize).Font
		a.Tick.Label.Font = textStyle(tickSize).Font
		a.Label.Padding = vg.Points(4)
	}
}

// shorten cuts s to fit width in sty, ending it with an ellipsis.
func shorten(s string, sty text.Style, width vg.Length) string {
	if sty.Width(s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 1 && sty.Width(string(r)+"…") > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

var (
	white    = color.Gray{Y: 0xff}
	hatchInk = color.NRGBA{A: 0x99}
)
