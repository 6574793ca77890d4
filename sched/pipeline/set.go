package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// SET is the stream-event-triggered CUDA-graph pipeline (Li, Huang and
// Ogras, arXiv 2606.05495, sections 3-4). B workers each own a stream, an
// instantiated graph of the job shape and private device buffers. Jobs are
// dealt round-robin into per-worker queues with their parameters already
// bound to the worker's buffers. One dispatcher host thread takes an idle
// worker from the free-worker pool, pops the next job from that worker's
// queue (or, when it is empty, steals one round-robin from a peer and
// retargets it to the thief's buffers), writes the job's parameters into the
// worker's graph, launches it, and enqueues a host callback behind it that
// returns the worker to the pool. The pool is fed only by those callbacks:
// nothing polls, and a worker's buffers are never reused before the job in
// them has completed.
//
// Two refinements over the paper. A node whose parameters already equal the
// job's is not updated: a worker's kernels always see the same private
// buffers, so usually only the two copy nodes (the job's host slots) change.
// And with Depth > 1 a worker may have up to Depth jobs in flight on its
// stream: a graph update affects only later launches (CUDA: "already
// enqueued or running launches are not affected"), and the stream runs the
// worker's jobs in order, so the next job's copy-in still starts only after
// the previous job in the same buffers has finished, while the GPU no longer
// idles for the callback's host round trip between them. Depth 1 is the
// paper's SET.
type SET struct {
	p       Params      // validated, Depth resolved
	depth   int         // *p.Depth
	gaps    gapTimer    // with Params.Gaps: timing events around every job
	kernels kernelRange // with copies stream or batched: the job's ops in the graph
	batch   *batchLayout
	jobsQ   []device.Queue // per worker, when Threaded
	start   []device.Queue // per worker: Run's go signal
	doneQ   device.Queue   // worker threads' results
	running bool           // worker threads started and not yet ended

	js      *jobSet
	bd      *binder
	workers []*worker
	free    device.Queue
	// retargetCost is host bookkeeping charged per rewritten buffer
	// pointer when a stolen job is retargeted (h.Spend; free on a GPU,
	// where the work itself takes the time).
	retargetCost time.Duration
	bufArgs      int // buffer references per job
	metrics      Metrics
	// dealTo, if set, names the worker job j (under copies batched, chunk
	// j) is dealt to (default j mod B): tests use it to unbalance the
	// queues so that workers steal.
	dealTo func(j int) int
	// shareSlots makes every worker use worker 0's buffers: wrong on
	// purpose, for the race checker's negative-control test.
	shareSlots bool
	// streamPerExec (Ring only) launches each of a worker's execs on its
	// own stream, so jobs in the same buffers are no longer ordered: wrong
	// on purpose, for the ring's negative-control test.
	streamPerExec bool
	// unchainedSlots (JobsPerLaunch > 1 only) captures the job slots of a
	// chain on forked streams, unordered over the worker's buffers: wrong
	// on purpose, for the chain's negative-control test.
	unchainedSlots bool
}

type worker struct {
	id      int
	free    device.Queue // Threaded: this worker's completion callbacks
	bd      *binder      // Threaded: this thread's retargeting scratch
	metrics Metrics      // Threaded: this thread's share
	dones   []func()     // Threaded: dones[n] returns n slots to the worker
	stream  device.Stream
	exec    device.GraphExec
	slots   []device.Buffer
	queue   []boundJob // prepared jobs, taken from the front; thieves take from the back
	head    int
	jobs    int      // len(queue) as dealt: every Run starts from the whole queue
	cur     boundJob // the parameters the graph's nodes hold now
	victim  int      // the next peer to try stealing from
	done    func()   // the completion callback: back to the free pool

	// With Ring (set_ring.go): the execs, the next one to launch, how many
	// are in flight and prepared, the launched jobs not yet behind a
	// completion callback, and the retargeting scratch for a stolen job.
	ring                     []*ringSlot
	next, inFlight, prepared int
	uncovered                int
	// stolen holds up to JobsPerLaunch stolen jobs retargeted into the
	// worker's buffers; batch is the jobs being prepared into one exec.
	stolen []boundJob
	batch  []*boundJob
}

// New makes a SET scheduler with parameters p (DefaultParams is the
// paper's SET).
func New(p Params) (*SET, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	depth := p.depth()
	p.Depth = &depth
	return &SET{p: p, depth: depth, retargetCost: 20 * time.Nanosecond}, nil
}

// Name is Params.Name.
func (s *SET) Name() string { return s.p.Name() }

// Params returns the scheduler's parameters, Depth resolved.
func (s *SET) Params() Params { return s.p }

// Metrics reports the last Run (see Metrics.Map for the names).
func (s *SET) Metrics() map[string]float64 { return s.metrics.Map() }

// Prepare analyzes the jobs, allocates each worker's stream and private
// buffers, captures the job shape once per worker into a graph, instantiates
// it, and deals the jobs, bound to their workers' buffers, into the
// workers' queues.
func (s *SET) Prepare(h device.Host, in *workloads.Instance) error {
	if err := s.validateHooks(); err != nil {
		return err
	}
	js, err := analyze(in)
	if err != nil {
		return err
	}
	if err := s.validateStreamCopies(js); err != nil {
		return err
	}
	if err := s.validateBatched(js); err != nil {
		return err
	}
	s.js, s.bd, s.bufArgs = js, newBinder(js), js.bufferArgs()
	s.gaps = gapTimer{on: s.p.Gaps}
	if err := s.gaps.prepare(h, js.jobs()); err != nil {
		return err
	}
	s.free = h.NewQueue("set free workers")
	for w := 0; w < s.p.Workers; w++ {
		if err := s.addWorker(h, w); err != nil {
			return err
		}
	}
	if s.p.Copies == CopiesBatched {
		err = s.prepareBatched(h)
	} else {
		s.dealJobs()
		err = s.captureWorkers(h)
	}
	if err != nil {
		return err
	}
	if err := s.warmExecs(h); err != nil {
		return err
	}
	if s.p.Threaded {
		return s.startThreads(h)
	}
	return nil
}

// addWorker makes worker w: its stream, its private buffers (worker 0's
// under the shareSlots negative control) and its completion callback.
func (s *SET) addWorker(h device.Host, w int) error {
	wk := &worker{id: w, victim: (w + 1) % s.p.Workers}
	s.workers = append(s.workers, wk)
	var err error
	if wk.stream, err = h.NewStream(device.StreamOptions{}); err != nil {
		return fmt.Errorf("set: worker %d: %w", w, err)
	}
	if s.p.Threaded {
		wk.free = h.NewQueue(fmt.Sprintf("set worker %d free", w))
		wk.bd = newBinder(s.js)
	}
	if s.shareSlots && w > 0 {
		wk.slots = s.workers[0].slots
		wk.done = s.callback(wk)
		return nil
	}
	for i := range s.js.slotBytes {
		n := s.slotAlloc(i)
		b, err := h.Malloc(n)
		if err != nil {
			return fmt.Errorf("set: worker %d: private buffer %d (%d bytes): %w", w, i, n, err)
		}
		wk.slots = append(wk.slots, b)
	}
	wk.done = s.callback(wk)
	return nil
}

// dealJobs deals the jobs round-robin (or as dealTo says) into the
// workers' queues, bound to their worker's buffers.
func (s *SET) dealJobs() {
	per := (s.js.jobs() + s.p.Workers - 1) / s.p.Workers
	for _, wk := range s.workers {
		wk.queue = make([]boundJob, 0, per)
	}
	for j := 0; j < s.js.jobs(); j++ {
		wk := s.workers[j%s.p.Workers]
		if s.dealTo != nil {
			wk = s.workers[s.dealTo(j)]
		}
		wk.queue = append(wk.queue, boundJob{})
		s.bd.bind(j, wk.slots, &wk.queue[len(wk.queue)-1])
	}
	s.dealt()
}

// captureWorkers captures every worker's graph (or ring of graphs, or
// kernel graph) with the worker's first job, or any job: the nodes are
// updated before every launch.
func (s *SET) captureWorkers(h device.Host) error {
	for _, wk := range s.workers {
		first := boundJob{}
		s.bd.bind(0, wk.slots, &first)
		if len(wk.queue) > 0 {
			first = wk.queue[0]
		}
		var err error
		switch {
		case s.p.Copies == CopiesStream:
			err = s.prepareKernelGraph(h, wk, &first)
		case s.p.Ring > 0:
			err = s.prepareRing(h, wk, &first)
		default:
			wk.exec, err = s.capture(h, wk.stream, &first)
			wk.cur = boundJob{job: first.job, launches: append([]device.Launch(nil), first.launches...), copies: append([]device.Copy(nil), first.copies...)}
		}
		if err != nil {
			return fmt.Errorf("set: worker %d: %w", wk.id, err)
		}
	}
	return nil
}

// callback is worker wk's completion callback: it returns the worker to
// the free pool (the shared one, or the worker's own when Threaded).
func (s *SET) callback(wk *worker) func() {
	if s.p.Ring > 0 && !s.p.Threaded {
		s.ringCallbacks(wk)
		return wk.dones[1]
	}
	if s.p.Threaded {
		// dones[n] returns n slots.
		free := wk.free
		wk.dones = make([]func(), s.p.Coalesce+1)
		for n := 1; n <= s.p.Coalesce; n++ {
			wk.dones[n] = func() { free.Put(n) }
		}
		return wk.dones[1]
	}
	free, id := s.free, wk.id
	return func() { free.Put(id) }
}

// capture records one job's commands on st into a graph and instantiates it.
func (s *SET) capture(h device.Host, st device.Stream, job *boundJob) (device.GraphExec, error) {
	return s.captureJobs(h, st, []*boundJob{job})
}

// Cleanup releases the workers' graphs, streams and buffers.
func (s *SET) Cleanup(h device.Host) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, wk := range s.workers {
		if wk.exec != nil {
			keep(h.Destroy(wk.exec))
		}
		for _, sl := range wk.ring {
			for _, x := range sl.execs {
				if x != nil {
					keep(h.Destroy(x))
				}
			}
			if sl.stream != nil && sl.stream != wk.stream {
				keep(h.Destroy(sl.stream))
			}
		}
		if wk.stream != nil {
			keep(h.Destroy(wk.stream))
		}
		if s.shareSlots && wk.id > 0 {
			continue
		}
		for _, b := range wk.slots {
			keep(h.Free(b))
		}
	}
	if s.running {
		// The worker threads wait for a Run's signal: release them.
		for _, q := range s.start {
			q.Close()
		}
		for range s.workers {
			if v, ok := h.Get(s.doneQ); ok {
				if err, _ := v.(error); err != nil {
					keep(err)
				}
			}
		}
		s.running = false
	}
	keep(s.gaps.destroy(h))
	if s.free != nil {
		s.free.Close()
	}
	s.workers, s.free = nil, nil
	return first
}

// take returns the next job for worker wk: the front of its own queue, or
// else the back of the next non-empty peer queue in round-robin order,
// which the caller must retarget. ok is false when every queue is empty.
func (s *SET) take(wk *worker) (job *boundJob, stolen, ok bool) {
	if wk.head < len(wk.queue) {
		wk.head++
		return &wk.queue[wk.head-1], false, true
	}
	for i := 0; i < s.p.Workers; i++ {
		v := s.workers[wk.victim]
		wk.victim = (wk.victim + 1) % s.p.Workers
		if v == wk || v.head == len(v.queue) {
			continue
		}
		last := len(v.queue) - 1
		job = &v.queue[last]
		v.queue = v.queue[:last]
		return job, true, true
	}
	return nil, false, false
}

// dealt records the queues as dealt, for rearm.
func (s *SET) dealt() {
	for _, wk := range s.workers {
		wk.jobs = len(wk.queue)
	}
}

// rearm gives every worker its whole queue back, as Prepare dealt it, so
// that Run can run again (sched.Warm runs it once before the timed run).
// Jobs taken in a run are not changed: a stolen job is rebound into
// scratch.
func (s *SET) rearm() {
	for _, wk := range s.workers {
		wk.head, wk.queue = 0, wk.queue[:wk.jobs]
	}
}

// Run dispatches every job and returns when the last one has completed.
func (s *SET) Run(h device.Host, in *workloads.Instance) (err error) {
	if s.js == nil || s.js.in != in {
		if err := s.Prepare(h, in); err != nil {
			return errors.Join(err, s.Cleanup(h))
		}
		defer sched.JoinCleanup(h, s, &err)
	}
	s.rearm()
	if s.p.Threaded {
		return s.runThreaded(h)
	}
	if s.p.Ring > 0 {
		return s.runRing(h)
	}
	m := &s.metrics
	*m = Metrics{Jobs: s.js.jobs(), HostThreads: 1}
	start := h.Now()
	if err := s.gaps.begin(h, s.workers[0].stream); err != nil {
		return err
	}
	for d := 0; d < s.depth; d++ {
		for _, wk := range s.workers {
			s.free.Put(wk.id)
		}
	}
	// Every worker enters the pool Depth times at the start and once per
	// completed job, so Jobs+B*Depth takes from the pool see every job
	// complete.
	launched := 0
	var stolen boundJob
	for got := 0; got < m.Jobs+s.p.Workers*s.depth; got++ {
		t := h.Now()
		v, ok := h.Get(s.free)
		since(h, t, &m.Wait)
		if !ok {
			return fmt.Errorf("set: the free-worker pool closed with %d of %d jobs launched", launched, m.Jobs)
		}
		if launched == m.Jobs {
			continue // a completion after the last launch
		}
		wk := s.workers[v.(int)]
		job, steal, ok := s.take(wk)
		if !ok {
			return fmt.Errorf("set: worker %d found every queue empty with %d of %d jobs launched", wk.id, launched, m.Jobs)
		}
		if steal {
			t := h.Now()
			s.bd.bind(job.job, wk.slots, &stolen)
			h.Spend(s.stealCost())
			since(h, t, &m.Schedule)
			job = &stolen
			m.Steals++
		}
		if err := s.launch(h, wk, job, m, wk.done); err != nil {
			return fmt.Errorf("set: job %d on worker %d: %w", job.job, wk.id, err)
		}
		launched++
	}
	m.Makespan = h.Now() - start
	return s.gaps.finish(h, m)
}

// launch writes job's parameters into wk's graph (only the nodes that
// differ), launches it and enqueues the completion callback.
// done, if not nil, is enqueued behind the job as its completion callback.
func (s *SET) launch(h device.Host, wk *worker, job *boundJob, m *Metrics, done func()) error {
	if s.p.Copies == CopiesStream {
		return s.launchStreamCopies(h, wk, job, m, done)
	}
	if err := s.setNodes(h, wk.exec, &wk.cur, job, m); err != nil {
		return err
	}
	return s.graphLaunch(h, wk.stream, wk.exec, job.job, m, done)
}

// setNodes writes job's parameters into the nodes of x whose parameters
// (cur: what x's nodes hold now) differ, and records them in cur.
func (s *SET) setNodes(h device.Host, x device.GraphExec, cur, job *boundJob, m *Metrics) error {
	return s.setNodesAt(h, x, 0, cur, job, m)
}

// setNodesAt is setNodes for the job slot of x whose first node is base
// (a chain of several jobs' nodes, set_multi.go).
func (s *SET) setNodesAt(h device.Host, x device.GraphExec, base int, cur, job *boundJob, m *Metrics) error {
	in := s.js.in
	lo, _ := in.StepRange(job.job)
	defer m.scheduled(h, h.Now(), &m.UpdateTime)
	for k := 0; k < s.js.ops; k++ {
		if in.Op(lo+k).Kind == workloads.OpKernel {
			if sameLaunch(&cur.launches[k], &job.launches[k]) {
				m.NodeUpdatesSkipped++
				continue
			}
			if err := h.SetKernelNode(x, base+k, &job.launches[k]); err != nil {
				return err
			}
			cur.launches[k] = job.launches[k]
		} else {
			if sameCopy(&cur.copies[k], &job.copies[k]) {
				m.NodeUpdatesSkipped++
				continue
			}
			if err := h.SetCopyNode(x, base+k, &job.copies[k]); err != nil {
				return err
			}
			cur.copies[k] = job.copies[k]
		}
		m.NodeUpdates++
	}
	cur.job = job.job
	return nil
}

// graphLaunch launches x, which holds job j, on st (between the job's
// timing events when Gaps is on), then enqueues done behind it if done is
// not nil.
func (s *SET) graphLaunch(h device.Host, st device.Stream, x device.GraphExec, j int, m *Metrics, done func()) error {
	if err := s.gaps.jobStart(h, st, j); err != nil {
		return err
	}
	t := h.Now()
	if err := h.GraphLaunch(x, st); err != nil {
		return err
	}
	m.launched(h, t)
	if err := s.gaps.jobEnd(h, st, j); err != nil {
		return err
	}
	if done != nil {
		return m.hostFunc(h, st, done)
	}
	return nil
}
