package calibrate

import (
	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// The idle times (us) "device idle wake" sweeps: how long the GPU has had
// nothing to run before a launch. GPU traces of the random DAG rows
// (docs/results/raw/dagfast-h100.tgz, calibration-h100.md session 15) show
// the first kernel of every timed run 8-18 us longer than the same kernel
// later in the run, after the 0.3-0.8 ms of host work the runner leaves
// the GPU idle before it; calibrate's other launch figures come from
// launches a few microseconds apart.
var idleWakeIdles = []int{0, 10, 25, 50, 100, 200, 400, 800, 1600, 3200}

const (
	idleWakeLaunches = 5  // launches per idle time and round
	idleWakeKernelUs = 5  // the timed spin kernel
	idleWakeBusyUs   = 20 // the spin kernel that ends before each idle
)

// idleWake measures, per idle time, a launch and stream synchronize of a
// 5 us spin kernel issued that long after the stream's previous kernel (a
// 20 us spin) returned from its synchronize, the host thread polling its
// clock meanwhile: Host.Now around the launch and synchronize, less 5 us.
// It reports every idle time's cost and the step of the two-regime fit
// (twoRegimes: how long the GPU may idle before a launch pays more, and
// how much more), and sets no field: the simulator has no idle wake.
func (c *calibrator) idleWake(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	busy := c.spinLaunch(us(idleWakeBusyUs), t.done)
	timed := c.spinLaunch(us(idleWakeKernelUs), t.done)
	byIdle := make([][]float64, len(idleWakeIdles))
	if err := c.warmRounds(func(measured bool) error {
		for i, idle := range idleWakeIdles {
			var each []float64
			for x := 0; x < idleWakeLaunches; x++ {
				if err := h.Launch(t.s, busy); err != nil {
					return err
				}
				if err := h.StreamSynchronize(t.s); err != nil {
					return err
				}
				hold(h, us(idle))
				t0 := h.Now()
				if err := h.Launch(t.s, timed); err != nil {
					return err
				}
				if err := h.StreamSynchronize(t.s); err != nil {
					return err
				}
				each = append(each, ns(h.Now()-t0-us(idleWakeKernelUs)))
			}
			if measured {
				byIdle[i] = append(byIdle[i], stats.Median(each))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	c.recordRegimes("launch and synchronize of a 5 us kernel", "", "", idleWakeIdles, byIdle,
		"Host.Now around a launch and stream synchronize of a 5 us spin kernel, issued the idle time given after a 20 us spin kernel's synchronize returned (the host polling its clock), less 5 us; median of 5 per round")
	// This idle is the host's hold alone.
	after, extra := regimeSteps(idleWakeIdles, byIdle, true)
	c.record("idle wake: GPU idle before a launch pays more", "", "ns",
		"per round, midway between the last idle time whose launch and synchronize cost under a quarter of the rise (the longest idle's less the shortest's) above the shortest's and the first over (0: one regime)", after)
	c.record("idle wake: extra cost once idle", "", "ns",
		"per round, the median launch and synchronize after the idle times from the step on less the shortest idle's (0: a rise under 2 us, one regime)", extra)
	return nil
}
