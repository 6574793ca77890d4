package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// On the simulator a graph's copy behind a kernel pays copy.latency_ns as
// a stream's does (its engine went idle), so raising copy.graph_latency_ns
// leaves every shape of "copies around kernels in a graph" as it was,
// where "copies in a graph" (copies with nothing between) reads it back
// (TestCopiesInAGraphReadTheGraphLatency); and copy.latency_ns raises
// what each job past the first adds by one latency per copy of a job, as a
// graph and on the stream.
func TestCopiesAroundKernelsPayTheWholeLatency(t *testing.T) {
	read := func(graphLatency, latency float64) func(string) float64 {
		cfg := loadConfig(t, "h200")
		cfg.Copy.GraphLatencyNs, cfg.Copy.LatencyNs = graphLatency, latency
		_, value := measured(t, cfg, "copies around kernels in a graph")
		return value
	}
	base, graphLat, lat := read(1000, 5000), read(2000, 5000), read(1000, 6000)
	for _, sh := range cjShapes {
		copies := 1.0
		if sh.out {
			copies = 2
		}
		for _, mode := range cjModes {
			name := fmt.Sprintf("copies around kernels in a graph, %s, each job past the first %s", sh.name, mode)
			assert.InDelta(t, base(name), graphLat(name), 1, name)
			assert.InDelta(t, 1000*copies, lat(name)-base(name), 20, name)
		}
	}
}

// On the simulator, 32 copies in alone on one stream follow one another
// at copy.back_to_back_latency_ns plus their bytes each. Dealt over 4
// streams, in issue order each waits behind another stream's copy and pays
// copy.latency_ns; with copy.stream_runs (the h200 config's) each stream's
// eight run back to back, and only the 4 changes of stream pay the whole
// latency. (On 8 streams, more than the config's 6 hardware queues,
// some runs break where a stream's next copy waits behind another's.)
func TestCopyJobsOverStreamsReadTheLatencies(t *testing.T) {
	for _, runs := range []bool{false, true} {
		cfg := loadConfig(t, "h200")
		cfg.Copy.StreamRuns = runs
		_, value := measured(t, cfg, "copy jobs over streams")
		one := value(fmt.Sprintf("copy jobs over streams, copy in, %d jobs on 1 streams", csJobs))
		many := value(fmt.Sprintf("copy jobs over streams, copy in, %d jobs on 4 streams", csJobs))
		changes := float64(csJobs - 1)
		if runs {
			changes = 3
		}
		assert.InDelta(t, changes*(cfg.Copy.LatencyNs-cfg.Copy.BackToBackLatencyNs), many-one, 50*changes, "stream runs %v", runs)
	}
}
