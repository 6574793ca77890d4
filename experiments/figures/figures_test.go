package figures

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// bars is a chart of n series in two groups, with intervals, one missing.
func bars(n int) *BarChart {
	c := &BarChart{Title: fmt.Sprintf("%d series", n), ValueLabel: "speedup (x)", Reference: 1, Note: "a note"}
	for i := 0; i < n; i++ {
		c.Series = append(c.Series, fmt.Sprintf("scheduler-%02d(window=%d)", i, 8<<(i%4)))
	}
	for g := 0; g < 2; g++ {
		grp := BarGroup{Label: fmt.Sprintf("h100 width=%d", 4<<g)}
		for i, s := range c.Series {
			v := 1 + float64(i%7)*0.2
			b := Bar{Series: s, Value: v, Lo: v - 0.05, Hi: v + 0.1}
			if i == 1 {
				b = Bar{Series: s, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Missing: "error"}
			}
			grp.Bars = append(grp.Bars, b)
		}
		c.Groups = append(c.Groups, grp)
	}
	return c
}

func lines(points int) *LineChart {
	c := &LineChart{Title: "sweep", XLabel: "width", YLabel: "speedup", Reference: 1}
	for x := 0; x < points; x++ {
		c.XCategories = append(c.XCategories, fmt.Sprint(1<<x))
	}
	c.Series = []string{"a", "b"}
	for p := 0; p < 2; p++ {
		pan := LinePanel{Title: fmt.Sprint("panel ", p)}
		for i, s := range c.Series {
			l := Line{Series: s}
			for x := range c.XCategories {
				y := 1 + float64(i*x)*0.1
				l.Points = append(l.Points, Point{X: float64(x), Y: y, Lo: y - 0.1, Hi: y + 0.1})
			}
			pan.Lines = append(pan.Lines, l)
		}
		c.Panels = append(c.Panels, pan)
	}
	return c
}

func charts() map[string]Chart {
	return map[string]Chart{"bars2": bars(2), "bars30": bars(30), "lines": lines(24),
		"steps": &LineChart{Title: "util", Steps: true, YFromZero: true, Series: []string{"s"},
			Panels: []LinePanel{{Lines: []Line{{Series: "s", End: 10, Points: []Point{{X: 0, Y: 1}, {X: 5, Y: 2}}}}}}}}
}

func TestRenderIsValidAndDeterministic(t *testing.T) {
	for name, c := range charts() {
		svg, err := Render(c, "svg")
		require.NoError(t, err, name)
		dec := xml.NewDecoder(bytes.NewReader(svg))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "%s: the SVG is XML", name)
		}
		assert.Contains(t, string(svg), svgFonts, "%s: fonts with Liberation Sans's metrics", name)
		pdf, err := Render(c, "pdf")
		require.NoError(t, err, name)
		assert.True(t, bytes.HasPrefix(pdf, []byte("%PDF-")), name)
		svg2, _ := Render(c, "svg")
		pdf2, _ := Render(c, "pdf")
		assert.Equal(t, svg, svg2, "%s: same chart, same SVG", name)
		assert.Equal(t, pdf, pdf2, "%s: same chart, same PDF", name)
	}
	_, err := Render(bars(2), "png")
	assert.ErrorContains(t, err, `unknown format "png"`)
}

func TestInvalidCharts(t *testing.T) {
	c := bars(3)
	c.Groups[0].Bars[0].Series = "nope"
	_, err := Render(c, "svg")
	assert.ErrorContains(t, err, `series "nope"`)
	c = bars(3)
	c.Series[1] = c.Series[0]
	_, err = Render(c, "svg")
	assert.ErrorContains(t, err, "listed twice")
	_, err = Render(&LineChart{}, "svg")
	assert.ErrorContains(t, err, "needs series and panels")
}

func TestLayoutFollowsTheSeriesCount(t *testing.T) {
	few, err := bars(groupedMax).layout()
	require.NoError(t, err)
	assert.Len(t, few.frame.legend.names, groupedMax, "grouped bars name the series in a legend")
	many, err := bars(groupedMax + 1).layout()
	require.NoError(t, err)
	assert.Empty(t, many.frame.legend.names, "small multiples name the series on each panel's axis")
	more, err := bars(30).layout()
	require.NoError(t, err)
	assert.Greater(t, more.height, many.height, "a panel grows with its bars")
}

func TestLegendStaysOnTheCanvas(t *testing.T) {
	var names []string
	for i := 0; i < 30; i++ {
		names = append(names, fmt.Sprintf("round-robin(k=%d,streams=%d)", i, i))
	}
	width := 7*vg.Inch - 2*margin
	l := legend{names: names}
	colW, cols, rows := l.grid(width)
	assert.LessOrEqual(t, vg.Length(cols)*colW, width)
	assert.Equal(t, (30+cols-1)/cols, rows)
	assert.Greater(t, cols, 1)

	long := legend{names: []string{string(bytes.Repeat([]byte("x"), 500))}}
	colW, cols, _ = long.grid(width)
	assert.Equal(t, 1, cols)
	assert.Equal(t, width, colW, "a name wider than the canvas gets the whole width")
	ts := textStyle(legendSize)
	s := shorten(long.names[0], ts, colW-keyWidth-keyGap-colGap/2)
	assert.LessOrEqual(t, ts.Width(s), colW-keyWidth-keyGap)
	assert.Equal(t, "…", s[len(s)-len("…"):])
}

func TestCategoryLabelsNeverOverlap(t *testing.T) {
	p := plot.New()
	styleAxes(p)
	var labels []string
	for i := 0; i < 40; i++ {
		labels = append(labels, fmt.Sprint(1<<i))
	}
	categoryAxis(&p.X, labels, 300)
	assert.NotZero(t, p.X.Tick.Label.Rotation, "long labels rotate")
	shown := 0
	for _, tk := range p.X.Tick.Marker.Ticks(0, 39) {
		if tk.Label != "" {
			shown++
		}
	}
	assert.Less(t, shown, 40, "too many to stand side by side even rotated: thinned")
	// Rotated labels stand a line apart: shown labels * line height fits.
	assert.LessOrEqual(t, vg.Length(shown)*p.X.Tick.Label.FontExtents().Height*1.5, vg.Length(300)+p.X.Tick.Label.FontExtents().Height*1.5)

	q := plot.New()
	styleAxes(q)
	categoryAxis(&q.X, []string{"2", "4", "8"}, 300)
	assert.Zero(t, q.X.Tick.Label.Rotation)
	for i, tk := range q.X.Tick.Marker.Ticks(0, 2) {
		assert.Equal(t, []string{"2", "4", "8"}[i], tk.Label)
	}
}

func TestHatchStaysInsideItsBar(t *testing.T) {
	r := vg.Rectangle{Min: vg.Point{X: 10, Y: 20}, Max: vg.Point{X: 40, Y: 95}}
	for p := pattern(0); p < numPatterns; p++ {
		var rec recorder.Canvas
		dc := draw.NewCanvas(&rec, 100, 100)
		hatch(dc, r, p)
		marks := 0
		for _, a := range rec.Actions {
			if s, ok := a.(*recorder.Stroke); ok {
				marks++
				for _, c := range s.Path {
					if c.Type == vg.MoveComp || c.Type == vg.LineComp {
						assert.True(t, c.Pos.X >= r.Min.X-1e-6 && c.Pos.X <= r.Max.X+1e-6 && c.Pos.Y >= r.Min.Y-1e-6 && c.Pos.Y <= r.Max.Y+1e-6,
							"pattern %d: %v outside %v", p, c.Pos, r)
					}
				}
			}
			if _, ok := a.(*recorder.Fill); ok {
				marks++
			}
		}
		if p == solid {
			assert.Zero(t, marks)
		} else {
			assert.NotZero(t, marks, "pattern %d draws something", p)
		}
	}
}

func TestStylesStayApart(t *testing.T) {
	seen := map[[2]int]bool{}
	for i := 0; i < 70; i++ {
		st := styleOf(i)
		c := -1
		for k, p := range palette {
			if p == st.color {
				c = k
			}
		}
		key := [2]int{c, int(st.pattern)}
		assert.False(t, seen[key], "series %d repeats a colour and pattern", i)
		seen[key] = true
	}
}

// TestRendersThroughRsvg draws every chart to PNG with rsvg-convert where
// it is installed (librsvg2-bin), as a viewer would.
func TestRendersThroughRsvg(t *testing.T) {
	bin, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Skip("rsvg-convert not installed (apt-get install librsvg2-bin)")
	}
	dir := t.TempDir()
	for name, c := range map[string]Chart{"bars30": bars(30), "lines": lines(24)} {
		svg, err := Render(c, "svg")
		require.NoError(t, err)
		in := filepath.Join(dir, name+".svg")
		require.NoError(t, os.WriteFile(in, svg, 0o644))
		out, err := exec.Command(bin, "-o", filepath.Join(dir, name+".png"), in).CombinedOutput()
		require.NoError(t, err, "%s: %s", name, out)
		st, err := os.Stat(filepath.Join(dir, name+".png"))
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(1000))
	}
}
