package calibrate

import (
	"fmt"
	"slices"

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
// waits: a graph of one spin kernel, or a pinned copy each way of SET-batch's
// chunk ("set-batch chunks", 1.6 MB), 0.4 MB or 6.6 MB
// (session 35: whether the delay follows the copies' time left or only
// what moves while the hand-off lasts). The measurements are named by idle
// time, other streams and work (its index).
var cbBesideWork = []string{"running a graph", "copying 1.6 MB each way", "copying 0.4 MB each way", "copying 6.6 MB each way"}

// cbBesideCopyBytes is each work's copy size (0: a graph).
var cbBesideCopyBytes = []int64{0, sbChunkBytes, sbChunkBytes / 4, 4 * sbChunkBytes}

func cbBesideName(idle, others, work int) string {
	return fmt.Sprintf("callback hand-off after a %d us kernel, %d other streams %s", idle, others, cbBesideWork[work])
}

func cbBesideMeanName(idle, others, work int) string {
	return cbBesideName(idle, others, work) + ", mean"
}

func cbBesideExtraName(idle, others, work int) string {
	return cbBesideName(idle, others, work) + ", over none"
}

// cbBesideEnv is what the probe sets up: the timed stream, the other
// streams with, per idle time, a graph each (execs[i][k], a spin kernel of
// the idle time and the tail writing its own buffer) and a copy slot each,
// and the queue the host function Puts to.
type cbBesideEnv struct {
	t      *timedStream
	others []device.Stream
	execs  [][]device.GraphExec
	slots  copySlots
	q      device.Queue
}

func (c *calibrator) newCBBesideEnv(h device.Host) (*cbBesideEnv, error) {
	t, err := newTimedStream(h)
	if err != nil {
		return nil, err
	}
	most := cbBesideOthers[len(cbBesideOthers)-1]
	env := &cbBesideEnv{t: t, others: make([]device.Stream, most), execs: make([][]device.GraphExec, len(cbBesideIdles))}
	for k := range env.others {
		if env.others[k], err = h.NewStream(device.StreamOptions{}); err != nil {
			return nil, err
		}
		done, err := h.Malloc(64)
		if err != nil {
			return nil, err
		}
		for i, idle := range cbBesideIdles {
			spin := c.spinLaunch(us(idle+cbBesideTailUs), done)
			st := env.others[k]
			x, err := c.instantiate(h, st, func() error { return h.Launch(st, spin) })
			if err != nil {
				return nil, err
			}
			env.execs[i] = append(env.execs[i], x)
		}
	}
	if env.slots, err = newCopySlots(h, most, slices.Max(cbBesideCopyBytes)); err != nil {
		return nil, err
	}
	env.q = h.NewQueue("callbacks beside graphs")
	return env, nil
}

// start issues work w on other stream k for idle time i.
func (env *cbBesideEnv) start(h device.Host, w, i, k int) error {
	st := env.others[k]
	if w == 0 {
		return h.GraphLaunch(env.execs[i][k], st)
	}
	bytes := cbBesideCopyBytes[w]
	if err := h.Copy(st, env.slots.copy(device.HostToDevice, k, bytes)); err != nil {
		return err
	}
	return h.Copy(st, env.slots.copy(device.DeviceToHost, k, bytes))
}

// handoffs times cbBesideReps hand-offs after spin (idle us) with work w
// on the first n other streams, each started just before: their median
// and mean (ns).
func (env *cbBesideEnv) handoffs(h device.Host, spin *device.Launch, idle, w, i, n int) (med, mean float64, err error) {
	put := func() { env.q.Put(struct{}{}) }
	var each []float64
	for r := 0; r < cbBesideReps; r++ {
		// An untimed hand-off first, so that the callback thread's idle
		// before the timed one is the kernel's: waiting for the last
		// repetition's copies (6.6 MB each way take longer than any idle
		// time here) would park it.
		if _, err := kernelThenCallback(h, env.t.s, spin, env.q, put); err != nil {
			return 0, 0, err
		}
		for k := 0; k < n; k++ {
			if err := env.start(h, w, i, k); err != nil {
				return 0, 0, err
			}
		}
		took, err := kernelThenCallback(h, env.t.s, spin, env.q, put)
		if err != nil {
			return 0, 0, err
		}
		each = append(each, ns(took-us(idle)))
		for k := 0; k < n; k++ {
			if err := h.StreamSynchronize(env.others[k]); err != nil {
				return 0, 0, err
			}
		}
	}
	return stats.Median(each), meanOf(each), nil
}

// cbBesideCase is one timed case: work w on n other streams (0: alone,
// timed once, as work 0's) after a kernel of idle time i.
type cbBesideCase struct{ w, i, j int }

func cbBesideCases() []cbBesideCase {
	var cases []cbBesideCase
	for i := range cbBesideIdles {
		for w := range cbBesideWork {
			for j, n := range cbBesideOthers {
				if w == 0 || n > 0 {
					cases = append(cases, cbBesideCase{w, i, j})
				}
			}
		}
	}
	return cases
}

func (c *calibrator) callbacksBesideGraphs(h device.Host) error {
	env, err := c.newCBBesideEnv(h)
	if err != nil {
		return err
	}
	cases := cbBesideCases()
	// Per case and round, the median and the mean of the repetitions (the
	// rows' slow wakes are a tail: their median hardly moves).
	med, mean := make([][]float64, len(cases)), make([][]float64, len(cases))
	if err := c.warmRounds(func(measured bool) error {
		for x, cs := range cases {
			idle := cbBesideIdles[cs.i]
			m, a, err := env.handoffs(h, c.spinLaunch(us(idle), env.t.done), idle, cs.w, cs.i, cbBesideOthers[cs.j])
			if err != nil {
				return err
			}
			if measured {
				med[x], mean[x] = append(med[x], m), append(mean[x], a)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	c.recordCBBeside(cases, med, mean)
	for _, xs := range env.execs {
		if err := destroyExecs(h, xs); err != nil {
			return err
		}
	}
	return h.StreamSynchronize(env.t.s)
}

// recordCBBeside records each case's median and mean and, beside other
// streams' work, its median over the alone case's of the same idle time.
func (c *calibrator) recordCBBeside(cases []cbBesideCase, med, mean [][]float64) {
	methods := []string{"Host.Now around a spin kernel of the idle time, a host function that Puts to a queue and the host's Get of it, less the idle time, with the other streams' graphs (one spin kernel each, outlasting the timed one by 40 us) launched just before; median of 20 a round"}
	for _, b := range cbBesideCopyBytes[1:] {
		methods = append(methods, fmt.Sprintf("the same with each other stream copying %.1f MB host to device then device to host (pinned, its own buffers), issued just before", float64(b)/1e6))
	}
	alone := map[int][]float64{} // idle index -> the alone case's rounds
	for x, cs := range cases {
		if cbBesideOthers[cs.j] == 0 {
			alone[cs.i] = med[x]
		}
	}
	for x, cs := range cases {
		idle, n := cbBesideIdles[cs.i], cbBesideOthers[cs.j]
		c.record(cbBesideName(idle, n, cs.w), "", "ns", methods[cs.w], med[x])
		c.record(cbBesideMeanName(idle, n, cs.w), "", "ns", "the same, the mean of the 20 a round", mean[x])
		if n == 0 {
			continue
		}
		extra := make([]float64, len(med[x]))
		for r := range extra {
			extra[r] = med[x][r] - alone[cs.i][r]
		}
		c.record(cbBesideExtraName(idle, n, cs.w), "", "ns", "per round, the hand-off beside the other streams' work less the hand-off alone", extra)
	}
}
