package experiments

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// Plot is one SVG file.
type Plot struct {
	File string
	SVG  []byte
}

// Plots draws, for every workload, the speedup of every scheduler against
// the baseline (bars, grouped by device and sweep point), and for every
// (workload, device, sweep point) the SM utilization of every scheduler over
// its timed run (lines). The SVG is written by hand: a few elements, no
// dependencies, and byte-identical for identical results.
func Plots(r *Results) []Plot {
	var out []Plot
	for _, wl := range distinct(r.Rows, func(row *Row) string { return row.Workload }) {
		out = append(out, Plot{File: speedupFile(wl), SVG: speedupSVG(r, wl)})
	}
	for _, p := range utilPlots(r) {
		out = append(out, Plot{File: p.file, SVG: utilSVG(r, p)})
	}
	return out
}

func speedupFile(workload string) string { return "speedup-" + sanitize(workload) + ".svg" }

var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// schedulerColors gives each scheduler name a color, in order of first
// appearance.
func schedulerColors(r *Results) (names []string, color map[string]string) {
	names = distinct(r.Rows, func(row *Row) string { return row.Scheduler })
	color = map[string]string{}
	for i, n := range names {
		color[n] = palette[i%len(palette)]
	}
	return names, color
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten, and gives a tick
// step that divides it into at most 5 parts.
func niceMax(v float64) (top, step float64) {
	if v <= 0 {
		return 1, 0.2
	}
	exp := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*exp >= v {
			top = m * exp
			break
		}
	}
	step = top / 5
	return top, step
}

func speedupSVG(r *Results, workload string) []byte {
	names, color := schedulerColors(r)
	type group struct {
		label string
		rows  []*Row
	}
	var groups []*group
	byKey := map[string]*group{}
	maxS := 1.0
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Workload != workload {
			continue
		}
		label := row.Device
		if len(row.Point) > 0 {
			label = pointString(row.Point) + " " + row.Device
		}
		g, ok := byKey[label]
		if !ok {
			g = &group{label: label}
			byKey[label] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, row)
		if row.Speedup != nil {
			maxS = math.Max(maxS, *row.Speedup)
		}
	}
	const (
		barW, barGap, groupGap = 22.0, 4.0, 30.0
		left, top, plotH       = 64.0, 48.0, 260.0
		bottom                 = 70.0
	)
	x := left + groupGap/2
	type placed struct {
		x float64
		g *group
	}
	var layout []placed
	for _, g := range groups {
		layout = append(layout, placed{x, g})
		x += float64(len(g.rows))*(barW+barGap) - barGap + groupGap
	}
	plotW := math.Max(x-left, 240)
	// Center the groups when the plot is wider than they need.
	for i := range layout {
		layout[i].x += (plotW - (x - left)) / 2
	}
	title := fmt.Sprintf("%s: speedup over %s (median makespans)", workload, firstNonEmpty(r.Baseline, "no baseline"))
	width := math.Max(left+plotW+legendWidth(names), left+textWidth(title, 15)+20)
	height := top + plotH + bottom
	ymax, step := niceMax(maxS * 1.08)
	y := func(v float64) float64 { return top + plotH - v/ymax*plotH }

	var b bytes.Buffer
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n", width, height, width, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(&b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width, height)
	fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", left, esc(title))
	// Axis, grid and ticks.
	for k := 0; float64(k)*step <= ymax*1.0001; k++ {
		v := float64(k) * step
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", left, y(v), left+plotW, y(v))
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left-6, y(v)+4, trimFloat(v)+"x")
	}
	fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top, left, top+plotH)
	fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top+plotH, left+plotW, top+plotH)
	fmt.Fprintf(&b, "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" text-anchor=\"middle\">speedup (higher is better)</text>\n", top+plotH/2, top+plotH/2)
	// Bars.
	for _, p := range layout {
		bx := p.x
		for _, row := range p.g.rows {
			if row.Speedup != nil {
				s := *row.Speedup
				fmt.Fprintf(&b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" data-scheduler=\"%s\" data-device=\"%s\" data-speedup=\"%s\"><title>%s</title></rect>\n",
					bx, y(s), barW, y(0)-y(s), color[row.Scheduler], esc(row.Scheduler), esc(row.Device), trimFloat(s),
					esc(fmt.Sprintf("%s on %s: %.3fx (median %.1f µs)", row.Scheduler, p.g.label, s, row.Makespan.Median)))
				fmt.Fprintf(&b, "<text class=\"value\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">%.2f</text>\n", bx+barW/2, y(s)-3, s)
			} else {
				fmt.Fprintf(&b, "<text class=\"missing\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" fill=\"#c00\" data-scheduler=\"%s\">%s</text>\n",
					bx+barW/2, y(0)-4, esc(row.Scheduler), missingWhy(row))
			}
			bx += barW + barGap
		}
		mid := (p.x + bx - barGap) / 2
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", mid, top+plotH+18, esc(p.g.label))
	}
	// The baseline's level.
	fmt.Fprintf(&b, "<line class=\"reference\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" stroke-dasharray=\"5,4\"/>\n", left, y(1), left+plotW, y(1))
	legend(&b, left+plotW+20, top, names, color)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func missingWhy(row *Row) string {
	if len(row.Errors) > 0 {
		return "error"
	}
	return "n/a"
}

func legend(b *bytes.Buffer, x, y float64, names []string, color map[string]string) {
	for i, n := range names {
		yy := y + float64(i)*20
		fmt.Fprintf(b, "<rect class=\"legend\" x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", x, yy, color[n])
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x+20, yy+11, esc(n))
	}
}

// textWidth estimates the width of s in a sans-serif font of size px: the
// average glyph is a little over half the font size wide.
func textWidth(s string, px float64) float64 { return float64(len([]rune(s))) * px * 0.6 }

// legendWidth is the room the legend of names needs right of a plot.
func legendWidth(names []string) float64 {
	w := 0.0
	for _, n := range names {
		w = math.Max(w, textWidth(n, 12))
	}
	return 20 + 20 + w + 16
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// utilPlot is one utilization chart: the rows of one (workload, device,
// point) that have utilization series.
type utilPlot struct {
	workload, title, file string
	rows                  []*Row
}

func utilPlots(r *Results) []utilPlot {
	var out []utilPlot
	idx := map[string]int{}
	for i := range r.Rows {
		row := &r.Rows[i]
		if len(row.Utilization) == 0 {
			continue
		}
		key := row.Workload + "\x00" + row.Device + "\x00" + pointString(row.Point)
		k, ok := idx[key]
		if !ok {
			name := "util-" + sanitize(row.Workload) + "-" + sanitize(row.Device)
			title := row.Workload + " on " + row.Device
			if len(row.Point) > 0 {
				name += "-" + sanitize(pointString(row.Point))
				title += " at " + pointString(row.Point)
			}
			k = len(out)
			idx[key] = k
			out = append(out, utilPlot{workload: row.Workload, title: title, file: name + ".svg"})
		}
		out[k].rows = append(out[k].rows, row)
	}
	return out
}

func utilSVG(r *Results, p utilPlot) []byte {
	_, color := schedulerColors(r)
	var names []string
	span, peak := 0.0, 0.0
	for _, row := range p.rows {
		names = append(names, row.Scheduler)
		span = math.Max(span, lastMakespanUS(row))
		for _, u := range row.Utilization {
			peak = math.Max(peak, u.Warps)
		}
	}
	// The y axis ends at a round value above the peak: small kernels use a
	// few percent of the GPU, and a 0-100% axis would flatten them.
	ytop, ystep := niceMax(math.Min(peak*1.1, 1))
	if peak == 0 {
		ytop, ystep = 1, 0.2
	}
	const (
		left, top, plotW, plotH = 64.0, 48.0, 640.0, 260.0
		bottom                  = 56.0
	)
	title := "SM utilization (occupied warp slots) over time: " + p.title
	width := math.Max(left+plotW+legendWidth(names), left+textWidth(title, 15)+20)
	height := top + plotH + bottom
	xmax, xstep := niceMax(span)
	x := func(t float64) float64 { return left + t/xmax*plotW }
	y := func(f float64) float64 { return top + plotH - f/ytop*plotH }

	var b bytes.Buffer
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n", width, height, width, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(&b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width, height)
	fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", left, esc(title))
	for k := 0; float64(k)*ystep <= ytop*1.0001; k++ {
		f := float64(k) * ystep
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", left, y(f), left+plotW, y(f))
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s%%</text>\n", left-6, y(f)+4, trimFloat(f*100))
	}
	for k := 0; float64(k)*xstep <= xmax*1.0001; k++ {
		t := float64(k) * xstep
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", x(t), top+plotH, x(t), top+plotH+5)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x(t), top+plotH+18, trimFloat(t))
	}
	fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top, left, top+plotH)
	fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top+plotH, left+plotW, top+plotH)
	fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time from the start of the scheduler's run (µs)</text>\n", left+plotW/2, top+plotH+40)
	for _, row := range p.rows {
		end := lastMakespanUS(row)
		var pts []string
		for k, u := range row.Utilization {
			next := end
			if k+1 < len(row.Utilization) {
				next = row.Utilization[k+1].T
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(u.T), y(u.Warps), x(next), y(u.Warps)))
		}
		fmt.Fprintf(&b, "<polyline class=\"util\" data-scheduler=\"%s\" data-sm-util=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"><title>%s</title></polyline>\n",
			esc(row.Scheduler), optF(row.SMUtil), color[row.Scheduler], strings.Join(pts, " "),
			esc(fmt.Sprintf("%s: mean %s over %.1f µs", row.Scheduler, fmtPct(row.SMUtil), end)))
	}
	legend(&b, left+plotW+20, top, names, color)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// lastMakespanUS is the makespan of the row's last measured repetition, the
// one its utilization series covers.
func lastMakespanUS(row *Row) float64 {
	if len(row.MakespansNS) == 0 {
		return 0
	}
	return float64(row.MakespansNS[len(row.MakespansNS)-1]) / 1e3
}
