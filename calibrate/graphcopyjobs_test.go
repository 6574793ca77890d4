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
// at copy.back_to_back_latency_ns plus their bytes each, and on several
// streams (each copy queued behind another stream's) at copy.latency_ns.
func TestCopyJobsOverStreamsReadTheLatencies(t *testing.T) {
	cfg := loadConfig(t, "h200")
	_, value := measured(t, cfg, "copy jobs over streams")
	one := value(fmt.Sprintf("copy jobs over streams, copy in, %d jobs on 1 streams", csJobs))
	many := value(fmt.Sprintf("copy jobs over streams, copy in, %d jobs on 8 streams", csJobs))
	assert.InDelta(t, cfg.Copy.LatencyNs-cfg.Copy.BackToBackLatencyNs, (many-one)/(csJobs-1), 50)
}
