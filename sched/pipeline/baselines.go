package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// The baselines SET is measured against (SET paper, section 5): each runs
// the jobs in their own buffers, as the program declares them.

// oneAtATime is what Synchronous and Graph share: one stream, one job in
// flight, each job its own batch of the overhead model.
type oneAtATime struct {
	// Gaps records timing events around every job to measure the
	// overhead model's terms (costs two event records per job).
	Gaps    bool
	stream  device.Stream
	gaps    gapTimer
	metrics Metrics
}

func (o *oneAtATime) prepare(h device.Host, in *workloads.Instance) (err error) {
	if _, err := analyze(in); err != nil {
		return err
	}
	o.gaps = gapTimer{on: o.Gaps, batch: identity(in.Steps())}
	if err := o.gaps.prepare(h, in.Steps()); err != nil {
		return err
	}
	o.stream, err = h.NewStream(device.StreamOptions{})
	return err
}

func (o *oneAtATime) cleanup(h device.Host) error {
	first := o.gaps.destroy(h)
	if o.stream == nil {
		return first
	}
	if err := h.Destroy(o.stream); err != nil && first == nil {
		first = err
	}
	o.stream = nil
	return first
}

// Synchronous issues a job on one stream and waits for it before the next.
type Synchronous struct{ oneAtATime }

// Graph captures each job into a CUDA graph, instantiates and launches it,
// waits for it, and destroys it: a graph per job.
type Graph struct{ oneAtATime }

// Batching issues B jobs round-robin over B streams, then synchronizes the
// device once per batch.
type Batching struct {
	B       int
	Gaps    bool
	streams []device.Stream
	gaps    gapTimer
	metrics Metrics
}

// Queue gives each of B streams a queue of jobs (dealt round-robin) and a
// host thread that issues its queue's jobs one at a time, synchronizing its
// stream after each. The threads and streams live from Prepare to Cleanup,
// serving every Run in between: a timed run starts no thread, as no other
// scheduler's does (until session 21 each Run ended its threads, so the
// next one analyzed the jobs, created the streams and started the threads
// again inside its timing: 300-500 us on a GPU host, calibrate "host
// thread starts").
type Queue struct {
	B    int
	Gaps bool
	// PerRunThreads makes every Run end its threads (closing their job
	// queues), so that the next Run prepares again inside its timing:
	// analyzes the jobs, creates its streams and starts its threads. It is
	// what Queue did before f4357e7 (session 21), kept to simulate the GPU
	// results measured then; a Run that prepared reports what each part
	// took (Metrics.Setup*).
	PerRunThreads bool
	setup         setupTimes      // what the last Prepare spent, by part
	stale         []device.Stream // earlier runs' streams (PerRunThreads), destroyed by Cleanup
	gaps          gapTimer
	streams       []device.Stream
	queues        []device.Queue
	done          device.Queue // a worker's end of a run: nil or its error
	exited        device.Queue // a worker's end: its thread returned
	threads       []*Metrics   // per host thread, reset by each Run
	failed        error        // a worker's error, which ended its thread
	metrics       Metrics
}

// runEnd, put on a worker's job queue after a run's jobs, ends the run:
// the worker reports done and waits for the next run's jobs.
const runEnd = -1

// Needs implements sched.Needer: every pipeline schedules independent jobs
// of one shape.
func (oneAtATime) Needs() []sched.Trait { return jobsNeed }
func (*Batching) Needs() []sched.Trait  { return jobsNeed }
func (*Queue) Needs() []sched.Trait     { return jobsNeed }
func (*SET) Needs() []sched.Trait       { return jobsNeed }

var jobsNeed = []sched.Trait{sched.TraitJobs}

func NewSynchronous() *Synchronous { return &Synchronous{} }
func NewGraph() *Graph             { return &Graph{} }

func NewBatching(b int) (*Batching, error) {
	if b < 1 || b > 64 {
		return nil, fmt.Errorf("batching: streams must be between 1 and 64, got %d", b)
	}
	return &Batching{B: b}, nil
}

func NewQueue(b int) (*Queue, error) {
	if b < 1 || b > 64 {
		return nil, fmt.Errorf("queue: streams must be between 1 and 64, got %d", b)
	}
	return &Queue{B: b}, nil
}

func (*Synchronous) Name() string { return "synchronous" }
func (*Graph) Name() string       { return "graph-per-job" }
func (b *Batching) Name() string  { return fmt.Sprintf("batching(b=%d)", b.B) }
func (q *Queue) Name() string     { return fmt.Sprintf("queue(b=%d)", q.B) }

// Metrics report the last Run (see Metrics.Map for the names).
func (s *Synchronous) Metrics() map[string]float64 { return s.metrics.Map() }
func (g *Graph) Metrics() map[string]float64       { return g.metrics.Map() }
func (b *Batching) Metrics() map[string]float64    { return b.metrics.Map() }
func (q *Queue) Metrics() map[string]float64       { return q.metrics.Map() }

func (s *Synchronous) Prepare(h device.Host, in *workloads.Instance) error { return s.prepare(h, in) }
func (s *Synchronous) Cleanup(h device.Host) error                         { return s.cleanup(h) }

// identity is the batch numbering of a one-job-per-batch schedule.
func identity(n int) []int {
	b := make([]int, n)
	for i := range b {
		b[i] = i
	}
	return b
}

func (s *Synchronous) Run(h device.Host, in *workloads.Instance) (err error) {
	if s.stream == nil {
		if err := s.Prepare(h, in); err != nil {
			return err
		}
		defer sched.JoinCleanup(h, s, &err)
	}
	m := &s.metrics
	*m = Metrics{Jobs: in.Steps(), HostThreads: 1}
	start := h.Now()
	if err := s.gaps.begin(h, s.stream); err != nil {
		return err
	}
	for j := 0; j < in.Steps(); j++ {
		if err := s.gaps.jobStart(h, s.stream, j); err != nil {
			return err
		}
		t := h.Now()
		if err := issueJob(h, in, s.stream, j); err != nil {
			return err
		}
		since(h, t, &m.Schedule)
		if err := s.gaps.jobEnd(h, s.stream, j); err != nil {
			return err
		}
		t = h.Now()
		if err := h.StreamSynchronize(s.stream); err != nil {
			return err
		}
		since(h, t, &m.Wait)
		m.Syncs++
	}
	m.Makespan = h.Now() - start
	return s.gaps.finish(h, m)
}

func (g *Graph) Prepare(h device.Host, in *workloads.Instance) error { return g.prepare(h, in) }
func (g *Graph) Cleanup(h device.Host) error                         { return g.cleanup(h) }

func (g *Graph) Run(h device.Host, in *workloads.Instance) (err error) {
	if g.stream == nil {
		if err := g.Prepare(h, in); err != nil {
			return err
		}
		defer sched.JoinCleanup(h, g, &err)
	}
	m := &g.metrics
	*m = Metrics{Jobs: in.Steps(), HostThreads: 1}
	start := h.Now()
	if err := g.gaps.begin(h, g.stream); err != nil {
		return err
	}
	for j := 0; j < in.Steps(); j++ {
		t := h.Now()
		if err := h.BeginCapture(g.stream); err != nil {
			return err
		}
		if err := issueJob(h, in, g.stream, j); err != nil {
			return sched.AbortCapture(h, g.stream, err)
		}
		gr, err := h.EndCapture(g.stream)
		if err != nil {
			return err
		}
		x, err := h.Instantiate(gr)
		if err != nil {
			return errors.Join(err, h.Destroy(gr))
		}
		since(h, t, &m.Schedule)
		if err := g.gaps.jobStart(h, g.stream, j); err != nil {
			return err
		}
		t = h.Now()
		if err := h.GraphLaunch(x, g.stream); err != nil {
			return err
		}
		since(h, t, &m.Schedule)
		if err := g.gaps.jobEnd(h, g.stream, j); err != nil {
			return err
		}
		t = h.Now()
		if err := h.StreamSynchronize(g.stream); err != nil {
			return err
		}
		t = since(h, t, &m.Wait)
		m.Syncs++
		if err := h.Destroy(x); err != nil {
			return err
		}
		if err := h.Destroy(gr); err != nil {
			return err
		}
		since(h, t, &m.Schedule)
	}
	m.Makespan = h.Now() - start
	return g.gaps.finish(h, m)
}

func (b *Batching) Prepare(h device.Host, in *workloads.Instance) (err error) {
	if _, err := analyze(in); err != nil {
		return err
	}
	batch := make([]int, in.Steps())
	for j := range batch {
		batch[j] = j / b.B
	}
	b.gaps = gapTimer{on: b.Gaps, batch: batch}
	if err := b.gaps.prepare(h, in.Steps()); err != nil {
		return err
	}
	b.streams, err = sched.NewStreams(h, b.B)
	return err
}

func (b *Batching) Cleanup(h device.Host) error {
	first := b.gaps.destroy(h)
	if err := sched.DestroyStreams(h, b.streams); err != nil && first == nil {
		first = err
	}
	b.streams = nil
	return first
}

func (b *Batching) Run(h device.Host, in *workloads.Instance) (err error) {
	if b.streams == nil {
		if err := b.Prepare(h, in); err != nil {
			return err
		}
		defer sched.JoinCleanup(h, b, &err)
	}
	m := &b.metrics
	*m = Metrics{Jobs: in.Steps(), HostThreads: 1}
	start := h.Now()
	if err := b.gaps.begin(h, b.streams[0]); err != nil {
		return err
	}
	for lo := 0; lo < in.Steps(); lo += b.B {
		for j := lo; j < lo+b.B && j < in.Steps(); j++ {
			st := b.streams[j-lo]
			if err := b.gaps.jobStart(h, st, j); err != nil {
				return err
			}
			t := h.Now()
			if err := issueJob(h, in, st, j); err != nil {
				return err
			}
			since(h, t, &m.Schedule)
			if err := b.gaps.jobEnd(h, st, j); err != nil {
				return err
			}
		}
		t := h.Now()
		if err := h.Synchronize(); err != nil {
			return err
		}
		since(h, t, &m.Wait)
		m.Syncs++
	}
	m.Makespan = h.Now() - start
	return b.gaps.finish(h, m)
}

// Prepare creates the streams and starts one host thread per stream, each
// blocked on its (still empty) job queue, so no Run pays for a thread
// start.
func (q *Queue) Prepare(h device.Host, in *workloads.Instance) (err error) {
	t := h.Now()
	if _, err := analyze(in); err != nil {
		return err
	}
	if q.PerRunThreads {
		// Timed only here (inside every later run): charge it where the
		// simulator would otherwise run it in no time.
		spendAnalysis(h, in)
	}
	q.gaps = gapTimer{on: q.Gaps}
	if err := q.gaps.prepare(h, in.Steps()); err != nil {
		return err
	}
	q.setup.analyze = h.Now() - t
	t = h.Now()
	if q.streams, err = sched.NewStreams(h, q.B); err != nil {
		return err
	}
	q.setup.streams = h.Now() - t
	t = h.Now()
	defer func() { q.setup.threads = h.Now() - t }()
	q.done = h.NewQueue("queue done")
	q.exited = h.NewQueue("queue exited")
	q.queues = make([]device.Queue, q.B)
	q.threads = make([]*Metrics, q.B)
	q.failed = nil
	for i := 0; i < q.B; i++ {
		q.queues[i] = h.NewQueue(fmt.Sprintf("queue %d", i))
		q.threads[i] = &Metrics{}
		w := queueWorker{in: in, jobs: q.queues[i], st: q.streams[i], m: q.threads[i], gaps: &q.gaps, done: q.done}
		exited := q.exited
		h.Go(fmt.Sprintf("queue worker %d", i), func(h device.Host) error {
			err := w.serve(h)
			exited.Put(nil)
			return err
		})
	}
	return nil
}

// queueWorker is one of Queue's host threads: it issues each job its
// queue gives on its stream and waits for it, reports each run's end on
// done, and returns when its queue is closed or a job fails (after
// reporting the error on done).
type queueWorker struct {
	in   *workloads.Instance
	jobs device.Queue
	st   device.Stream
	m    *Metrics
	gaps *gapTimer
	done device.Queue
}

// serve is the worker's loop. The wait for a run's first job is not
// counted: the thread waited since the run before (or Prepare).
func (w queueWorker) serve(h device.Host) error {
	for first := true; ; {
		t := h.Now()
		v, ok := h.Get(w.jobs)
		if !first {
			since(h, t, &w.m.Wait)
		}
		if !ok {
			return nil
		}
		j := v.(int)
		if j == runEnd {
			w.done.Put(nil)
			first = true
			continue
		}
		first = false
		if err := w.job(h, j); err != nil {
			w.done.Put(err)
			return err
		}
	}
}

// job issues job j on the worker's stream and synchronizes it.
func (w queueWorker) job(h device.Host, j int) error {
	if err := w.gaps.jobStart(h, w.st, j); err != nil {
		return err
	}
	t := h.Now()
	if err := issueJob(h, w.in, w.st, j); err != nil {
		return err
	}
	since(h, t, &w.m.Schedule)
	if err := w.gaps.jobEnd(h, w.st, j); err != nil {
		return err
	}
	t = h.Now()
	if err := h.StreamSynchronize(w.st); err != nil {
		return err
	}
	since(h, t, &w.m.Wait)
	w.m.Syncs++
	return nil
}

// setupTimes is what a Queue's Prepare spent: analyzing the jobs (and
// its timing events), creating the streams, making the queues and starting
// the threads.
type setupTimes struct{ analyze, streams, threads time.Duration }

// endThreads ends the run's threads without waiting for them (their job
// queues closed, each returns when it sees it) and keeps the streams for
// Cleanup, as Queue's Run did before it kept its threads (PerRunThreads).
func (q *Queue) endThreads() {
	for _, jq := range q.queues {
		jq.Close()
	}
	q.stale = append(q.stale, q.streams...)
	q.queues, q.streams = nil, nil
}

// Cleanup ends the host threads (closing their queues; a thread that
// failed has ended already and reported its error to Run) and destroys the
// streams.
func (q *Queue) Cleanup(h device.Host) error {
	var first error
	if q.queues != nil {
		for _, jq := range q.queues {
			jq.Close()
		}
		for i := 0; i < q.B; i++ {
			if _, ok := h.Get(q.exited); !ok {
				break
			}
		}
		q.queues = nil
	}
	if err := q.gaps.destroy(h); err != nil && first == nil {
		first = err
	}
	if err := sched.DestroyStreams(h, append(q.stale, q.streams...)); err != nil && first == nil {
		first = err
	}
	q.streams, q.stale, q.done = nil, nil, nil
	return first
}

func (q *Queue) Run(h device.Host, in *workloads.Instance) (err error) {
	var setup *setupTimes
	if q.queues == nil {
		if err := q.Prepare(h, in); err != nil {
			return err
		}
		setup = &q.setup
		if !q.PerRunThreads {
			defer sched.JoinCleanup(h, q, &err)
		}
	}
	if q.failed != nil {
		return fmt.Errorf("queue: a worker failed in an earlier run and has ended: %w", q.failed)
	}
	for _, m := range q.threads {
		*m = Metrics{}
	}
	n := in.Steps()
	start := h.Now()
	if err := q.gaps.begin(h, q.streams[0]); err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		q.queues[j%q.B].Put(j)
	}
	for _, jq := range q.queues {
		jq.Put(runEnd)
	}
	dealt := h.Now() - start
	var first error
	for i := 0; i < q.B; i++ {
		v, ok := h.Get(q.done)
		if !ok {
			break
		}
		if err, _ := v.(error); err != nil && first == nil {
			first = err
		}
	}
	m := &q.metrics
	*m = Metrics{Jobs: n, HostThreads: q.B, Makespan: h.Now() - start, Schedule: dealt}
	for _, t := range q.threads {
		m.merge(t)
	}
	if setup != nil {
		m.SetupAnalyze, m.SetupStreams, m.SetupThreads = setup.analyze, setup.streams, setup.threads
	}
	if q.PerRunThreads && first == nil {
		q.endThreads()
	}
	if first != nil {
		q.failed = first
		return first
	}
	return q.gaps.finish(h, m)
}
