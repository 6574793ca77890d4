package experiments

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/experiments/figures"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }
func iptr(v int) *int        { return &v }

// handResults is a small result set with known numbers: two workloads, a
// baseline and two other schedulers, one of which failed on workload b.
func handResults() *Results {
	mk := func(idx, group int, wl, sc string, base bool, ms ...float64) Row {
		r := Row{Index: idx, Group: group, Workload: wl, Family: "synthetic", Scheduler: sc, Kind: sc, SchedulerDesc: sc,
			Baseline: base, Device: "h100", DeviceName: "NVIDIA H100 SXM5 80GB", Outputs: "not compared (the simulator moves no data)"}
		var us []float64
		for _, m := range ms {
			r.MakespansNS = append(r.MakespansNS, int64(m*1e3))
			us = append(us, m)
		}
		s := Summarize(us)
		r.Makespan = &s
		r.SMUtil, r.Kernels, r.Races = f64(0.25), i64(64), iptr(0)
		for k := 0; k < 4 && len(ms) > 0; k++ {
			r.Utilization = append(r.Utilization, UtilPoint{T: float64(k) * ms[len(ms)-1] / 4, Warps: 0.1 * float64(k+1), Busy: 0.2})
		}
		return r
	}
	r := &Results{SchemaVersion: ResultsSchema, Experiment: "hand", Source: "hand.yaml", Seed: 1, Repetitions: 2, Baseline: "serial", TotalRows: 6}
	r.Resolved = &Resolved{Name: "hand", Seed: 1, Repetitions: 2, Baseline: "serial",
		Workloads:  []ResolvedEntry{{Name: "a", Family: "synthetic"}, {Name: "b", Family: "synthetic"}},
		Schedulers: []ResolvedEntry{{Name: "serial", Kind: "serial"}, {Name: "rr2", Kind: "rr2"}, {Name: "rr4", Kind: "rr4"}},
		Devices:    []ResolvedDevice{{Spec: "h100"}}}
	r.Digest = r.Resolved.Digest()
	r.Rows = []Row{
		mk(0, 0, "a", "serial", true, 100, 100),
		mk(1, 0, "a", "rr2", false, 50, 50),
		mk(2, 0, "a", "rr4", false, 40, 40),
		mk(3, 1, "b", "serial", true, 90, 90),
		mk(4, 1, "b", "rr2", false, 60, 60),
		mk(5, 1, "b", "rr4", false),
	}
	r.Rows[5].Makespan = nil
	r.Rows[5].Utilization = nil
	r.Rows[5].Errors = []string{"deadlock at 3µs: stream 2 waits on event 7 (never recorded)"}
	r.Rows[1].Races = iptr(2)
	r.Rows[1].RaceExamples = []string{"k1 (stream 1) and k2 (stream 2) overlap"}
	r.ComputeSpeedups()
	return r
}

func TestSpeedups(t *testing.T) {
	r := handResults()
	want := []float64{1, 2, 2.5, 1, 1.5}
	for i, w := range want {
		require.NotNil(t, r.Rows[i].Speedup, "row %d", i)
		assert.InDelta(t, w, *r.Rows[i].Speedup, 1e-12, "row %d", i)
	}
	assert.Nil(t, r.Rows[5].Speedup, "a failed row has no speedup")
}

// svgElements parses an SVG strictly and returns its elements by name.
func svgElements(t *testing.T, data []byte) map[string][]xml.StartElement {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	out := map[string][]xml.StartElement{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			out[se.Name.Local] = append(out[se.Name.Local], se)
		}
	}
	require.NotEmpty(t, out["svg"])
	return out
}

func TestChartsOfHandResults(t *testing.T) {
	r := handResults()
	var names []string
	byName := map[string]Chart{}
	for _, c := range Charts(r) {
		names = append(names, c.Name)
		byName[c.Name] = c
	}
	assert.Equal(t, []string{"speedup-a", "speedup-b", "util-a-h100", "util-b-h100"}, names)

	// Workload a: rr2 halves and rr4 divides by 2.5 the baseline's makespan
	// in both repetitions: the paired speedups, with an interval of zero
	// width since the pairs agree.
	a := byName["speedup-a"].Chart.(*figures.BarChart)
	assert.Equal(t, []string{"rr2", "rr4"}, a.Series)
	require.Len(t, a.Groups, 1)
	assert.Equal(t, "h100", a.Groups[0].Label)
	require.Len(t, a.Groups[0].Bars, 2)
	assert.Equal(t, figures.Bar{Series: "rr2", Value: 2, Lo: 2, Hi: 2}, a.Groups[0].Bars[0])
	assert.Equal(t, figures.Bar{Series: "rr4", Value: 2.5, Lo: 2.5, Hi: 2.5}, a.Groups[0].Bars[1])
	assert.Equal(t, 1.0, a.Reference)

	// Workload b: rr4 failed, a missing bar marked as an error.
	b := byName["speedup-b"].Chart.(*figures.BarChart)
	require.Len(t, b.Groups[0].Bars, 2)
	assert.Equal(t, 1.5, b.Groups[0].Bars[0].Value)
	assert.True(t, math.IsNaN(b.Groups[0].Bars[1].Value))
	assert.Equal(t, "error", b.Groups[0].Bars[1].Missing)

	// Utilization of a: one step line per scheduler, 4 bins at 10-40%,
	// ending with the last repetition.
	u := byName["util-a-h100"].Chart.(*figures.LineChart)
	require.Len(t, u.Panels, 1)
	require.Len(t, u.Panels[0].Lines, 3)
	serial := u.Panels[0].Lines[0]
	assert.Equal(t, "serial (25.0%)", serial.Series)
	assert.Equal(t, 100.0, serial.End)
	var ys []float64
	for _, p := range serial.Points {
		ys = append(ys, math.Round(p.Y))
	}
	assert.Equal(t, []float64{10, 20, 30, 40}, ys)
}

func TestPlotsRenderValidFiles(t *testing.T) {
	r := handResults()
	for i := range r.Rows {
		r.Rows[i].Workload = `<a&"b">` + r.Rows[i].Workload
		r.Rows[i].Scheduler += `<&>`
	}
	r.Baseline += `<&>`
	plots, err := Plots(r, []string{"svg", "pdf"})
	require.NoError(t, err)
	require.Len(t, plots, 8)
	for _, p := range plots {
		if strings.HasSuffix(p.File, ".svg") {
			svgElements(t, p.Data) // fails on bad XML
		} else {
			assert.True(t, bytes.HasPrefix(p.Data, []byte("%PDF-")), p.File)
		}
	}
	again, err := Plots(r, []string{"svg", "pdf"})
	require.NoError(t, err)
	assert.Equal(t, plots, again, "the same results draw the same bytes")
}

func TestCSVAndMarkdown(t *testing.T) {
	r := handResults()
	data, err := CSV(r)
	require.NoError(t, err)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 7)
	head := recs[0]
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	assert.Equal(t, "2.5", recs[3][col("speedup")])
	assert.Equal(t, "40", recs[3][col("makespan_median_us")])
	assert.Equal(t, "", recs[6][col("speedup")])
	assert.Contains(t, recs[6][col("errors")], "deadlock")

	md := string(Markdown(r, true))
	assert.Contains(t, md, "| rr4 | h100 | 40.0 [40.0-40.0] | 40.0-40.0 | 2.500x | 25.0% | 64 | 0 | not compared")
	assert.Contains(t, md, "## Errors and races")
	assert.Contains(t, md, "b / rr4 / h100: deadlock")
	assert.Contains(t, md, "a / rr2 / h100: 2 races")
	assert.Contains(t, md, "![speedup of each scheduler on a](speedup-a.svg)")
	assert.Contains(t, md, "![SM utilization over time: a on h100](util-a-h100.svg)")
}

func TestWriteAndReadBack(t *testing.T) {
	r := handResults()
	dir := t.TempDir()
	files, err := Write(dir, r, allFormats)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "results.md"), files[0])
	back, err := ReadResults(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	assert.Equal(t, r, back, "results.json round-trips")
}

func TestMerge(t *testing.T) {
	r := handResults()
	shard := func(i, n int) *Results { return shardOf(r, i, n) }
	merged, err := Merge([]*Results{shard(1, 2), shard(0, 2)})
	require.NoError(t, err)
	assert.Equal(t, r, merged)

	_, err = Merge([]*Results{shard(0, 2)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "have 3 of 6 rows; missing rows 3, 4, 5")

	_, err = Merge([]*Results{shard(0, 2), shard(0, 2), shard(1, 2)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row 0 (a / serial / h100) is in part 0 and part 1")

	// Another experiment of the same name: its resolved experiment differs.
	other := shard(1, 2)
	res := *other.Resolved
	res.Seed = 2
	other.Resolved, other.Digest = &res, res.Digest()
	_, err = Merge([]*Results{shard(0, 2), other})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "part 1 (hand, digest "+short(other.Digest)+") is not from the same experiment as part 0")

	// A digest that does not match the resolved experiment: edited.
	edited := shard(1, 2)
	edited.Resolved = &res
	_, err = Merge([]*Results{shard(0, 2), edited})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "part 1: its digest")

	// A row index outside the matrix is an error, not a dropped row.
	outside := shard(1, 2)
	outside.Rows = append([]Row(nil), outside.Rows...)
	outside.Rows[0].Index = 6
	_, err = Merge([]*Results{shard(0, 2), outside})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row 6 (b / serial / h100) is outside the matrix of 6 rows")
}

func TestReadResultsRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	for _, c := range []struct{ name, data, want string }{
		{"null.json", "null", "no schema_version"},
		{"empty.json", "{}", "no schema_version"},
		{"v1.json", `{"experiment": "x", "rows": []}`, "no schema_version"},
		{"v3.json", `{"schema_version": 3}`, "results schema 3; this gpusched reads schema 2"},
		{"nodigest.json", `{"schema_version": 2, "rows": []}`, "records no resolved experiment"},
		{"junk.json", `{"schema_version": 2, "extra": 1}`, "unknown field"},
	} {
		_, err := ReadResults(write(c.name, c.data))
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	_, err := Merge(nil)
	require.Error(t, err)
}

func TestCompare(t *testing.T) {
	a := handResults()
	b := handResults()
	b.Rows[1].Makespan.Median = 25 // rr2 on a twice as fast in B
	b.Rows = b.Rows[:5]
	c, err := Compare(a, b, "A.json", "B.json")
	require.NoError(t, err)
	require.Len(t, c.Rows, 5)
	assert.InDelta(t, 0.5, c.Rows[1].Ratio, 1e-12)
	assert.InDelta(t, 1.0, c.Rows[0].Ratio, 1e-12)
	assert.Equal(t, []string{"b / rr4 / h100"}, c.OnlyA)
	var out bytes.Buffer
	require.NoError(t, c.Print(&out))
	assert.Contains(t, out.String(), "0.500")
	assert.Contains(t, out.String(), "only in A: b / rr4 / h100")

	b.Rows[0].Workload = "zzz"
	b.Rows = b.Rows[:1]
	_, err = Compare(a, b, "A.json", "B.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no row in common")
}
