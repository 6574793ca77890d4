package pipeline

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

// testWorkloads are the six job workloads at sizes a test can afford
// (under the race detector, every other one: sobel, bp, knn).
func testWorkloads(t *testing.T, n int) []*jobs.Workload {
	t.Helper()
	var out []*jobs.Workload
	for _, build := range raceCases([]func() (*jobs.Workload, error){
		func() (*jobs.Workload, error) { return jobs.Sobel(jobs.SobelParams{Jobs: n, Size: 64}, 1) },
		func() (*jobs.Workload, error) {
			return jobs.SSSP(jobs.SSSPParams{Jobs: n, Vertices: 1024, Degree: 4, Iterations: 4}, 1)
		},
		func() (*jobs.Workload, error) {
			return jobs.BP(jobs.BPParams{Jobs: n, Batch: 8, Inputs: 64, Hidden: 64}, 1)
		},
		func() (*jobs.Workload, error) { return jobs.GEMM(jobs.GEMMParams{Jobs: n, Size: 64}, 1) },
		func() (*jobs.Workload, error) {
			return jobs.KNN(jobs.KNNParams{Jobs: n, Points: 1024, Queries: 4, Dims: 4, K: 4}, 1)
		},
		func() (*jobs.Workload, error) {
			return jobs.Hotspot(jobs.HotspotParams{Jobs: n, Size: 32, Iterations: 2}, 1)
		},
	}) {
		w, err := build()
		require.NoError(t, err)
		out = append(out, w)
	}
	return out
}

type metricser interface {
	sched.Scheduler
	Metrics() map[string]float64
}

// runOn runs s on a fresh simulated H100 as the experiments runner does
// (bind, prepare, run, cleanup) and returns the metrics and the races.
func runOn(t *testing.T, p *workloads.Program, s metricser) (map[string]float64, []device.Race) {
	t.Helper()
	return runWrapped(t, p, s, nil)
}

// runWrapped is runOn with s's host calls made through wrap(h) (a host
// that watches them) when wrap is not nil.
func runWrapped(t *testing.T, p *workloads.Program, s metricser, wrap func(h device.Host) device.Host) (map[string]float64, []device.Race) {
	t.Helper()
	return runWrappedWith(t, nil, p, s, wrap)
}

// runWrappedWith is runWrapped on the h100 config as edit changes it.
func runWrappedWith(t *testing.T, edit func(*sim.Config), p *workloads.Program, s metricser, wrap func(h device.Host) device.Host) (map[string]float64, []device.Race) {
	t.Helper()
	races, err := onBoundWith(t, edit, p, func(h device.Host, in *workloads.Instance) error {
		sh := h
		if wrap != nil {
			sh = wrap(h)
		}
		prep := s.(sched.Preparer)
		if err := prep.Prepare(sh, in); err != nil {
			return err
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		if err := s.Run(sh, in); err != nil {
			return err
		}
		return prep.Cleanup(sh)
	})
	require.NoError(t, err, s.Name())
	return s.Metrics(), races
}

// onBound runs f on a fresh simulated H100 with p bound, and returns the
// races the simulator saw and f's error.
func onBound(t *testing.T, p *workloads.Program, f func(h device.Host, in *workloads.Instance) error) ([]device.Race, error) {
	t.Helper()
	return onBoundWith(t, nil, p, f)
}

// onBoundWith is onBound on the h100 config as edit changes it (nil: as
// it is).
func onBoundWith(t *testing.T, edit func(*sim.Config), p *workloads.Program, f func(h device.Host, in *workloads.Instance) error) ([]device.Race, error) {
	t.Helper()
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	if edit != nil {
		edit(cfg)
	}
	dev, err := sim.New(cfg)
	require.NoError(t, err)
	defer func() { assert.NoError(t, dev.Close()) }()
	err = dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, p)
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		return f(h, in)
	})
	return dev.Races(), err
}

// assertDeterministic runs two schedulers mk makes on p and compares
// their metrics (race-free runs).
func assertDeterministic(t *testing.T, p *workloads.Program, mk func() metricser) {
	t.Helper()
	var ms []map[string]float64
	for i := 0; i < 2; i++ {
		m, races := runOn(t, p, mk())
		require.Empty(t, races)
		ms = append(ms, m)
	}
	assert.Equal(t, ms[0], ms[1])
}

// setParams is DefaultParams with b workers and depth jobs in flight each,
// cold (Warm off) unless a test turns it on.
func setParams(b, depth int) Params {
	p := DefaultParams()
	p.Workers, p.Depth, p.Warm = b, &depth, false
	return p
}

// newSET makes a SET with p.
func newSET(t *testing.T, p Params) *SET {
	t.Helper()
	s, err := New(p)
	require.NoError(t, err)
	return s
}

// with returns p changed by set.
func with(p Params, set func(p *Params)) Params {
	set(&p)
	return p
}

func allSchedulers(t *testing.T, b int) []metricser {
	set := newSET(t, setParams(b, 1))
	deep := newSET(t, setParams(b, 2))
	threaded := newSET(t, with(setParams(b, 1), func(p *Params) { p.Threaded = true }))
	deepThreaded := newSET(t, with(setParams(b, 2), func(p *Params) { p.Threaded = true }))
	coalesced := newSET(t, with(setParams(b, 4), func(p *Params) { p.Threaded, p.Coalesce = true, 2 }))
	batching, err := NewBatching(b)
	require.NoError(t, err)
	queue, err := NewQueue(b)
	require.NoError(t, err)
	// SET-kgraph: kernel-only graphs, copies on the stream.
	kgraph := newKGraphSET(t, b, 1, 1, false)
	kgraphPlus := newKGraphSET(t, b, 4, 2, true)
	return append([]metricser{NewSynchronous(), NewGraph(), batching, queue, set, deep, threaded, deepThreaded, coalesced, kgraph, kgraphPlus}, ringSchedulers(t, b)...)
}

// ringSchedulers are SET with exec rings: one dispatcher or threaded,
// a spare prepared exec or none, coalesced callbacks or not, one job or
// several per graph launch, chained or batched.
func ringSchedulers(t *testing.T, b int) []metricser {
	var out []metricser
	for _, c := range []struct {
		depth, ring, coalesce int
		threaded              bool
		perLaunch             int
		batched               bool
	}{
		{1, 1, 1, false, 1, false}, {2, 2, 1, false, 1, false}, {2, 3, 2, false, 1, false}, {4, 4, 2, false, 1, false},
		{2, 2, 1, true, 1, false}, {3, 4, 1, true, 1, false}, {4, 4, 2, true, 1, false},
		// Several jobs per graph launch (10 jobs: a tail on every worker).
		{2, 2, 1, false, 4, false}, {2, 2, 2, true, 3, false},
		// SET-batch: chunks of consecutive jobs (10 jobs: a short last one).
		{2, 2, 1, true, 4, true}, {2, 3, 2, false, 3, true},
	} {
		p := multiParams(b, c.depth, c.ring, c.coalesce, c.perLaunch, c.threaded)
		if c.batched {
			p.Copies = CopiesBatched
		}
		out = append(out, newSET(t, p))
	}
	return out
}

func TestEverySchedulerRunsEveryWorkloadWithoutRaces(t *testing.T) {
	const n, b = 10, 4
	for _, w := range testWorkloads(t, n) {
		for _, s := range allSchedulers(t, b) {
			t.Run(w.Program.Name+"/"+s.Name(), func(t *testing.T) {
				m, races := runOn(t, w.Program, s)
				assert.Empty(t, races, "jobs in flight never share buffers")
				assert.Equal(t, float64(n), m["jobs"])
				assert.Positive(t, m["makespan_s"])
				assert.InDelta(t, float64(n)/m["makespan_s"], m["jobs_per_s"], 1e-6*m["jobs_per_s"])
				assert.Positive(t, m["t_schedule_s"])
				assert.Greater(t, m["schedule_share"], 0.0)
				assert.LessOrEqual(t, m["schedule_share"], 1.0)
				switch s.(type) {
				case *Synchronous, *Graph, *Queue:
					assert.Equal(t, float64(n), m["syncs"], "one sync per job")
				case *Batching:
					assert.Equal(t, float64((n+b-1)/b), m["syncs"], "one sync per batch")
				case *SET:
					assert.Zero(t, m["syncs"], "SET never synchronizes: callbacks tell it")
				}
			})
		}
	}
}

func TestSETUpdatesOnlyTheNodesThatChange(t *testing.T) {
	w, err := jobs.SSSP(jobs.SSSPParams{Jobs: 16, Vertices: 1024, Degree: 4, Iterations: 4}, 1)
	require.NoError(t, err)
	m, races := runOn(t, w.Program, newSET(t, setParams(4, 1)))
	require.Empty(t, races)
	ops := float64(len(w.Program.Steps[0].Ops)) // copy in, init, 4 relax, copy out
	require.Equal(t, 7.0, ops)
	// Every job keeps its worker's buffers: only the two copy nodes (the
	// job's host slots) change, and not at all for each worker's first job,
	// which its graph was captured with.
	require.Zero(t, m["steals"])
	assert.Equal(t, 16*ops, m["node_updates"]+m["node_updates_skipped"])
	assert.Equal(t, 2*(16-4.0), m["node_updates"])
}

// TestSETSplitsItsSchedulingCalls: on the simulator, the split of
// t_schedule gives back the config's own per-call costs (a host function
// behind a graph launch and a copy node's update charge a fixed cost
// each), counts one
// graph launch and one host function per job, and the parts never exceed
// t_schedule.
func TestSETSplitsItsSchedulingCalls(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	w, err := jobs.SSSP(jobs.SSSPParams{Jobs: 16, Vertices: 1024, Degree: 4, Iterations: 4}, 1)
	require.NoError(t, err)
	m, races := runOn(t, w.Program, newSET(t, setParams(4, 1)))
	require.Empty(t, races)
	// Each job's host function follows its pending graph launch.
	assert.InDelta(t, cfg.Host.HostFuncAfterGraphNs, m["host_func_ns_per_call"], 1)
	assert.InDelta(t, cfg.Host.SetNodeNs, m["node_update_ns_per_update"], 1)
	launch := m["graph_launch_ns_per_launch"]
	assert.Greater(t, launch, cfg.Host.GraphLaunchNs, "a graph of copies and kernels costs more than the launch's fixed part")
	parts := 16 * (launch + m["host_func_ns_per_call"])
	parts += m["node_updates"] * m["node_update_ns_per_update"]
	assert.LessOrEqual(t, parts, m["t_schedule_s"]*1e9+1)
	assert.Greater(t, parts, 0.9*m["t_schedule_s"]*1e9, "plain SET's scheduling calls are launches, updates and host functions")
}

func TestSETStealsAndRetargetsWithoutRaces(t *testing.T) {
	// Jobs dealt round-robin to equal workers finish in the order they
	// were dealt, so nobody steals; deal them all to worker 0 (or most to
	// the last worker) and the idle workers must steal and retarget.
	tests := []struct {
		name     string
		jobs     int
		b        int
		threaded bool
		dealTo   func(j int) int
	}{
		{"all to worker 0", 12, 4, false, func(int) int { return 0 }},
		{"most to the last worker", 16, 3, false, func(j int) int { return min(j%4, 2) }},
		{"threaded, all to worker 0", 12, 4, true, func(int) int { return 0 }},
		{"threaded, most to the last worker", 16, 3, true, func(j int) int { return min(j%4, 2) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := jobs.Hotspot(jobs.HotspotParams{Jobs: tt.jobs, Size: 256, Iterations: 4}, 1)
			require.NoError(t, err)
			s := newSET(t, with(setParams(tt.b, 1), func(p *Params) { p.Threaded = tt.threaded }))
			s.dealTo = tt.dealTo
			m, races := runOn(t, w.Program, s)
			assert.Empty(t, races, "stolen jobs run in the thief's buffers")
			assert.Positive(t, m["steals"], "idle workers take queued jobs from a peer")
			// A stolen job is retargeted into the thief's buffers, so its
			// kernel nodes already hold its parameters: only copy nodes
			// (two per job) are ever updated.
			ops := float64(len(w.Program.Steps[0].Ops))
			assert.Equal(t, float64(tt.jobs)*ops, m["node_updates"]+m["node_updates_skipped"])
			assert.LessOrEqual(t, m["node_updates"], 2*float64(tt.jobs))
		})
	}
}

// TestRaceCheckerCatchesSharedWorkerBuffers is the negative control of the
// race tests: SET with one set of buffers shared by all workers (which is
// what private buffers prevent) must be caught.
func TestRaceCheckerCatchesSharedWorkerBuffers(t *testing.T) {
	// Large enough jobs that several are in flight at once.
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 8, Size: 512}, 1)
	require.NoError(t, err)
	s := newSET(t, setParams(4, 1))
	s.shareSlots = true
	_, races := runOn(t, w.Program, s)
	assert.NotEmpty(t, races)
}

func TestSETIsDeterministic(t *testing.T) {
	w, err := jobs.KNN(jobs.KNNParams{Jobs: 12, Points: 1024, Queries: 4, Dims: 4, K: 4}, 1)
	require.NoError(t, err)
	var ms []map[string]float64
	for i := 0; i < 2; i++ {
		m, _ := runOn(t, w.Program, newSET(t, setParams(3, 1)))
		ms = append(ms, m)
	}
	assert.Equal(t, ms[0], ms[1])
}

// program builds a two-job pipeline by hand for the analysis tests.
func program(mutate func(p *workloads.Program)) *workloads.Program {
	k := &device.Kernel{Module: "jobs", Name: "sobel", Regs: 16}
	p := &workloads.Program{Name: "hand", Host: []workloads.HostSpec{{Name: "in", Bytes: 512, Pinned: true}, {Name: "out", Bytes: 512, Pinned: true, Output: true}}}
	p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: "const", Bytes: 64, Init: func([]byte) {}})
	for j := 0; j < 2; j++ {
		in := len(p.Buffers)
		p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: fmt.Sprintf("in%d", j), Bytes: 256}, workloads.BufferSpec{Name: fmt.Sprintf("out%d", j), Bytes: 256})
		p.Steps = append(p.Steps, workloads.Step{Ops: []workloads.Op{
			{Name: "in", Kind: workloads.OpCopy, Copy: workloads.CopySpec{Kind: device.HostToDevice, Dst: in, Host: 0, HostOff: int64(j) * 256, Bytes: 256}},
			{Name: "k", Kind: workloads.OpKernel, Kernel: k, Grid: device.D1(1), Block: device.D1(64),
				Args: []workloads.ArgSpec{workloads.BufArg(in, device.Read), workloads.BufArg(0, device.Read), workloads.BufArg(in+1, device.Write)}},
			{Name: "out", Kind: workloads.OpCopy, Copy: workloads.CopySpec{Kind: device.DeviceToHost, Src: in + 1, Host: 1, HostOff: int64(j) * 256, Bytes: 256}},
		}})
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(p *workloads.Program)
		wantErr string
	}{
		{"pipeline", nil, ""},
		{"jobs share a written buffer", func(p *workloads.Program) {
			p.Steps[1].Ops[1].Args[2] = workloads.BufArg(2, device.Write) // job 0's out
			p.Steps[1].Ops[2].Copy.Src = 2
		}, "both write buffer out0"},
		{"a job reads another's output", func(p *workloads.Program) {
			p.Steps[1].Ops[1].Args[1] = workloads.BufArg(2, device.Read)
		}, "reads buffer out0, which job 0 writes"},
		{"shapes differ", func(p *workloads.Program) {
			p.Steps[1].Ops[1].Grid = device.D1(2)
		}, "differs from job 0 at operation 1"},
		{"a job's buffer has initial contents", func(p *workloads.Program) {
			p.Buffers[4].Init = func([]byte) {}
		}, "has initial contents"},
		{"op counts differ", func(p *workloads.Program) {
			p.Steps[1].Ops = p.Steps[1].Ops[:2]
		}, "has 2 operations, job 0 has 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev, err := sim.NewNamed("h100")
			require.NoError(t, err)
			defer func() { assert.NoError(t, dev.Close()) }()
			var js *jobSet
			var aerr error
			require.NoError(t, dev.Run(func(h device.Host) error {
				in, err := workloads.Bind(h, program(tt.mutate))
				if err != nil {
					return err
				}
				defer func() { assert.NoError(t, in.Release(h)) }()
				js, aerr = analyze(in)
				return nil
			}))
			if tt.wantErr != "" {
				require.Error(t, aerr)
				assert.Contains(t, aerr.Error(), tt.wantErr)
				return
			}
			require.NoError(t, aerr)
			assert.Equal(t, []int64{256, 256}, js.slotBytes, "in and out are each job's; const is shared")
			assert.Equal(t, [][]int{{1, 2}, {3, 4}}, js.local)
		})
	}
}

func TestBadBaselineParameters(t *testing.T) {
	_, err := NewBatching(65)
	assert.ErrorContains(t, err, "got 65")
	_, err = NewQueue(-1)
	assert.ErrorContains(t, err, "got -1")
}

func TestPrepareAndCleanupWithoutRunEndTheHostThreads(t *testing.T) {
	w, err := jobs.GEMM(jobs.GEMMParams{Jobs: 8, Size: 32}, 1)
	require.NoError(t, err)
	set := newSET(t, with(setParams(3, 2), func(p *Params) { p.Threaded = true }))
	queue, err := NewQueue(3)
	require.NoError(t, err)
	ring := newRingSET(t, 3, 2, 3, 1, true)
	for _, s := range []sched.Preparer{set, queue, ring} {
		dev, err := sim.NewNamed("h100")
		require.NoError(t, err)
		err = dev.Run(func(h device.Host) error {
			in, err := workloads.Bind(h, w.Program)
			if err != nil {
				return err
			}
			defer func() { assert.NoError(t, in.Release(h)) }()
			if err := s.Prepare(h, in); err != nil {
				return err
			}
			return s.Cleanup(h)
		})
		assert.NoError(t, err, "no host thread is left blocked (the simulator would report a deadlock)")
		assert.NoError(t, dev.Close())
	}
}
