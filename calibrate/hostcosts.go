package calibrate

import (
	"github.com/gpusched/gpusched/device"
)

// hostEnv is what the host-cost measurements share: a stream, an event, a
// small device buffer, pinned host memory, a one-block empty launch, and
// the resources a batch makes and its teardown releases.
type hostEnv struct {
	h       device.Host
	s       device.Stream
	e       device.Event
	dbuf    device.Buffer
	pin     *device.HostMem
	le      *device.Launch
	streams []device.Stream
	evs     []device.Event
	bufs    []device.Buffer
	hms     []*device.HostMem
}

func (env *hostEnv) sync() error { return env.h.StreamSynchronize(env.s) }

// hostCall is one host API cost: n calls per round timed with Host.Now
// (perCall), setup and teardown outside the timed region.
type hostCall struct {
	name, field, method string
	n                   int
	setup               func(env *hostEnv) error
	call                func(env *hostEnv, i int) error
	teardown            func(env *hostEnv) error
	keep                *float64 // where later measurements find the result
}

// hostCosts measures every host API cost of hostCalls and resourceCalls,
// then the graph launch and update costs (graphHostCosts) and the thread
// start.
func (c *calibrator) hostCosts(h device.Host) error {
	env := &hostEnv{h: h, le: c.emptyLaunch(1)}
	var err error
	if env.s, err = h.NewStream(device.StreamOptions{}); err != nil {
		return err
	}
	if env.e, err = h.NewEvent(device.EventOptions{}); err != nil {
		return err
	}
	if env.dbuf, err = h.Malloc(4096); err != nil {
		return err
	}
	if env.pin, err = h.AllocHost(4096, true); err != nil {
		return err
	}
	if err := c.runCalls(env, append(c.hostCalls(), resourceCalls()...)); err != nil {
		return err
	}
	if err := c.graphHostCosts(env); err != nil {
		return err
	}
	// Last: the threads it starts would share the host with later calls.
	if err := c.runCalls(env, []hostCall{{name: "host thread start cost", field: "host.thread_start_ns", n: smallBatch,
		method: "Host.Now around 20 Host.Go of a function that returns at once",
		call: func(env *hostEnv, _ int) error {
			env.h.Go("calibrate nop", func(device.Host) error { return nil })
			return nil
		}}}); err != nil {
		return err
	}
	return h.Synchronize()
}

// runCalls measures each host call in turn.
func (c *calibrator) runCalls(env *hostEnv, calls []hostCall) error {
	for _, hc := range calls {
		if hc.field == "host.wait_ns" { // waits on a completed event
			if err := env.h.Record(env.e, env.s); err != nil {
				return err
			}
			if err := env.sync(); err != nil {
				return err
			}
		}
		var setup, teardown func() error
		if hc.setup != nil {
			setup = func() error { return hc.setup(env) }
		}
		if hc.teardown != nil {
			teardown = func() error { return hc.teardown(env) }
		}
		r, err := c.perCall(env.h, hc.n, setup, func(i int) error { return hc.call(env, i) }, teardown)
		if err != nil {
			return err
		}
		v := c.record(hc.name, hc.field, "ns", hc.method, r)
		if hc.keep != nil {
			*hc.keep = v
		}
	}
	return nil
}

// hostCalls is the table of host API costs, in the order measured.
func (c *calibrator) hostCalls() []hostCall {
	sync := (*hostEnv).sync
	nop := func() {}
	return []hostCall{
		c.launchCall(),
		{name: "copy enqueue cost", field: "host.copy_enqueue_ns", n: batch, keep: &c.copyEnqNs, teardown: sync,
			method: "Host.Now around 100 4-byte pinned host-to-device copies",
			call: func(env *hostEnv, _ int) error {
				return env.h.Copy(env.s, &device.Copy{Kind: device.HostToDevice, Dst: env.dbuf, Host: env.pin, Bytes: 4})
			}},
		{name: "event record cost", field: "host.record_ns", n: batch, teardown: sync, method: "Host.Now around 100 records",
			call: func(env *hostEnv, _ int) error { return env.h.Record(env.e, env.s) }},
		{name: "stream wait cost", field: "host.wait_ns", n: batch, teardown: sync, method: "Host.Now around 100 waits on a completed event",
			call: func(env *hostEnv, _ int) error { return env.h.Wait(env.s, env.e) }},
		{name: "event query cost", field: "host.query_ns", n: batch, method: "Host.Now around 100 queries of a completed event",
			call: func(env *hostEnv, _ int) error { _, err := env.h.Query(env.e); return err }},
		{name: "synchronize call cost", field: "host.sync_call_ns", n: batch, method: "Host.Now around 100 synchronizes of an idle stream",
			call: func(env *hostEnv, _ int) error { return env.h.StreamSynchronize(env.s) }},
		{name: "host function enqueue cost", field: "host.host_func_ns", n: batch, teardown: sync,
			method: "Host.Now around 100 cuLaunchHostFunc of a no-op",
			call:   func(env *hostEnv, _ int) error { return env.h.HostFunc(env.s, nop) }},
		{name: "capture cost per command", field: "host.capture_ns", n: batch,
			method: "Host.Now around 100 launches into a capturing stream",
			setup:  func(env *hostEnv) error { return env.h.BeginCapture(env.s) },
			call:   func(env *hostEnv, _ int) error { return env.h.Launch(env.s, env.le) },
			teardown: func(env *hostEnv) error {
				g, err := env.h.EndCapture(env.s)
				if err != nil {
					return err
				}
				return env.h.Destroy(g)
			}},
	}
}

// launchCall is the launch API cost: what host.launch_ns is fitted from,
// and what HostLaunchProbe measures beside a GPU run.
func (c *calibrator) launchCall() hostCall {
	return hostCall{name: "launch API cost", field: "host.launch_ns", n: batch, keep: &c.launchNs, teardown: (*hostEnv).sync,
		method: "Host.Now around 100 empty-kernel launches on one stream",
		call:   func(env *hostEnv, _ int) error { return env.h.Launch(env.s, env.le) }}
}

// resourceCalls is the table of costs of making and releasing resources.
func resourceCalls() []hostCall {
	return []hostCall{
		{name: "stream create cost", field: "host.stream_create_ns", n: smallBatch, teardown: destroyStreams,
			method: "Host.Now around 20 stream creations",
			call: func(env *hostEnv, _ int) error {
				st, err := env.h.NewStream(device.StreamOptions{})
				env.streams = append(env.streams, st)
				return err
			}},
		{name: "event create cost", field: "host.event_create_ns", n: batch, teardown: destroyEvents,
			method: "Host.Now around 100 event creations",
			call:   func(env *hostEnv, _ int) error { return env.newEvent() }},
		{name: "destroy cost", field: "host.destroy_ns", n: batch, method: "Host.Now around 100 event destructions",
			setup: func(env *hostEnv) error {
				for i := 0; i < batch; i++ {
					if err := env.newEvent(); err != nil {
						return err
					}
				}
				return nil
			},
			call:     func(env *hostEnv, i int) error { return env.h.Destroy(env.evs[i]) },
			teardown: func(env *hostEnv) error { env.evs = env.evs[:0]; return nil }},
		{name: "device malloc cost", field: "host.malloc_ns", n: smallBatch, teardown: freeBuffers,
			method: "Host.Now around 20 1 MiB cuMemAlloc",
			call:   func(env *hostEnv, _ int) error { return env.malloc() }},
		{name: "device free cost", field: "host.free_ns", n: smallBatch, method: "Host.Now around 20 cuMemFree of 1 MiB",
			setup: func(env *hostEnv) error {
				for i := 0; i < smallBatch; i++ {
					if err := env.malloc(); err != nil {
						return err
					}
				}
				return nil
			},
			call:     func(env *hostEnv, i int) error { return env.h.Free(env.bufs[i]) },
			teardown: func(env *hostEnv) error { env.bufs = env.bufs[:0]; return nil }},
		{name: "pinned host allocation cost", field: "host.alloc_host_ns", n: smallBatch, teardown: freeHostMems,
			method: "Host.Now around 20 64 KiB cuMemAllocHost",
			call: func(env *hostEnv, _ int) error {
				m, err := env.h.AllocHost(1<<16, true)
				env.hms = append(env.hms, m)
				return err
			}},
	}
}

func (env *hostEnv) newEvent() error {
	ev, err := env.h.NewEvent(device.EventOptions{})
	env.evs = append(env.evs, ev)
	return err
}

func (env *hostEnv) malloc() error {
	b, err := env.h.Malloc(1 << 20)
	env.bufs = append(env.bufs, b)
	return err
}

func destroyStreams(env *hostEnv) error {
	for _, s := range env.streams {
		if err := env.h.Destroy(s); err != nil {
			return err
		}
	}
	env.streams = env.streams[:0]
	return nil
}

func destroyEvents(env *hostEnv) error {
	for _, e := range env.evs {
		if err := env.h.Destroy(e); err != nil {
			return err
		}
	}
	env.evs = env.evs[:0]
	return nil
}

func freeBuffers(env *hostEnv) error {
	for _, b := range env.bufs {
		if err := env.h.Free(b); err != nil {
			return err
		}
	}
	env.bufs = env.bufs[:0]
	return nil
}

func freeHostMems(env *hostEnv) error {
	for _, m := range env.hms {
		if err := env.h.FreeHost(m); err != nil {
			return err
		}
	}
	env.hms = env.hms[:0]
	return nil
}
