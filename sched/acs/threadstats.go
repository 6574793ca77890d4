package acs

import (
	"time"

	"github.com/gpusched/gpusched/device"
)

// threadStats is what ACS-SW's scheduler threads did under dispatch
// window since the scheduler was made (issue #18, session 14): the jobs
// they launched and their time in each kind of call, so that the GPU can
// say which part of a scheduler thread's round trip the simulator gets
// wrong. get is the time in the work queue's Get (waiting for the window
// thread included, and the wait between Runs: a thread cannot tell them
// apart, so get is the least useful of the five), launch the job's issue (its launches or graph, its
// event waits and, with Waits, its record), record the completion event's
// record (or the host function's enqueue), sync the stream or event
// synchronize, queue the other queue calls (Len, the completion's Put).
type threadStats struct {
	jobs                             int64
	get, launch, record, sync, queue time.Duration
	calls                            callStats // Params.CallStats only
}

func (a *threadStats) merge(b *threadStats) {
	a.jobs += b.jobs
	a.get += b.get
	a.launch += b.launch
	a.record += b.record
	a.sync += b.sync
	a.queue += b.queue
	a.calls.merge(&b.calls)
}

// addThreads puts the scheduler threads' figures per job into m (made
// when nil): thread_jobs and thread_{get,launch,record,sync,queue}_ns_per_job,
// summed over the threads; m as it is before any job.
func addThreads(m map[string]float64, per []threadStats) map[string]float64 {
	var sum threadStats
	for i := range per {
		sum.merge(&per[i])
	}
	if sum.jobs == 0 {
		return m
	}
	if m == nil {
		m = map[string]float64{}
	}
	n := float64(sum.jobs)
	m["thread_jobs"] = n
	for _, f := range []struct {
		key string
		d   time.Duration
	}{{"get", sum.get}, {"launch", sum.launch}, {"record", sum.record}, {"sync", sum.sync}, {"queue", sum.queue}} {
		m["thread_"+f.key+"_ns_per_job"] = float64(f.d.Nanoseconds()) / n
	}
	sum.calls.add(m) // empty without Params.CallStats
	return m
}

// timed runs call and adds its host time to *into.
func timed(h device.Host, into *time.Duration, call func()) {
	t0 := h.Now()
	call()
	*into += h.Now() - t0
}

// flush adds what the thread counted since its last flush to its slot of
// the scheduler's figures. It is called before every Put to the completion
// queue, so that the window thread (and Stats after the Run) sees the
// figures the Put publishes.
func (ts *threadState) flush() {
	ts.s.tstats[ts.t].merge(&ts.acc)
	ts.acc = threadStats{}
}
