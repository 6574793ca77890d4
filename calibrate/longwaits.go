package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// "long waits" (issue #18, session 25): the parked hand-offs' sweep stops
// at 1 ms, where a queue hand-off already costs 105 us against 89 us at
// 205-300 us idle and a callback hand-off 149 us against 99 us (the H200's
// calibrate-full), while a scheduler's threads wait for whole runs:
// Queue's workers between runs and its main thread through one, several
// ms, and Queue's rows on both GPUs spend 280-470 us a run outside its
// workers' jobs where the simulator spends 140-180 (heldout20-set). This
// probe asks how a parked wake grows past 1 ms: the queue hand-off and the
// callback hand-off of the parked sweep at 300 us to 10 ms idle, fewer
// exchanges a point. It sets no field.
var longIdles = []int{300, 1000, 3000, 10000}

const longExchanges = 8

func (c *calibrator) longWaits(h device.Host) error {
	med, mean, err := c.queueAfterIdle(h, longIdles, longExchanges)
	if err != nil {
		return err
	}
	c.recordIdles("long waits: queue hand-off", longIdles, med, mean,
		"Host.Now of the Put (carried in the value) to the Get's return, the waiting thread idle in Get for the time given")
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	if med, mean, err = c.callbackAfterIdle(h, t, longIdles, longExchanges); err != nil {
		return err
	}
	c.recordIdles("long waits: callback hand-off", longIdles, med, mean,
		"Host.Now from launching a spin kernel of the time given and a host function that Puts, to the Get's return, less that time")
	return nil
}

// recordIdles records a sweep's median and mean per idle time.
func (c *calibrator) recordIdles(what string, idles []int, med, mean [][]float64, method string) {
	for i, idle := range idles {
		c.record(fmt.Sprintf("%s after %d us idle", what, idle), "", "ns", method+"; the median of a round's", med[i])
		c.record(fmt.Sprintf("%s (mean) after %d us idle", what, idle), "", "ns", method+"; the mean of a round's", mean[i])
	}
}
