package acs

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/dnn"
	"github.com/gpusched/gpusched/workloads/rl"
)

// graphParams is ACS-SW under dispatch graph with a window of n.
func graphParams(n int, key GraphKey) Params {
	p := DefaultParams()
	p.Dispatch, p.Threads, p.Window, p.GraphKey = DispatchGraph, 1, n, key
	return p
}

// graphVariants are dispatch graph's variants under test: both graph
// keys, windows of 1 (serial through one-node graphs), 8 and 32, and
// batches in fewer branches (lanes).
func graphVariants() []Params {
	var vs []Params
	for _, key := range []GraphKey{GraphKeyWidth, GraphKeyKernels} {
		for _, n := range []int{1, 8, 32} {
			vs = append(vs, graphParams(n, key))
		}
		p := graphParams(32, key)
		p.Lanes = 4
		vs = append(vs, p)
	}
	p := graphParams(16, GraphKeyWidth)
	p.Lanes = 1
	return append(vs, p)
}

// acsSimPrograms are the workloads of configs/experiments/acs-sim.yaml at
// their full size (seed 1), in that file's order.
func acsSimPrograms(t *testing.T) ([]string, map[string]*workloads.Program) {
	t.Helper()
	progs := map[string]*workloads.Program{}
	var names []string
	add := func(name string, p *workloads.Program, err error) {
		require.NoError(t, err, name)
		names = append(names, name)
		progs[name] = p
	}
	for _, env := range []string{"ant", "humanoid", "halfcheetah", "walker2d", "grasp"} {
		p := rl.DefaultParams()
		p.Env = env
		prog, err := rl.Generate(p, 1)
		add(env, prog, err)
	}
	p := rl.DefaultParams()
	p.Order = "group"
	prog, err := rl.Generate(p, 1)
	add("ant-group-order", prog, err)
	for _, v := range dnn.DynamicVariants {
		prog, err := dnn.Dynamic(dnn.DefaultDynamic(v), 1)
		add(v, prog, err)
	}
	for _, m := range []string{"nasnet-a", "amoebanet", "squeezenet", "randwire"} {
		prog, err := dnn.Static(dnn.DefaultStatic(m), 1)
		add(m, prog, err)
	}
	return names, progs
}

func TestGraphDispatchRaceFreeOnTheACSWorkloads(t *testing.T) {
	// Every workload of acs-sim, full size, on both simulated GPUs: no two
	// conflicting kernels overlap or go unordered, and every kernel runs
	// exactly once.
	names, progs := acsSimPrograms(t)
	for _, cfg := range simConfigs() {
		dev, err := sim.NewNamed(cfg)
		require.NoError(t, err)
		for _, wl := range names {
			for _, p := range raceCases(graphVariants()) {
				t.Run(fmt.Sprintf("%s/%s/%s", cfg, wl, p.Name()), func(t *testing.T) {
					s, err := NewSW(p)
					require.NoError(t, err)
					r, err := run(t, dev, progs[wl], s)
					require.NoError(t, err)
					assert.Empty(t, r.races, "no two conflicting kernels overlap")
					assert.Equal(t, kernelCount(progs[wl]), r.stats.Kernels, "every kernel ran exactly once")
					st := s.Stats()
					assert.InDelta(t, float64(kernelCount(progs[wl])), st["batches"]*st["mean_batch_width"], 0.5, "every kernel went out in one batch")
					assert.LessOrEqual(t, st["max_batch_width"], float64(p.Window))
				})
			}
		}
	}
}

func TestGraphDispatchBrokenOrderIsCaught(t *testing.T) {
	// The negative controls of the test above: a batch that also holds
	// pending kernels whose upstream kernels are in it (they run at the
	// same time), or batches alternating between two streams (a batch no
	// longer finishes before the next starts), race, and the checker sees
	// it; the honest scheduler on the same programs does not.
	group := rl.DefaultParams()
	group.Envs, group.EnvsPerGroup, group.Steps, group.Order = 32, 8, 1, "group"
	groupOrder, err := rl.Generate(group, 3)
	require.NoError(t, err)
	for name, prog := range map[string]*workloads.Program{"rl-physics": smallRL(t), "rl-physics-group-order": groupOrder} {
		for _, key := range []GraphKey{GraphKeyWidth, GraphKeyKernels} {
			for _, hook := range []graphHook{{eager: true}, {alternate: true}} {
				t.Run(fmt.Sprintf("%s/%s/%+v", name, key, hook), func(t *testing.T) {
					dev, err := sim.NewNamed("h100")
					require.NoError(t, err)
					s, err := NewSW(graphParams(32, key))
					require.NoError(t, err)
					honest, err := run(t, dev, prog, s)
					require.NoError(t, err)
					require.Empty(t, honest.races)
					s.hook = hook
					r, err := run(t, dev, prog, s)
					require.NoError(t, err)
					assert.Equal(t, kernelCount(prog), r.stats.Kernels)
					assert.NotEmpty(t, r.races)
				})
			}
		}
	}
}

// batchRecorder records, through the Host, the kernels of every graph
// launch (by label, in node order) and every command issued outside a
// capture.
type batchRecorder struct {
	device.Host
	capturing bool
	captured  []string
	// lanes has, per capture in order, the kernels launched on each
	// capturing stream, in the order the streams first launched one.
	lanes  [][]int
	laneOf map[device.Stream]int
	// prepared is lanes as Prepare left it (recordRun).
	prepared [][]int
	graphs   map[device.Graph][]string
	execs    map[device.GraphExec][]string
	batches  [][]string
	direct   []string
}

func newBatchRecorder(h device.Host) *batchRecorder {
	return &batchRecorder{Host: h, graphs: map[device.Graph][]string{}, execs: map[device.GraphExec][]string{}}
}

func (r *batchRecorder) BeginCapture(s device.Stream) error {
	r.capturing, r.captured = true, nil
	r.lanes, r.laneOf = append(r.lanes, nil), map[device.Stream]int{}
	return r.Host.BeginCapture(s)
}

func (r *batchRecorder) EndCapture(s device.Stream) (device.Graph, error) {
	r.capturing = false
	g, err := r.Host.EndCapture(s)
	if err == nil {
		r.graphs[g] = r.captured
	}
	return g, err
}

func (r *batchRecorder) Instantiate(g device.Graph) (device.GraphExec, error) {
	x, err := r.Host.Instantiate(g)
	if err == nil {
		r.execs[x] = slices.Clone(r.graphs[g])
	}
	return x, err
}

func (r *batchRecorder) Launch(s device.Stream, l *device.Launch) error {
	if r.capturing {
		r.captured = append(r.captured, l.Label)
		c := &r.lanes[len(r.lanes)-1]
		i, ok := r.laneOf[s]
		if !ok {
			i = len(*c)
			r.laneOf[s] = i
			*c = append(*c, 0)
		}
		(*c)[i]++
	} else {
		r.direct = append(r.direct, l.Label)
	}
	return r.Host.Launch(s, l)
}

func (r *batchRecorder) Copy(s device.Stream, c *device.Copy) error {
	if !r.capturing {
		r.direct = append(r.direct, c.Label)
	}
	return r.Host.Copy(s, c)
}

func (r *batchRecorder) SetKernelNode(x device.GraphExec, i int, l *device.Launch) error {
	err := r.Host.SetKernelNode(x, i, l)
	if err == nil {
		r.execs[x][i] = l.Label
	}
	return err
}

func (r *batchRecorder) GraphLaunch(x device.GraphExec, s device.Stream) error {
	r.batches = append(r.batches, slices.Clone(r.execs[x]))
	return r.Host.GraphLaunch(x, s)
}

// recordRun binds prog on dev through a batchRecorder, prepares s, runs it
// once and cleans up; the recorder holds what the Run issued.
func recordRun(t *testing.T, dev *sim.Device, prog *workloads.Program, s *SW) *batchRecorder {
	t.Helper()
	var rec *batchRecorder
	require.NoError(t, dev.Run(func(h device.Host) error {
		rec = newBatchRecorder(h)
		in, err := workloads.Bind(rec, prog)
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(rec)) }()
		if err := s.Prepare(rec, in); err != nil {
			return err
		}
		rec.batches, rec.direct, rec.prepared = nil, nil, slices.Clone(rec.lanes)
		if err := s.Run(rec, in); err != nil {
			return err
		}
		return s.Cleanup(rec)
	}))
	return rec
}

// handProgram is a program of kernels of two kinds over small buffers:
// ops gives each kernel's name, kernel (0 or 1) and the buffers it reads
// and writes.
type handOp struct {
	name          string
	kernel        int
	reads, writes []int
}

func handProgram(bufs int, ops []handOp, extra ...workloads.Op) *workloads.Program {
	ks := []*device.Kernel{{Module: "hand", Name: "kb", Regs: 16}, {Module: "hand", Name: "ka", Regs: 16}}
	p := &workloads.Program{Name: "hand"}
	for i := 0; i < bufs; i++ {
		p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: fmt.Sprintf("b%d", i), Bytes: 1024})
	}
	var step workloads.Step
	for _, o := range ops {
		op := workloads.Op{Name: o.name, Kind: workloads.OpKernel, Kernel: ks[o.kernel], Grid: device.D1(2), Block: device.D1(64),
			Work: device.Work{Cycles: 20000}}
		for _, b := range o.reads {
			op.Args = append(op.Args, workloads.BufArg(b, device.Read))
		}
		for _, b := range o.writes {
			op.Args = append(op.Args, workloads.BufArg(b, device.Write))
		}
		step.Ops = append(step.Ops, op)
	}
	step.Ops = append(step.Ops, extra...)
	p.Steps = []workloads.Step{step}
	return p
}

func TestGraphDispatchBatches(t *testing.T) {
	// Three independent kernels, two that depend on them, then f after e
	// (read after write) and g after d (g overwrites what d reads: write
	// after read) and after a (write after write).
	const x0, x1, x2, y0, y1, z = 0, 1, 2, 3, 4, 5
	prog := handProgram(6, []handOp{
		{"a", 0, nil, []int{x0}},
		{"b", 1, nil, []int{x1}},
		{"c", 0, nil, []int{x2}},
		{"d", 1, []int{x0}, []int{y0}},
		{"e", 0, []int{x1, x2}, []int{y1}},
		{"f", 1, []int{y1}, []int{z}},
		{"g", 0, nil, []int{x0}},
	})
	for _, tc := range []struct {
		window int
		want   [][]string
	}{
		{32, [][]string{{"a", "b", "c"}, {"d", "e"}, {"f", "g"}}},
		// Two slots: a and b; c and d (a is launched, so d is ready);
		// e and f, f waiting for e; f and g (d launched).
		{2, [][]string{{"a", "b"}, {"c", "d"}, {"e"}, {"f", "g"}}},
		{1, [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}}},
	} {
		for _, key := range []GraphKey{GraphKeyWidth, GraphKeyKernels} {
			t.Run(fmt.Sprintf("N=%d/%s", tc.window, key), func(t *testing.T) {
				dev, err := sim.NewNamed("h100")
				require.NoError(t, err)
				s, err := NewSW(graphParams(tc.window, key))
				require.NoError(t, err)
				rec := recordRun(t, dev, prog, s)
				assert.Empty(t, dev.Races())
				assert.Empty(t, rec.direct, "every kernel goes out in a graph")
				got := make([][]string, len(rec.batches))
				for i, b := range rec.batches {
					got[i] = slices.Clone(b)
					slices.Sort(got[i])
				}
				assert.Equal(t, tc.want, got)
				for _, b := range got {
					assert.False(t, slices.Contains(b, "d") && slices.Contains(b, "g"), "the write-after-read pair d, g in one batch: %v", b)
				}
				st := s.Stats()
				assert.Equal(t, float64(len(tc.want)), st["batches"])
				if key == GraphKeyWidth {
					assert.Equal(t, float64(tc.window), st["graph_instantiations_prepare"], "one graph per width 1..N, before the run")
					assert.Zero(t, st["graph_instantiations_run"])
					assert.Equal(t, float64(len(tc.want)), st["graph_hits"])
					assert.Equal(t, float64(7), st["node_updates"], "one update per kernel")
				} else {
					assert.Zero(t, st["graph_instantiations_prepare"])
					assert.Equal(t, st["batches"], st["graph_instantiations_run"]+st["graph_hits"])
				}
			})
		}
	}
}

func TestGraphDispatchLanes(t *testing.T) {
	// Under GraphKeyWidth, Prepare captures the graphs of widths 1..N: with
	// lanes k, width w's on min(k, w) streams, the nodes in contiguous
	// runs; then a run is race-free and sends every kernel once.
	prog := smallRL(t)
	for _, k := range []int{0, 1, 3, 8} {
		t.Run(fmt.Sprintf("lanes=%d", k), func(t *testing.T) {
			dev, err := sim.NewNamed("h100")
			require.NoError(t, err)
			p := graphParams(8, GraphKeyWidth)
			p.Lanes = k
			s, err := NewSW(p)
			require.NoError(t, err)
			prepared := recordRun(t, dev, prog, s).prepared
			assert.Empty(t, dev.Races())
			require.Len(t, prepared, 8, "one graph per width")
			for w := 1; w <= 8; w++ {
				b := w
				if k > 0 && k < w {
					b = k
				}
				want := make([]int, b)
				for j := range want {
					want[j] = (j+1)*w/b - j*w/b
				}
				assert.Equal(t, want, prepared[w-1], "width %d, lanes %d", w, k)
			}
			st := s.Stats()
			assert.InDelta(t, float64(kernelCount(prog)), st["batches"]*st["mean_batch_width"], 0.5)
		})
	}
}

// runThreePairs runs six independent kernels, in pairs p, q and r of
// kernels (kb, ka), (ka, kb) and (ka, ka), through a window of two under
// key on the simulated H100, checks the run race-free and returns the
// scheduler and what it launched.
func runThreePairs(t *testing.T, key GraphKey) (*SW, *batchRecorder) {
	t.Helper()
	prog := handProgram(6, []handOp{
		{"p1", 0, nil, []int{0}}, {"p2", 1, nil, []int{1}},
		{"q1", 1, nil, []int{2}}, {"q2", 0, nil, []int{3}},
		{"r1", 1, nil, []int{4}}, {"r2", 1, nil, []int{5}},
	})
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	s, err := NewSW(graphParams(2, key))
	require.NoError(t, err)
	rec := recordRun(t, dev, prog, s)
	assert.Empty(t, dev.Races())
	return s, rec
}

func TestGraphDispatchKernelsKeyReusesGraphsOfTheSameKernels(t *testing.T) {
	// Independent kernels through a window of two: batches {p1, p2} and
	// {q1, q2} hold the same kernels (kb and ka, in either program
	// order), so graph_key kernels sorts both the same way (ka first) and
	// updates the graph captured for the first; {r1, r2} (ka twice) needs
	// a graph of its own.
	s, rec := runThreePairs(t, GraphKeyKernels)
	assert.Equal(t, [][]string{{"p2", "p1"}, {"q1", "q2"}, {"r1", "r2"}}, rec.batches, "nodes sorted by kernel name, then program order")
	st := s.Stats()
	assert.Positive(t, st["window_busy_ns_per_op"], "the window thread's host time per operation")
	assert.Equal(t, float64(6), st["window_kernels"])
	delete(st, "window_busy_ns_per_op")
	delete(st, "window_blocked_ns_per_op")
	delete(st, "window_kernels")
	assert.Equal(t, map[string]float64{
		"graph_instantiations_prepare": 0, "graph_instantiations_run": 2, "graph_hits": 1,
		"node_updates": 2, "node_kernel_changes": 0, "batches": 3, "mean_batch_width": 2, "max_batch_width": 2, "copies_direct": 0,
	}, st)
}

func TestGraphDispatchWidthKeyKeepsNodesKernels(t *testing.T) {
	// The same batches under graph_key width: the graph of width 2 starts
	// with cal_empty on both nodes; {p1 (kb), p2 (ka)} goes to the nodes
	// in program order; in {q1 (ka), q2 (kb)} each node gets the kernel it
	// already launches, so no node changes its kernel; in {r1, r2} (ka
	// twice) the node that launched ka takes r1 and the other changes.
	s, rec := runThreePairs(t, GraphKeyWidth)
	assert.Equal(t, [][]string{{"p1", "p2"}, {"q2", "q1"}, {"r2", "r1"}}, rec.batches)
	st := s.Stats()
	assert.Equal(t, float64(6), st["node_updates"])
	assert.Equal(t, float64(2+0+1), st["node_kernel_changes"])
}

func TestGraphDispatchCopies(t *testing.T) {
	// Copies are issued on the stream directly, never in a graph, and
	// ordered with the kernels by the window like any operation.
	prog := handProgram(3, []handOp{
		{"k1", 0, []int{0}, []int{1}},
		{"k2", 1, []int{0}, []int{2}},
	}, workloads.Op{Name: "down", Kind: workloads.OpCopy, Copy: workloads.CopySpec{Kind: device.DeviceToHost, Src: 1, Host: 0, Bytes: 1024}})
	prog.Host = []workloads.HostSpec{{Name: "h", Bytes: 1024, Pinned: true}}
	up := workloads.Op{Name: "up", Kind: workloads.OpCopy, Copy: workloads.CopySpec{Kind: device.HostToDevice, Dst: 0, Host: 0, Bytes: 1024}}
	prog.Steps[0].Ops = append([]workloads.Op{up}, prog.Steps[0].Ops...)
	for _, key := range []GraphKey{GraphKeyWidth, GraphKeyKernels} {
		dev, err := sim.NewNamed("h100")
		require.NoError(t, err)
		s, err := NewSW(graphParams(8, key))
		require.NoError(t, err)
		rec := recordRun(t, dev, prog, s)
		assert.Empty(t, dev.Races(), key)
		assert.Equal(t, []string{"up", "down"}, rec.direct, key)
		require.Len(t, rec.batches, 1, key)
		assert.ElementsMatch(t, []string{"k1", "k2"}, rec.batches[0], key)
		assert.Equal(t, float64(2), s.Stats()["copies_direct"], key)
	}
}

func TestGraphDispatchWindowOneIsSerialThroughOneNodeGraphs(t *testing.T) {
	// N = 1: every kernel alone in a one-node graph, in program order on
	// one stream; on rl-physics it is slower than serial on the simulator
	// (one node update and one graph launch cost more than one launch
	// there). How it compares with N = 8 depends on the launch cost
	// model: with a flat graph launch cost (the configs before
	// graph_launch_node_ns) N = 8 is far faster; with the per-branch costs
	// measured on an H100 (h100.yaml) a wide launch (a branch per kernel)
	// costs about what its kernels' one-node launches do, kernel changes
	// included, so this host-bound program gains little from N = 8 (on the
	// H100 itself N = 8 took 0.47-0.95x of N = 1's time on the rl-physics
	// environments).
	prog := smallRL(t)
	measured, err := sim.LoadConfig("h100-datasheet")
	require.NoError(t, err)
	require.Positive(t, measured.Host.GraphLaunchBranchNs)
	flat := *measured
	flat.Host.GraphLaunchNs, flat.Host.SetNodeNs = 2500, 1000
	flat.Host.GraphLaunchNodeNs, flat.Host.GraphLaunchCopyNodeNs, flat.Host.GraphLaunchBranchNs = 0, 0, 0
	flat.Host.GraphLaunchKernelChangeNs, flat.Host.SetNodeKernelChangeNs = 0, 0
	for _, tc := range []struct {
		name string
		cfg  *sim.Config
		// N = 8's makespan over N = 1's at most.
		maxRatio float64
	}{{"flat", &flat, 0.7}, {"per-branch", measured, 1.15}} {
		dev, err := sim.New(tc.cfg)
		require.NoError(t, err)
		serial, err := run(t, dev, prog, sched.NewSerial())
		require.NoError(t, err)
		spans := map[int]time.Duration{}
		for _, n := range []int{1, 8} {
			s, err := NewSW(graphParams(n, GraphKeyWidth))
			require.NoError(t, err)
			r, err := run(t, dev, prog, s)
			require.NoError(t, err)
			require.Empty(t, r.races)
			st := s.Stats()
			if n == 1 {
				assert.Equal(t, float64(kernelCount(prog)), st["batches"])
				assert.Equal(t, float64(1), st["max_batch_width"])
			}
			spans[n] = r.makespan
		}
		t.Logf("%s launch cost: serial %v, graph N=1 %v, N=8 %v", tc.name, serial.makespan, spans[1], spans[8])
		assert.Greater(t, spans[1], serial.makespan, tc.name)
		assert.Less(t, float64(spans[8]), tc.maxRatio*float64(spans[1]), tc.name)
	}
}

func TestGraphDispatchParams(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Params)
		want string
	}{
		{"threads", func(p *Params) { p.Threads = 4 }, "one host thread on one stream; threads must be 1, got 4"},
		{"completion", func(p *Params) { p.Completion = CompletionEvent }, `completion must be sync (the run's one final stream synchronize), got "event"`},
		{"inflight", func(p *Params) { p.InFlight = 4 }, "inflight must be 1, got 4"},
		{"waits", func(p *Params) { p.InFlight, p.Waits = 2, true }, "inflight must be 1, got 2"},
		{"batch", func(p *Params) { p.Batch = 4 }, "batch must be 0 or 1 and graph_cache false, got batch 4"},
		{"handoff", func(p *Params) { p.Handoff = HandoffBatched }, `handoff must be kernel, got "batched"`},
		{"unbounded", func(p *Params) { p.Window = 0 }, "window must be in [1, 64], got 0"},
		{"wide", func(p *Params) { p.Window = 65 }, "window must be in [1, 64], got 65"},
		{"key", func(p *Params) { p.GraphKey = "shape" }, `graph_key must be width or kernels, got "shape"`},
		{"negative lanes", func(p *Params) { p.Lanes = -1 }, "lanes must be in [0, window 32] (0: a branch per kernel of a batch), got -1"},
		{"lanes over the window", func(p *Params) { p.Lanes = 33 }, "lanes must be in [0, window 32]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := graphParams(32, "")
			c.mod(&p)
			_, err := New(p)
			assert.ErrorContains(t, err, c.want)
		})
	}
	p := graphParams(32, "")
	p.Waits = true
	_, err := New(p)
	assert.ErrorContains(t, err, "waits needs inflight", "the general check comes first")
	q := DefaultParams()
	q.GraphKey = GraphKeyKernels
	_, err = New(q)
	assert.ErrorContains(t, err, `graph_key needs dispatch graph, got dispatch "window"`)
	q = DefaultParams()
	q.Lanes = 2
	_, err = New(q)
	assert.ErrorContains(t, err, `lanes needs dispatch graph, got dispatch "window"`)
	p = graphParams(32, "")
	p.Lanes = 4
	assert.Equal(t, "acs-sw(N=32,dispatch=graph,key=width,lanes=4)", p.Name())

	assert.Equal(t, "acs-sw(N=32,dispatch=graph,key=width)", graphParams(32, "").Name())
	assert.Equal(t, "acs-sw(N=1,dispatch=graph,key=kernels)", graphParams(1, GraphKeyKernels).Name())
	p = graphParams(8, GraphKeyWidth)
	p.CheckCost = false
	assert.Equal(t, "acs-sw(N=8,dispatch=graph,key=width,free-check)", p.Name())
	s, err := NewSW(DefaultParams())
	require.NoError(t, err)
	assert.Nil(t, s.Stats(), "other dispatches report no counters")
}

func TestGraphDispatchCacheOutlivesARun(t *testing.T) {
	// The graphs stay with the scheduler from Prepare to Cleanup: a second
	// Run of the same program finds every batch's graph (graph_key
	// kernels) and instantiates nothing.
	s, err := NewSW(graphParams(32, GraphKeyKernels))
	require.NoError(t, err)
	var first, second map[string]float64
	dev := runPrepared(t, smallRL(t), s, func(h device.Host, in *workloads.Instance) error {
		if err := s.Run(h, in); err != nil {
			return err
		}
		first = s.Stats()
		if err := s.Run(h, in); err != nil {
			return err
		}
		second = s.Stats()
		return nil
	})
	assert.Empty(t, dev.Races())
	assert.Positive(t, first["graph_instantiations_run"])
	assert.Equal(t, first["graph_instantiations_run"], second["graph_instantiations_run"])
	assert.Equal(t, 2*first["batches"], second["batches"])
	assert.Equal(t, first["graph_hits"]+first["batches"], second["graph_hits"])
}

// The window thread's time per operation (Stats' window_* figures): on the
// simulator, where the check is charged with Spend, a free check makes the
// window thread's own time per operation smaller by what the check cost,
// and never changes the operations counted; busy and blocked add up to
// the runs' wall time.
func TestWindowThreadStats(t *testing.T) {
	prog := smallRL(t)
	stats := func(p Params) (map[string]float64, time.Duration) {
		s, err := NewSW(p)
		require.NoError(t, err)
		var wall time.Duration
		runPrepared(t, prog, s, func(h device.Host, in *workloads.Instance) error {
			t0 := h.Now()
			err := s.Run(h, in)
			wall = h.Now() - t0
			return err
		})
		return s.Stats(), wall
	}
	for _, dispatch := range []Dispatch{DispatchWindow, DispatchGraph} {
		p := DefaultParams()
		if dispatch == DispatchGraph {
			p = graphParams(32, "")
		}
		checked, wall := stats(p)
		n := float64(prog.NumOps())
		require.Equal(t, n, checked["window_kernels"], dispatch)
		assert.InDelta(t, float64(wall.Nanoseconds()), n*(checked["window_busy_ns_per_op"]+checked["window_blocked_ns_per_op"]), 1, dispatch)
		p.CheckCost = false
		free, _ := stats(p)
		assert.Less(t, free["window_busy_ns_per_op"], checked["window_busy_ns_per_op"]-100, "%s: the check's charge is the window thread's own time", dispatch)
	}
}

// runPrepared binds prog on a simulated H100, prepares s, calls runs and
// cleans s up, and returns the device.
func runPrepared(t *testing.T, prog *workloads.Program, s *SW, runs func(h device.Host, in *workloads.Instance) error) *sim.Device {
	t.Helper()
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	require.NoError(t, dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		if err := s.Prepare(h, in); err != nil {
			return err
		}
		if err := runs(h, in); err != nil {
			return err
		}
		return s.Cleanup(h)
	}))
	return dev
}
