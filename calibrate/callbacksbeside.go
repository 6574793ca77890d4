package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "callbacks beside running graphs" (issue #18, session 34): in SET-batch's
// GPU timelines (scripts/callback-wakes.py on raw/callbackthread-h200.txz and
// raw/callbackwakes-h200.txz) the driver's callback thread, idle 60-250 us,
// runs a host function 44.5-56.7 us (mean) after its stream reaches it when
// no chunk graph runs on any stream at that instant, and 75.2-103.7 us with
// one or more running; the simulator's wake does not look at other streams.
// This probe times callbackAfterIdle's hand-off (a spin kernel of the idle
// time, then a host function that Puts to a queue the host waits on in Get;
// kernelThenCallback, less the idle time) with 0, 1 or 3 other
// streams each running a graph of one spin kernel launched just before, that
// outlasts the timed kernel by cbBesideTailUs, or each copying a 1.6 MB
// chunk in and out (session 34 call 4: behind SET-batch's chunks the tail
// returns beside other streams' chunks). It sets no field.
var (
	cbBesideIdles  = []int{20, 50, 80, 110}
	cbBesideOthers = []int{0, 1, 3}
)

const (
	cbBesideReps   = 20
	cbBesideTailUs = 40 // the others' graphs run this long past the timed kernel
)

// cbBesideWork is what the other streams run while the timed host function
// waits: a graph of one spin kernel, or a pinned copy each way. The
// measurements are named by idle time, other streams and work (its index).
var cbBesideWork = []string{"running a graph", "copying 1.6 MB each way"}

const cbBesideCopyBytes = sbChunkBytes // SET-batch's chunk copy ("set-batch chunks")

func cbBesideName(idle, others, work int) string {
	return fmt.Sprintf("callback hand-off after a %d us kernel, %d other streams %s", idle, others, cbBesideWork[work])
}

func cbBesideMeanName(idle, others, work int) string {
	return cbBesideName(idle, others, work) + ", mean"
}

func cbBesideExtraName(idle, others, work int) string {
	return cbBesideName(idle, others, work) + ", over none"
}

func (c *calibrator) callbacksBesideGraphs(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	most := cbBesideOthers[len(cbBesideOthers)-1]
	others := make([]device.Stream, most)
	// execs[i][k]: other stream k's graph for idle time i, a spin kernel of
	// the idle time and the tail, writing its own buffer.
	execs := make([][]device.GraphExec, len(cbBesideIdles))
	for k := range others {
		if others[k], err = h.NewStream(device.StreamOptions{}); err != nil {
			return err
		}
		done, err := h.Malloc(64)
		if err != nil {
			return err
		}
		for i, idle := range cbBesideIdles {
			spin := c.spinLaunch(us(idle+cbBesideTailUs), done)
			x, err := c.instantiate(h, others[k], func() error { return h.Launch(others[k], spin) })
			if err != nil {
				return err
			}
			execs[i] = append(execs[i], x)
		}
	}
	slots, err := newCopySlots(h, most, cbBesideCopyBytes)
	if err != nil {
		return err
	}
	// issue[w](i, k) starts work w on other stream k for idle time i.
	issue := []func(i, k int) error{
		func(i, k int) error { return h.GraphLaunch(execs[i][k], others[k]) },
		func(i, k int) error {
			if err := h.Copy(others[k], slots.copy(device.HostToDevice, k, cbBesideCopyBytes)); err != nil {
				return err
			}
			return h.Copy(others[k], slots.copy(device.DeviceToHost, k, cbBesideCopyBytes))
		},
	}
	q := h.NewQueue("callbacks beside graphs")
	put := func() { q.Put(struct{}{}) }
	// work, idle, others, round: the median and the mean of the
	// repetitions (the rows' slow wakes are a tail: their median hardly
	// moves). The hand-off alone (no others) is timed once, as work 0's.
	times := make([][][][]float64, len(cbBesideWork))
	means := make([][][][]float64, len(cbBesideWork))
	for w := range times {
		times[w] = make([][][]float64, len(cbBesideIdles))
		means[w] = make([][][]float64, len(cbBesideIdles))
		for i := range times[w] {
			times[w][i] = make([][]float64, len(cbBesideOthers))
			means[w][i] = make([][]float64, len(cbBesideOthers))
		}
	}
	if err := c.warmRounds(func(measured bool) error {
		for i, idle := range cbBesideIdles {
			spin := c.spinLaunch(us(idle), t.done)
			for w := range cbBesideWork {
				for j, n := range cbBesideOthers {
					if w > 0 && n == 0 {
						continue
					}
					var each []float64
					for r := 0; r < cbBesideReps; r++ {
						for k := 0; k < n; k++ {
							if err := issue[w](i, k); err != nil {
								return err
							}
						}
						took, err := kernelThenCallback(h, t.s, spin, q, put)
						if err != nil {
							return err
						}
						each = append(each, ns(took-us(idle)))
						for k := 0; k < n; k++ {
							if err := h.StreamSynchronize(others[k]); err != nil {
								return err
							}
						}
					}
					if measured {
						times[w][i][j] = append(times[w][i][j], stats.Median(each))
						means[w][i][j] = append(means[w][i][j], meanOf(each))
					}
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	methods := []string{
		"Host.Now around a spin kernel of the idle time, a host function that Puts to a queue and the host's Get of it, less the idle time, with the other streams' graphs (one spin kernel each, outlasting the timed one by 40 us) launched just before; median of 20 a round",
		"the same with each other stream copying 1.6 MB host to device then device to host (pinned, its own buffers), issued just before",
	}
	for w := range cbBesideWork {
		for i, idle := range cbBesideIdles {
			for j, n := range cbBesideOthers {
				if w > 0 && n == 0 {
					continue
				}
				c.record(cbBesideName(idle, n, w), "", "ns", methods[w], times[w][i][j])
				c.record(cbBesideMeanName(idle, n, w), "", "ns", "the same, the mean of the 20 a round", means[w][i][j])
				if j == 0 {
					continue
				}
				extra := make([]float64, len(times[w][i][j]))
				for r := range extra {
					extra[r] = times[w][i][j][r] - times[0][i][0][r]
				}
				c.record(cbBesideExtraName(idle, n, w), "", "ns", "per round, the hand-off beside the other streams' work less the hand-off alone", extra)
			}
		}
	}
	for _, xs := range execs {
		if err := destroyExecs(h, xs); err != nil {
			return err
		}
	}
	return h.StreamSynchronize(t.s)
}
