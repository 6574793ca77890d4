package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// streamHostConfig is the datasheet H100 with the busy-stream cost off
// (so that the host costs below are exact) and the fields of the many
// streams' and per-step graphs' costs set.
func streamHostConfig(t *testing.T, set func(*Config)) *Config {
	cfg, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	cfg.Host.BusyStreamNs = 0
	set(cfg)
	return cfg
}

// host.stream_switch_ns, host.wait_pending_ns and host.record_pending_ns:
// a launch, record or wait costs the switch when the thread's previous one
// went to another stream, a wait on another stream's record still pending
// costs wait_pending_ns more (a wait on a completed record, or on the
// stream's own, does not), and a record of an event whose previous record
// is pending costs record_pending_ns more. Left out, every call costs its
// own.
func TestStreamSwitchAndPendingWait(t *testing.T) {
	const sw, pend, rec = 2000, 700, 300
	for _, on := range []bool{true, false} {
		cfg := streamHostConfig(t, func(c *Config) {
			if on {
				c.Host.StreamSwitchNs, c.Host.WaitPendingNs, c.Host.RecordPendingNs = sw, pend, rec
			}
		})
		d, err := New(cfg)
		require.NoError(t, err)
		took, timed := callTimer(t)
		require.NoError(t, d.Run(func(h device.Host) error {
			a, _ := h.NewStream(device.StreamOptions{})
			b, _ := h.NewStream(device.StreamOptions{})
			ea, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
			eb, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
			l := spinLaunch(1, 32, 50*time.Microsecond)
			timed(h, "first launch", func() error { return h.Launch(a, l) })
			timed(h, "record, same stream", func() error { return h.Record(ea, a) })
			timed(h, "record again, pending", func() error { return h.Record(ea, a) })
			timed(h, "wait, pending, other stream", func() error { return h.Wait(b, ea) })
			timed(h, "launch, same stream", func() error { return h.Launch(b, l) })
			timed(h, "record on b", func() error { return h.Record(eb, b) })
			timed(h, "wait, pending, own stream", func() error { return h.Wait(b, eb) })
			require.NoError(t, h.Synchronize())
			timed(h, "wait, complete, other stream", func() error { return h.Wait(a, eb) })
			timed(h, "record again, complete", func() error { return h.Record(ea, a) })
			return h.Synchronize()
		}))
		h := cfg.Host
		s, p, r := 0.0, 0.0, 0.0
		if on {
			s, p, r = sw, pend, rec
		}
		ns := func(x float64) time.Duration { return time.Duration(x) }
		assert.Equal(t, ns(h.LaunchNs), took["first launch"], "the thread's first call: no switch")
		assert.Equal(t, ns(h.RecordNs), took["record, same stream"])
		assert.Equal(t, ns(h.RecordNs+r), took["record again, pending"], "on=%v", on)
		assert.Equal(t, ns(h.RecordNs), took["record again, complete"])
		assert.Equal(t, ns(h.WaitNs+s+p), took["wait, pending, other stream"], "switch and pending (on=%v)", on)
		assert.Equal(t, ns(h.LaunchNs), took["launch, same stream"])
		assert.Equal(t, ns(h.RecordNs), took["record on b"])
		assert.Equal(t, ns(h.WaitNs), took["wait, pending, own stream"], "the stream's own record: no pending cost")
		assert.Equal(t, ns(h.WaitNs+s), took["wait, complete, other stream"], "complete: the switch only")
	}
}

// front_end.event_wait_doubling_ns: a cross-stream wait passes
// event_wait_ns + doubling x (log2 n - 2) after its record completes, n
// the streams with commands pending then (2 to 8 counted): stream a's
// kernel, b's waiting one and k streams kept busy by a long kernel.
func TestEventWaitGrowsWithBusyStreams(t *testing.T) {
	const wait, doubling = 1000.0, 800.0
	for _, tc := range []struct {
		busy int
		want float64
	}{{0, wait - doubling}, {2, wait}, {6, wait + doubling}, {14, wait + doubling}} {
		cfg := streamHostConfig(t, func(c *Config) {
			c.FrontEnd.EventWaitNs, c.FrontEnd.EventWaitDoublingNs = wait, doubling
		})
		d, err := New(cfg, WithTrace(true))
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			for i := 0; i < tc.busy; i++ {
				s, _ := h.NewStream(device.StreamOptions{})
				require.NoError(t, h.Launch(s, spinLaunch(1, 32, 500*time.Microsecond)))
			}
			a, _ := h.NewStream(device.StreamOptions{})
			b, _ := h.NewStream(device.StreamOptions{})
			ea, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
			first := spinLaunch(1, 32, 50*time.Microsecond)
			first.Label = "first"
			require.NoError(t, h.Launch(a, first))
			require.NoError(t, h.Record(ea, a))
			require.NoError(t, h.Wait(b, ea))
			cross := spinLaunch(1, 32, 10*time.Microsecond)
			cross.Label = "cross"
			require.NoError(t, h.Launch(b, cross))
			return h.Synchronize()
		}))
		spans := map[string][2]Time{}
		for _, s := range d.lastTrace.spans {
			if s.kind == trackStream {
				spans[s.name] = [2]Time{s.start, s.end}
			}
		}
		assert.Equal(t, spans["first"][1]+nsTime(tc.want)+nsTime(cfg.FrontEnd.BackToBackNs), spans["cross"][0], "%d busy streams", tc.busy)
	}
}

// host.first_graph_launch_per_node_ns, host.instantiate_per_arg_ns and
// host.destroy_exec_per_node_ns: a fresh exec's first launch costs per
// node (its relaunch does not), instantiation per kernel argument, and
// destroying the exec per node.
func TestGraphBuildCosts(t *testing.T) {
	const first, perArg, destroyNode = 3000.0, 400.0, 500.0
	for _, on := range []bool{true, false} {
		cfg := streamHostConfig(t, func(c *Config) {
			if on {
				c.Host.FirstGraphLaunchPerNodeNs, c.Host.InstantiatePerArgNs, c.Host.DestroyExecPerNodeNs = first, perArg, destroyNode
			}
		})
		d, err := New(cfg)
		require.NoError(t, err)
		took, timed := callTimer(t)
		require.NoError(t, d.Run(func(h device.Host) error {
			s, _ := h.NewStream(device.StreamOptions{})
			buf, err := h.Malloc(64)
			require.NoError(t, err)
			l := spinLaunch(1, 32, 5*time.Microsecond)
			l.Args = []device.Arg{device.U64(1), device.InOut(buf)} // 2 arguments
			require.NoError(t, h.BeginCapture(s))
			for i := 0; i < 3; i++ {
				require.NoError(t, h.Launch(s, l))
			}
			g, err := h.EndCapture(s)
			require.NoError(t, err)
			var x device.GraphExec
			timed(h, "instantiate", func() (err error) { x, err = h.Instantiate(g); return err })
			timed(h, "first launch", func() error { return h.GraphLaunch(x, s) })
			timed(h, "relaunch", func() error { return h.GraphLaunch(x, s) })
			require.NoError(t, h.StreamSynchronize(s))
			timed(h, "destroy exec", func() error { return h.Destroy(x) })
			return h.Destroy(g)
		}))
		hc := cfg.Host
		f, a, dn := 0.0, 0.0, 0.0
		if on {
			f, a, dn = first, perArg, destroyNode
		}
		launch := hc.GraphLaunchNs + 3*hc.GraphLaunchNodeNs + hc.GraphLaunchBranchNs // a chain: one branch
		ns := func(x float64) time.Duration { return time.Duration(x) }
		assert.Equal(t, ns(hc.InstantiateBaseNs+3*hc.InstantiatePerNodeNs+6*a), took["instantiate"], "on=%v", on)
		assert.Equal(t, ns(launch+3*f), took["first launch"], "on=%v", on)
		assert.Equal(t, ns(launch), took["relaunch"], "on=%v", on)
		assert.Equal(t, ns(hc.DestroyNs+3*dn), took["destroy exec"], "on=%v", on)
	}
}

// host.instantiate_per_copy_node_ns: a graph-per-job job graph (copy in,
// kernel, copy out) pays it for each copy node instead of
// instantiate_per_node_ns; left out, copies cost what kernel nodes do.
func TestInstantiatePerCopyNode(t *testing.T) {
	const perCopy = 700.0
	for _, on := range []bool{true, false} {
		cfg := streamHostConfig(t, func(c *Config) {
			if on {
				c.Host.InstantiatePerCopyNodeNs = perCopy
			}
		})
		d, err := New(cfg)
		require.NoError(t, err)
		took, timed := callTimer(t)
		require.NoError(t, d.Run(func(h device.Host) error {
			s, _ := h.NewStream(device.StreamOptions{})
			buf, err := h.Malloc(4096)
			require.NoError(t, err)
			pin, err := h.AllocHost(4096, true)
			require.NoError(t, err)
			require.NoError(t, h.BeginCapture(s))
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: pin, Bytes: 4096}))
			require.NoError(t, h.Launch(s, spinLaunch(1, 32, 5*time.Microsecond)))
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: buf, Host: pin, Bytes: 4096}))
			g, err := h.EndCapture(s)
			require.NoError(t, err)
			timed(h, "instantiate", func() error { _, err := h.Instantiate(g); return err })
			return nil
		}))
		hc := cfg.Host
		copyCost := hc.InstantiatePerNodeNs
		if on {
			copyCost = perCopy
		}
		assert.Equal(t, time.Duration(hc.InstantiateBaseNs+hc.InstantiatePerNodeNs+2*copyCost), took["instantiate"], "on=%v", on)
	}
}

// The new costs keep runs deterministic: a round-robin chain over four
// streams with every one of them set gives the same trace twice.
func TestStreamHostCostsDeterministic(t *testing.T) {
	cfg := streamHostConfig(t, func(c *Config) {
		c.Host.StreamSwitchNs, c.Host.WaitPendingNs, c.Host.RecordPendingNs, c.Host.BusyStreamNs = 2000, 700, 300, 4
		c.FrontEnd.EventWaitNs, c.FrontEnd.EventWaitDoublingNs = 1000, 800
	})
	run := func() []span {
		d, err := New(cfg, WithTrace(true))
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			var ss []device.Stream
			for i := 0; i < 4; i++ {
				s, _ := h.NewStream(device.StreamOptions{})
				ss = append(ss, s)
			}
			ev, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
			for j := 0; j < 24; j++ {
				if j > 0 {
					require.NoError(t, h.Wait(ss[j%4], ev))
				}
				require.NoError(t, h.Launch(ss[j%4], spinLaunch(2, 64, time.Duration(1+j%3)*time.Microsecond)))
				require.NoError(t, h.Record(ev, ss[j%4]))
			}
			return h.Synchronize()
		}))
		return d.lastTrace.spans
	}
	first := run()
	require.NotEmpty(t, first)
	assert.Equal(t, first, run())
}

// callTimer returns what each named call took in simulated time, and the
// function that times one call (which must succeed) under a name.
func callTimer(t *testing.T) (map[string]time.Duration, func(device.Host, string, func() error)) {
	took := map[string]time.Duration{}
	return took, func(h device.Host, name string, call func() error) {
		t0 := h.Now()
		require.NoError(t, call())
		took[name] = h.Now() - t0
	}
}

// front_end.pending_queue_ns and pending_queue_max_ns: a chain's kernels on
// stream a start back_to_back_ns + pending_queue_ns x (k - 1) apart (at
// most pending_queue_max_ns more) while k other hardware queues hold a wait
// on the chain's end; one such queue, or the fields left out, cost nothing.
func TestPendingQueuesSlowBackToBack(t *testing.T) {
	const pq, maxPQ = 600.0, 1500.0
	for _, tc := range []struct {
		blocked int
		on      bool
		want    float64
	}{{0, true, 0}, {1, true, 0}, {2, true, pq}, {3, true, 2 * pq}, {5, true, maxPQ}, {5, false, 0}} {
		cfg := streamHostConfig(t, func(c *Config) {
			if tc.on {
				c.FrontEnd.PendingQueueNs, c.FrontEnd.PendingQueueMaxNs = pq, maxPQ
			}
		})
		d, err := New(cfg, WithTrace(true))
		require.NoError(t, err)
		const chain = 6
		require.NoError(t, d.Run(func(h device.Host) error {
			a, _ := h.NewStream(device.StreamOptions{})
			end, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
			require.NoError(t, h.Launch(a, spinLaunch(1, 32, 300*time.Microsecond))) // holds the chain until all is issued
			for j := 0; j < chain; j++ {
				l := spinLaunch(1, 32, 10*time.Microsecond)
				l.Label = fmt.Sprintf("chain%d", j)
				require.NoError(t, h.Launch(a, l))
			}
			require.NoError(t, h.Record(end, a))
			for i := 0; i < tc.blocked; i++ {
				s, _ := h.NewStream(device.StreamOptions{})
				require.NoError(t, h.Wait(s, end))
				require.NoError(t, h.Launch(s, spinLaunch(1, 32, time.Microsecond)))
			}
			return h.Synchronize()
		}))
		start, end := map[string]Time{}, map[string]Time{}
		for _, s := range d.lastTrace.spans {
			if s.kind == trackStream {
				start[s.name], end[s.name] = s.start, s.end
			}
		}
		for j := 1; j < chain; j++ {
			gap := start[fmt.Sprintf("chain%d", j)] - end[fmt.Sprintf("chain%d", j-1)]
			assert.Equal(t, nsTime(cfg.FrontEnd.BackToBackNs+tc.want), gap, "%d blocked queues (on=%v), kernel %d", tc.blocked, tc.on, j)
		}
	}
}

// With front_end.event_wait_ns 0 a stream kicked by a record's completion
// passes its wait at once, inside that completion, and may register
// another wait on the same event: here A's wait on ev's first record
// releases A's record of f, which releases B's wait on f, and B then waits
// on ev's second record (on Y, later). That wait must not be lost: the
// simulator deadlocked on a round-robin schedule over 8 streams (private
// random DAG, session 17) when it was. With and without the pending-queue
// cost.
func TestWaitRegisteredDuringRecordCompletionIsKept(t *testing.T) {
	for _, pending := range []float64{0, 700} {
		cfg := streamHostConfig(t, func(c *Config) {
			c.FrontEnd.EventWaitNs, c.FrontEnd.EventWaitDoublingNs = 0, 0
			c.FrontEnd.PendingQueueNs, c.FrontEnd.PendingQueueMaxNs = pending, 2000
		})
		d, err := New(cfg, WithTrace(true))
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			x, _ := h.NewStream(device.StreamOptions{})
			y, _ := h.NewStream(device.StreamOptions{})
			a, _ := h.NewStream(device.StreamOptions{})
			b, _ := h.NewStream(device.StreamOptions{})
			ev, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
			f, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
			require.NoError(t, h.Launch(x, spinLaunch(1, 32, 100*time.Microsecond)))
			require.NoError(t, h.Record(ev, x)) // ev's first record
			require.NoError(t, h.Wait(a, ev))
			require.NoError(t, h.Record(f, a))
			require.NoError(t, h.Launch(y, spinLaunch(1, 32, 300*time.Microsecond)))
			require.NoError(t, h.Record(ev, y)) // ev's second record
			require.NoError(t, h.Wait(b, f))
			require.NoError(t, h.Wait(b, ev)) // binds to the second record
			last := spinLaunch(1, 32, 10*time.Microsecond)
			last.Label = "last"
			require.NoError(t, h.Launch(b, last))
			return h.Synchronize()
		}), "pending %v", pending)
		for _, s := range d.lastTrace.spans {
			if s.kind == trackStream && s.name == "last" {
				assert.Greater(t, s.start, nsTime(300e3), "B's kernel starts after ev's second record")
			}
		}
	}
}
