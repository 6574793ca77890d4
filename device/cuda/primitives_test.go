//go:build cuda

package cuda_test

import (
	"flag"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda"
	"github.com/gpusched/gpusched/device/cuda/cudatest"
)

var primBench = flag.Int("primbench", 0, "measure the host primitives' costs with this many calls per measurement (e.g. 2000)")

// TestHostPrimitiveCosts measures what the pipeline and out-of-order
// schedulers pay per job or per kernel on this GPU: a graph launch, a copy
// node update on an idle graph exec and on one whose previous launch is
// still queued, a host callback's round trip, a launch plus synchronize,
// a handoff between two host threads through a Queue (spinning and
// parked), and graph launches from several host threads at once. It is a
// measurement, not a check: run it with -primbench=2000.
func TestHostPrimitiveCosts(t *testing.T) {
	if *primBench <= 0 {
		t.Skip("measurement; run with -primbench=2000")
	}
	n := *primBench
	spinK := kernel(t, "devicetest", "spin")
	synth := kernel(t, "synthetic", "synth_node")
	const elems = 1024
	per := perCall
	med := func(v []time.Duration) time.Duration {
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		return v[len(v)/2]
	}

	d := cudatest.Open(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		stamps, err := h.Malloc(16)
		require.NoError(t, err)
		a, _ := h.Malloc(4 * elems)
		b, _ := h.Malloc(4 * elems)
		hin, _ := h.AllocHost(4*elems, true)
		hout, _ := h.AllocHost(4*elems, true)
		hout2, _ := h.AllocHost(4*elems, true)
		spin := func(us int) *device.Launch {
			return &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(32),
				Args: []device.Arg{device.U64(uint64(us) * 1800), device.Out(stamps)}}
		}
		// A job: copy in, one kernel, copy out (SET's job shape).
		job := func(st device.Stream) device.GraphExec {
			require.NoError(t, h.BeginCapture(st))
			require.NoError(t, h.Copy(st, &device.Copy{Kind: device.HostToDevice, Dst: a, Host: hin, Bytes: 4 * elems}))
			require.NoError(t, h.Launch(st, synthLaunch(synth, a, b, elems, 4)))
			require.NoError(t, h.Copy(st, &device.Copy{Kind: device.DeviceToHost, Src: b, Host: hout, Bytes: 4 * elems}))
			g, err := h.EndCapture(st)
			require.NoError(t, err)
			x, err := h.Instantiate(g)
			require.NoError(t, err)
			require.NoError(t, h.Destroy(g))
			return x
		}
		x := job(s)
		outCopy := func(i int) *device.Copy {
			dst := hout
			if i%2 == 1 {
				dst = hout2
			}
			return &device.Copy{Kind: device.DeviceToHost, Src: b, Host: dst, Bytes: 4 * elems}
		}
		warmGraph(t, h, x, s, 50)

		// Graph launches back to back.
		tl, tg := backToBack(t, h, x, s, n)
		t.Logf("graph launch (3-node job graph), back to back: %s per call; %s per job until all done", per(tl, n), per(tg, n))

		// The same job as three stream operations.
		t0 := time.Now()
		for i := 0; i < n; i++ {
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: a, Host: hin, Bytes: 4 * elems}))
			require.NoError(t, h.Launch(s, synthLaunch(synth, a, b, elems, 4)))
			require.NoError(t, h.Copy(s, outCopy(i)))
		}
		tl = time.Since(t0)
		require.NoError(t, h.StreamSynchronize(s))
		tg = time.Since(t0)
		t.Logf("the same job as copy + launch + copy on a stream: %s per job of calls; %s per job until all done", per(tl, n), per(tg, n))

		// Where a job graph's extra GPU time goes: graphs of the kernel
		// alone and of the two copies alone, against the same operations
		// issued on the stream, back to back.
		capture := func(st device.Stream, ops func()) device.GraphExec {
			require.NoError(t, h.BeginCapture(st))
			ops()
			g, err := h.EndCapture(st)
			require.NoError(t, err)
			gx, err := h.Instantiate(g)
			require.NoError(t, err)
			require.NoError(t, h.Destroy(g))
			return gx
		}
		kernelOnly := func() { require.NoError(t, h.Launch(s, synthLaunch(synth, a, b, elems, 4))) }
		copiesOnly := func() {
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: a, Host: hin, Bytes: 4 * elems}))
			require.NoError(t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: b, Host: hout, Bytes: 4 * elems}))
		}
		for _, c := range []struct {
			name string
			ops  func()
		}{{"kernel", kernelOnly}, {"two copies", copiesOnly}} {
			gx := capture(s, c.ops)
			tl, tg := launchBackToBack(t, h, gx, s, n)
			t0 := time.Now()
			for i := 0; i < n; i++ {
				c.ops()
			}
			sl := time.Since(t0)
			require.NoError(t, h.StreamSynchronize(s))
			sg := time.Since(t0)
			t.Logf("%s: as a graph %s per launch call, %s each until all done; on the stream %s of calls, %s each until all done",
				c.name, per(tl, n), per(tg, n), per(sl, n), per(sg, n))
			require.NoError(t, h.Destroy(gx))
		}

		// Copy node update, exec idle.
		t0 = time.Now()
		for i := 0; i < n; i++ {
			require.NoError(t, h.SetCopyNode(x, 2, outCopy(i)))
		}
		t.Logf("copy node update, exec idle: %s per call", per(time.Since(t0), n))

		// Copy node update while a launch of the exec waits behind a
		// 200 us kernel.
		var inflight []time.Duration
		for i := 0; i < n/20+1; i++ {
			require.NoError(t, h.Launch(s, spin(200)))
			require.NoError(t, h.GraphLaunch(x, s))
			t1 := time.Now()
			require.NoError(t, h.SetCopyNode(x, 2, outCopy(i)))
			inflight = append(inflight, time.Since(t1))
			require.NoError(t, h.StreamSynchronize(s))
		}
		t.Logf("copy node update, previous launch of the exec queued behind a 200 us kernel: median %v (min %v, max %v)", med(inflight), inflight[0], inflight[len(inflight)-1])

		// Launch + synchronize of a one-block kernel.
		var syncs []time.Duration
		for i := 0; i < n; i++ {
			t1 := time.Now()
			require.NoError(t, h.Launch(s, spin(1)))
			require.NoError(t, h.StreamSynchronize(s))
			syncs = append(syncs, time.Since(t1))
		}
		t.Logf("launch + stream synchronize, 1 us kernel: median %v", med(syncs))

		// Host callback: enqueue cost and the time until a host thread
		// blocked in Get receives its Put.
		q := h.NewQueue("cb")
		var enq, rt []time.Duration
		for i := 0; i < n; i++ {
			t1 := time.Now()
			require.NoError(t, h.HostFunc(s, func() { q.Put(struct{}{}) }))
			enq = append(enq, time.Since(t1))
			_, ok := h.Get(q)
			require.True(t, ok)
			rt = append(rt, time.Since(t1))
		}
		t.Logf("host callback: enqueue median %v; enqueue to Get returning median %v", med(enq), med(rt))

		// Several host threads launching graphs on their own streams.
		for _, k := range []int{1, 2, 4, 8} {
			done := h.NewQueue("done")
			start := h.NewQueue("start")
			for i := 0; i < k; i++ {
				h.Go(fmt.Sprintf("launcher-%d", i), func(h device.Host) error {
					st, err := h.NewStream(device.StreamOptions{})
					if err != nil {
						return err
					}
					gx := job(st)
					h.Get(start)
					for j := 0; j < n; j++ {
						if err := h.GraphLaunch(gx, st); err != nil {
							return err
						}
					}
					if err := h.StreamSynchronize(st); err != nil {
						return err
					}
					done.Put(true)
					_ = h.Destroy(gx)
					return h.Destroy(st)
				})
			}
			time.Sleep(20 * time.Millisecond) // let every thread capture its graph
			t1 := time.Now()
			for i := 0; i < k; i++ {
				start.Put(true)
			}
			for i := 0; i < k; i++ {
				h.Get(done)
			}
			el := time.Since(t1)
			t.Logf("%d host threads x %d graph launches each: %s per launch overall (%.0f k jobs/s)", k, n, per(el, k*n), float64(k*n)/el.Seconds()/1e3)
		}
		return nil
	}))

	// Two host threads handing a value back and forth through Queues,
	// with and without the spin before parking.
	for _, spin := range []time.Duration{0, -1} {
		dd, err := cuda.Open(cuda.Options{QueueSpin: spin})
		require.NoError(t, err)
		require.NoError(t, dd.Run(func(h device.Host) error {
			ping, pong := h.NewQueue("ping"), h.NewQueue("pong")
			h.Go("echo", func(h device.Host) error {
				for {
					v, ok := h.Get(ping)
					if !ok {
						return nil
					}
					pong.Put(v)
				}
			})
			t0 := time.Now()
			for i := 0; i < n; i++ {
				ping.Put(i)
				h.Get(pong)
			}
			el := time.Since(t0)
			ping.Close()
			name := "spin 200 us then park (default)"
			if spin < 0 {
				name = "park at once"
			}
			t.Logf("queue round trip between two host threads, %s: %s", name, per(el, n))
			return nil
		}))
		require.NoError(t, dd.Close())
	}
}

// TestKernelNodeUpdateCosts measures what ACS-SW's graph dispatch pays per
// kernel on this GPU: a graph of w independent kernel nodes whose nodes
// are all updated (SetKernelNode) before each launch, back to back on one
// stream, with every node keeping its kernel (only arguments change) or
// changing its kernel on every launch; against launching the same kernels
// on the stream; and one node update alone on an idle exec, same kernel
// or another. A measurement, not a check: run it with -primbench=2000.
func TestKernelNodeUpdateCosts(t *testing.T) {
	if *primBench <= 0 {
		t.Skip("measurement; run with -primbench=2000")
	}
	n := *primBench
	synth := kernel(t, "synthetic", "synth_node")
	spinK := kernel(t, "calibrate", "cal_spin")
	const elems = 1024
	per := perCall
	d := cudatest.Open(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		var side []device.Stream
		for i := 0; i < 31; i++ {
			st, err := h.NewStream(device.StreamOptions{})
			require.NoError(t, err)
			side = append(side, st)
		}
		fork, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
		join, _ := h.NewEvent(device.EventOptions{DisableTiming: true})
		a, _ := h.Malloc(4 * elems)
		b, _ := h.Malloc(4 * elems)
		count, _ := h.Malloc(4)
		A := [2]*device.Launch{synthLaunch(synth, a, b, elems, 4), synthLaunch(synth, a, b, elems, 5)}
		B := &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(32), Args: []device.Arg{device.U64(0), device.InOut(count)}}
		// wide captures w independent nodes of l, as ACS-SW's graph
		// dispatch does.
		wide := func(w int, l *device.Launch) device.GraphExec {
			require.NoError(t, h.BeginCapture(s))
			require.NoError(t, h.Record(fork, s))
			require.NoError(t, h.Launch(s, l))
			for i := 1; i < w; i++ {
				require.NoError(t, h.Wait(side[i-1], fork))
				require.NoError(t, h.Launch(side[i-1], l))
				require.NoError(t, h.Record(join, side[i-1]))
				require.NoError(t, h.Wait(s, join))
			}
			g, err := h.EndCapture(s)
			require.NoError(t, err)
			x, err := h.Instantiate(g)
			require.NoError(t, err)
			require.NoError(t, h.Destroy(g))
			return x
		}
		for i := 0; i < 200; i++ { // warm up
			require.NoError(t, h.Launch(s, A[i%2]))
			require.NoError(t, h.Launch(s, B))
		}
		require.NoError(t, h.StreamSynchronize(s))
		t0 := time.Now()
		for i := 0; i < n; i++ {
			require.NoError(t, h.Launch(s, A[i%2]))
		}
		tl := time.Since(t0)
		require.NoError(t, h.StreamSynchronize(s))
		t.Logf("synth_node launched on the stream, back to back: %s per call, %s per kernel until all done", per(tl, n), per(time.Since(t0), n))

		for _, w := range []int{1, 8, 32} {
			x := wide(w, A[0])
			batches := max(n/w, 20)
			// Launches with no update in between.
			tl, all := launchBackToBack(t, h, x, s, batches)
			t.Logf("width %2d, no update between launches, back to back: launch %s per graph; %s per kernel until all done", w, per(tl, batches), per(all, batches*w))
			for _, change := range []bool{false, true} {
				node := func(j, i int) *device.Launch {
					if change && (i+j)%2 == 1 {
						return B
					}
					return A[j%2]
				}
				for j := 0; j < 20; j++ { // warm up
					for i := 0; i < w; i++ {
						require.NoError(t, h.SetKernelNode(x, i, node(j, i)))
					}
					require.NoError(t, h.GraphLaunch(x, s))
				}
				require.NoError(t, h.StreamSynchronize(s))
				var upd, launch time.Duration
				t0 := time.Now()
				for j := 0; j < batches; j++ {
					t1 := time.Now()
					for i := 0; i < w; i++ {
						require.NoError(t, h.SetKernelNode(x, i, node(j, i)))
					}
					t2 := time.Now()
					require.NoError(t, h.GraphLaunch(x, s))
					upd += t2.Sub(t1)
					launch += time.Since(t2)
				}
				calls := time.Since(t0)
				require.NoError(t, h.StreamSynchronize(s))
				all := time.Since(t0)
				what := "every node keeps its kernel (arguments change)"
				if change {
					what = "every node changes its kernel (synth_node <-> cal_spin)"
				}
				t.Logf("width %2d, %s, back to back: update %s per node, launch %s per graph; %s of calls per kernel, %s per kernel until all done",
					w, what, per(upd, batches*w), per(launch, batches), per(calls, batches*w), per(all, batches*w))
			}
			// One update alone on an idle exec.
			for _, change := range []bool{false, true} {
				require.NoError(t, h.StreamSynchronize(s))
				t0 := time.Now()
				for j := 0; j < n; j++ {
					l := A[j%2]
					if change && j%2 == 1 {
						l = B
					}
					require.NoError(t, h.SetKernelNode(x, 0, l))
				}
				what := "same kernel"
				if change {
					what = "kernel changed every call"
				}
				t.Logf("width %2d, exec idle, node 0 updated, %s: %s per call", w, what, per(time.Since(t0), n))
			}
			require.NoError(t, h.Destroy(x))
		}
		return nil
	}))
}

// TestFirstLaunchCosts measures whether a graph exec's first launches cost
// more than its later ones, as a scheduler that instantiates its execs in
// Prepare and runs a few hundred jobs in its timed Run would pay them:
// fresh execs of the job graph (copy in 64 KB from pinned host memory, one
// kernel, copy out) and of a SET-batch chunk of 8 such jobs (one coalesced
// copy in, 8 kernels as parallel branches, one coalesced copy out: 10
// nodes), each captured on a fresh non-blocking stream, instantiated (the
// backend uploads every exec at instantiation, on the legacy stream) and
// the device synchronized, as Prepare and the runner do. Launches 1, 2, 3
// and 10 on that stream are timed on the host, each followed by a stream
// synchronize: the launch call alone and launch to completion. Variants:
// the exec as instantiated; after one warm-up launch (and synchronize) on
// its own stream; after a warm-up launch on another stream, timed on a
// fresh one (is the cost the exec's or the stream's?); and the exec as
// instantiated on a stream that has run a copy before. Medians over a few
// fresh execs per variant; a measurement, not a check: run it with
// -primbench=1 (any positive value; well under a second of GPU time).
func TestFirstLaunchCosts(t *testing.T) {
	if *primBench <= 0 {
		t.Skip("measurement; run with -primbench=1")
	}
	const (
		elems = 16384 // 64 KB of float32 per job
		bytes = 4 * elems
		slots = 8 // jobs per chunk
		fresh = 7 // fresh execs per variant
	)
	timed := []int{1, 2, 3, 10} // launches timed, counted from 1
	synth := kernel(t, "synthetic", "synth_node")
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f us", float64(d.Nanoseconds())/1e3) }
	med := medianDuration
	d := cudatest.Open(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		sb := newSlotBench(t, h, synth, slots, elems)
		a, b, hin, hout, sides, fork, join, slotLaunch := sb.a, sb.b, sb.hin, sb.hout, sb.sides, sb.fork, sb.join, sb.launch
		// The job graph (3 nodes) and the chunk graph (2 + slots nodes),
		// captured on st.
		shapes := []struct {
			name    string
			capture func(st device.Stream)
		}{
			{"job graph (copy in 64 KB, 1 kernel, copy out)", func(st device.Stream) {
				require.NoError(t, h.Copy(st, &device.Copy{Kind: device.HostToDevice, Dst: a, Host: hin, Bytes: bytes}))
				require.NoError(t, h.Launch(st, slotLaunch(0)))
				require.NoError(t, h.Copy(st, &device.Copy{Kind: device.DeviceToHost, Src: b, Host: hout, Bytes: bytes}))
			}},
			{fmt.Sprintf("chunk graph (copy in %d x 64 KB, %d parallel kernels, copy out)", slots, slots), func(st device.Stream) {
				require.NoError(t, h.Copy(st, &device.Copy{Kind: device.HostToDevice, Dst: a, Host: hin, Bytes: slots * bytes}))
				require.NoError(t, h.Record(fork, st))
				for i := 0; i < slots; i++ {
					require.NoError(t, h.Wait(sides[i], fork))
					require.NoError(t, h.Launch(sides[i], slotLaunch(i)))
					require.NoError(t, h.Record(join, sides[i]))
					require.NoError(t, h.Wait(st, join))
				}
				require.NoError(t, h.Copy(st, &device.Copy{Kind: device.DeviceToHost, Src: b, Host: hout, Bytes: slots * bytes}))
			}},
		}
		other, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		variants := []struct {
			name string
			// before runs on the exec x and its stream st after the
			// device is synchronized and before the timed launches; it
			// returns the stream to time them on.
			before func(x device.GraphExec, st device.Stream) device.Stream
		}{
			{"as instantiated (uploaded on the legacy stream)", func(_ device.GraphExec, st device.Stream) device.Stream { return st }},
			{"after one warm-up launch on its stream", func(x device.GraphExec, st device.Stream) device.Stream {
				require.NoError(t, h.GraphLaunch(x, st))
				require.NoError(t, h.StreamSynchronize(st))
				return st
			}},
			{"after one warm-up launch on another stream, timed on a fresh stream", func(x device.GraphExec, _ device.Stream) device.Stream {
				require.NoError(t, h.GraphLaunch(x, other))
				require.NoError(t, h.StreamSynchronize(other))
				st, err := h.NewStream(device.StreamOptions{})
				require.NoError(t, err)
				return st
			}},
			{"as instantiated, on a stream that ran a copy before", func(_ device.GraphExec, st device.Stream) device.Stream {
				require.NoError(t, h.Copy(st, &device.Copy{Kind: device.HostToDevice, Dst: a, Host: hin, Bytes: 256}))
				require.NoError(t, h.StreamSynchronize(st))
				return st
			}},
		}
		for _, sh := range shapes {
			for _, v := range variants {
				var inst []time.Duration
				call := make([][]time.Duration, len(timed))
				done := make([][]time.Duration, len(timed))
				for e := 0; e < fresh; e++ {
					st, err := h.NewStream(device.StreamOptions{})
					require.NoError(t, err)
					require.NoError(t, h.BeginCapture(st))
					sh.capture(st)
					g, err := h.EndCapture(st)
					require.NoError(t, err)
					t0 := time.Now()
					x, err := h.Instantiate(g)
					inst = append(inst, time.Since(t0))
					require.NoError(t, err)
					require.NoError(t, h.Destroy(g))
					require.NoError(t, h.Synchronize()) // as the runner does after Prepare
					on := v.before(x, st)
					k := 0
					for n := 1; n <= timed[len(timed)-1]; n++ {
						t1 := time.Now()
						require.NoError(t, h.GraphLaunch(x, on))
						tl := time.Since(t1)
						require.NoError(t, h.StreamSynchronize(on))
						tc := time.Since(t1)
						if n == timed[k] {
							call[k] = append(call[k], tl)
							done[k] = append(done[k], tc)
							k++
						}
					}
					require.NoError(t, h.Destroy(x))
					if on != st {
						require.NoError(t, h.Destroy(on))
					}
					require.NoError(t, h.Destroy(st))
				}
				line := fmt.Sprintf("%s, %s: instantiate %s;", sh.name, v.name, us(med(inst)))
				for k, n := range timed {
					line += fmt.Sprintf(" launch %d: call %s, to completion %s;", n, us(med(call[k])), us(med(done[k])))
				}
				t.Logf("%s (medians of %d fresh execs)", line, fresh)
			}
		}
		return nil
	}))
}

// TestGraphTopologyLaunchCosts measures whether cuGraphLaunch's host cost
// per kernel node depends on the graph's shape: n kernel nodes (n = 8, 16)
// spread over k parallel branches (k = 1: one chain; k = n: every node
// its own branch, as SET-batch and ACS-SW's graph dispatch capture them),
// with and without a copy node before the fork and one after the join (a
// SET-batch chunk). Each launch is timed alone on an idle stream (the
// stream synchronized before it), so no queue back-pressure is in the
// call; also launches back to back, per graph. Medians; a measurement,
// not a check: run it with -primbench=200 (calls per shape).
func TestGraphTopologyLaunchCosts(t *testing.T) {
	if *primBench <= 0 {
		t.Skip("measurement; run with -primbench=200")
	}
	n := *primBench
	const (
		elems = 4096
		bytes = 4 * elems
		most  = 16
	)
	synth := kernel(t, "synthetic", "synth_node")
	us := func(d time.Duration) string { return perCall(d, 1) }
	med := medianDuration
	d := cudatest.Open(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		sb := newSlotBench(t, h, synth, most, elems)
		a, b, hin, hout, sides, fork, join, slotLaunch := sb.a, sb.b, sb.hin, sb.hout, sb.sides, sb.fork, sb.join, sb.launch
		s, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		// capture: nodes kernels dealt in contiguous runs over k branches
		// (branch j runs slots j*nodes/k ..), each branch a side stream
		// forked from s and joined back.
		capture := func(nodes, k int, copies bool) device.GraphExec {
			require.NoError(t, h.BeginCapture(s))
			if copies {
				require.NoError(t, h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: a, Host: hin, Bytes: int64(nodes) * bytes}))
			}
			require.NoError(t, h.Record(fork, s))
			per := nodes / k
			for j := 0; j < k; j++ {
				require.NoError(t, h.Wait(sides[j], fork))
				for i := j * per; i < (j+1)*per; i++ {
					require.NoError(t, h.Launch(sides[j], slotLaunch(i)))
				}
				require.NoError(t, h.Record(join, sides[j]))
				require.NoError(t, h.Wait(s, join))
			}
			if copies {
				require.NoError(t, h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: b, Host: hout, Bytes: int64(nodes) * bytes}))
			}
			g, err := h.EndCapture(s)
			require.NoError(t, err)
			x, err := h.Instantiate(g)
			require.NoError(t, err)
			require.NoError(t, h.Destroy(g))
			return x
		}
		for _, copies := range []bool{false, true} {
			for _, nodes := range []int{8, 16} {
				for _, k := range []int{1, 2, 4, nodes} {
					x := capture(nodes, k, copies)
					warmGraph(t, h, x, s, 20)
					call := make([]time.Duration, 0, n)
					done := make([]time.Duration, 0, n)
					for j := 0; j < n; j++ {
						t0 := time.Now()
						require.NoError(t, h.GraphLaunch(x, s))
						t1 := time.Now()
						require.NoError(t, h.StreamSynchronize(s))
						call = append(call, t1.Sub(t0))
						done = append(done, time.Since(t0))
					}
					b2b, all := backToBack(t, h, x, s, n)
					t.Logf("%2d kernel nodes on %2d branches, copy nodes %-5v: idle stream: call %s (%s per kernel node), to completion %s; back to back: call %s per graph, %s per graph until all done",
						nodes, k, copies, us(med(call)), us(med(call)/time.Duration(nodes)), us(med(done)),
						us(b2b/time.Duration(n)), us(all/time.Duration(n)))
					require.NoError(t, h.Destroy(x))
				}
			}
		}
		return nil
	}))
}

// slotBench is what the chunk-graph measurements capture from: device
// buffers a and b and pinned host buffers of slots x elems float32 each,
// a side stream per slot, fork and join events, and launch(i), the
// synth_node kernel reading a's slot i and writing b's.
type slotBench struct {
	a, b       device.Buffer
	hin, hout  *device.HostMem
	sides      []device.Stream
	fork, join device.Event
	launch     func(i int) *device.Launch
}

func newSlotBench(t *testing.T, h device.Host, synth *device.Kernel, slots, elems int) *slotBench {
	bytes := int64(4 * elems)
	var sb slotBench
	var err error
	for _, buf := range []*device.Buffer{&sb.a, &sb.b} {
		*buf, err = h.Malloc(int64(slots) * bytes)
		require.NoError(t, err)
	}
	for _, buf := range []**device.HostMem{&sb.hin, &sb.hout} {
		*buf, err = h.AllocHost(int64(slots)*bytes, true)
		require.NoError(t, err)
	}
	for i := 0; i < slots; i++ {
		st, err := h.NewStream(device.StreamOptions{})
		require.NoError(t, err)
		sb.sides = append(sb.sides, st)
	}
	sb.fork, err = h.NewEvent(device.EventOptions{DisableTiming: true})
	require.NoError(t, err)
	sb.join, err = h.NewEvent(device.EventOptions{DisableTiming: true})
	require.NoError(t, err)
	sb.launch = func(i int) *device.Launch {
		l := synthLaunch(synth, sb.a, sb.b, elems, 4)
		for k := range l.Args {
			if l.Args[k].Kind == device.ArgBuffer {
				l.Args[k].Off, l.Args[k].Len = int64(i)*bytes, bytes
			}
		}
		return l
	}
	return &sb
}

// medianDuration is v's median, v left as it was.
func medianDuration(v []time.Duration) time.Duration {
	s := append([]time.Duration(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// perCall is d spread over k calls, in microseconds, as the measurements
// print it.
func perCall(d time.Duration, k int) string {
	return fmt.Sprintf("%.2f us", float64(d.Nanoseconds())/float64(k)/1e3)
}

// launchBackToBack launches x on s 20 times and waits (warm-up), then n
// times back to back: the launch calls' time, and the time until all n
// have run.
func launchBackToBack(t *testing.T, h device.Host, x device.GraphExec, s device.Stream, n int) (calls, all time.Duration) {
	t.Helper()
	warmGraph(t, h, x, s, 20)
	return backToBack(t, h, x, s, n)
}

// warmGraph launches x n times on s and waits for them, so first-launch
// costs fall outside what is timed next.
func warmGraph(t *testing.T, h device.Host, x device.GraphExec, s device.Stream, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		require.NoError(t, h.GraphLaunch(x, s))
	}
	require.NoError(t, h.StreamSynchronize(s))
}

// backToBack launches x n times on s without waiting in between: the time
// the calls took, and the time until all had completed.
func backToBack(t *testing.T, h device.Host, x device.GraphExec, s device.Stream, n int) (calls, all time.Duration) {
	t.Helper()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		require.NoError(t, h.GraphLaunch(x, s))
	}
	calls = time.Since(t0)
	require.NoError(t, h.StreamSynchronize(s))
	return calls, time.Since(t0)
}
