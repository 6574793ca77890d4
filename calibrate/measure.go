package calibrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Durations of the spin kernels: long against host call costs, so that the
// host always runs ahead of the GPU where a measurement needs it to.
const (
	spinD      = 20 * time.Microsecond
	wakeD      = 50 * time.Microsecond
	callbackD  = 2 * time.Millisecond
	batch      = 100 // calls per round for host costs
	smallBatch = 20  // for expensive calls (allocations, streams, threads)
)

// instantiateChain captures n launches on s (one after another) and
// instantiates them.
func (c *calibrator) instantiateChain(h device.Host, s device.Stream, n int, launch func() *device.Launch) (device.GraphExec, error) {
	return c.instantiate(h, s, chain(h, s, n, launch))
}

func (c *calibrator) captureChain(h device.Host, s device.Stream, n int, launch func() *device.Launch) (device.Graph, error) {
	return capture(h, s, chain(h, s, n, launch))
}

// chain issues n launches on s, one after another.
func chain(h device.Host, s device.Stream, n int, launch func() *device.Launch) func() error {
	return func() error {
		for i := 0; i < n; i++ {
			if err := h.Launch(s, launch()); err != nil {
				return err
			}
		}
		return nil
	}
}

// capture captures what issue issues on s.
func capture(h device.Host, s device.Stream, issue func() error) (device.Graph, error) {
	if err := h.BeginCapture(s); err != nil {
		return nil, err
	}
	if err := issue(); err != nil {
		return nil, err
	}
	return h.EndCapture(s)
}

// instantiate captures what issue issues on s, instantiates it and
// destroys the graph (also when instantiating fails).
func (c *calibrator) instantiate(h device.Host, s device.Stream, issue func() error) (device.GraphExec, error) {
	g, err := capture(h, s, issue)
	if err != nil {
		return nil, err
	}
	x, err := h.Instantiate(g)
	if err != nil {
		return nil, errors.Join(err, h.Destroy(g))
	}
	return x, h.Destroy(g)
}

type timedStream struct {
	s      device.Stream
	e0, e1 device.Event
	done   device.Buffer
}

func newTimedStream(h device.Host) (*timedStream, error) {
	var t timedStream
	var err error
	if t.s, err = h.NewStream(device.StreamOptions{}); err != nil {
		return nil, err
	}
	if t.e0, err = h.NewEvent(device.EventOptions{}); err != nil {
		return nil, err
	}
	if t.e1, err = h.NewEvent(device.EventOptions{}); err != nil {
		return nil, err
	}
	if t.done, err = h.Malloc(4); err != nil {
		return nil, err
	}
	return &t, nil
}

func (t *timedStream) elapsed(h device.Host, issue func() error) (float64, error) {
	return elapsed(h, t.s, t.e0, t.e1, issue)
}

func (c *calibrator) frontEnd(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	spin := c.spinLaunch(spinD, t.done)
	launchSpins := func(n int) func() error {
		return func() error {
			for i := 0; i < n; i++ {
				if err := h.Launch(t.s, spin); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if _, err := t.elapsed(h, launchSpins(1)); err != nil { // warm up
		return err
	}
	var lat, gap []float64
	const n1, n2 = 4, 16
	for r := 0; r < c.rounds; r++ {
		y, err := t.elapsed(h, launchSpins(1))
		if err != nil {
			return err
		}
		lat = append(lat, y-c.launchNs-ns(spinD))
		y1, err := t.elapsed(h, launchSpins(n1))
		if err != nil {
			return err
		}
		y2, err := t.elapsed(h, launchSpins(n2))
		if err != nil {
			return err
		}
		gap = append(gap, (y2-y1)/(n2-n1)-ns(spinD))
	}
	c.latencyNs = c.record("launch-to-start latency", "front_end.launch_latency_ns", "ns",
		"Elapsed(e0,e1) around one 20 us spin kernel on an idle stream, less launch cost and 20 us", lat)
	c.record("back-to-back gap on one stream", "front_end.back_to_back_ns", "ns",
		"slope of Elapsed over 4 and 16 queued 20 us spin kernels, less 20 us", gap)

	wspin := c.spinLaunch(wakeD, t.done)
	var wake []float64
	if err := c.warmRounds(func(measured bool) error {
		t0 := h.Now()
		if err := h.Launch(t.s, wspin); err != nil {
			return err
		}
		if err := h.StreamSynchronize(t.s); err != nil {
			return err
		}
		if measured {
			wake = append(wake, ns(h.Now()-t0)-c.launchNs-c.latencyNs-ns(wakeD))
		}
		return nil
	}); err != nil {
		return err
	}
	c.record("synchronize wake-up", "host.wakeup_ns", "ns",
		"Host.Now around launch + StreamSynchronize of a 50 us spin kernel, less launch cost, latency and 50 us", wake)
	return nil
}

// graphs measures a graph's instantiation (graphInstantiate), then its
// launch latency and per-node gap (graphLaunchLatency), on one stream.
func (c *calibrator) graphs(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	if err := c.graphInstantiate(h, t); err != nil {
		return err
	}
	return c.graphLaunchLatency(h, t)
}

// graphInstantiate: Host.Now around instantiating chains of 8 and 64
// empty kernels, a fixed cost and one per node.
func (c *calibrator) graphInstantiate(h device.Host, t *timedStream) error {
	le := c.emptyLaunch(1)
	const g1, g2 = 8, 64
	var base, perNode []float64
	small, err := c.captureChain(h, t.s, g1, func() *device.Launch { return le })
	if err != nil {
		return err
	}
	large, err := c.captureChain(h, t.s, g2, func() *device.Launch { return le })
	if err != nil {
		return err
	}
	inst := func(g device.Graph) (float64, error) {
		t0 := h.Now()
		x, err := h.Instantiate(g)
		if err != nil {
			return 0, err
		}
		d := ns(h.Now() - t0)
		return d, h.Destroy(x)
	}
	if err := c.warmRounds(func(measured bool) error {
		y1, err := inst(small)
		if err != nil {
			return err
		}
		y2, err := inst(large)
		if err != nil {
			return err
		}
		if !measured {
			return nil
		}
		p := (y2 - y1) / (g2 - g1)
		perNode = append(perNode, p)
		base = append(base, y1-p*g1)
		return nil
	}); err != nil {
		return err
	}
	c.record("graph instantiate, fixed cost", "host.instantiate_base_ns", "ns", "Host.Now around instantiating graphs of 8 and 64 empty kernels: intercept", base)
	c.record("graph instantiate, per node", "host.instantiate_per_node_ns", "ns", "the same: slope per node", perNode)
	return nil
}

// graphLaunchLatency: Elapsed around launching graphs of chains of 4 and
// 16 spin kernels, less the graph launch cost measured before.
func (c *calibrator) graphLaunchLatency(h device.Host, t *timedStream) error {
	spin := c.spinLaunch(spinD, t.done)
	const n1, n2 = 4, 16
	x1, err := c.instantiateChain(h, t.s, n1, func() *device.Launch { return spin })
	if err != nil {
		return err
	}
	x2, err := c.instantiateChain(h, t.s, n2, func() *device.Launch { return spin })
	if err != nil {
		return err
	}
	launch := func(x device.GraphExec) func() error { return func() error { return h.GraphLaunch(x, t.s) } }
	var node, latency []float64
	if err := c.warmRounds(func(measured bool) error {
		y1, err := t.elapsed(h, launch(x1))
		if err != nil {
			return err
		}
		y2, err := t.elapsed(h, launch(x2))
		if err != nil {
			return err
		}
		if !measured {
			return nil
		}
		// Elapsed(n) = launch cost (a chain's: fixed part + one branch + n
		// x per node) + latency + n D + (n-1) node gap.
		slope := (y2 - y1) / (n2 - n1)
		gn := slope - ns(spinD) - c.graphNodeNs
		node = append(node, gn)
		latency = append(latency, y1-float64(n1)*slope+gn-c.graphChainNs)
		return nil
	}); err != nil {
		return err
	}
	c.record("graph launch latency", "front_end.graph_launch_latency_ns", "ns",
		"intercept of Elapsed over chains of 4 and 16 20 us spin kernels in a graph, less the graph launch cost", latency)
	c.record("graph per-node gap", "front_end.graph_node_ns", "ns", "the same: slope per node, less 20 us and the launch cost per node", node)
	return nil
}

// callbacksQueued is how many host functions the callback duration is
// timed over, back to back behind a kernel.
const callbacksQueued = 32

func (c *calibrator) callbacks(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	long := c.spinLaunch(callbackD, t.done)
	const n = callbacksQueued
	nop := func() {}
	var cb []float64
	if err := c.warmRounds(func(measured bool) error {
		// The kernel keeps the stream busy while the callbacks queue up;
		// e0 completes when it ends, and the callbacks then run back to back.
		if err := h.Launch(t.s, long); err != nil {
			return err
		}
		y, err := t.elapsed(h, func() error {
			for i := 0; i < n; i++ {
				if err := h.HostFunc(t.s, nop); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if measured {
			cb = append(cb, y/n)
		}
		return nil
	}); err != nil {
		return err
	}
	c.callbackNs = c.record("host callback duration", "front_end.callback_ns", "ns",
		"Elapsed over 32 no-op host functions queued behind a 2 ms kernel, per callback", cb)
	return nil
}

// blockDispatch times waves of empty blocks: padded to one block per SM
// (the shortest block's lifetime: front_end.min_block_ns) and at full
// occupancy (32-thread blocks, as many per SM as fit). When a full wave
// takes longer than a one-per-SM wave, the block distributor bounds it:
// its time per block is front_end.block_dispatch_ns; otherwise that is 0
// (not seen).
func (c *calibrator) blockDispatch(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	lone, full, wave, err := c.emptyWaves(h, t)
	if err != nil {
		return err
	}
	var rate, dispatch []float64
	for i := range full {
		rate = append(rate, float64(wave)/full[i]*1e9)
		d := dispatchPerBlock(lone[i], full[i], wave)
		dispatch = append(dispatch, d)
		lone[i] = shortestBlock(lone[i], d, c.info.SMs)
	}
	c.record("shortest block lifetime", "front_end.min_block_ns", "ns",
		fmt.Sprintf("empty blocks padded to one per SM: time per wave of %d, over 2 and 16 waves", c.info.SMs), lone)
	c.record("block dispatch rate", "", "blocks/s",
		fmt.Sprintf("empty 32-thread blocks, 2 and 16 full waves of %d blocks", wave), rate)
	c.record("block dispatch time per block", "front_end.block_dispatch_ns", "ns",
		"a full wave's time per block when it exceeds a one-per-SM wave's by 5% (the distributor bounds it), else 0", dispatch)
	return nil
}

// emptyWaves is, per round, the time per wave of empty blocks padded to
// one per SM (lone) and of 32-thread empty blocks at full occupancy
// (full, wave blocks a wave).
func (c *calibrator) emptyWaves(h device.Host, t *timedStream) (lone, full []float64, wave int, err error) {
	one := c.emptyLaunch(1)
	if dyn, ok := paddedShared(&c.info, one, 1); ok {
		one.SharedMem = dyn
	}
	perSM, _ := c.info.Occupancy(c.emptyLaunch(1))
	wave = perSM * c.info.SMs
	if lone, err = c.waveTime(h, t, one, c.info.SMs); err != nil {
		return nil, nil, 0, err
	}
	full, err = c.waveTime(h, t, c.emptyLaunch(1), wave)
	return lone, full, wave, err
}

// shortestBlock is the shortest block's lifetime from a one-per-SM wave's
// time: the wave's time, unless the distributor's time for the wave's
// blocks explains it (then the block is shorter than that: 0).
func shortestBlock(wave, dispatch float64, sms int) float64 {
	if wave <= 1.05*dispatch*float64(sms) {
		return 0
	}
	return wave
}

// dispatchPerBlock is the block distributor's time per block: a full
// wave's time over its blocks when it exceeds a one-per-SM wave's by 5%,
// else 0 (the distributor is not what bounds it).
func dispatchPerBlock(lone, full float64, wave int) float64 {
	if full > 1.05*lone {
		return full / float64(wave)
	}
	return 0
}

// waveTime is, per round, the time per wave of launches of l (its grid
// set to 2 and 16 waves of wave blocks): the slope of Elapsed.
func (c *calibrator) waveTime(h device.Host, t *timedStream, l *device.Launch, wave int) ([]float64, error) {
	const k1, k2 = 2, 16
	l1, l2 := *l, *l
	l1.Grid, l2.Grid = device.D1(k1*wave), device.D1(k2*wave)
	var out []float64
	if err := c.warmRounds(func(measured bool) error {
		y1, err := t.elapsed(h, func() error { return h.Launch(t.s, &l1) })
		if err != nil {
			return err
		}
		y2, err := t.elapsed(h, func() error { return h.Launch(t.s, &l2) })
		if err != nil {
			return err
		}
		if measured {
			out = append(out, (y2-y1)/(k2-k1))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// streamLaunch reads bytes of src from off with blocks blocks of threads
// threads; on the simulator each block's Work is its share of the bytes.
func (c *calibrator) streamLaunch(src, out device.Buffer, off int64, blocks, threads int, bytes int64) *device.Launch {
	return &device.Launch{
		Kernel: c.stream, Grid: device.D1(blocks), Block: device.D1(threads), Label: "cal_stream",
		Args: []device.Arg{
			{Kind: device.ArgBuffer, Buf: src, Mode: device.Read, Off: off, Len: bytes},
			device.U64(uint64(bytes / 16)),
			device.Out(out),
		},
		Work: device.Work{Bytes: float64(bytes) / float64(blocks)},
	}
}

func (c *calibrator) smBandwidth(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	// Each launch reads the next region of a buffer ten times the L2, so
	// what it reads was evicted long ago: DRAM bandwidth, not L2's.
	const large, total = 256 << 20, 512 << 20
	src, err := h.Malloc(total)
	if err != nil {
		return err
	}
	out, err := h.Malloc(int64(4 * 1024 * c.info.SMs))
	if err != nil {
		return err
	}
	var cursor int64
	launch := func(blocks, threads int, bytes int64) func() error {
		return func() error {
			if cursor+bytes > total {
				cursor = 0
			}
			l := c.streamLaunch(src, out, cursor, blocks, threads, bytes)
			cursor += bytes
			return h.Launch(t.s, l)
		}
	}
	// bandwidth is the slope of Elapsed over two sizes, in bytes per second.
	bandwidth := func(blocks, threads int, small, large int64) ([]float64, error) {
		var bw []float64
		if err := c.warmRounds(func(measured bool) error {
			y1, err := t.elapsed(h, launch(blocks, threads, small))
			if err != nil {
				return err
			}
			y2, err := t.elapsed(h, launch(blocks, threads, large))
			if err != nil {
				return err
			}
			if measured {
				bw = append(bw, float64(large-small)/(y2-y1)*1e9)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		return bw, nil
	}
	full, err := bandwidth(1, 1024, 1<<20, 16<<20)
	if err != nil {
		return err
	}
	smMax := c.record("memory bandwidth of one SM, 32 warps", "sm.max_sm_bandwidth", "B/s",
		"slope of Elapsed over one 1024-thread cal_stream block reading 1 and 16 MiB", full)
	four, err := bandwidth(1, 128, 1<<20, 16<<20)
	if err != nil {
		return err
	}
	bw4 := c.record("memory bandwidth of one SM, 4 warps", "", "B/s",
		"the same with one 128-thread block", four)
	sat := make([]float64, len(full))
	for i := range full {
		sat[i] = 4 * full[i] / four[i]
	}
	c.record("warps that saturate one SM's bandwidth", "sm.sm_mem_saturation_warps", "warps",
		fmt.Sprintf("4 x the ratio of the two bandwidths above, per round (medians %.3g and %.3g B/s)", smMax, bw4), sat)
	gpu, err := bandwidth(c.info.SMs, 1024, 16<<20, large)
	if err != nil {
		return err
	}
	c.record("streaming bandwidth, one 32-warp block per SM", "", "B/s",
		fmt.Sprintf("slope of Elapsed over %d 1024-thread cal_stream blocks reading 16 and 256 MiB", c.info.SMs), gpu)
	return nil
}

func (c *calibrator) throughput(h device.Host) error {
	const n = 2000
	for _, threads := range []int{1, 2, 4, 8} {
		var rates []float64
		for r := 0; r < 3; r++ {
			rate, err := c.launchRate(h, threads, n)
			if err != nil {
				return err
			}
			rates = append(rates, rate)
		}
		c.record(fmt.Sprintf("launch throughput, %d host thread(s)", threads), "", "launches/s",
			fmt.Sprintf("%d empty-kernel launches per thread, each thread on its own stream, all released at once", n), rates)
	}
	return nil
}

func (c *calibrator) launchRate(h device.Host, threads, n int) (float64, error) {
	ready, done := h.NewQueue("ready"), h.NewQueue("done")
	start := make([]device.Queue, threads)
	for w := range start {
		start[w] = h.NewQueue(fmt.Sprintf("start %d", w))
		q := start[w]
		h.Go(fmt.Sprintf("launcher %d", w), func(h device.Host) error {
			s, err := h.NewStream(device.StreamOptions{})
			if err != nil {
				ready.Put(err)
				return err
			}
			l := c.emptyLaunch(1)
			if err := h.Launch(s, l); err != nil { // loads the function
				ready.Put(err)
				return err
			}
			if err := h.StreamSynchronize(s); err != nil {
				ready.Put(err)
				return err
			}
			ready.Put(nil)
			if _, ok := h.Get(q); !ok {
				return errors.New("start queue closed")
			}
			var lerr error
			for i := 0; i < n && lerr == nil; i++ {
				lerr = h.Launch(s, l)
			}
			done.Put(h.Now())
			if lerr != nil {
				return lerr
			}
			if err := h.StreamSynchronize(s); err != nil {
				return err
			}
			return h.Destroy(s)
		})
	}
	for range start {
		v, ok := h.Get(ready)
		if !ok {
			return 0, errors.New("ready queue closed")
		}
		if err, _ := v.(error); err != nil {
			return 0, err
		}
	}
	t0 := h.Now()
	for _, q := range start {
		q.Put(struct{}{})
	}
	var last time.Duration
	for range start {
		v, ok := h.Get(done)
		if !ok {
			return 0, errors.New("done queue closed")
		}
		last = max(last, v.(time.Duration))
	}
	return float64(threads*n) / ns(last-t0) * 1e9, nil
}
