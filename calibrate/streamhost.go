package calibrate

import (
	"fmt"
	"math"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/synthetic"
)

// The synthetic DAGs' chain kernel (synth_node, 64 blocks of 128 threads,
// 1,024 iterations: about 5 us on an H100), the stream counts and the
// chain lengths of the interleaved-stream measurements.
const (
	synthBlocks, synthThreads, synthIters = 64, 128, 1024
	ilN1, ilN2                            = 10, 50
)

var interleaveStreams = []int{1, 2, 4, 8}

// synthLaunch is one synth_node launch reading in and writing out (one
// input, as a chain's node has).
func synthLaunch(in, out device.Buffer) *device.Launch {
	n := int32(synthBlocks * synthThreads)
	var args []device.Arg
	for i := 0; i < 4; i++ {
		args = append(args, device.In(in), device.I32(n))
	}
	args = append(args, device.I32(1), device.Out(out), device.I32(n), device.I32(synthIters))
	return &device.Launch{
		Kernel: synthetic.Kernel, Grid: device.D1(synthBlocks), Block: device.D1(synthThreads), Label: "synth_node",
		Args: args, Work: synthetic.Work(synthThreads, 1, synthIters),
	}
}

// newSynthLaunch allocates synth_node's two buffers.
func newSynthLaunch(h device.Host) (*device.Launch, error) {
	bytes := int64(4 * synthBlocks * synthThreads)
	in, err := h.Malloc(bytes)
	if err != nil {
		return nil, err
	}
	out, err := h.Malloc(bytes)
	if err != nil {
		return nil, err
	}
	return synthLaunch(in, out), nil
}

// ilCosts are one interleaved chain's host time, split by call, and its
// elapsed time free-running and behind a gate kernel.
type ilCosts struct{ host, launch, record, wait, free, gated float64 }

func (a ilCosts) minus(b ilCosts, n float64) ilCosts {
	return ilCosts{(a.host - b.host) / n, (a.launch - b.launch) / n, (a.record - b.record) / n, (a.wait - b.wait) / n,
		(a.free - b.free) / n, (a.gated - b.gated) / n}
}

// interleavedChain issues n synth_node kernels as a round-robin scheduler
// issues a chain over s streams (kernel j on stream j mod s waits on the
// event recorded behind kernel j-1, one event reused as sched's event
// pool reuses it), timing each call with Host.Now. bare (s = 1 only)
// leaves the records and waits out, as the serial scheduler issues.
func interleavedChain(h device.Host, ss *streamSet, ev device.Event, l *device.Launch, s, n int, bare bool, c *ilCosts) error {
	timed := func(into *float64, call func() error) error {
		t0 := h.Now()
		err := call()
		*into += ns(h.Now() - t0)
		return err
	}
	t0 := h.Now()
	for j := 0; j < n; j++ {
		st := ss.stream(j % s)
		if j > 0 && !bare {
			if err := timed(&c.wait, func() error { return h.Wait(st, ev) }); err != nil {
				return err
			}
		}
		if err := timed(&c.launch, func() error { return h.Launch(st, l) }); err != nil {
			return err
		}
		if !bare {
			if err := timed(&c.record, func() error { return h.Record(ev, st) }); err != nil {
				return err
			}
		}
	}
	c.host += ns(h.Now() - t0)
	if last := (n - 1) % s; last != 0 {
		return h.Wait(ss.stream(0), ev)
	}
	return nil
}

// interleavedOnce times one chain of n kernels over s streams: issued
// free-running (the host's pace sets the GPU's, as in a scheduler's run)
// and again behind a gate kernel long enough for the host to issue all
// of it (the GPU's own pace).
func (c *calibrator) interleavedOnce(h device.Host, ss *streamSet, ev device.Event, l *device.Launch, s, n int, bare bool) (ilCosts, error) {
	var out ilCosts
	var err error
	out.free, err = ss.t.elapsed(h, func() error { return interleavedChain(h, ss, ev, l, s, n, bare, &out) })
	if err != nil {
		return out, err
	}
	gate := c.spinLaunch(time.Duration(gateBaseNs+2*gatePerLaunch*float64(n)), ss.t.done)
	if err := h.Launch(ss.t.s, gate); err != nil {
		return out, err
	}
	var ignored ilCosts
	out.gated, err = ss.t.elapsed(h, func() error { return interleavedChain(h, ss, ev, l, s, n, bare, &ignored) })
	return out, err
}

// interleavedStreams measures what a round-robin chain of the synthetic
// DAGs' kernel costs over 1, 2, 4 and 8 streams (#18: the host costs of
// records and waits on many streams): per kernel, the slope over chains
// of 10 and 50 kernels of the host's time issuing it (and of each call's
// share), of the chain's elapsed time free-running, and of its elapsed
// time behind a gate (the GPU's own cost per cross-stream edge). The one
// stream case issues the same record and wait per kernel (on its own
// stream) and, as serial does, without them.
func (c *calibrator) interleavedStreams(h device.Host) error {
	ss, err := newStreamSet(h, interleaveStreams[len(interleaveStreams)-1])
	if err != nil {
		return err
	}
	ev, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	if err != nil {
		return err
	}
	l, err := newSynthLaunch(h)
	if err != nil {
		return err
	}
	type variant struct {
		s    int
		bare bool
	}
	variants := []variant{{1, true}}
	for _, s := range interleaveStreams {
		variants = append(variants, variant{s, false})
	}
	per := make([][]ilCosts, len(variants))
	for r := 0; r < c.rounds+1; r++ { // the first round warms up
		for i, v := range variants {
			a, err := c.interleavedOnce(h, ss, ev, l, v.s, ilN1, v.bare)
			if err != nil {
				return err
			}
			b, err := c.interleavedOnce(h, ss, ev, l, v.s, ilN2, v.bare)
			if err != nil {
				return err
			}
			if r > 0 {
				per[i] = append(per[i], b.minus(a, ilN2-ilN1))
			}
		}
	}
	for i, v := range variants {
		c.recordInterleaved(v.s, v.bare, per[i])
	}
	c.recordStreamSwitch(per)
	return nil
}

func (c *calibrator) recordInterleaved(s int, bare bool, rounds []ilCosts) {
	what := fmt.Sprintf("%d streams", s)
	how := fmt.Sprintf("synth_node chains of %d and %d kernels (%d blocks of %d threads, %d iterations), kernel j on stream j mod %d waiting on the event recorded behind kernel j-1", ilN1, ilN2, synthBlocks, synthThreads, synthIters, s)
	switch {
	case bare:
		what = "1 stream, launches only"
		how = fmt.Sprintf("synth_node chains of %d and %d kernels on one stream, launches only (as serial issues)", ilN1, ilN2)
	case s == 1:
		what = "1 stream, with record and wait"
		how = fmt.Sprintf("synth_node chains of %d and %d kernels on one stream, each waiting on the event recorded behind the one before", ilN1, ilN2)
	}
	get := func(f func(ilCosts) float64) []float64 {
		out := make([]float64, len(rounds))
		for i, x := range rounds {
			out[i] = f(x)
		}
		return out
	}
	c.record("interleaved host cost per kernel, "+what, "", "ns", "slope of Host.Now around issuing "+how, get(func(x ilCosts) float64 { return x.host }))
	if !bare {
		c.record("interleaved launch cost per kernel, "+what, "", "ns", "the same, Host.Now around each launch", get(func(x ilCosts) float64 { return x.launch }))
		c.record("interleaved record cost per kernel, "+what, "", "ns", "the same, Host.Now around each record", get(func(x ilCosts) float64 { return x.record }))
		c.record("interleaved wait cost per kernel, "+what, "", "ns", "the same, Host.Now around each wait", get(func(x ilCosts) float64 { return x.wait }))
	}
	c.record("interleaved chain period per kernel, "+what, "", "ns", "slope of Elapsed around issuing "+how, get(func(x ilCosts) float64 { return x.free }))
	c.record("interleaved chain device time per kernel, "+what, "", "ns", "slope of Elapsed around "+how+", issued behind a gate kernel", get(func(x ilCosts) float64 { return x.gated }))
}

// recordStreamSwitch records what interleaving over streams adds: per
// round, the host cost per kernel over 2, 4 and 8 streams less the same
// calls' on one stream (host.stream_switch_ns: each kernel's calls move
// to another stream once), the device time per kernel less the one-stream
// launches-only chain's, per stream count (reported), and the
// least-squares slope of those over log2 of the streams
// (front_end.event_wait_doubling_ns: how the cross-stream wait grows per
// doubling of the streams; the line's value at 4 streams is the mean over
// 2, 4 and 8, front_end.event_wait_ns's measurement).
func (c *calibrator) recordStreamSwitch(per [][]ilCosts) {
	one := per[1] // 1 stream with record and wait
	multi := interleaveStreams[1:]
	sw := make([]float64, len(one))
	slope := make([]float64, len(one))
	for i, s := range multi {
		var gap []float64
		for r := range one {
			sw[r] += (per[i+2][r].host - one[r].host) / float64(len(multi))
			g := per[i+2][r].gated - per[0][r].gated
			gap = append(gap, g)
			// Over x = log2(s) - 2 (-1, 0, 1 for 2, 4, 8 streams) the
			// least-squares slope is sum(x g) / sum(x^2).
			x := math.Log2(float64(s)) - 2
			slope[r] += x * g / 2
		}
		c.record(fmt.Sprintf("cross-stream device gap per kernel, %d streams", s), "", "ns",
			fmt.Sprintf("per round, the gated device time per kernel over %d streams less the one-stream launches-only chain's", s), gap)
	}
	c.record("cross-stream wait rise per doubling of streams", "front_end.event_wait_doubling_ns", "ns",
		"per round, the least-squares slope of the three gaps above over log2 of the streams", slope)
	c.record("host cost of moving to another stream", "host.stream_switch_ns", "ns",
		"per round, the mean over 2, 4 and 8 streams of the host cost per kernel less the one-stream chain's with the same record and wait", sw)
}
