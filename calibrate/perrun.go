package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "per-run reset" asks which host call of the runner's per-repetition reset
// makes the next kernel slow (issue #18, session 16). GPU traces show the
// first kernel of every timed run 8-18 us longer than the same kernel later
// in the run (docs/results/raw/dagfast-*.tgz, calibration-h100.md session
// 15), and before every timed run workloads.Instance.Reset creates a
// staging stream, allocates a pinned staging buffer, uploads through it,
// synchronizes, frees the buffer and destroys the stream. Each candidate
// call below runs alone between a kernel that has completed and a timed
// launch, and the timed launch is followed at once by its twin (the same
// launch after the first's synchronize): the first less the twin is what
// the call costs the next launch. The Device interface has no memset, so
// none is probed.

// perRunBytes is the size of every buffer the probe allocates, frees and
// copies: the order of a random DAG's staging buffer.
const perRunBytes = 1 << 20

// perRunKernel is the timed spin kernel.
const perRunKernel = 10 * time.Microsecond

// perRunLaunches per call, mode and round.
const perRunLaunches = 5

// perRunEnv is what the candidate calls work on: a pinned buffer and a
// device buffer kept for the whole section (the copies'), and what a call's
// before step allocated for the call to free (or the call allocated for
// after to free).
type perRunEnv struct {
	h       device.Host
	copyS   device.Stream
	kernelS device.Stream
	pinned  *device.HostMem
	devBuf  device.Buffer
	host    *device.HostMem
	buf     device.Buffer
	scratch []byte // Go memory the host-writes call fills
}

// perRunCall is one candidate: before runs ahead of the kernel that
// precedes the call (what it needs, allocated where its own cost cannot
// reach the timed launch), call right before the timed launch, after once
// the twin is done.
type perRunCall struct {
	name          string
	before, after func(e *perRunEnv) error
	call          func(e *perRunEnv) error
}

func (e *perRunEnv) allocPinned() (err error) {
	e.host, err = e.h.AllocHost(perRunBytes, true)
	return err
}

func (e *perRunEnv) freePinned() error { return e.h.FreeHost(e.host) }

func (e *perRunEnv) alloc() (err error) {
	e.buf, err = e.h.Malloc(perRunBytes)
	return err
}

func (e *perRunEnv) free() error { return e.h.Free(e.buf) }

// copyOn copies the kept buffers on s (HtoD or DtoH) and waits for it.
func (e *perRunEnv) copyOn(s device.Stream, kind device.CopyKind) error {
	c := device.Copy{Kind: kind, Host: e.pinned, Bytes: perRunBytes, Label: "per-run copy"}
	if kind == device.HostToDevice {
		c.Dst = e.devBuf
	} else {
		c.Src = e.devBuf
	}
	if err := e.h.Copy(s, &c); err != nil {
		return err
	}
	return e.h.StreamSynchronize(s)
}

// reset is workloads.Instance.restore's sequence for one buffer: a
// staging stream, a pinned staging buffer (fresh when fresh, else the kept
// one), the upload, its synchronize, the buffer's free, the stream's
// destroy.
func (e *perRunEnv) reset(fresh bool) error {
	s, err := e.h.NewStream(device.StreamOptions{})
	if err != nil {
		return err
	}
	staging := e.pinned
	if fresh {
		if staging, err = e.h.AllocHost(perRunBytes, true); err != nil {
			return err
		}
	}
	c := device.Copy{Kind: device.HostToDevice, Dst: e.devBuf, Host: staging, Bytes: perRunBytes, Label: "per-run staging"}
	if err := e.h.Copy(s, &c); err != nil {
		return err
	}
	if err := e.h.StreamSynchronize(s); err != nil {
		return err
	}
	if fresh {
		if err := e.h.FreeHost(staging); err != nil {
			return err
		}
	}
	return e.h.Destroy(s)
}

var perRunCalls = []perRunCall{
	{name: "nothing", call: func(*perRunEnv) error { return nil }},
	{name: "cuCtxSynchronize", call: func(e *perRunEnv) error { return e.h.Synchronize() }},
	{name: "500 us idle", call: func(e *perRunEnv) error { hold(e.h, 500*time.Microsecond); return nil }},
	{name: "host writes 8 MiB", call: func(e *perRunEnv) error {
		// No CUDA call: a host thread whose caches the reset's own memory
		// work (a pinned buffer's clearing, the inputs' generation) has
		// refilled.
		for i := range e.scratch {
			e.scratch[i] = byte(i)
		}
		// A simulated host does not see Go's work: it is told
		// (host.cold_call_ns).
		if c, ok := e.h.(device.ColdCacher); ok {
			c.ColdCaches()
		}
		return nil
	}},
	{name: "cuMemFreeHost", before: (*perRunEnv).allocPinned, call: (*perRunEnv).freePinned},
	{name: "cuMemFree", before: (*perRunEnv).alloc, call: (*perRunEnv).free},
	{name: "cuMemAllocHost", call: (*perRunEnv).allocPinned, after: (*perRunEnv).freePinned},
	{name: "cuMemAlloc", call: (*perRunEnv).alloc, after: (*perRunEnv).free},
	{name: "pageable host alloc and free", call: func(e *perRunEnv) error {
		m, err := e.h.AllocHost(perRunBytes, false)
		if err != nil {
			return err
		}
		return e.h.FreeHost(m)
	}},
	{name: "HtoD copy on another stream", call: func(e *perRunEnv) error { return e.copyOn(e.copyS, device.HostToDevice) }},
	{name: "DtoH copy on another stream", call: func(e *perRunEnv) error { return e.copyOn(e.copyS, device.DeviceToHost) }},
	{name: "HtoD copy on the kernel's stream", call: func(e *perRunEnv) error { return e.copyOn(e.kernelS, device.HostToDevice) }},
	{name: "stream create and destroy", call: func(e *perRunEnv) error {
		s, err := e.h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		return e.h.Destroy(s)
	}},
	{name: "the runner's reset", call: func(e *perRunEnv) error { return e.reset(true) }},
	{name: "the runner's reset, staging kept", call: func(e *perRunEnv) error { return e.reset(false) }},
}

// perRunModes are the timed launches: a kernel on the stream that ran the
// kernel before the call, the same kernel captured as a one-node graph,
// and the stream kernel with its twin on a second stream (a cost paid once
// per context leaves that twin alone, one paid per stream does not).
var perRunModes = []string{"stream", "graph", "twin on another stream"}

// perRunFigures are one timed launch's: from the event record before it
// to its stream synchronize's return (host), that record call and the
// launch call alone, and the span of two events recorded around it
// (device), each less the kernel where it holds it.
type perRunFigures struct{ host, record, call, device float64 }

// perRunRig is what the section's launches use: the kernel's stream and a
// second one (each with its events), the candidates' buffers, the kernel
// and its one-node graph.
type perRunRig struct {
	h        device.Host
	t, other *timedStream
	env      *perRunEnv
	k        *device.Launch
	graph    device.GraphExec
}

// timed launches the kernel (or the graph) on ts between two event records
// and waits for it.
func (r *perRunRig) timed(ts *timedStream, mode string) (perRunFigures, error) {
	h := r.h
	var f perRunFigures
	t0 := h.Now()
	if err := h.Record(ts.e0, ts.s); err != nil {
		return f, err
	}
	tc := h.Now()
	f.record = ns(tc - t0)
	var err error
	if mode == "graph" {
		err = h.GraphLaunch(r.graph, ts.s)
	} else {
		err = h.Launch(ts.s, r.k)
	}
	if err != nil {
		return f, err
	}
	f.call = ns(h.Now() - tc)
	if err := h.Record(ts.e1, ts.s); err != nil {
		return f, err
	}
	if err := h.StreamSynchronize(ts.s); err != nil {
		return f, err
	}
	f.host = ns(h.Now() - t0 - perRunKernel)
	d, err := h.Elapsed(ts.e0, ts.e1)
	f.device = ns(d - perRunKernel)
	return f, err
}

// pair runs one candidate call between a completed kernel and a timed
// launch, then the launch's twin, and returns both launches' figures.
func (r *perRunRig) pair(pc perRunCall, mode string) (first, twin perRunFigures, err error) {
	h := r.h
	if pc.before != nil {
		if err := pc.before(r.env); err != nil {
			return first, twin, fmt.Errorf("%s: %w", pc.name, err)
		}
	}
	// The kernel that precedes the call takes whatever before's own calls
	// cost the GPU.
	if err := h.Launch(r.t.s, r.k); err != nil {
		return first, twin, err
	}
	if err := h.StreamSynchronize(r.t.s); err != nil {
		return first, twin, err
	}
	if err := pc.call(r.env); err != nil {
		return first, twin, fmt.Errorf("%s: %w", pc.name, err)
	}
	if first, err = r.timed(r.t, mode); err != nil {
		return first, twin, err
	}
	twinOn := r.t
	if mode == "twin on another stream" {
		twinOn = r.other
	}
	if twin, err = r.timed(twinOn, mode); err != nil {
		return first, twin, err
	}
	if pc.after != nil {
		if err := pc.after(r.env); err != nil {
			return first, twin, fmt.Errorf("%s: %w", pc.name, err)
		}
	}
	return first, twin, nil
}

// perRunWhat are the figures "per-run reset" reports per call and mode,
// each a median of perRunLaunches pairs a round: the name's suffix, the
// method, and the figure of a pair.
var perRunWhat = []struct {
	suffix, method string
	of             func(a, b perRunFigures) float64
}{
	{": first launch", "Host.Now from an event record before the launch to its stream synchronize's return, less the 10 us kernel; median of 5 per round",
		func(a, _ perRunFigures) float64 { return a.host }},
	{": first less twin", "the same less the twin's (the same launch right after; for 'twin on another stream' the twin on a second idle stream); median of 5 per round",
		func(a, b perRunFigures) float64 { return a.host - b.host }},
	{": event record call, first less twin", "Host.Now around the event record before the launch, first less twin; median of 5 per round",
		func(a, b perRunFigures) float64 { return a.record - b.record }},
	{": launch call, first less twin", "Host.Now around the Launch or GraphLaunch call, first less twin; median of 5 per round",
		func(a, b perRunFigures) float64 { return a.call - b.call }},
	{": device span, first less twin", "Elapsed between events recorded before and after the launch, first less twin; median of 5 per round",
		func(a, b perRunFigures) float64 { return a.device - b.device }},
}

// perRunReset measures, for every candidate call and launch mode, what the
// first launch after the call costs more than its twin: host wall time,
// the event record and launch calls, and the device span between events
// around it. It reports and sets no field.
func (c *calibrator) perRunReset(h device.Host) error {
	r, err := c.newPerRunRig(h)
	if err != nil {
		return err
	}
	// rounds[call][mode][what]: one median a measured round.
	rounds := make([][][][]float64, len(perRunCalls))
	for ci := range rounds {
		rounds[ci] = make([][][]float64, len(perRunModes))
		for mi := range rounds[ci] {
			rounds[ci][mi] = make([][]float64, len(perRunWhat))
		}
	}
	if err := c.warmRounds(func(measured bool) error {
		for ci, pc := range perRunCalls {
			for mi, mode := range perRunModes {
				each := make([][]float64, len(perRunWhat))
				for x := 0; x < perRunLaunches; x++ {
					a, b, err := r.pair(pc, mode)
					if err != nil {
						return err
					}
					for wi, w := range perRunWhat {
						each[wi] = append(each[wi], w.of(a, b))
					}
				}
				for wi := range perRunWhat {
					if measured {
						rounds[ci][mi][wi] = append(rounds[ci][mi][wi], stats.Median(each[wi]))
					}
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for ci, pc := range perRunCalls {
		for mi, mode := range perRunModes {
			for wi, w := range perRunWhat {
				c.record(fmt.Sprintf("per-run: after %s, %s%s", pc.name, mode, w.suffix), "", "ns", w.method, rounds[ci][mi][wi])
			}
		}
	}
	return nil
}

// newPerRunRig makes the streams, buffers, kernel and graph the section
// launches with.
func (c *calibrator) newPerRunRig(h device.Host) (*perRunRig, error) {
	r := &perRunRig{h: h}
	var err error
	if r.t, err = newTimedStream(h); err != nil {
		return nil, err
	}
	if r.other, err = newTimedStream(h); err != nil {
		return nil, err
	}
	env := &perRunEnv{h: h, kernelS: r.t.s, scratch: make([]byte, 8<<20)}
	if env.copyS, err = h.NewStream(device.StreamOptions{}); err != nil {
		return nil, err
	}
	if env.pinned, err = h.AllocHost(perRunBytes, true); err != nil {
		return nil, err
	}
	if env.devBuf, err = h.Malloc(perRunBytes); err != nil {
		return nil, err
	}
	r.env = env
	r.k = c.spinLaunch(perRunKernel, r.t.done)
	r.graph, err = c.instantiateChain(h, r.t.s, 1, func() *device.Launch { return r.k })
	return r, err
}
