// Package figures draws the charts of experiment results with gonum/plot,
// as SVG or PDF, fit for a paper: bar charts of values with 95%
// confidence intervals, and line charts of values against a parameter or
// over time.
//
// It knows nothing about schedulers or results: a caller describes a chart
// (BarChart, LineChart) with its series, groups or panels, and Render
// draws it. Every series keeps one style (a colour, a hatch pattern, a
// marker and a dash) across the panels of a chart, assigned by its
// position in the chart's Series, so that 2 or 30 series stay apart in
// colour and in greyscale. Layouts adapt to the count:
//
//   - BarChart: few series (up to groupedMax) are grouped vertical bars
//     with a legend above the plot; more are small multiples, one panel
//     of horizontal bars per group with the series named on the axis.
//   - LineChart: one panel per LinePanel, in a grid, with one legend.
//
// Legends wrap into rows that fit the canvas, long names are shortened to
// fit, and category labels on an x axis rotate and thin out before they
// would overlap. Output is deterministic: the same chart gives the same
// bytes (the PDF's dates are fixed, its catalogue sorted).
//
//	svg, err := figures.Render(chart, "svg")
package figures
