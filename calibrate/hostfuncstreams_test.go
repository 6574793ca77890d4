package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The host-functions-over-streams probe reads the simulator's one callback
// thread: a lone host function spans its stream for the wake and the
// function (front_end.callback_wake_ns + callback_ns); two ready at once on
// two streams share that wake, so the second's span is one callback_ns
// longer; and SET's loop over one stream pays the whole span per job.
func TestHostFuncsOverStreamsReadTheCallbackThread(t *testing.T) {
	value := probeHostFuncs(t, 0)
	assert.InDelta(t, 35000, value("host functions on 1 streams, 0 us apart: first span"), 100)
	assert.InDelta(t, 35000, value("host functions on 2 streams, 0 us apart: first span"), 100)
	assert.InDelta(t, 5000, value("host functions on 2 streams, 0 us apart: span rise per function"), 100)
	assert.InDelta(t, 5000, value("host functions on 2 streams, 0 us apart: host Get interval"), 100)
	// 60 us apart, every host function finds the thread idle again.
	assert.InDelta(t, 35000, value("host functions on 4 streams, 60 us apart: mean span"), 100)
	assert.Greater(t, value("host function loop, 1 streams, 2 us kernel: per job"), 35000.0+2000)
	assert.Less(t, value("host function loop, 4 streams, 2 us kernel: per job"),
		value("host function loop, 1 streams, 2 us kernel: per job")/2)
}

// probeHostFuncs runs section ("host functions over streams" unless
// given) on the h100 config with a 30 us callback wake, 5 us callbacks,
// the given release and a parked callback thread's wake of 40 us after
// 160 us idle, and returns a reader of its figures by name.
func probeHostFuncs(t *testing.T, releaseNs float64, section ...string) func(string) float64 {
	if len(section) == 0 {
		section = []string{"host functions over streams"}
	}
	cfg := loadConfig(t, "h100")
	cfg.FrontEnd.CallbackWakeNs = 30000
	cfg.FrontEnd.CallbackNs = 5000
	cfg.FrontEnd.CallbackReleaseNs = releaseNs
	cfg.FrontEnd.CallbackParkAfterNs = 160000
	cfg.FrontEnd.CallbackParkedWakeNs = 40000
	cfg.FrontEnd.CallbackParkedWakePerDecadeNs = 0 // the spans hand-computed without the deeper park (TestCallbackParkedWakeGrowsWithTheIdle)
	_, value := measured(t, cfg, section...)
	return value
}

// With front_end.callback_release_ns the probe's host functions, each with
// a kernel queued behind it, hold their streams that much longer. Two
// ready at once on two streams: the second, queued behind the first as it
// ran, starts as the first's function ends, beside its release (the
// release keeps the thread only from callbacks that become ready during
// it), so its span rises by the function alone.
func TestHostFuncsOverStreamsReadTheRelease(t *testing.T) {
	value := probeHostFuncs(t, 10000)
	assert.InDelta(t, 45000, value("host functions on 1 streams, 0 us apart: first span"), 100)
	assert.InDelta(t, 5000, value("host functions on 2 streams, 0 us apart: span rise per function"), 100)
}
