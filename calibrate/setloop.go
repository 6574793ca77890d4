package calibrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
)

// "SET's job loop" (issue #18, session 20): SET's dispatcher is host-bound
// on the GPU at 15-17.5 us a job (sobel set-6, both GPUs) where the
// simulator charges 9.6-11.1, and its split of t_schedule (the scheduler
// stats graph_launch_ns_per_launch, node_update_ns_per_update,
// host_func_ns_per_call) puts the difference in the graph launch (7.6-9.3
// us on the H200 against 4.8 simulated) and the host function enqueue
// (4.1-6.1 against 2.8). This probe runs SET's per-job calls on a job
// graph of its shape (a 4 KiB pinned host-to-device copy, a spin kernel, a
// 4 KiB device-to-host copy, one exec per stream): update both copy nodes
// to the job's host slot, launch the exec, enqueue a host function that
// Puts the stream, and per Put the next job there, over 1-8 streams; and
// the same calls alone, the stream synchronized after each job. Each
// call's host time is kept apart, so the loop's calls compare with the
// lone ones: what costs more while the GPU runs other streams' jobs and
// the callback thread runs their host functions.
var slStreams = []int{1, 2, 4, 8}

const (
	slJobs       = 64   // jobs per loop
	slAloneSteps = 16   // jobs of the lone case
	slCopyBytes  = 4096 // each copy node's bytes
	slSlots      = 2    // host slots a stream's jobs alternate between
)

// slKernelUs are the job kernel's lengths: a host-bound loop (2 us) and a
// device-bound one at 8 streams (20 us).
var slKernelUs = []int{2, 20}

// slEnv is the probe's streams, their execs (one per kernel length) and
// what the copies move.
type slEnv struct {
	streams []device.Stream
	execs   map[int][]device.GraphExec // by kernel us, one per stream
	in, out []device.Buffer            // per stream
	host    *device.HostMem            // per stream, slSlots slots of input and output
	q       device.Queue
	puts    []func()
	slot    []int // the slot each stream's exec holds now
}

// slHostOff is stream i's slot j's offset in env.host: input then output.
func slHostOff(i, j int, output bool) int64 {
	off := int64(i*slSlots+j) * 2 * slCopyBytes
	if output {
		off += slCopyBytes
	}
	return off
}

func (e *slEnv) copyIn(i, j int) *device.Copy {
	return &device.Copy{Kind: device.HostToDevice, Dst: e.in[i], Host: e.host, HostOff: slHostOff(i, j, false), Bytes: slCopyBytes, Label: "set loop in"}
}

func (e *slEnv) copyOut(i, j int) *device.Copy {
	return &device.Copy{Kind: device.DeviceToHost, Src: e.out[i], Host: e.host, HostOff: slHostOff(i, j, true), Bytes: slCopyBytes, Label: "set loop out"}
}

func (c *calibrator) newSLEnv(h device.Host) (*slEnv, error) {
	maxN := slStreams[len(slStreams)-1]
	env := &slEnv{execs: map[int][]device.GraphExec{}, q: h.NewQueue("SET's job loop"), slot: make([]int, maxN)}
	var err error
	if env.host, err = h.AllocHost(int64(maxN*slSlots*2*slCopyBytes), true); err != nil {
		return nil, err
	}
	done, err := h.Malloc(4)
	if err != nil {
		return nil, err
	}
	for i := 0; i < maxN; i++ {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, err
		}
		env.streams = append(env.streams, s)
		env.puts = append(env.puts, func() { env.q.Put(i) })
		for _, bufs := range []*[]device.Buffer{&env.in, &env.out} {
			b, err := h.Malloc(slCopyBytes)
			if err != nil {
				return nil, err
			}
			*bufs = append(*bufs, b)
		}
	}
	for _, kus := range slKernelUs {
		job := c.spinLaunch(us(kus), done)
		for i, s := range env.streams {
			x, err := c.instantiate(h, s, func() error {
				if err := h.Copy(s, env.copyIn(i, 0)); err != nil {
					return err
				}
				if err := h.Launch(s, job); err != nil {
					return err
				}
				return h.Copy(s, env.copyOut(i, 0))
			})
			if err != nil {
				return nil, err
			}
			env.execs[kus] = append(env.execs[kus], x)
		}
	}
	return env, nil
}

// slCalls is one round's host time in each call and the counts.
type slCalls struct {
	update, launch, hostFunc time.Duration
	updates, jobs            int
	wall, wait               time.Duration
}

// job issues one job on stream i of execs: both copy nodes to the
// stream's next slot, the launch, and (put true) the host function.
func (e *slEnv) job(h device.Host, execs []device.GraphExec, i int, put bool, k *slCalls) error {
	x, s := execs[i], e.streams[i]
	j := (e.slot[i] + 1) % slSlots
	t0 := h.Now()
	if err := h.SetCopyNode(x, 0, e.copyIn(i, j)); err != nil {
		return err
	}
	if err := h.SetCopyNode(x, 2, e.copyOut(i, j)); err != nil {
		return err
	}
	e.slot[i] = j
	t1 := h.Now()
	if err := h.GraphLaunch(x, s); err != nil {
		return err
	}
	t2 := h.Now()
	k.update += t1 - t0
	k.launch += t2 - t1
	k.updates += 2
	k.jobs++
	if !put {
		return nil
	}
	if err := h.HostFunc(s, e.puts[i]); err != nil {
		return err
	}
	k.hostFunc += h.Now() - t2
	return nil
}

// loopRound runs slJobs jobs over n streams as SET's dispatcher does.
func (e *slEnv) loopRound(h device.Host, execs []device.GraphExec, n int) (slCalls, error) {
	var k slCalls
	start := h.Now()
	next := 0
	for ; next < n; next++ {
		if err := e.job(h, execs, next, true, &k); err != nil {
			return k, err
		}
	}
	for done := 0; done < slJobs; done++ {
		t := h.Now()
		v, ok := h.Get(e.q)
		if !ok {
			return k, errors.New("SET's job loop: queue closed")
		}
		k.wait += h.Now() - t
		if next < slJobs {
			if err := e.job(h, execs, v.(int), true, &k); err != nil {
				return k, err
			}
			next++
		}
	}
	k.wall = h.Now() - start
	return k, nil
}

// slAlone is how the lone case waits for each job before the next: for
// its host function's Put (Get) and the stream, then the next job at once
// (woken: as SET's dispatcher, right behind the callback that woke it);
// the same and then 50 us of the host's own time (settled: the driver's
// callback thread long done); or with no host function, for the stream
// alone (no callback).
type slAlone int

const (
	slWoken slAlone = iota
	slSettled
	slNoCallback
)

func (a slAlone) String() string {
	return [...]string{"alone", "alone, settled", "alone, no host function"}[a]
}

func (a slAlone) method() string {
	return [...]string{
		"each waited for (Get, stream synchronize) before the next",
		"each waited for (Get, stream synchronize), then 50 us of host time, before the next",
		"without the host function, each waited for (stream synchronize) before the next",
	}[a]
}

// aloneRound runs slAloneSteps jobs on stream 0, waiting for each as a
// says before the next.
func (e *slEnv) aloneRound(h device.Host, execs []device.GraphExec, a slAlone) (slCalls, error) {
	var k slCalls
	for step := 0; step < slAloneSteps; step++ {
		if err := e.job(h, execs, 0, a != slNoCallback, &k); err != nil {
			return k, err
		}
		if a != slNoCallback {
			if _, ok := h.Get(e.q); !ok {
				return k, errors.New("SET's job loop: queue closed")
			}
		}
		if err := h.StreamSynchronize(e.streams[0]); err != nil {
			return k, err
		}
		if a == slSettled {
			// The host's own time: a spin on the clock (Spend advances
			// the simulator's; on a GPU it is a no-op).
			for t := h.Now(); h.Now()-t < 50*time.Microsecond; {
				h.Spend(time.Microsecond)
			}
		}
	}
	return k, nil
}

// setJobLoop measures the loop and the lone jobs at each kernel length
// (reported, no config field: the figures compare with the simulator's
// own run of the probe).
func (c *calibrator) setJobLoop(h device.Host) error {
	env, err := c.newSLEnv(h)
	if err != nil {
		return err
	}
	const calls = "Host.Now around each call; per job: update both copy nodes (cuGraphExecMemcpyNodeSetParams) to the stream's other host slot, cuGraphLaunch of a graph of a 4 KiB pinned copy in, a spin kernel, a 4 KiB copy out, cuLaunchHostFunc that Puts the stream"
	for _, kus := range slKernelUs {
		execs := env.execs[kus]
		type slCase struct {
			what, method string
			round        func() (slCalls, error)
		}
		var cases []slCase
		for _, a := range []slAlone{slWoken, slSettled, slNoCallback} {
			cases = append(cases, slCase{
				what:   fmt.Sprintf("SET's job loop %s, %d us kernel", a, kus),
				method: calls + fmt.Sprintf("; %d jobs on one stream, %s", slAloneSteps, a.method()),
				round:  func() (slCalls, error) { return env.aloneRound(h, execs, a) },
			})
		}
		for _, n := range slStreams {
			cases = append(cases, slCase{
				what:   fmt.Sprintf("SET's job loop, %d streams, %d us kernel", n, kus),
				method: calls + fmt.Sprintf("; SET's dispatcher over %d streams: %d jobs, per Put the next job on that stream", n, slJobs),
				round:  func() (slCalls, error) { return env.loopRound(h, execs, n) },
			})
		}
		for _, k := range cases {
			var rounds []slCalls
			if err := c.warmRounds(func(measured bool) error {
				r, err := k.round()
				if measured {
					rounds = append(rounds, r)
				}
				return err
			}); err != nil {
				return fmt.Errorf("%s: %w", k.what, err)
			}
			perJob := func(f func(slCalls) time.Duration) []float64 {
				return pick(rounds, func(r slCalls) float64 { return ns(f(r)) / float64(r.jobs) })
			}
			c.record(k.what+": launch", "", "ns", k.method+": cuGraphLaunch, mean per job", perJob(func(r slCalls) time.Duration { return r.launch }))
			c.record(k.what+": update per node", "", "ns", k.method+": a copy node's update, mean",
				pick(rounds, func(r slCalls) float64 { return ns(r.update) / float64(r.updates) }))
			if rounds[0].hostFunc > 0 {
				c.record(k.what+": host function", "", "ns", k.method+": cuLaunchHostFunc, mean per job", perJob(func(r slCalls) time.Duration { return r.hostFunc }))
			}
			if rounds[0].wall > 0 {
				c.record(k.what+": per job", "", "ns", k.method+": the loop's wall time per job", perJob(func(r slCalls) time.Duration { return r.wall }))
				c.record(k.what+": Get share", "", "", k.method+": the share of the loop's wall time in Get",
					pick(rounds, func(r slCalls) float64 { return ns(r.wait) / ns(r.wall) }))
			}
		}
	}
	for _, execs := range env.execs {
		for _, x := range execs {
			if err := h.Destroy(x); err != nil {
				return err
			}
		}
	}
	if err := c.setJobShapes(h, env); err != nil {
		return err
	}
	return h.Synchronize()
}

// slShape is a job graph of SET's kinds of nodes, in capture order on one
// stream: 'i' a copy in, 'k' the 2 us spin kernel, 'o' a copy out, and
// "<n>" n spin kernels side by side on other streams, forked from the
// stream and joined back to it (SET-batch's chunks and DAG graphs fan out
// from and into their copies).
type slShape string

var slShapes = []slShape{"k", "i", "o", "ik", "ko", "io", "iko", "ikko", "iikoo", "k<8>", "i<8>", "<8>o", "i<8>o", "k<8>k",
	// Wider fans: how a launch grows with a copy's edges past SET's jobs
	// and SET-batch's chunks (the tournament's whole-workload graphs and
	// the random DAGs' uploads have hundreds).
	"k<16>", "i<16>", "i<16>o", "k<32>", "i<32>", "i<32>o", "k<64>", "i<64>", "i<64>o"}

// slItem is a node of a shape: its kind, and for "<n>" how many kernels.
type slItem struct {
	kind byte
	fork int
}

// items parses a shape (the probe's own constants: no error to report).
func (s slShape) items() []slItem {
	var out []slItem
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			out = append(out, slItem{kind: s[i]})
			continue
		}
		j := i + 1
		n := 0
		for ; s[j] != '>'; j++ {
			n = 10*n + int(s[j]-'0')
		}
		out = append(out, slItem{kind: 'k', fork: n})
		i = j
	}
	return out
}

// setJobShapes times the launch of job graphs of each shape (which of
// SET's node kinds, how many, where copies meet kernels), with and without
// every copy node updated before it, and the host function after it, each
// alone (the stream synchronized between steps), beside a host function
// on an idle stream: what a copy-kernel-copy job's 7.5-8.7 us launch is
// made of.
func (c *calibrator) setJobShapes(h device.Host, env *slEnv) error {
	se, err := c.newShapeEnv(h, env)
	if err != nil {
		return err
	}
	alone, err := c.idleHostFuncs(h, se.s)
	if err != nil {
		return err
	}
	c.record("SET's job shapes: host function on an idle stream", "", "ns", fmt.Sprintf("Host.Now around cuLaunchHostFunc of a no-op on a synchronized stream, mean of %d", slAloneSteps), alone)
	for _, shape := range slShapes {
		if err := c.timeShape(h, se, shape); err != nil {
			return fmt.Errorf("SET's job shapes %s: %w", shape, err)
		}
	}
	return se.destroy(h)
}

// shapeEnv is what the job shapes are captured with: the job's stream,
// the side streams and events of the fans, the 2 us spin kernel.
type shapeEnv struct {
	env   *slEnv
	s     device.Stream
	sides []device.Stream
	fork  device.Event
	join  device.Event
	done  device.Buffer
	spin  *device.Launch
}

func (c *calibrator) newShapeEnv(h device.Host, env *slEnv) (*shapeEnv, error) {
	const maxFork = 64
	se := &shapeEnv{env: env, s: env.streams[0]}
	var err error
	if se.done, err = h.Malloc(4); err != nil {
		return nil, err
	}
	se.spin = c.spinLaunch(us(2), se.done)
	if se.fork, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
		return nil, err
	}
	if se.join, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
		return nil, err
	}
	for range maxFork {
		side, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, err
		}
		se.sides = append(se.sides, side)
	}
	return se, nil
}

func (se *shapeEnv) destroy(h device.Host) error {
	for _, e := range []device.Event{se.fork, se.join} {
		if err := h.Destroy(e); err != nil {
			return err
		}
	}
	if err := sched.DestroyStreams(h, se.sides); err != nil {
		return err
	}
	return h.Free(se.done)
}

// idleHostFuncs times cuLaunchHostFunc of a no-op on s, synchronized
// after each: the mean per round.
func (c *calibrator) idleHostFuncs(h device.Host, s device.Stream) ([]float64, error) {
	var out []float64
	err := c.warmRounds(func(measured bool) error {
		var d time.Duration
		for step := 0; step < slAloneSteps; step++ {
			t := h.Now()
			if err := h.HostFunc(s, func() {}); err != nil {
				return err
			}
			d += h.Now() - t
			if err := h.StreamSynchronize(s); err != nil {
				return err
			}
		}
		if measured {
			out = append(out, ns(d)/slAloneSteps)
		}
		return nil
	})
	return out, err
}

// shapeCopy is a copy node of a shape's exec and its copy by host slot.
type shapeCopy struct {
	node int
	at   func(slot int) *device.Copy
}

// copiesOf is a shape's copy nodes in capture order: each copy in or out
// uses its own buffer (stream k's for its k-th copy in), its host side
// alternating between the stream's two slots.
func (se *shapeEnv) copiesOf(items []slItem) []shapeCopy {
	var copies []shapeCopy
	node, ins, outs := 0, 0, 0
	for _, it := range items {
		switch it.kind {
		case 'i':
			k := ins
			copies = append(copies, shapeCopy{node, func(slot int) *device.Copy { return se.env.copyIn(k, slot) }})
			ins++
		case 'o':
			k := outs
			copies = append(copies, shapeCopy{node, func(slot int) *device.Copy { return se.env.copyOut(k, slot) }})
			outs++
		}
		node += max(1, it.fork)
	}
	return copies
}

// capture issues a shape's nodes on the job's stream (copies at slot 0).
func (se *shapeEnv) capture(h device.Host, items []slItem, copies []shapeCopy) func() error {
	return func() error {
		ci := 0
		for _, it := range items {
			var err error
			switch {
			case it.fork > 0:
				err = fanOut(h, se.s, se.sides[:it.fork], se.fork, se.join, se.spin)
			case it.kind == 'k':
				err = h.Launch(se.s, se.spin)
			default:
				err = h.Copy(se.s, copies[ci].at(0))
				ci++
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// timeShape captures shape, launches it alone 2 x slAloneSteps times a
// round (every other launch after its copies' updates), and records the
// launches and the host functions behind them.
func (c *calibrator) timeShape(h device.Host, se *shapeEnv, shape slShape) error {
	items := shape.items()
	copies := se.copiesOf(items)
	x, err := c.instantiate(h, se.s, se.capture(h, items, copies))
	if err != nil {
		return err
	}
	var plain, updated, hostFunc []float64
	slot := 0
	if err := c.warmRounds(func(measured bool) error {
		var dp, du, dh time.Duration
		for step := 0; step < 2*slAloneSteps; step++ {
			update := step%2 == 1
			if update {
				slot = 1 - slot
				for _, cn := range copies {
					if err := h.SetCopyNode(x, cn.node, cn.at(slot)); err != nil {
						return err
					}
				}
			}
			t := h.Now()
			if err := h.GraphLaunch(x, se.s); err != nil {
				return err
			}
			t1 := h.Now()
			if err := h.HostFunc(se.s, func() {}); err != nil {
				return err
			}
			dh += h.Now() - t1
			if update {
				du += t1 - t
			} else {
				dp += t1 - t
			}
			if err := h.StreamSynchronize(se.s); err != nil {
				return err
			}
		}
		if measured {
			plain = append(plain, ns(dp)/slAloneSteps)
			updated = append(updated, ns(du)/slAloneSteps)
			hostFunc = append(hostFunc, ns(dh)/(2*slAloneSteps))
		}
		return nil
	}); err != nil {
		return err
	}
	method := fmt.Sprintf("Host.Now around cuGraphLaunch of a graph captured on one stream (i: 4 KiB pinned copy in, k: 2 us spin kernel, o: 4 KiB copy out, <n>: n spin kernels on other streams forked from it and joined back) %q, then cuLaunchHostFunc of a no-op, the stream synchronized; %d steps, every other one after updating every copy node to another host slot", shape, 2*slAloneSteps)
	what := fmt.Sprintf("SET's job shapes: %s", shape)
	c.record(what+": launch", "", "ns", method+": launches without updates, mean", plain)
	c.record(what+": launch after copy updates", "", "ns", method+": launches after the updates, mean", updated)
	c.record(what+": host function after the launch", "", "ns", method+": the host function, mean", hostFunc)
	return h.Destroy(x)
}

// fanOut issues one launch of l on each of sides (none on s: forkJoin
// also launches on s), forked from s and joined back to it.
func fanOut(h device.Host, s device.Stream, sides []device.Stream, fork, join device.Event, l *device.Launch) error {
	if err := h.Record(fork, s); err != nil {
		return err
	}
	return sideLaunches(h, s, sides, fork, join, l)
}
