package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Stream counts and spin length of "records over streams".
var recordStreams = []int{2, 4, 6, 8, 10, 12, 16, 24, 32}

const recordD = 50 * time.Microsecond

// recordPatterns are what each stream of "records over streams" gets:
// its kernel alone (the stream concurrency control), its kernel and an
// event record behind it (Nimble's and GrCUDA's per-kernel record), or
// both and then a wait on the next stream's event and a second kernel
// (a second DAG level with a cross-stream edge).
var recordPatterns = []string{"kernels", "kernel then record", "kernel, record, wait on the next stream, kernel"}

// recordsOverStreams releases one 50 us one-block spin kernel on each of
// n streams at once (n = 2 to 32), in the three recordPatterns. Whether an
// event record behind a running kernel holds its hardware queue (blocking
// the kernels of the streams that share that queue, as the simulator's
// front end does) shows as the concurrency falling from "kernels" to
// "kernel then record" once n exceeds the hardware queues (issue #18:
// KeSCo's Nimble and GrCUDA rows, whose streams record after every kernel).
func (c *calibrator) recordsOverStreams(h device.Host) error {
	maxS := recordStreams[len(recordStreams)-1]
	ss, evs, err := newStreamsAndEvents(h, maxS, maxS)
	if err != nil {
		return err
	}
	spin := c.spinLaunch(recordD, ss.t.done)
	for p, pattern := range recordPatterns {
		for _, n := range recordStreams {
			kernels := n
			if p == 2 {
				kernels = 2 * n
			}
			ys, err := c.gatedRounds(h, ss, n, 3*kernels+2*n, func() error {
				return issueRecordPattern(h, ss, evs, spin, n, p)
			})
			if err != nil {
				return err
			}
			conc := pick(ys, func(y float64) float64 { return float64(kernels) * ns(recordD) / y })
			c.record(recordsName(n, pattern), "", "kernels",
				fmt.Sprintf("%d one-block 50 us spin kernels, one per stream over %d streams (%s), released at once: kernels x 50 us / Elapsed", kernels, n, pattern), conc)
		}
	}
	return nil
}

// issueRecordPattern enqueues pattern p of recordPatterns on the first n
// streams of ss.
func issueRecordPattern(h device.Host, ss *streamSet, evs []device.Event, spin *device.Launch, n, p int) error {
	for i := 0; i < n; i++ {
		if err := h.Launch(ss.stream(i), spin); err != nil {
			return err
		}
		if p == 0 {
			continue
		}
		if err := h.Record(evs[i], ss.stream(i)); err != nil {
			return err
		}
	}
	if p < 2 {
		return nil
	}
	for i := 0; i < n; i++ {
		if err := h.Wait(ss.stream(i), evs[(i+1)%n]); err != nil {
			return err
		}
		if err := h.Launch(ss.stream(i), spin); err != nil {
			return err
		}
	}
	return nil
}

// recordsName names a "records over streams" measurement.
func recordsName(streams int, pattern string) string {
	return fmt.Sprintf("%s over %d streams", pattern, streams)
}
