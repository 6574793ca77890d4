package calibrate

import (
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "host functions after chunk graphs" (issue #18, session 34): SET-batch's
// GPU timelines show the callback thread's wake with a tail (means of 75-104
// us after 60-250 us idle, medians 47-55) that "callbacks beside running
// graphs" does not reproduce behind a spin kernel, other streams' graphs
// running or not (46-53 us, no tail). This probe puts back, one at a time,
// what the rows have: the host function behind SET-batch's chunk graph (a
// 1.6 MB copy in, 16 one-kernel branches, a copy out: "set-batch chunks"'s
// 16x1), a second chunk launched behind the host function on its stream
// (which the callback thread then hands over), and three other streams
// each running a chunk launched just before. Host.Now from before the first
// launch to the host's Get of the host function's Put, 20 a round: median
// and mean. It sets no field.
var hfChunkCases = []struct {
	name          string
	queued, other bool
}{
	{"alone", false, false},
	{"another chunk queued behind the host function", true, false},
	{"3 other streams running a chunk", false, true},
}

const (
	hfChunkReps   = 20
	hfChunkOthers = 3
)

func hfChunkName(cs string) string { return "host function after a chunk graph, " + cs }

func hfChunkMeanName(cs string) string { return hfChunkName(cs) + ", mean" }

func (c *calibrator) hostFuncsAfterChunks(h device.Host) error {
	env, err := c.newGDEnv(h, sbChunkBytes)
	if err != nil {
		return err
	}
	sh := sbShapes[0] // 16x1
	// The timed stream's two execs, then one for each other stream.
	xs, err := c.sbExecs(h, env, sh, "host functions after chunk graphs")
	if err != nil {
		return err
	}
	s := env.ss.t.s
	others := env.ss.side[:hfChunkOthers]
	q := h.NewQueue("host functions after chunk graphs")
	put := func() { q.Put(struct{}{}) }
	med := make([][]float64, len(hfChunkCases))
	mean := make([][]float64, len(hfChunkCases))
	if err := c.warmRounds(func(measured bool) error {
		for i, cs := range hfChunkCases {
			var each []float64
			for r := 0; r < hfChunkReps; r++ {
				took, err := hfChunkHandoff(h, xs, s, others, cs.queued, cs.other, q, put)
				if err != nil {
					return err
				}
				each = append(each, ns(took))
			}
			if measured {
				med[i] = append(med[i], stats.Median(each))
				mean[i] = append(mean[i], meanOf(each))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	const method = "Host.Now from before the chunk graph's launch (1.6 MB copies around 16 one-kernel branches) to the host's Get of its host function's Put, the device synchronized between; median of 20 a round"
	for i, cs := range hfChunkCases {
		c.record(hfChunkName(cs.name), "", "ns", method, med[i])
		c.record(hfChunkMeanName(cs.name), "", "ns", "the same, the mean of the 20 a round", mean[i])
	}
	return destroyExecs(h, xs)
}

// hfChunkHandoff launches the chunk xs[0] on s and a host function that
// runs put (a Put to q), with xs[1] queued behind it (queued) or xs[2..]
// running on the other streams first (other), and returns the host time
// from before the chunk's launch to the Get of the Put; then it waits for
// the device.
func hfChunkHandoff(h device.Host, xs []device.GraphExec, s device.Stream, others []device.Stream, queued, other bool, q device.Queue, put func()) (time.Duration, error) {
	if other {
		for k, st := range others {
			if err := h.GraphLaunch(xs[2+k], st); err != nil {
				return 0, err
			}
		}
	}
	var behind func() error
	if queued {
		behind = func() error { return h.GraphLaunch(xs[1], s) }
	}
	took, err := hostFuncHandoff(h, s, q, put, func() error { return h.GraphLaunch(xs[0], s) }, behind)
	if err != nil {
		return 0, err
	}
	return took, h.Synchronize()
}
