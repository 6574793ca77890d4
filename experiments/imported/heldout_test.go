package imported

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/experiments"
)

// The held-out models' sets make a page of their own, against their own
// capture, and stay out of the main page's runs; a mix is refused.
func TestHeldoutPageKeepsItsRowsApart(t *testing.T) {
	set := func(name, workload, device string, ns int64) *experiments.Results {
		r := row(ns)
		r.Workload, r.Scheduler, r.Device = workload, baseline, device
		r.WorkloadParams = map[string]string{"overhead_ns": "384", "floor_ns": "1503", "profiler_ns": "818"}
		return &experiments.Results{Experiment: name, Rows: []experiments.Row{*r}}
	}
	gpu := set("imported-heldout", "m-b1", experiments.CUDADevice, 120_000)
	sim := set("imported-heldout-sim", "m-b1", "h100", 126_000)
	main := set("imported-v3", "m-b1", experiments.CUDADevice, 90_000)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "raw"), 0o755))
	capture := `{"env": {"device": {"name": "GPU"}}, "models": [{"model": "m", "batch": 1, "tag": "m-b1",
		"eager": {"median_us": 300}, "graph": {"median_us": 100}}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, heldoutCapture), []byte(capture), 0o644))

	in := &experiments.ReportInput{Dir: dir, Files: []string{"g.json", "s.json"}, Sets: []*experiments.Results{gpu, sim}}
	var b bytes.Buffer
	require.NoError(t, report(&b, in))
	page := b.String()
	// GPU 120 µs against PyTorch's graph 100: +20%; the simulator's 126 against 120: +5%.
	assert.Contains(t, page, "| 120.0 | +20.0% **not met** |")
	assert.Contains(t, page, "| 126.0 | +5.0% met |")
	assert.Contains(t, page, "GPU serial+graph 0 of 1; simulator within 10% of the GPU, serial 0 of 0, serial+graph 1 of 1")
	assert.Contains(t, page, "eager imports: overhead_ns 384, floor_ns 1503, profiler_ns 818")

	in.Sets, in.Files = append(in.Sets, main), append(in.Files, "v3.json")
	err := report(&b, in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 of 3 files are of the held-out models")
	m, ok := newData(in, runThird).gpu.median("m-b1", baseline)
	require.True(t, ok)
	assert.InDelta(t, 90.0, m, 1e-9, "the main page's third-kernel run holds its own row, not the held-out one")
}
