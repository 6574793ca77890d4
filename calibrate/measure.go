package calibrate

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
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

func (c *calibrator) hostCosts(h device.Host) error {
	s, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return err
	}
	e, err := h.NewEvent(device.EventOptions{})
	if err != nil {
		return err
	}
	dbuf, err := h.Malloc(4096)
	if err != nil {
		return err
	}
	pin, err := h.AllocHost(4096, true)
	if err != nil {
		return err
	}
	le := c.emptyLaunch(1)
	sync := func() error { return h.StreamSynchronize(s) }

	r, err := c.perCall(h, batch, nil, func(int) error { return h.Launch(s, le) }, sync)
	if err != nil {
		return err
	}
	c.launchNs = c.record("launch API cost", "host.launch_ns", "ns", "Host.Now around 100 empty-kernel launches on one stream", r)

	cp := &device.Copy{Kind: device.HostToDevice, Dst: dbuf, Host: pin, Bytes: 4}
	if r, err = c.perCall(h, batch, nil, func(int) error { return h.Copy(s, cp) }, sync); err != nil {
		return err
	}
	c.copyEnqNs = c.record("copy enqueue cost", "host.copy_enqueue_ns", "ns", "Host.Now around 100 4-byte pinned host-to-device copies", r)

	if r, err = c.perCall(h, batch, nil, func(int) error { return h.Record(e, s) }, sync); err != nil {
		return err
	}
	c.record("event record cost", "host.record_ns", "ns", "Host.Now around 100 records", r)

	if err := h.Record(e, s); err != nil {
		return err
	}
	if err := sync(); err != nil {
		return err
	}
	if r, err = c.perCall(h, batch, nil, func(int) error { return h.Wait(s, e) }, sync); err != nil {
		return err
	}
	c.record("stream wait cost", "host.wait_ns", "ns", "Host.Now around 100 waits on a completed event", r)

	if r, err = c.perCall(h, batch, nil, func(int) error { _, err := h.Query(e); return err }, nil); err != nil {
		return err
	}
	c.record("event query cost", "host.query_ns", "ns", "Host.Now around 100 queries of a completed event", r)

	if r, err = c.perCall(h, batch, nil, func(int) error { return h.StreamSynchronize(s) }, nil); err != nil {
		return err
	}
	c.record("synchronize call cost", "host.sync_call_ns", "ns", "Host.Now around 100 synchronizes of an idle stream", r)

	nop := func() {}
	if r, err = c.perCall(h, batch, nil, func(int) error { return h.HostFunc(s, nop) }, sync); err != nil {
		return err
	}
	c.record("host function enqueue cost", "host.host_func_ns", "ns", "Host.Now around 100 cuLaunchHostFunc of a no-op", r)

	var streams []device.Stream
	if r, err = c.perCall(h, smallBatch, nil, func(int) error {
		st, err := h.NewStream(device.StreamOptions{})
		streams = append(streams, st)
		return err
	}, func() error { return destroyAll(h, &streams) }); err != nil {
		return err
	}
	c.record("stream create cost", "host.stream_create_ns", "ns", "Host.Now around 20 stream creations", r)

	var evs []device.Event
	if r, err = c.perCall(h, batch, nil, func(int) error {
		ev, err := h.NewEvent(device.EventOptions{})
		evs = append(evs, ev)
		return err
	}, func() error { return destroyEvents(h, &evs) }); err != nil {
		return err
	}
	c.record("event create cost", "host.event_create_ns", "ns", "Host.Now around 100 event creations", r)

	if r, err = c.perCall(h, batch, func() error {
		for i := 0; i < batch; i++ {
			ev, err := h.NewEvent(device.EventOptions{})
			if err != nil {
				return err
			}
			evs = append(evs, ev)
		}
		return nil
	}, func(i int) error { return h.Destroy(evs[i]) }, func() error { evs = evs[:0]; return nil }); err != nil {
		return err
	}
	c.record("destroy cost", "host.destroy_ns", "ns", "Host.Now around 100 event destructions", r)

	var bufs []device.Buffer
	if r, err = c.perCall(h, smallBatch, nil, func(int) error {
		b, err := h.Malloc(1 << 20)
		bufs = append(bufs, b)
		return err
	}, func() error { return freeAll(h, &bufs) }); err != nil {
		return err
	}
	c.record("device malloc cost", "host.malloc_ns", "ns", "Host.Now around 20 1 MiB cuMemAlloc", r)

	if r, err = c.perCall(h, smallBatch, func() error {
		for i := 0; i < smallBatch; i++ {
			b, err := h.Malloc(1 << 20)
			if err != nil {
				return err
			}
			bufs = append(bufs, b)
		}
		return nil
	}, func(i int) error { return h.Free(bufs[i]) }, func() error { bufs = bufs[:0]; return nil }); err != nil {
		return err
	}
	c.record("device free cost", "host.free_ns", "ns", "Host.Now around 20 cuMemFree of 1 MiB", r)

	var hms []*device.HostMem
	if r, err = c.perCall(h, smallBatch, nil, func(int) error {
		m, err := h.AllocHost(1<<16, true)
		hms = append(hms, m)
		return err
	}, func() error {
		for _, m := range hms {
			if err := h.FreeHost(m); err != nil {
				return err
			}
		}
		hms = hms[:0]
		return nil
	}); err != nil {
		return err
	}
	c.record("pinned host allocation cost", "host.alloc_host_ns", "ns", "Host.Now around 20 64 KiB cuMemAllocHost", r)

	if r, err = c.perCall(h, batch, func() error { return h.BeginCapture(s) },
		func(int) error { return h.Launch(s, le) },
		func() error {
			g, err := h.EndCapture(s)
			if err != nil {
				return err
			}
			return h.Destroy(g)
		}); err != nil {
		return err
	}
	c.record("capture cost per command", "host.capture_ns", "ns", "Host.Now around 100 launches into a capturing stream", r)

	if err := c.graphHostCosts(h, s, dbuf, pin, le); err != nil {
		return err
	}

	nopThread := func(device.Host) error { return nil }
	if r, err = c.perCall(h, smallBatch, nil, func(int) error { h.Go("calibrate nop", nopThread); return nil }, nil); err != nil {
		return err
	}
	c.record("host thread start cost", "host.thread_start_ns", "ns", "Host.Now around 20 Host.Go of a function that returns at once", r)
	return h.Synchronize()
}

// graphWidth is the width of the wider graph graphHostCosts launches.
const graphWidth = 8

// graphHostCosts measures cuGraphLaunch's host cost (a fixed part, per
// parallel branch, per kernel node and per copy node) and the node
// updates' (keeping and changing the kernel, and what a kernel change adds
// to the next launch).
func (c *calibrator) graphHostCosts(h device.Host, s device.Stream, dbuf device.Buffer, pin *device.HostMem, le *device.Launch) error {
	sync := func() error { return h.StreamSynchronize(s) }
	// Graphs of 1 and graphWidth independent empty kernels (the shape of
	// ACS-SW's dispatch graph: every node forked from the origin stream
	// and joined back), of a chain of graphWidth empty kernels (one
	// branch: it tells the per-branch cost from the per-kernel one), and
	// of two 4-byte pinned copies (one branch).
	var side []device.Stream
	for i := 1; i < graphWidth; i++ {
		st, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		side = append(side, st)
	}
	fork, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	if err != nil {
		return err
	}
	join, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	if err != nil {
		return err
	}
	wide := func(w int) (device.GraphExec, error) {
		return c.instantiate(h, s, func() error {
			if err := h.Record(fork, s); err != nil {
				return err
			}
			if err := h.Launch(s, le); err != nil {
				return err
			}
			for _, st := range side[:w-1] {
				if err := h.Wait(st, fork); err != nil {
					return err
				}
				if err := h.Launch(st, le); err != nil {
					return err
				}
				if err := h.Record(join, st); err != nil {
					return err
				}
				if err := h.Wait(s, join); err != nil {
					return err
				}
			}
			return nil
		})
	}
	x1, err := wide(1)
	if err != nil {
		return err
	}
	xw, err := wide(graphWidth)
	if err != nil {
		return err
	}
	xk, err := c.instantiateChain(h, s, graphWidth, func() *device.Launch { return le })
	if err != nil {
		return err
	}
	xc, err := c.instantiate(h, s, func() error {
		if err := h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: dbuf, Host: pin, Bytes: 4}); err != nil {
			return err
		}
		return h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: dbuf, Host: pin, Bytes: 4})
	})
	if err != nil {
		return err
	}
	var runs [4][]float64 // per-launch costs of x1, xw, xk and xc, per round
	for i, x := range []device.GraphExec{x1, xw, xk, xc} {
		if runs[i], err = c.perCall(h, batch, nil, func(int) error { return h.GraphLaunch(x, s) }, sync); err != nil {
			return err
		}
	}
	// With F fixed, B per branch, N per kernel node and C per copy node:
	// x1 = F + B + N, xw = F + w(B + N), xk = F + B + wN, xc = F + B + 2C.
	r1, rw, rk, rc := runs[0], runs[1], runs[2], runs[3]
	var base, branch, node, cp []float64
	for i := range r1 {
		n := (rk[i] - r1[i]) / (graphWidth - 1)
		b := (rw[i]-r1[i])/(graphWidth-1) - n
		f := r1[i] - b - n
		node = append(node, n)
		branch = append(branch, b)
		base = append(base, f)
		cp = append(cp, (rc[i]-f-b)/2)
	}
	graphLaunchNs := c.record("graph launch cost, fixed part", "host.graph_launch_ns", "ns",
		"Host.Now around 100 launches each of graphs of 1 and 8 independent empty kernels and of a chain of 8: intercept", base)
	graphBranchNs := c.record("graph launch cost per branch", "host.graph_launch_branch_ns", "ns",
		"the same: slope per independent node, less the chain's slope per node", branch)
	c.graphNodeNs = c.record("graph launch cost per kernel node", "host.graph_launch_node_ns", "ns", "the same: the chain's slope per node", node)
	c.graphChainNs = graphLaunchNs + graphBranchNs
	c.record("graph launch cost per copy node", "host.graph_launch_copy_node_ns", "ns",
		"Host.Now around 100 launches of a graph of two 4-byte pinned copies (one branch), less the fixed and branch parts, halved", cp)

	// Updates of the one-node graph's node, each followed by a launch, as
	// schedulers do: keeping its kernel (cal_empty with another grid every
	// call), and changing it every call (cal_empty <-> cal_spin).
	keep := [2]*device.Launch{le, c.emptyLaunch(2)}
	change := [2]*device.Launch{c.spinLaunch(0, dbuf), le}
	updateAndLaunch := func(ls [2]*device.Launch) (upd, launch []float64, err error) {
		for r := 0; r < c.rounds+1; r++ { // the first round warms up
			var u, l time.Duration
			for i := 0; i < batch; i++ {
				t0 := h.Now()
				if err := h.SetKernelNode(x1, 0, ls[i%2]); err != nil {
					return nil, nil, err
				}
				t1 := h.Now()
				if err := h.GraphLaunch(x1, s); err != nil {
					return nil, nil, err
				}
				u += t1 - t0
				l += h.Now() - t1
			}
			if err := sync(); err != nil {
				return nil, nil, err
			}
			if r > 0 {
				upd = append(upd, ns(u)/batch)
				launch = append(launch, ns(l)/batch)
			}
		}
		return upd, launch, nil
	}
	ku, kl, err := updateAndLaunch(keep)
	if err != nil {
		return err
	}
	cu, cl, err := updateAndLaunch(change)
	if err != nil {
		return err
	}
	var du, dl []float64
	for i := range ku {
		du = append(du, cu[i]-ku[i])
		dl = append(dl, cl[i]-kl[i])
	}
	c.record("graph node update cost", "host.set_node_ns", "ns",
		"Host.Now around 100 cuGraphExecKernelNodeSetParams keeping the kernel, each followed by a launch of the one-node graph", ku)
	c.record("graph node update, kernel change", "host.set_node_kernel_change_ns", "ns",
		"the same, changing the kernel every call (cal_empty <-> cal_spin), less the update keeping it", du)
	c.record("graph launch after a kernel change", "host.graph_launch_kernel_change_ns", "ns",
		"the launches after those updates, less the launches after the updates keeping the kernel", dl)

	for _, x := range []device.GraphExec{x1, xw, xk, xc} {
		if err := h.Destroy(x); err != nil {
			return err
		}
	}
	for _, st := range side {
		if err := h.Destroy(st); err != nil {
			return err
		}
	}
	if err := h.Destroy(fork); err != nil {
		return err
	}
	return h.Destroy(join)
}

func destroyAll(h device.Host, ss *[]device.Stream) error {
	for _, s := range *ss {
		if err := h.Destroy(s); err != nil {
			return err
		}
	}
	*ss = (*ss)[:0]
	return nil
}

func destroyEvents(h device.Host, es *[]device.Event) error {
	for _, e := range *es {
		if err := h.Destroy(e); err != nil {
			return err
		}
	}
	*es = (*es)[:0]
	return nil
}

func freeAll(h device.Host, bs *[]device.Buffer) error {
	for _, b := range *bs {
		if err := h.Free(b); err != nil {
			return err
		}
	}
	*bs = (*bs)[:0]
	return nil
}

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

// instantiate captures what issue issues on s and instantiates it.
func (c *calibrator) instantiate(h device.Host, s device.Stream, issue func() error) (device.GraphExec, error) {
	g, err := capture(h, s, issue)
	if err != nil {
		return nil, err
	}
	x, err := h.Instantiate(g)
	if err != nil {
		return nil, err
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
	latency := c.record("launch-to-start latency", "front_end.launch_latency_ns", "ns",
		"Elapsed(e0,e1) around one 20 us spin kernel on an idle stream, less launch cost and 20 us", lat)
	c.record("back-to-back gap on one stream", "front_end.back_to_back_ns", "ns",
		"slope of Elapsed over 4 and 16 queued 20 us spin kernels, less 20 us", gap)

	wspin := c.spinLaunch(wakeD, t.done)
	var wake []float64
	for r := 0; r < c.rounds+1; r++ {
		t0 := h.Now()
		if err := h.Launch(t.s, wspin); err != nil {
			return err
		}
		if err := h.StreamSynchronize(t.s); err != nil {
			return err
		}
		if r > 0 {
			wake = append(wake, ns(h.Now()-t0)-c.launchNs-latency-ns(wakeD))
		}
	}
	c.record("synchronize wake-up", "host.wakeup_ns", "ns",
		"Host.Now around launch + StreamSynchronize of a 50 us spin kernel, less launch cost, latency and 50 us", wake)
	return nil
}

func (c *calibrator) graphs(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
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
	for r := 0; r < c.rounds+1; r++ {
		y1, err := inst(small)
		if err != nil {
			return err
		}
		y2, err := inst(large)
		if err != nil {
			return err
		}
		if r == 0 {
			continue
		}
		p := (y2 - y1) / (g2 - g1)
		perNode = append(perNode, p)
		base = append(base, y1-p*g1)
	}
	c.record("graph instantiate, fixed cost", "host.instantiate_base_ns", "ns", "Host.Now around instantiating graphs of 8 and 64 empty kernels: intercept", base)
	c.record("graph instantiate, per node", "host.instantiate_per_node_ns", "ns", "the same: slope per node", perNode)

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
	for r := 0; r < c.rounds+1; r++ {
		y1, err := t.elapsed(h, launch(x1))
		if err != nil {
			return err
		}
		y2, err := t.elapsed(h, launch(x2))
		if err != nil {
			return err
		}
		if r == 0 {
			continue
		}
		// Elapsed(n) = launch cost (a chain's: fixed part + one branch + n
		// x per node) + latency + n D + (n-1) node gap.
		slope := (y2 - y1) / (n2 - n1)
		gn := slope - ns(spinD) - c.graphNodeNs
		node = append(node, gn)
		latency = append(latency, y1-float64(n1)*slope+gn-c.graphChainNs)
	}
	c.record("graph launch latency", "front_end.graph_launch_latency_ns", "ns",
		"intercept of Elapsed over chains of 4 and 16 20 us spin kernels in a graph, less the graph launch cost", latency)
	c.record("graph per-node gap", "front_end.graph_node_ns", "ns", "the same: slope per node, less 20 us and the launch cost per node", node)
	return nil
}

func (c *calibrator) callbacks(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	long := c.spinLaunch(callbackD, t.done)
	const n = 32
	nop := func() {}
	var cb []float64
	for r := 0; r < c.rounds+1; r++ {
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
		if r > 0 {
			cb = append(cb, y/n)
		}
	}
	c.record("host callback duration", "front_end.callback_ns", "ns",
		"Elapsed over 32 no-op host functions queued behind a 2 ms kernel, per callback", cb)
	return nil
}

func (c *calibrator) copies(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	const small, large = 4 << 10, 64 << 20
	d1, err := h.Malloc(large)
	if err != nil {
		return err
	}
	d2, err := h.Malloc(large)
	if err != nil {
		return err
	}
	pinned, err := h.AllocHost(large, true)
	if err != nil {
		return err
	}
	pageable, err := h.AllocHost(large, false)
	if err != nil {
		return err
	}
	for i := range pinned.Data {
		pinned.Data[i] = byte(i)
		pageable.Data[i] = byte(i)
	}
	mk := func(kind device.CopyKind, host *device.HostMem, bytes int64) *device.Copy {
		return &device.Copy{Kind: kind, Dst: d1, Src: d2, Host: host, Bytes: bytes}
	}
	var lats []float64
	gbps := map[device.CopyKind]float64{}
	for _, kind := range []device.CopyKind{device.HostToDevice, device.DeviceToHost} {
		var bw, lat []float64
		for r := 0; r < c.rounds+1; r++ {
			y1, err := t.elapsed(h, func() error { return h.Copy(t.s, mk(kind, pinned, small)) })
			if err != nil {
				return err
			}
			y2, err := t.elapsed(h, func() error { return h.Copy(t.s, mk(kind, pinned, large)) })
			if err != nil {
				return err
			}
			if r == 0 {
				continue
			}
			b := (large - small) / (y2 - y1) // bytes per ns = GB/s
			bw = append(bw, b)
			lat = append(lat, y1-c.copyEnqNs-small/b)
		}
		field := "copy.htod_gbps"
		if kind == device.DeviceToHost {
			field = "copy.dtoh_gbps"
		}
		gbps[kind] = c.record(fmt.Sprintf("pinned %s bandwidth", kind), field, "GB/s",
			"slope of Elapsed over 4 KiB and 64 MiB pinned copies", bw)
		lats = append(lats, c.record(fmt.Sprintf("pinned %s latency", kind), "", "ns",
			"intercept of the same, less the copy enqueue cost", lat))
	}
	c.report.Measurements = append(c.report.Measurements, Measurement{
		Name: "copy latency", Field: "copy.latency_ns", Unit: "ns", Value: (lats[0] + lats[1]) / 2,
		Min: min(lats[0], lats[1]), Max: max(lats[0], lats[1]), Method: "mean of the two directions' latencies",
	})

	var pageBW []float64
	for _, kind := range []device.CopyKind{device.HostToDevice, device.DeviceToHost} {
		var bw []float64
		hostTime := func(bytes int64) (float64, error) {
			t0 := h.Now()
			if err := h.Copy(t.s, mk(kind, pageable, bytes)); err != nil {
				return 0, err
			}
			return ns(h.Now() - t0), nil
		}
		for r := 0; r < c.rounds+1; r++ {
			y1, err := hostTime(small)
			if err != nil {
				return err
			}
			y2, err := hostTime(large)
			if err != nil {
				return err
			}
			if err := h.StreamSynchronize(t.s); err != nil {
				return err
			}
			if r > 0 {
				bw = append(bw, (large-small)/(y2-y1))
			}
		}
		pageBW = append(pageBW, c.record(fmt.Sprintf("pageable %s bandwidth", kind), "", "GB/s",
			"slope of Host.Now around 4 KiB and 64 MiB pageable copies (they block the host)", bw))
	}
	c.report.Measurements = append(c.report.Measurements, Measurement{
		Name: "pageable bandwidth", Field: "copy.pageable_gbps", Unit: "GB/s", Value: (pageBW[0] + pageBW[1]) / 2,
		Min: min(pageBW[0], pageBW[1]), Max: max(pageBW[0], pageBW[1]), Method: "mean of the two directions",
	})

	var mem []float64
	for r := 0; r < c.rounds+1; r++ {
		y1, err := t.elapsed(h, func() error { return h.Copy(t.s, mk(device.DeviceToDevice, nil, small)) })
		if err != nil {
			return err
		}
		y2, err := t.elapsed(h, func() error { return h.Copy(t.s, mk(device.DeviceToDevice, nil, large)) })
		if err != nil {
			return err
		}
		if r > 0 {
			mem = append(mem, 2*(large-small)/(y2-y1)*1e9) // read and write: bytes per second
		}
	}
	c.record("device memory bandwidth", "info.mem_bandwidth", "B/s",
		"slope of Elapsed over 4 KiB and 64 MiB device-to-device copies, counting bytes read and written", mem)
	return nil
}

func (c *calibrator) blockDispatch(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	perSM, _ := c.info.Occupancy(c.emptyLaunch(1))
	wave := perSM * c.info.SMs
	const k1, k2 = 2, 16
	l1, l2 := c.emptyLaunch(k1*wave), c.emptyLaunch(k2*wave)
	var block, rate []float64
	for r := 0; r < c.rounds+1; r++ {
		y1, err := t.elapsed(h, func() error { return h.Launch(t.s, l1) })
		if err != nil {
			return err
		}
		y2, err := t.elapsed(h, func() error { return h.Launch(t.s, l2) })
		if err != nil {
			return err
		}
		if r == 0 {
			continue
		}
		perWave := (y2 - y1) / (k2 - k1)
		block = append(block, perWave)
		rate = append(rate, float64(wave)/perWave*1e9)
	}
	c.record("block dispatch rate", "", "blocks/s",
		fmt.Sprintf("empty 32-thread blocks, %d and %d full waves of %d blocks (%d per SM)", k1, k2, wave, perSM), rate)
	c.record("shortest block lifetime", "front_end.min_block_ns", "ns", "the same: time per full wave", block)
	return nil
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
		for r := 0; r < c.rounds+1; r++ {
			y1, err := t.elapsed(h, launch(blocks, threads, small))
			if err != nil {
				return nil, err
			}
			y2, err := t.elapsed(h, launch(blocks, threads, large))
			if err != nil {
				return nil, err
			}
			if r > 0 {
				bw = append(bw, float64(large-small)/(y2-y1)*1e9)
			}
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

// config is base with every measured field replaced.
func (c *calibrator) config(base *sim.Config) (*sim.Config, error) {
	out := *base
	out.Info = c.info
	set := map[string]*float64{
		"host.launch_ns": &out.Host.LaunchNs, "host.copy_enqueue_ns": &out.Host.CopyEnqueueNs,
		"host.record_ns": &out.Host.RecordNs, "host.wait_ns": &out.Host.WaitNs, "host.query_ns": &out.Host.QueryNs,
		"host.sync_call_ns": &out.Host.SyncCallNs, "host.wakeup_ns": &out.Host.WakeupNs,
		"host.host_func_ns": &out.Host.HostFuncNs, "host.stream_create_ns": &out.Host.StreamCreateNs,
		"host.event_create_ns": &out.Host.EventCreateNs, "host.destroy_ns": &out.Host.DestroyNs,
		"host.malloc_ns": &out.Host.MallocNs, "host.free_ns": &out.Host.FreeNs, "host.alloc_host_ns": &out.Host.AllocHostNs,
		"host.capture_ns": &out.Host.CaptureNs, "host.instantiate_base_ns": &out.Host.InstantiateBaseNs,
		"host.instantiate_per_node_ns": &out.Host.InstantiatePerNodeNs, "host.graph_launch_ns": &out.Host.GraphLaunchNs,
		"host.set_node_ns": &out.Host.SetNodeNs, "host.thread_start_ns": &out.Host.ThreadStartNs,
		"host.graph_launch_node_ns": &out.Host.GraphLaunchNodeNs, "host.graph_launch_copy_node_ns": &out.Host.GraphLaunchCopyNodeNs,
		"host.graph_launch_branch_ns": &out.Host.GraphLaunchBranchNs, "host.graph_launch_kernel_change_ns": &out.Host.GraphLaunchKernelChangeNs, "host.set_node_kernel_change_ns": &out.Host.SetNodeKernelChangeNs,
		"front_end.launch_latency_ns": &out.FrontEnd.LaunchLatencyNs, "front_end.back_to_back_ns": &out.FrontEnd.BackToBackNs,
		"front_end.graph_launch_latency_ns": &out.FrontEnd.GraphLaunchLatencyNs, "front_end.graph_node_ns": &out.FrontEnd.GraphNodeNs,
		"front_end.callback_ns": &out.FrontEnd.CallbackNs, "front_end.min_block_ns": &out.FrontEnd.MinBlockNs,
		"copy.latency_ns": &out.Copy.LatencyNs, "copy.htod_gbps": &out.Copy.HtoDGBps, "copy.dtoh_gbps": &out.Copy.DtoHGBps,
		"copy.pageable_gbps": &out.Copy.PageableGBps, "info.mem_bandwidth": &out.Info.MemBandwidth,
		"sm.max_sm_bandwidth": &out.SM.MaxSMBandwidth,
	}
	setInt := map[string]*int{"sm.sm_mem_saturation_warps": &out.SM.SMMemSaturationWarps}
	seen := map[string]bool{}
	for _, m := range c.report.Measurements {
		if m.Field == "" {
			continue
		}
		if p, ok := setInt[m.Field]; ok {
			// A saturation under 4 warps cannot be told from 4 by this
			// method, and the model treats them alike.
			*p = max(4, int(math.Round(m.Value)))
			seen[m.Field] = true
			continue
		}
		p, ok := set[m.Field]
		if !ok {
			return nil, fmt.Errorf("calibrate: measurement %q names unknown field %s", m.Name, m.Field)
		}
		v := m.Value
		if v < 0 || v != v {
			// A derived figure below zero means the effect is under the
			// measurement's resolution on this device.
			c.report.Notes = append(c.report.Notes, fmt.Sprintf("%s came out %.0f %s (under this method's resolution here); the config uses 0", m.Name, v, m.Unit))
			v = 0
		}
		*p = v
		seen[m.Field] = true
	}
	for f := range set {
		if !seen[f] {
			return nil, fmt.Errorf("calibrate: no measurement for %s", f)
		}
	}
	for f := range setInt {
		if !seen[f] {
			return nil, fmt.Errorf("calibrate: no measurement for %s", f)
		}
	}
	c.report.Notes = append(c.report.Notes,
		"Not measured, kept from the base config: sm.flops_per_cycle, sm.saturation_warps, dependency_queue (ACS-HW is proposed hardware), host.dq_submit_ns, host.dq_poll_ns.",
		"info is what the device reports, except mem_bandwidth, which is measured.")
	return &out, nil
}
