package calibrate

import (
	"fmt"
	"math"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/synthetic"
)

// The synthetic DAGs' kernels of the interleaved-stream measurements:
// the chain shape's (64 blocks of 128 threads, 1,024 iterations: about
// 5 us on an H100) and the tiny shape's (2 blocks of 64 threads, 512
// iterations: shorter than the host's calls), the stream counts and the
// chain lengths.
var (
	synthChain = synthSize{"chain kernel", 64, 128, 1024}
	synthTiny  = synthSize{"tiny kernel", 2, 64, 512}
)

const ilN1, ilN2 = 10, 50

var interleaveStreams = []int{1, 2, 4, 8}

type synthSize struct {
	name                   string
	blocks, threads, iters int
}

// synthLaunch is one synth_node launch of size z reading in and writing
// out (one input, as a chain's node has).
func synthLaunch(z synthSize, in, out device.Buffer) *device.Launch {
	n := int32(z.blocks * z.threads)
	var args []device.Arg
	for i := 0; i < 4; i++ {
		args = append(args, device.In(in), device.I32(n))
	}
	args = append(args, device.I32(1), device.Out(out), device.I32(n), device.I32(int32(z.iters)))
	return &device.Launch{
		Kernel: synthetic.Kernel, Grid: device.D1(z.blocks), Block: device.D1(z.threads), Label: "synth_node",
		Args: args, Work: synthetic.Work(z.threads, 1, z.iters),
	}
}

// newSynthLaunches allocates an input and k outputs for synth_node of
// size z and returns k launches, one per output (one per stream, so that
// kernels on different streams never write the same buffer).
func newSynthLaunches(h device.Host, z synthSize, k int) ([]*device.Launch, error) {
	bytes := int64(4 * z.blocks * z.threads)
	in, err := h.Malloc(bytes)
	if err != nil {
		return nil, err
	}
	out := make([]*device.Launch, k)
	for i := range out {
		b, err := h.Malloc(bytes)
		if err != nil {
			return nil, err
		}
		out[i] = synthLaunch(z, in, b)
	}
	return out, nil
}

// ilCosts are one interleaved issue's host time, split by call, and its
// elapsed time free-running and behind a gate kernel.
type ilCosts struct{ host, launch, record, wait, hostFree, free, gated float64 }

func (a ilCosts) minus(b ilCosts, n float64) ilCosts {
	return ilCosts{(a.host - b.host) / n, (a.launch - b.launch) / n, (a.record - b.record) / n, (a.wait - b.wait) / n,
		(a.hostFree - b.hostFree) / n, (a.free - b.free) / n, (a.gated - b.gated) / n}
}

// ilVariant is one way of issuing n kernels of size z round-robin over s
// streams: chain (kernel j waits on the event recorded behind kernel j-1,
// as round-robin issues a chain: one event recorded again and again, as
// sched's event pool reuses it, or with fresh, an event per kernel, as
// sched/graph's schedulers record) or bare (launches only: independent
// kernels, as serial issues on one stream).
type ilVariant struct {
	z     synthSize
	s     int
	chain bool
	fresh bool
}

func (v ilVariant) String() string {
	switch {
	case v.s == 1 && v.fresh:
		return fmt.Sprintf("%s, 1 stream, with record and wait, an event per kernel", v.z.name)
	case v.s == 1 && v.chain:
		return fmt.Sprintf("%s, 1 stream, with record and wait", v.z.name)
	case v.s == 1:
		return fmt.Sprintf("%s, 1 stream, launches only", v.z.name)
	case v.fresh:
		return fmt.Sprintf("%s, chain over %d streams, an event per kernel", v.z.name, v.s)
	case v.chain:
		return fmt.Sprintf("%s, chain over %d streams", v.z.name, v.s)
	}
	return fmt.Sprintf("%s, independent over %d streams", v.z.name, v.s)
}

func (v ilVariant) method() string {
	size := fmt.Sprintf("synth_node (%d blocks of %d threads, %d iterations)", v.z.blocks, v.z.threads, v.z.iters)
	if v.fresh {
		size += " (an event per kernel)"
	}
	switch {
	case v.s == 1 && v.chain:
		return fmt.Sprintf("%d and %d %s on one stream, each waiting on the event recorded behind the one before", ilN1, ilN2, size)
	case v.s == 1:
		return fmt.Sprintf("%d and %d %s on one stream, launches only (as serial issues)", ilN1, ilN2, size)
	case v.chain:
		return fmt.Sprintf("chains of %d and %d %s, kernel j on stream j mod %d waiting on the event recorded behind kernel j-1 (one event, reused)", ilN1, ilN2, size, v.s)
	}
	return fmt.Sprintf("%d and %d independent %s, kernel j on stream j mod %d, launches only", ilN1, ilN2, size, v.s)
}

// interleavedIssue issues n kernels as v says, timing each call with
// Host.Now: a chain records evs[0] again and again (as sched's event pool
// reuses it for a chain), or with v.fresh evs[j] behind kernel j.
func interleavedIssue(h device.Host, ss *streamSet, evs []device.Event, ls []*device.Launch, v ilVariant, n int, c *ilCosts) error {
	ev := func(j int) device.Event {
		if v.fresh {
			return evs[j]
		}
		return evs[0]
	}
	timed := func(into *float64, call func() error) error {
		t0 := h.Now()
		err := call()
		*into += ns(h.Now() - t0)
		return err
	}
	t0 := h.Now()
	for j := 0; j < n; j++ {
		st, l := ss.stream(j%v.s), ls[j%v.s]
		if j > 0 && v.chain {
			if err := timed(&c.wait, func() error { return h.Wait(st, ev(j-1)) }); err != nil {
				return err
			}
		}
		if err := timed(&c.launch, func() error { return h.Launch(st, l) }); err != nil {
			return err
		}
		if v.chain {
			if err := timed(&c.record, func() error { return h.Record(ev(j), st) }); err != nil {
				return err
			}
		}
	}
	c.host += ns(h.Now() - t0)
	return nil
}

// around runs issue with streams 1..s-1 of ss forked from the origin
// before it and joined back after it.
func (ss *streamSet) around(h device.Host, s int, issue func() error) func() error {
	return func() error {
		if s > 1 {
			if err := h.Record(ss.fork, ss.t.s); err != nil {
				return err
			}
			for i := 1; i < s; i++ {
				if err := h.Wait(ss.stream(i), ss.fork); err != nil {
					return err
				}
			}
		}
		if err := issue(); err != nil {
			return err
		}
		for i := 1; i < s; i++ {
			if err := h.Record(ss.joins[i-1], ss.stream(i)); err != nil {
				return err
			}
			if err := h.Wait(ss.t.s, ss.joins[i-1]); err != nil {
				return err
			}
		}
		return nil
	}
}

// interleavedOnce times n kernels issued as v says: free-running (the
// host's pace sets the GPU's, as in a scheduler's run) and again behind a
// gate kernel long enough for the host to issue all of it (the GPU's own
// pace). The host's costs are the gated run's, where every record is
// still pending when the next call comes (the free-running one's total is
// kept beside them).
func (c *calibrator) interleavedOnce(h device.Host, ss *streamSet, evs []device.Event, ls []*device.Launch, v ilVariant, n int) (ilCosts, error) {
	var out, free ilCosts
	var err error
	out.free, err = ss.t.elapsed(h, ss.around(h, v.s, func() error { return interleavedIssue(h, ss, evs, ls, v, n, &free) }))
	if err != nil {
		return out, err
	}
	out.hostFree = free.host
	gate := c.spinLaunch(time.Duration(gateBaseNs+2*gatePerLaunch*float64(n)), ss.t.done)
	if err := h.Launch(ss.t.s, gate); err != nil {
		return out, err
	}
	out.gated, err = ss.t.elapsed(h, ss.around(h, v.s, func() error { return interleavedIssue(h, ss, evs, ls, v, n, &out) }))
	return out, err
}

// interleavedStreams measures what the synthetic DAGs' kernels cost
// issued round-robin over 1, 2, 4 and 8 streams (#18: the host costs of
// records and waits on many streams), as chains (a record and a wait per
// kernel) and as independent launches: per kernel, the slope over 10 and
// 50 kernels of the host's time issuing them (and of each call's share),
// of their elapsed time free-running, and of their elapsed time behind a
// gate (the GPU's own cost per cross-stream edge, or its throughput over
// streams). The one-stream chain issues the same record and wait per
// kernel on its own stream.
func (c *calibrator) interleavedStreams(h device.Host) error {
	maxS := interleaveStreams[len(interleaveStreams)-1]
	ss, evs, err := newStreamsAndEvents(h, maxS, ilN2)
	if err != nil {
		return err
	}
	var variants []ilVariant
	launches := map[string][]*device.Launch{}
	for _, z := range []synthSize{synthChain, synthTiny} {
		if launches[z.name], err = newSynthLaunches(h, z, maxS); err != nil {
			return err
		}
		variants = append(variants, ilVariant{z, 1, false, false})
		for _, s := range interleaveStreams {
			variants = append(variants, ilVariant{z, s, true, false}, ilVariant{z, s, true, true})
		}
		for _, s := range interleaveStreams[1:] {
			variants = append(variants, ilVariant{z, s, false, false})
		}
	}
	per := make([][]ilCosts, len(variants))
	if err := c.warmRounds(func(measured bool) error {
		for i, v := range variants {
			a, err := c.interleavedOnce(h, ss, evs, launches[v.z.name], v, ilN1)
			if err != nil {
				return err
			}
			b, err := c.interleavedOnce(h, ss, evs, launches[v.z.name], v, ilN2)
			if err != nil {
				return err
			}
			if measured {
				per[i] = append(per[i], b.minus(a, ilN2-ilN1))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for i, v := range variants {
		c.recordInterleaved(v, per[i])
	}
	c.recordStreamSwitch(variants, per)
	return nil
}

func (c *calibrator) recordInterleaved(v ilVariant, rounds []ilCosts) {
	get := func(f func(ilCosts) float64) []float64 { return pick(rounds, f) }
	what, how := v.String(), v.method()
	c.record("interleaved host cost per kernel, "+what, "", "ns", "slope of Host.Now around issuing "+how+", behind a gate kernel", get(func(x ilCosts) float64 { return x.host }))
	c.record("interleaved host cost per kernel free-running, "+what, "", "ns", "slope of Host.Now around issuing "+how+", the GPU idle before", get(func(x ilCosts) float64 { return x.hostFree }))
	c.record("interleaved launch cost per kernel, "+what, "", "ns", "the same, Host.Now around each launch", get(func(x ilCosts) float64 { return x.launch }))
	if v.chain {
		c.record("interleaved record cost per kernel, "+what, "", "ns", "the same, Host.Now around each record", get(func(x ilCosts) float64 { return x.record }))
		c.record("interleaved wait cost per kernel, "+what, "", "ns", "the same, Host.Now around each wait", get(func(x ilCosts) float64 { return x.wait }))
	}
	c.record("interleaved period per kernel, "+what, "", "ns", "slope of Elapsed around issuing "+how, get(func(x ilCosts) float64 { return x.free }))
	c.record("interleaved device time per kernel, "+what, "", "ns", "slope of Elapsed around "+how+", issued behind a gate kernel", get(func(x ilCosts) float64 { return x.gated }))
}

// recordStreamSwitch records, from the chain kernel's variants, what
// interleaving over streams adds. On the host, per round and as the mean
// over 2, 4 and 8 streams: independent launches over them less on one
// stream (host.stream_switch_ns: every launch moves to another stream);
// the chain over them with an event per kernel less on one stream, less
// that switch (host.wait_pending_ns: the wait is on another stream's
// record, still pending); and, over 1 to 8 streams, the chain recording
// one event again and again less with an event per kernel
// (host.record_pending_ns: the event's previous record is still pending).
// On the GPU: the gated device time per kernel chained over s streams (an
// event per kernel) less on one stream, launches only, per stream count
// (reported, and with the one event reused), and the least-squares slope
// of those over log2 of the streams (front_end.event_wait_doubling_ns:
// how the cross-stream wait grows per doubling of the streams; the line's
// value at 4 streams is their mean, front_end.event_wait_ns's
// measurement).
func (c *calibrator) recordStreamSwitch(variants []ilVariant, per [][]ilCosts) {
	find := func(s int, chain, fresh bool) []ilCosts {
		for i, v := range variants {
			if v.z == synthChain && v.s == s && v.chain == chain && v.fresh == fresh {
				return per[i]
			}
		}
		panic(fmt.Sprintf("calibrate: no interleaved variant of %d streams", s)) // programming error
	}
	bare, fresh1 := find(1, false, false), find(1, true, true)
	multi := interleaveStreams[1:]
	n := len(bare)
	sw, pend, rerec, slope := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for _, s := range interleaveStreams {
		reused, fresh := find(s, true, false), find(s, true, true)
		for r := range bare {
			rerec[r] += (reused[r].host - fresh[r].host) / float64(len(interleaveStreams))
		}
	}
	for _, s := range multi {
		var gap, gapReused []float64
		indep, fresh, reused := find(s, false, false), find(s, true, true), find(s, true, false)
		for r := range bare {
			k := float64(len(multi))
			sw[r] += (indep[r].host - bare[r].host) / k
			pend[r] += (fresh[r].host - fresh1[r].host - (indep[r].host - bare[r].host)) / k
			g := fresh[r].gated - bare[r].gated
			gap, gapReused = append(gap, g), append(gapReused, reused[r].gated-bare[r].gated)
			// Over x = log2(s) - 2 (-1, 0, 1 for 2, 4, 8 streams) the
			// least-squares slope is sum(x g) / sum(x^2).
			x := math.Log2(float64(s)) - 2
			slope[r] += x * g / 2
		}
		c.record(fmt.Sprintf("cross-stream device gap per kernel, %d streams", s), "", "ns",
			fmt.Sprintf("per round, the chain kernel's gated device time per kernel chained over %d streams (an event per kernel) less on one stream, launches only", s), gap)
		c.record(fmt.Sprintf("cross-stream device gap per kernel, %d streams, one event reused", s), "", "ns",
			fmt.Sprintf("the same, the chain recording one event again and again (as round-robin's event pool does), over %d streams", s), gapReused)
	}
	c.record("cross-stream wait rise per doubling of streams", "front_end.event_wait_doubling_ns", "ns",
		"per round, the least-squares slope of the three gaps above (an event per kernel) over log2 of the streams", slope)
	c.record("host cost of moving to another stream", "host.stream_switch_ns", "ns",
		"per round, the mean over 2, 4 and 8 streams of the chain kernel's host cost per kernel launched independently over them less on one stream", sw)
	c.record("host cost of a wait on another stream's pending record", "host.wait_pending_ns", "ns",
		"per round, the mean over 2, 4 and 8 streams of the chain kernel's host cost per kernel chained over them less chained on one stream (an event per kernel), less the move to another stream above", pend)
	c.record("host cost of recording an event whose last record is pending", "host.record_pending_ns", "ns",
		"per round, the mean over 1, 2, 4 and 8 streams of the chain kernel's host cost per kernel chained recording one event again and again less with an event per kernel", rerec)
}
