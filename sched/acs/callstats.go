package acs

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Call statistics (Params.CallStats; issue #18, session 17). The simulator
// predicts ACS-SW 20-30% faster than the GPU while its thread statistics
// (threadstats.go) show every part of a scheduler thread's round trip a
// little longer on the GPU. These figures say which mechanism: whether a
// launch costs more on the GPU because other scheduler threads are inside
// a driver call at the time (launching or synchronizing: the driver's
// locks, its spinning waits), and where the window thread's own time goes
// (the check, the work queues' Puts, retiring completions). Both backends
// count the same way, so the GPU's and the simulator's figures of one row
// compare directly.

// callBuckets buckets a count of other threads: 0 to callBuckets-2, and
// callBuckets-1 for that many or more.
const callBuckets = 9

// presence counts the scheduler threads inside a driver call right now:
// launching (a launch, its event waits and records, a completion event's
// record or host function) or synchronizing (a stream or event
// synchronize). Atomics only count: no thread waits on them.
type presence struct {
	launching, syncing atomic.Int32
}

// bucket is a sum of call times and their count.
type bucket struct {
	n int64
	d time.Duration
}

// callStats is a scheduler thread's launches by how many other threads
// were launching, and by how many were synchronizing, when each began.
type callStats struct {
	byLaunching, bySyncing [callBuckets]bucket
}

func (a *callStats) merge(b *callStats) {
	for i := range a.byLaunching {
		a.byLaunching[i].n += b.byLaunching[i].n
		a.byLaunching[i].d += b.byLaunching[i].d
		a.bySyncing[i].n += b.bySyncing[i].n
		a.bySyncing[i].d += b.bySyncing[i].d
	}
}

func clampBucket(n int32) int {
	if n >= callBuckets-1 {
		return callBuckets - 1
	}
	if n < 0 {
		return 0
	}
	return int(n)
}

// add puts the launches' figures into m: for each count n of other
// threads seen, thread_launch_ns_others_launching_n (mean launch time)
// and thread_launches_others_launching_n (how many), the same for
// syncing.
func (a *callStats) add(m map[string]float64) {
	for _, f := range []struct {
		what string
		b    *[callBuckets]bucket
	}{{"launching", &a.byLaunching}, {"syncing", &a.bySyncing}} {
		for n, b := range f.b {
			if b.n == 0 {
				continue
			}
			m[fmt.Sprintf("thread_launches_others_%s_%d", f.what, n)] = float64(b.n)
			m[fmt.Sprintf("thread_launch_ns_others_%s_%d", f.what, n)] = float64(b.d.Nanoseconds()) / float64(b.n)
		}
	}
}

// windowCalls is the window thread's time in its parts: the dependency
// check (admitting operations, with what Spend charges for it), the work
// queues' Puts (dispatch window) or the batches' node updates and graph
// launches (dispatch graph), and retiring completions less the first
// Get's wait (dispatch window). Under dispatch graph, graphUpdate and
// graphLaunch split dispatch into the node updates
// (cuGraphExecKernelNodeSetParams) and the graph launches (cuGraphLaunch).
type windowCalls struct {
	check, put, retire, dispatch time.Duration
	graphUpdate, graphLaunch     time.Duration
}

// add puts the parts per operation into m (kernels operations in all).
func (w *windowCalls) add(m map[string]float64, kernels int64) {
	n := float64(kernels)
	m["window_check_ns_per_op"] = float64(w.check.Nanoseconds()) / n
	m["window_put_ns_per_op"] = float64(w.put.Nanoseconds()) / n
	m["window_retire_ns_per_op"] = float64(w.retire.Nanoseconds()) / n
	m["window_dispatch_ns_per_op"] = float64(w.dispatch.Nanoseconds()) / n
}

// addGraph puts dispatch graph's split into m: the host time per node
// update and per graph launch (the launch's cost grows with the nodes the
// updates changed: host.graph_launch_changed_node_ns).
func (w *windowCalls) addGraph(m map[string]float64, updates, launches int64) {
	if updates > 0 {
		m["window_graph_update_ns_per_update"] = float64(w.graphUpdate.Nanoseconds()) / float64(updates)
	}
	if launches > 0 {
		m["window_graph_launch_ns_per_launch"] = float64(w.graphLaunch.Nanoseconds()) / float64(launches)
	}
}

// inDriver runs call as a driver call of the given kind (launching or
// syncing) for the presence counts; under CallStats only.
func (ts *threadState) inDriver(syncing bool, call func()) {
	if !ts.s.p.CallStats {
		call()
		return
	}
	c := &ts.s.pres.launching
	if syncing {
		c = &ts.s.pres.syncing
	}
	c.Add(1)
	call()
	c.Add(-1)
}

// launchSeen notes, before a launch, how many other threads are in a
// driver call; launched adds the launch's time to their buckets.
func (ts *threadState) launchSeen() (launching, syncing int) {
	p := &ts.s.pres
	return clampBucket(p.launching.Load()), clampBucket(p.syncing.Load())
}

func (ts *threadState) launched(launching, syncing int, d time.Duration) {
	c := &ts.acc.calls
	c.byLaunching[launching].n++
	c.byLaunching[launching].d += d
	c.bySyncing[syncing].n++
	c.bySyncing[syncing].d += d
}

// timedPart runs call and, under CallStats, adds its host time to *into.
func (s *SW) timedPart(h device.Host, into *time.Duration, call func()) {
	if !s.p.CallStats {
		call()
		return
	}
	timed(h, into, call)
}

// addWindowCalls adds the window thread's parts to m under CallStats.
func (s *SW) addWindowCalls(m map[string]float64) map[string]float64 {
	if !s.p.CallStats || s.wstats.kernels == 0 {
		return m
	}
	if m == nil {
		m = map[string]float64{}
	}
	s.wcalls.add(m, s.wstats.kernels)
	if s.p.Dispatch == DispatchGraph {
		s.wcalls.addGraph(m, s.gstats.updates, s.gstats.batches)
	}
	return m
}
