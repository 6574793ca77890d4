package pipeline

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

func newBatchSET(t *testing.T, b, ring, perLaunch int, threaded bool) *SET {
	t.Helper()
	return newSET(t, batchParams(b, ring, perLaunch, threaded))
}

// batchParams is SET-batch: a ring of ring execs, chunks of perLaunch jobs.
func batchParams(b, ring, perLaunch int, threaded bool) Params {
	return with(multiParams(b, ring, ring, 1, perLaunch, threaded), func(p *Params) { p.Copies = CopiesBatched })
}

// batchTracker wraps a Host (and the hosts of the threads it starts) and
// follows the graphs a scheduler captures, instantiates, updates and
// launches: which commands every captured graph holds, and, at every graph
// launch, which jobs' host slots the exec's copy nodes cover then. The
// simulator moves no data, so this is how the tests see that the coalesced
// copies of every launch cover exactly its chunk's jobs, and every job is
// copied in and out exactly once.
type batchTracker struct {
	device.Host
	st *trackState
}

type trackNode struct {
	copy   bool
	c      device.Copy
	kernel string
	stream device.Stream // where it was captured
}

// trackedGraph is what one captured graph holds: its copies, its kernel
// launches, and how many kernels each capturing stream got, in the order
// the streams first launched one.
type trackedGraph struct {
	copies, launches int
	perStream        []int
}

type trackState struct {
	mu        sync.Mutex
	capturing []trackNode
	graphs    map[device.Graph][]trackNode
	execs     map[device.GraphExec][]trackNode
	captured  []trackedGraph
	// first and last map a host copy's (direction, host offset) and
	// (direction, host end) to the job whose slot starts or ends there.
	first, last map[[2]int64]int
	kernels     int // kernel operations per job
	// in and out count, per job, the launches that copied its input in
	// and its output out.
	in, out                    []int
	launches                   int
	copyUpdates, kernelUpdates int
	problems                   []string
	capturingNow               bool
}

func newTracker(h device.Host, p *workloads.Program) *batchTracker {
	st := &trackState{graphs: map[device.Graph][]trackNode{}, execs: map[device.GraphExec][]trackNode{},
		first: map[[2]int64]int{}, last: map[[2]int64]int{}, in: make([]int, len(p.Steps)), out: make([]int, len(p.Steps))}
	for j, step := range p.Steps {
		for _, op := range step.Ops {
			if op.Kind == workloads.OpKernel {
				if j == 0 {
					st.kernels++
				}
				continue
			}
			if c := op.Copy; c.Kind != device.DeviceToDevice {
				st.first[[2]int64{int64(c.Kind), c.HostOff}] = j
				st.last[[2]int64{int64(c.Kind), c.HostOff + c.Bytes}] = j
			}
		}
	}
	return &batchTracker{Host: h, st: st}
}

func (b *batchTracker) Go(name string, fn func(h device.Host) error) {
	b.Host.Go(name, func(h device.Host) error { return fn(&batchTracker{Host: h, st: b.st}) })
}

func (b *batchTracker) BeginCapture(s device.Stream) error {
	b.st.mu.Lock()
	b.st.capturingNow, b.st.capturing = true, nil
	b.st.mu.Unlock()
	return b.Host.BeginCapture(s)
}

func (b *batchTracker) Copy(s device.Stream, c *device.Copy) error {
	b.st.mu.Lock()
	if b.st.capturingNow {
		b.st.capturing = append(b.st.capturing, trackNode{copy: true, c: *c})
	}
	b.st.mu.Unlock()
	return b.Host.Copy(s, c)
}

func (b *batchTracker) Launch(s device.Stream, l *device.Launch) error {
	b.st.mu.Lock()
	if b.st.capturingNow {
		b.st.capturing = append(b.st.capturing, trackNode{kernel: l.Name(), stream: s})
	}
	b.st.mu.Unlock()
	return b.Host.Launch(s, l)
}

func (b *batchTracker) EndCapture(s device.Stream) (device.Graph, error) {
	g, err := b.Host.EndCapture(s)
	st := b.st
	st.mu.Lock()
	defer st.mu.Unlock()
	st.capturingNow = false
	if err == nil {
		st.graphs[g] = st.capturing
		var tg trackedGraph
		branch := map[device.Stream]int{}
		for _, n := range st.capturing {
			if n.copy {
				tg.copies++
				continue
			}
			tg.launches++
			i, ok := branch[n.stream]
			if !ok {
				i = len(tg.perStream)
				branch[n.stream] = i
				tg.perStream = append(tg.perStream, 0)
			}
			tg.perStream[i]++
		}
		st.captured = append(st.captured, tg)
	}
	return g, err
}

func (b *batchTracker) Instantiate(g device.Graph) (device.GraphExec, error) {
	x, err := b.Host.Instantiate(g)
	if err == nil {
		b.st.mu.Lock()
		b.st.execs[x] = append([]trackNode(nil), b.st.graphs[g]...)
		b.st.mu.Unlock()
	}
	return x, err
}

func (b *batchTracker) SetCopyNode(x device.GraphExec, node int, c *device.Copy) error {
	st := b.st
	st.mu.Lock()
	st.copyUpdates++
	if nodes := st.execs[x]; node < len(nodes) && nodes[node].copy {
		nodes[node].c = *c
	} else {
		st.problems = append(st.problems, fmt.Sprintf("copy update of node %d, not a copy node", node))
	}
	st.mu.Unlock()
	return b.Host.SetCopyNode(x, node, c)
}

func (b *batchTracker) SetKernelNode(x device.GraphExec, node int, l *device.Launch) error {
	b.st.mu.Lock()
	b.st.kernelUpdates++
	b.st.mu.Unlock()
	return b.Host.SetKernelNode(x, node, l)
}

// GraphLaunch finds the jobs each copy node of x covers now and checks
// that they are as many as x has job slots.
func (b *batchTracker) GraphLaunch(x device.GraphExec, s device.Stream) error {
	st := b.st
	st.mu.Lock()
	st.launches++
	nodes := st.execs[x]
	slots := 0
	for _, n := range nodes {
		if !n.copy {
			slots++
		}
	}
	slots /= st.kernels
	for _, n := range nodes {
		if !n.copy || n.c.Kind == device.DeviceToDevice {
			continue
		}
		kind := int64(n.c.Kind)
		lo, ok1 := st.first[[2]int64{kind, n.c.HostOff}]
		hi, ok2 := st.last[[2]int64{kind, n.c.HostOff + n.c.Bytes}]
		if !ok1 || !ok2 || hi-lo+1 != slots {
			st.problems = append(st.problems, fmt.Sprintf("a launch of %d job slots copies %s host range [%d, %d), which is not jobs %d to %d (%v %v)",
				slots, n.c.Kind, n.c.HostOff, n.c.HostOff+n.c.Bytes, lo, hi, ok1, ok2))
			continue
		}
		count := st.in
		if n.c.Kind == device.DeviceToHost {
			count = st.out
		}
		for j := lo; j <= hi; j++ {
			count[j]++
		}
	}
	st.mu.Unlock()
	return b.Host.GraphLaunch(x, s)
}

// runTracked runs s as runOn does, with its host calls seen by a
// batchTracker over an inFlightGuard.
func runTracked(t *testing.T, p *workloads.Program, s *SET) (map[string]float64, []device.Race, *trackState, *guardState) {
	t.Helper()
	var tr *batchTracker
	var g *inFlightGuard
	m, races := runWrapped(t, p, s, func(h device.Host) device.Host {
		g = newGuard(h)
		tr = newTracker(g, p)
		return tr
	})
	return m, races, tr.st, g.st
}

// assertEveryJobOnce checks that every job was copied in and out by
// exactly one launch.
func assertEveryJobOnce(t *testing.T, tr *trackState) {
	t.Helper()
	assert.Empty(t, tr.problems)
	for j := range tr.in {
		assert.Equal(t, 1, tr.in[j], "job %d copied in by one launch", j)
		assert.Equal(t, 1, tr.out[j], "job %d copied out by one launch", j)
	}
}

func TestSETBatchedRunsEveryWorkloadWithoutRaces(t *testing.T) {
	const n = 29 // a short tail chunk for every J below
	for _, w := range testWorkloads(t, n) {
		perChunk := float64(hostCopies(w.Program))
		for _, b := range raceCases([]int{1, 2, 3}) {
			for _, J := range raceCases([]int{2, 4, 8}) {
				for _, unbalanced := range []bool{false, true} {
					if unbalanced && b == 1 {
						continue
					}
					s := newBatchSET(t, b, 2, J, true)
					name := w.Program.Name + "/" + s.Name()
					if unbalanced {
						// Every chunk dealt to worker 0: the others steal.
						s.dealTo, name = func(int) int { return 0 }, name+"/all to worker 0"
					}
					t.Run(name, func(t *testing.T) {
						m, races, tr, g := runTracked(t, w.Program, s)
						if unbalanced {
							assert.Positive(t, m["steals"], "idle workers take whole chunks from worker 0")
						}
						assert.Empty(t, races, "a chunk's slots are disjoint ranges of the worker's batch buffers, chunks in them in stream order")
						assert.Empty(t, g.inFlight, "chunks are prepared into completed execs only")
						assertEveryJobOnce(t, tr)
						chunks := (n + J - 1) / J
						assert.Equal(t, chunks, tr.launches, "one graph launch per chunk")
						assert.Zero(t, tr.kernelUpdates, "the kernel nodes never change")
						assert.Equal(t, float64(tr.copyUpdates), m["node_updates"], "Metrics counts every update")
						assert.LessOrEqual(t, m["node_updates"], float64(chunks)*perChunk, "at most the host copies' nodes per dispatch")
						assert.Equal(t, float64(chunks)*perChunk, m["node_updates"]+m["node_updates_skipped"], "every copy node checked once per dispatch")
						assert.Equal(t, float64(n), m["jobs"])
						assert.Zero(t, m["syncs"])
						assert.Positive(t, m["t_schedule_s"])
						assert.Greater(t, m["schedule_share"], 0.0)
						assert.LessOrEqual(t, m["schedule_share"], 1.0)
					})
				}
			}
		}
	}
}

// TestSETBatched32JobsPerLaunch: the largest chunks (J 32, 70 jobs: two
// full chunks and a tail of 6) on every workload, balanced and with every
// chunk dealt to worker 0, one dispatcher and threaded, with and without
// the warm-up.
func TestSETBatched32JobsPerLaunch(t *testing.T) {
	const n, J = 70, 32
	for _, w := range testWorkloads(t, n) {
		perChunk := float64(hostCopies(w.Program))
		for _, b := range raceCases([]int{3, 2}) {
			for _, threaded := range []bool{false, true} {
				for _, unbalanced := range []bool{false, true} {
					s := newBatchSET(t, b, 2, J, threaded)
					s.p.Warm = unbalanced // the warm-up on half the cases
					name := w.Program.Name + "/" + s.Name()
					if unbalanced {
						s.dealTo, name = func(int) int { return 0 }, name+"/all to worker 0"
					}
					t.Run(name, func(t *testing.T) {
						m, races, tr, g := runTracked(t, w.Program, s)
						assert.Empty(t, races)
						assert.Empty(t, g.inFlight)
						assert.Empty(t, tr.problems)
						chunks := (n + J - 1) / J
						warm := 0
						if s.p.Warm {
							warm = b * 2 * J
						}
						assert.Equal(t, chunks+warm, tr.launches, "one graph launch per chunk (and one warm-up per exec)")
						if !s.p.Warm {
							assertEveryJobOnce(t, tr)
						}
						if unbalanced {
							assert.Positive(t, m["steals"])
						}
						assert.Equal(t, float64(chunks)*perChunk, m["node_updates"]+m["node_updates_skipped"])
						assert.Equal(t, float64(n), m["jobs"])
						assert.Len(t, tr.captured, b*2*J, "b x ring x J execs")
					})
				}
			}
		}
	}
}

// TestSETBatchedBranches: with Branches k, a chunk of n jobs is captured on
// min(k, n) side streams, slots dealt in contiguous runs (so the branches'
// kernel counts differ by at most one job's), and runs race-free, every
// job copied in and out once, with and without steals.
func TestSETBatchedBranches(t *testing.T) {
	const n, J = 30, 4 // chunks of 4 and a tail of 2
	w, err := jobs.Hotspot(jobs.HotspotParams{Jobs: n, Size: 256, Iterations: 4}, 1)
	require.NoError(t, err)
	kernels := len(w.Program.Steps[0].Ops) - 2
	for _, k := range []int{1, 2, 3, 4} {
		for _, unbalanced := range []bool{false, true} {
			s := newBatchSET(t, 3, 2, J, false)
			s.p.Branches = k
			name := s.Name()
			if unbalanced {
				s.dealTo, name = func(int) int { return 0 }, name+"/all to worker 0"
			}
			t.Run(name, func(t *testing.T) {
				m, races, tr, g := runTracked(t, w.Program, s)
				assert.Empty(t, races, "a branch's slots run in order, branches over disjoint slot ranges")
				assert.Empty(t, g.inFlight)
				assertEveryJobOnce(t, tr)
				assert.Equal(t, (n+J-1)/J, tr.launches)
				if unbalanced {
					assert.Positive(t, m["steals"])
				}
				require.Len(t, tr.captured, 3*2*J)
				for i, c := range tr.captured {
					slots := i%J + 1 // captured for chunk lengths 1..J in turn
					want := make([]int, min(k, slots))
					for b := range want {
						want[b] = ((b+1)*slots/len(want) - b*slots/len(want)) * kernels
					}
					assert.Equal(t, want, c.perStream, "a chunk of %d jobs over %d branches", slots, k)
				}
			})
		}
	}
	assert.Equal(t, "set(b=3,depth=2,ring=2,jobs=4,copies=batched,branches=1)", func() string {
		s := newBatchSET(t, 3, 2, J, false)
		s.p.Branches = 1
		return s.Name()
	}())
}

func TestSETBatchedStealsWholeChunks(t *testing.T) {
	tests := []struct {
		name             string
		jobs, b, ring, J int
		coalesce         int
		threaded, gaps   bool
		dealTo           func(c int) int
		wantSteals       bool
	}{
		{name: "threaded, all to worker 0", jobs: 30, b: 3, ring: 2, J: 4, coalesce: 1, threaded: true, dealTo: func(int) int { return 0 }, wantSteals: true},
		{name: "threaded, most to the last worker, coalesce 2", jobs: 37, b: 3, ring: 2, J: 3, coalesce: 2, threaded: true, dealTo: func(c int) int { return min(c%4, 2) }, wantSteals: true},
		{name: "threaded, all to worker 1, gaps", jobs: 29, b: 2, ring: 3, J: 8, coalesce: 1, threaded: true, gaps: true, dealTo: func(int) int { return 1 }, wantSteals: true},
		{name: "dispatcher, all to worker 0", jobs: 30, b: 4, ring: 2, J: 4, coalesce: 1, dealTo: func(int) int { return 0 }, wantSteals: true},
		{name: "dispatcher, ring 3, coalesce 2, most to the last worker", jobs: 29, b: 3, ring: 3, J: 2, coalesce: 2, dealTo: func(c int) int { return min(c%4, 2) }, wantSteals: true},
		{name: "dispatcher, round-robin", jobs: 37, b: 3, ring: 1, J: 4, coalesce: 1},
	}
	for _, tt := range raceCases(tests) {
		t.Run(tt.name, func(t *testing.T) {
			w, err := jobs.Hotspot(jobs.HotspotParams{Jobs: tt.jobs, Size: 256, Iterations: 4}, 1)
			require.NoError(t, err)
			s := newSET(t, with(batchParams(tt.b, tt.ring, tt.J, tt.threaded), func(p *Params) { p.Coalesce, p.Gaps = tt.coalesce, tt.gaps }))
			s.dealTo = tt.dealTo
			m, races, tr, g := runTracked(t, w.Program, s)
			assert.Empty(t, races, "stolen chunks run in the thief's batch buffers")
			assert.Empty(t, g.inFlight)
			assertEveryJobOnce(t, tr)
			assert.Equal(t, (tt.jobs+tt.J-1)/tt.J, tr.launches, "a chunk is stolen whole, never split")
			if tt.wantSteals {
				assert.Positive(t, m["steals"], "idle workers take queued chunks from a peer")
			}
			if tt.gaps {
				assert.Positive(t, m["t_ideal_s"], "every job's span was recorded")
			}
		})
	}
}

// TestSETBatchedExecShape: every exec holds one coalesced copy per host
// copy of the job (two for these jobs) and the kernels of its n slots;
// Ring positions x J chunk lengths per worker.
func TestSETBatchedExecShape(t *testing.T) {
	w, err := jobs.SSSP(jobs.SSSPParams{Jobs: 32, Vertices: 1024, Degree: 4, Iterations: 4}, 1)
	require.NoError(t, err)
	kernels := len(w.Program.Steps[0].Ops) - 2
	require.Equal(t, 2, hostCopies(w.Program))
	s := newBatchSET(t, 4, 2, 4, false)
	m, races, tr, _ := runTracked(t, w.Program, s)
	require.Empty(t, races)
	require.Len(t, tr.captured, 4*2*4, "b x ring x J execs")
	for i, g := range tr.captured {
		n := i%4 + 1 // captured for chunk lengths 1..J in turn
		assert.Equal(t, 2, g.copies, "one coalesced copy in and one out for a chunk of %d jobs", n)
		assert.Equal(t, n*kernels, g.launches, "every slot's kernels")
	}
	// 8 chunks of 4, two per worker, nobody steals with one dispatcher:
	// each worker's first chunk runs in the exec captured with it, its
	// second updates the exec of the other ring position's two copy nodes.
	require.Zero(t, m["steals"])
	assert.Equal(t, 8, tr.launches)
	assert.Equal(t, 4*2.0, m["node_updates"])
	assert.Equal(t, 4*2.0, m["node_updates_skipped"])
}

// TestRaceCheckerCatchesUnsafeBatches: a worker's chunks are safe in its
// batch buffers only because its execs run in its one stream's order, and
// workers only because each has its own buffers.
func TestRaceCheckerCatchesUnsafeBatches(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 48, Size: 512}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		_, races := runOn(t, w.Program, newBatchSET(t, 2, 2, 4, threaded))
		require.Empty(t, races, "threaded=%v: one stream per worker, private batch buffers: no races", threaded)
		s := newBatchSET(t, 2, 2, 4, threaded)
		s.streamPerExec = true
		_, races = runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: execs on their own streams race on the worker's batch buffers", threaded)
		s = newBatchSET(t, 4, 2, 4, threaded)
		s.shareSlots = true
		_, races = runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: workers sharing batch buffers race", threaded)
	}
}

// stridedProgram is a hand-built pipeline of n jobs (copy in, one kernel,
// copy out), job j's host slots at hostOff(j) in both host buffers.
func stridedProgram(n int, hostOff func(j int) int64, mutate func(p *workloads.Program)) *workloads.Program {
	k := &device.Kernel{Module: "jobs", Name: "sobel", Regs: 16}
	p := &workloads.Program{Name: "hand", Host: []workloads.HostSpec{{Name: "in", Bytes: int64(n) * 512, Pinned: true}, {Name: "out", Bytes: int64(n) * 512, Pinned: true, Output: true}}}
	p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: "const", Bytes: 64, Init: func([]byte) {}})
	for j := 0; j < n; j++ {
		in := len(p.Buffers)
		p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: fmt.Sprintf("in%d", j), Bytes: 256}, workloads.BufferSpec{Name: fmt.Sprintf("out%d", j), Bytes: 256})
		p.Steps = append(p.Steps, workloads.Step{Ops: []workloads.Op{
			{Name: fmt.Sprintf("in%d", j), Kind: workloads.OpCopy, Copy: workloads.CopySpec{Kind: device.HostToDevice, Dst: in, Host: 0, HostOff: hostOff(j), Bytes: 256}},
			{Name: "k", Kind: workloads.OpKernel, Kernel: k, Grid: device.D1(1), Block: device.D1(64),
				Args: []workloads.ArgSpec{workloads.BufArg(in, device.Read), workloads.BufArg(0, device.Read), workloads.BufArg(in+1, device.Write)}},
			{Name: fmt.Sprintf("out%d", j), Kind: workloads.OpCopy, Copy: workloads.CopySpec{Kind: device.DeviceToHost, Src: in + 1, Host: 1, HostOff: hostOff(j), Bytes: 256}},
		}})
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

// TestSETBatchedPaddedSlots: host slots with padding between them (a
// 512-byte stride for 256-byte slots): a chunk's coalesced copies span n-1
// strides and one slot, and its batch buffers hold slot i at i x 512.
func TestSETBatchedPaddedSlots(t *testing.T) {
	p := stridedProgram(13, func(j int) int64 { return int64(j) * 512 }, nil)
	for _, threaded := range []bool{false, true} {
		s := newBatchSET(t, 2, 2, 4, threaded)
		s.dealTo = func(c int) int { return 0 } // worker 1 steals
		m, races, tr, g := runTracked(t, p, s)
		assert.Empty(t, races)
		assert.Empty(t, g.inFlight)
		assertEveryJobOnce(t, tr)
		assert.Equal(t, 4, tr.launches)
		assert.Equal(t, 13.0, m["jobs"])
		assert.Equal(t, []int64{512, 512}, s.batch.stride)
	}
}

func TestSETBatchedBadPrograms(t *testing.T) {
	strided := func(j int) int64 { return int64(j) * 256 }
	tests := []struct {
		name    string
		s       *SET
		p       *workloads.Program
		wantErr string
	}{
		{"the strided hand program runs", newBatchSET(t, 2, 1, 2, false), stridedProgram(4, strided, nil), ""},
		{"host offsets not strided", newBatchSET(t, 2, 1, 2, false),
			stridedProgram(4, func(j int) int64 { return []int64{0, 256, 768, 512}[j] }, nil),
			"need every host copy evenly strided over the jobs; hand's operation 0 (in2) is not: job 2's host offset is 768, not 512"},
		{"host offsets strided downwards", newBatchSET(t, 2, 1, 2, false),
			stridedProgram(4, func(j int) int64 { return int64(3-j) * 256 }, nil), "operation 0 (in0) has host stride -256"},
		{"a stride not a multiple of 256", newBatchSET(t, 2, 1, 2, false),
			stridedProgram(4, func(j int) int64 { return int64(j) * 320 }, nil), "multiples of 256 bytes, so every slot of a batch buffer starts aligned; hand's operation 0 (in0) has host stride 320"},
		{"a stride shorter than the buffer", newBatchSET(t, 2, 1, 2, false),
			stridedProgram(4, strided, func(p *workloads.Program) {
				for i := range p.Buffers[1:] {
					p.Buffers[1+i].Bytes = 512
				}
			}), "has host stride 256 for a 512-byte buffer"},
		{"copy-outs interleaved in one host buffer", newBatchSET(t, 2, 1, 2, false),
			stridedProgram(4, func(j int) int64 { return int64(j) * 512 }, func(p *workloads.Program) {
				for j := range p.Steps {
					p.Steps[j].Ops[0].Copy.Host = 1 // inputs read from between the outputs
					p.Steps[j].Ops[0].Copy.HostOff += 256
				}
			}), "operations 0 and 2 (in0, out0) interleave in host buffer out"},
		{"per-job kernel scalars", newBatchSET(t, 2, 1, 2, false),
			stridedProgram(4, strided, func(p *workloads.Program) {
				for j := range p.Steps {
					p.Steps[j].Ops[1].Args = append(p.Steps[j].Ops[1].Args, workloads.Scalar32(int32(j)))
				}
			}), "job 1's operation 1 (k) passes argument 3 other than job 0's"},
		{"a copy out of a shared buffer", newBatchSET(t, 2, 1, 2, false),
			stridedProgram(4, strided, func(p *workloads.Program) {
				for j := range p.Steps {
					p.Steps[j].Ops = append(p.Steps[j].Ops, workloads.Op{Name: "const out", Kind: workloads.OpCopy,
						Copy: workloads.CopySpec{Kind: device.DeviceToHost, Src: 0, Host: 1, HostOff: int64(j)*256 + 1024, Bytes: 64}})
				}
			}), "operation 3 (const out) copies out of buffer const, which no job writes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			races, err := onBound(t, tt.p, func(h device.Host, in *workloads.Instance) error {
				if err := tt.s.Prepare(h, in); err != nil {
					return errors.Join(err, tt.s.Cleanup(h))
				}
				if err := tt.s.Run(h, in); err != nil {
					return err
				}
				return tt.s.Cleanup(h)
			})
			if tt.wantErr == "" {
				assert.NoError(t, err)
				assert.Empty(t, races)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestSETBatchedName(t *testing.T) {
	assert.Equal(t, "set(b=4,depth=2,ring=2,threaded,jobs=8,copies=batched)", newBatchSET(t, 4, 2, 8, true).Name())
	assert.Equal(t, "set(b=2,ring=1,jobs=4,copies=batched)", newBatchSET(t, 2, 1, 4, false).Name())
}

func TestSETBatchedIsDeterministic(t *testing.T) {
	w, err := jobs.KNN(jobs.KNNParams{Jobs: 27, Points: 1024, Queries: 4, Dims: 4, K: 4}, 1)
	require.NoError(t, err)
	assertDeterministic(t, w.Program, func() metricser {
		s := newBatchSET(t, 3, 2, 4, true)
		s.dealTo = func(c int) int { return min(c%4, 2) }
		return s
	})
}

func TestSETBatchedPrepareAndCleanupWithoutRun(t *testing.T) {
	w, err := jobs.GEMM(jobs.GEMMParams{Jobs: 7, Size: 32}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		s := newBatchSET(t, 3, 2, 4, threaded)
		_, err := onBound(t, w.Program, func(h device.Host, in *workloads.Instance) error {
			if err := s.Prepare(h, in); err != nil {
				return err
			}
			for _, wk := range s.workers {
				require.Len(t, wk.ring, 2)
				for _, sl := range wk.ring {
					require.Len(t, sl.execs, 4, "an exec for every chunk length from 1 to J per ring position")
					require.Len(t, sl.copies, 4)
				}
				for i, b := range wk.slots {
					assert.Equal(t, 4*s.batch.stride[i], b.Size, "a batch buffer holds J slots")
				}
			}
			// 7 jobs in chunks of 4: worker 0 gets jobs 0-3, worker 1
			// jobs 4-6, worker 2 none.
			assert.Equal(t, []boundJob{{job: 0, n: 4}}, s.workers[0].queue)
			assert.Equal(t, []boundJob{{job: 4, n: 3}}, s.workers[1].queue)
			assert.Empty(t, s.workers[2].queue)
			return s.Cleanup(h)
		})
		assert.NoError(t, err, "threaded=%v: every exec released and no host thread left blocked", threaded)
	}
}
