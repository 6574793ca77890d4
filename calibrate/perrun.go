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
		if c, ok := e.h.(interface{ ColdCaches() }); ok {
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

// perRunFigures are one timed launch's: from the launch call to its
// stream synchronize's return (host), the event record before it and its
// launch call alone, and the span
// of two events recorded around it (device).
type perRunFigures struct{ host, record, call, device float64 }

// perRunReset measures, for every candidate call and launch mode, what the
// first launch after the call costs more than its twin: host wall time,
// the launch call, and the device span between events around it. It
// reports and sets no field.
func (c *calibrator) perRunReset(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	other, err := newTimedStream(h)
	if err != nil {
		return err
	}
	env := &perRunEnv{h: h, kernelS: t.s, scratch: make([]byte, 8<<20)}
	if env.copyS, err = h.NewStream(device.StreamOptions{}); err != nil {
		return err
	}
	if env.pinned, err = h.AllocHost(perRunBytes, true); err != nil {
		return err
	}
	if env.devBuf, err = h.Malloc(perRunBytes); err != nil {
		return err
	}
	k := c.spinLaunch(perRunKernel, t.done)
	graph, err := c.instantiateChain(h, t.s, 1, func() *device.Launch { return k })
	if err != nil {
		return err
	}
	timed := func(ts *timedStream, mode string) (perRunFigures, error) {
		var f perRunFigures
		t0 := h.Now()
		if err := h.Record(ts.e0, ts.s); err != nil {
			return f, err
		}
		tc := h.Now()
		f.record = ns(tc - t0)
		if mode == "graph" {
			err = h.GraphLaunch(graph, ts.s)
		} else {
			err = h.Launch(ts.s, k)
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
	type key struct{ call, mode int }
	first := map[key][][]float64{} // per round: host first, host extra, record extra, call extra, device extra
	if err := c.warmRounds(func(measured bool) error {
		for ci, pc := range perRunCalls {
			for mi, mode := range perRunModes {
				var each [5][]float64
				for x := 0; x < perRunLaunches; x++ {
					if pc.before != nil {
						if err := pc.before(env); err != nil {
							return fmt.Errorf("%s: %w", pc.name, err)
						}
					}
					// The kernel that precedes the call takes whatever
					// before's own calls cost the GPU.
					if err := h.Launch(t.s, k); err != nil {
						return err
					}
					if err := h.StreamSynchronize(t.s); err != nil {
						return err
					}
					if err := pc.call(env); err != nil {
						return fmt.Errorf("%s: %w", pc.name, err)
					}
					a, err := timed(t, mode)
					if err != nil {
						return err
					}
					twinOn := t
					if mode == "twin on another stream" {
						twinOn = other
					}
					b, err := timed(twinOn, mode)
					if err != nil {
						return err
					}
					if pc.after != nil {
						if err := pc.after(env); err != nil {
							return fmt.Errorf("%s: %w", pc.name, err)
						}
					}
					each[0] = append(each[0], a.host)
					each[1] = append(each[1], a.host-b.host)
					each[2] = append(each[2], a.record-b.record)
					each[3] = append(each[3], a.call-b.call)
					each[4] = append(each[4], a.device-b.device)
				}
				if measured {
					kk := key{ci, mi}
					if first[kk] == nil {
						first[kk] = make([][]float64, len(each))
					}
					for i := range each {
						first[kk][i] = append(first[kk][i], stats.Median(each[i]))
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
			r := first[key{ci, mi}]
			name := fmt.Sprintf("per-run: after %s, %s", pc.name, mode)
			c.record(name+": first launch", "", "ns",
				"Host.Now from an event record before the launch to its stream synchronize's return, less the 10 us kernel; median of 5 per round", r[0])
			c.record(name+": first less twin", "", "ns",
				"the same less the twin's (the same launch right after; for 'twin on another stream' the twin on a second idle stream); median of 5 per round", r[1])
			c.record(name+": event record call, first less twin", "", "ns",
				"Host.Now around the event record before the launch, first less twin; median of 5 per round", r[2])
			c.record(name+": launch call, first less twin", "", "ns",
				"Host.Now around the Launch or GraphLaunch call, first less twin; median of 5 per round", r[3])
			c.record(name+": device span, first less twin", "", "ns",
				"Elapsed between events recorded before and after the launch, first less twin; median of 5 per round", r[4])
		}
	}
	return nil
}
