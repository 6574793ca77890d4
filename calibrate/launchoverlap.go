package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "graph launch beside its first nodes" (issue #18, session 26): the
// simulator starts a graph's nodes once cuGraphLaunch has returned, so a
// wide graph's launch (149 us simulated for the AutoGraph graph of seed
// 1593488677's draw 1: 69 kernels, 21 uploads) adds to its device time,
// where the GPU runs that whole step in 253 us, about what its uploads
// alone take. Does the GPU start a graph's first nodes while the host is
// still in the launch call? This probe captures a root spin kernel of X
// us followed by a fan of 1 or 64 2 us kernels (joined back), and times
// per launch the call (Host.Now) and Elapsed from an event before it to
// one after it on the stream. The wide fan's launch costs more; if the
// device waits for the call, that extra shows in Elapsed whatever X is;
// if the root runs during the call, a root longer than the call hides it.
var loRootsUs = []int{0, 25, 50, 100}

var loFans = []int{1, 64}

const loLaunches = 16

// graphLaunchOverlap records per fan and root the launch call and the
// Elapsed (medians of loLaunches a round), and per root what the wide fan
// adds to Elapsed beyond the narrow one's.
func (c *calibrator) graphLaunchOverlap(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	spin2 := c.spinLaunch(us(2), t.done)
	fork, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	if err != nil {
		return err
	}
	join, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	if err != nil {
		return err
	}
	var sides []device.Stream
	for range loFans[len(loFans)-1] {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		sides = append(sides, s)
	}
	elapsedBy := map[[2]int][]float64{}
	for _, root := range loRootsUs {
		for _, fan := range loFans {
			x, err := c.instantiate(h, t.s, func() error {
				if root > 0 {
					if err := h.Launch(t.s, c.spinLaunch(us(root), t.done)); err != nil {
						return err
					}
				}
				return fanOut(h, t.s, sides[:fan], fork, join, spin2)
			})
			if err != nil {
				return err
			}
			calls, elapsed, err := c.loRounds(h, t, x)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("graph launch beside its first nodes, %d us root, fan of %d", root, fan)
			method := fmt.Sprintf("a graph captured on one stream: a spin kernel of the root's length (none at 0), then the fan's 2 us spin kernels forked from it and joined back; median of %d launches", loLaunches)
			c.record(what+": launch call", "", "ns", method+": Host.Now around cuGraphLaunch", calls)
			c.record(what+": elapsed", "", "ns", method+": Elapsed from an event recorded before the launch to one after it", elapsed)
			elapsedBy[[2]int{root, fan}] = elapsed
			if err := h.Destroy(x); err != nil {
				return err
			}
		}
	}
	wide, narrow := loFans[len(loFans)-1], loFans[0]
	for _, root := range loRootsUs {
		w, n := elapsedBy[[2]int{root, wide}], elapsedBy[[2]int{root, narrow}]
		extra := make([]float64, len(w))
		for r := range w {
			extra[r] = w[r] - n[r]
		}
		c.record(fmt.Sprintf("graph launch beside its first nodes, %d us root: elapsed, fan of %d less fan of %d", root, wide, narrow), "", "ns",
			"per round, the difference of the two fans' median Elapsed (constant in the root: the device waits for the launch call; falling: the root runs during it)", extra)
	}
	for _, s := range sides {
		if err := h.Destroy(s); err != nil {
			return err
		}
	}
	return nil
}

// loRounds launches x loLaunches times a round and returns per round the
// median launch call and the median Elapsed around it (ns).
func (c *calibrator) loRounds(h device.Host, t *timedStream, x device.GraphExec) (calls, elapsed []float64, err error) {
	err = c.warmRounds(func(measured bool) error {
		var cs, es []float64
		for range loLaunches {
			var call float64
			e, err := t.elapsed(h, func() error {
				t0 := h.Now()
				err := h.GraphLaunch(x, t.s)
				call = ns(h.Now() - t0)
				return err
			})
			if err != nil {
				return fmt.Errorf("graph launch beside its first nodes: %w", err)
			}
			cs, es = append(cs, call), append(es, e)
		}
		if measured {
			calls, elapsed = append(calls, stats.Median(cs)), append(elapsed, stats.Median(es))
		}
		return nil
	})
	return calls, elapsed, err
}
