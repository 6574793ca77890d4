package acs

import (
	"errors"
	"fmt"
	"sync/atomic"
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
	"github.com/gpusched/gpusched/workloads/synthetic"
)

// variants are every ACS-SW variant the experiments report.
func variants() []Params {
	base := DefaultParams()
	with := func(f func(*Params)) Params { p := base; f(&p); return p }
	vs := []Params{
		base,
		with(func(p *Params) { p.Completion = CompletionEvent }),
		with(func(p *Params) { p.Completion = CompletionCallback }),
		with(func(p *Params) { p.InFlight = 4 }),
		with(func(p *Params) { p.Completion = CompletionEvent; p.InFlight = 4 }),
		with(func(p *Params) { p.Completion = CompletionCallback; p.InFlight = 4; p.Threads = 8 }),
		with(func(p *Params) { p.Batch = 4 }),
		with(func(p *Params) { p.Completion = CompletionCallback; p.Batch = 4; p.GraphCache = true }),
		with(func(p *Params) { p.Completion = CompletionEvent; p.InFlight = 2; p.Batch = 3 }),
		with(func(p *Params) { p.Window = 8; p.Threads = 2 }),
		with(func(p *Params) { p.InFlight = 4; p.Waits = true }),
		with(func(p *Params) { p.InFlight = 8; p.Waits = true; p.Threads = 8; p.Completion = CompletionEvent }),
		with(func(p *Params) { p.Completion = CompletionEvent; p.InFlight = 4; p.Waits = true }),
		with(func(p *Params) { p.Completion = CompletionCallback; p.InFlight = 3; p.Waits = true; p.Threads = 8 }),
		with(func(p *Params) { p.InFlight = 2; p.Waits = true; p.Batch = 4; p.GraphCache = true }),
		with(func(p *Params) { p.Window = 0 }),
		// Handoff batched: several kernels per message to a thread, several
		// completions per message back.
		with(func(p *Params) { p.Handoff = HandoffBatched }),
		with(func(p *Params) { p.Handoff = HandoffBatched; p.InFlight = 4; p.Threads = 8 }),
		with(func(p *Params) {
			p.Handoff = HandoffBatched
			p.Completion = CompletionEvent
			p.InFlight = 4
			p.Threads = 8
		}),
		with(func(p *Params) {
			p.Handoff = HandoffBatched
			p.Completion = CompletionCallback
			p.InFlight = 3
			p.Waits = true
		}),
		with(func(p *Params) { p.Handoff = HandoffBatched; p.InFlight = 2; p.Batch = 3; p.GraphCache = true }),
		with(func(p *Params) { p.Handoff = HandoffBatched; p.InFlight = 4; p.Waits = true; p.Threads = 8 }),
	}
	// Dispatch graph (graphdispatch_test.go) before the shared ones: tests
	// pick shared variants from the end of the list.
	vs = append(vs, graphVariants()...)
	return append(vs, []Params{
		with(func(p *Params) { p.Dispatch = DispatchShared }),
		with(func(p *Params) { p.Dispatch = DispatchShared; p.Threads = 1 }),
		with(func(p *Params) { p.Dispatch = DispatchShared; p.Completion = CompletionEvent; p.InFlight = 4 }),
		with(func(p *Params) { p.Dispatch = DispatchShared; p.Completion = CompletionCallback; p.Window = 8 }),
		with(func(p *Params) { p.Dispatch = DispatchShared; p.InFlight = 4; p.Waits = true }),
		with(func(p *Params) {
			p.Dispatch = DispatchShared
			p.Completion = CompletionEvent
			p.InFlight = 8
			p.Waits = true
			p.Threads = 8
		}),
		with(func(p *Params) {
			p.Dispatch = DispatchShared
			p.Completion = CompletionCallback
			p.InFlight = 3
			p.Waits = true
			p.Threads = 8
		}),
	}...)
}

func smallRL(t *testing.T) *workloads.Program {
	t.Helper()
	p := rl.DefaultParams()
	p.Envs, p.EnvsPerGroup, p.Steps, p.Warmup = 32, 8, 2, 10
	prog, err := rl.Generate(p, 3)
	require.NoError(t, err)
	return prog
}

func smallSynthetic(t *testing.T) *workloads.Program {
	t.Helper()
	p := synthetic.Defaults()
	p.Layers, p.Width, p.Steps = 5, 6, 2
	prog, err := synthetic.Generate(p, 9)
	require.NoError(t, err)
	return prog
}

type result struct {
	makespan time.Duration
	stats    device.Stats
	races    []device.Race
}

// run binds prog on dev (without generating the device buffers' contents,
// which the simulator never reads), prepares s, times its Run between two
// device synchronizations, as the experiments runner does.
func run(t *testing.T, dev *sim.Device, prog *workloads.Program, s sched.Scheduler) (result, error) {
	t.Helper()
	var r result
	err := dev.Run(func(h device.Host) error {
		in, err := workloads.BindWith(h, prog, workloads.BindOptions{NoDeviceData: true}) // the simulator moves no data
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		prep, _ := s.(sched.Preparer)
		if prep != nil {
			if err := prep.Prepare(h, in); err != nil {
				return err
			}
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		t0 := h.Now()
		if err := s.Run(h, in); err != nil {
			return err
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		r.makespan = h.Now() - t0
		if prep != nil {
			return prep.Cleanup(h)
		}
		return nil
	})
	r.stats, r.races = dev.Stats(), dev.Races()
	return r, err
}

func kernelCount(prog *workloads.Program) int64 {
	n := int64(0)
	for _, st := range prog.Steps {
		for _, op := range st.Ops {
			if op.Kind == workloads.OpKernel {
				n++
			}
		}
	}
	return n
}

func TestEveryVariantIsRaceFreeOnTheSimulator(t *testing.T) {
	groupOrder := rl.DefaultParams()
	groupOrder.Envs, groupOrder.EnvsPerGroup, groupOrder.Steps, groupOrder.Warmup, groupOrder.Order = 32, 8, 2, 10, "group"
	rlGroup, err := rl.Generate(groupOrder, 3)
	require.NoError(t, err)
	dp := dnn.DefaultDynamic("instanas")
	dp.Inputs, dp.Scale = 2, 4
	instanas, err := dnn.Dynamic(dp, 1)
	require.NoError(t, err)
	progs := map[string]*workloads.Program{"rl-physics": smallRL(t), "rl-physics-group-order": rlGroup, "synthetic": smallSynthetic(t), "instanas": instanas}
	for _, cfg := range simConfigs() {
		dev, err := sim.NewNamed(cfg)
		require.NoError(t, err)
		for _, wl := range []string{"rl-physics", "rl-physics-group-order", "synthetic", "instanas"} {
			prog := progs[wl]
			var scheds []sched.Scheduler
			for _, p := range variants() {
				s, err := New(p)
				require.NoError(t, err)
				scheds = append(scheds, s)
			}
			for _, c := range []int{0, 1, 3} {
				hp := DefaultHWParams()
				hp.Checkers = c
				hw, err := NewHW(hp)
				require.NoError(t, err)
				scheds = append(scheds, hw)
			}
			for _, s := range scheds {
				t.Run(fmt.Sprintf("%s/%s/%s", cfg, wl, s.Name()), func(t *testing.T) {
					r, err := run(t, dev, prog, s)
					require.NoError(t, err)
					assert.Empty(t, r.races, "no two conflicting kernels overlap")
					assert.Equal(t, kernelCount(prog), r.stats.Kernels, "every kernel ran exactly once")
					assert.Greater(t, r.makespan, time.Duration(0))
				})
			}
		}
	}
}

func TestIgnoringDependenciesIsCaught(t *testing.T) {
	// The negative control for the test above: the same scheduler told
	// that no operation touches memory races, and the checker sees it,
	// under either dispatch.
	// In group order consecutive kernels conflict, so ignoring that
	// overlaps them at once.
	p := rl.DefaultParams()
	p.Envs, p.EnvsPerGroup, p.Steps, p.Order = 32, 8, 1, "group"
	prog, err := rl.Generate(p, 3)
	require.NoError(t, err)
	shared := DefaultParams()
	shared.Dispatch = DispatchShared
	sharedWaits := shared
	sharedWaits.Completion, sharedWaits.InFlight, sharedWaits.Waits, sharedWaits.Threads = CompletionEvent, 8, true, 8
	for _, prm := range []Params{DefaultParams(), shared, sharedWaits} {
		dev, err := sim.NewNamed("h100")
		require.NoError(t, err)
		s, err := NewSW(prm)
		require.NoError(t, err)
		honest, err := run(t, dev, prog, s)
		require.NoError(t, err)
		require.Empty(t, honest.races, prm.Name())
		s.access = func(*workloads.Instance, int) []device.Arg { return nil }
		r, err := run(t, dev, prog, s)
		require.NoError(t, err)
		assert.NotEmpty(t, r.races, prm.Name())
	}
}

func TestSharedDispatchRemovesTheHandoffs(t *testing.T) {
	// With one scheduler thread, the paper's dispatch pays two handoffs
	// between host threads per kernel (each a wake-up); the shared window
	// pays none, so on short kernels it is faster (with the datasheet
	// config's 2.5 us wake-up; the H100 measured 0.6 us per handoff).
	prog := smallRL(t)
	dev, err := sim.NewNamed("h100-datasheet")
	require.NoError(t, err)
	spans := map[Dispatch]time.Duration{}
	for _, d := range []Dispatch{DispatchWindow, DispatchShared} {
		p := DefaultParams()
		p.Threads, p.Dispatch = 1, d
		s, err := New(p)
		require.NoError(t, err)
		r, err := run(t, dev, prog, s)
		require.NoError(t, err)
		require.Empty(t, r.races)
		require.Equal(t, kernelCount(prog), r.stats.Kernels)
		spans[d] = r.makespan
	}
	assert.Less(t, float64(spans[DispatchShared]), 0.8*float64(spans[DispatchWindow]), "shared %v, window %v", spans[DispatchShared], spans[DispatchWindow])
}

func TestACSHWIgnoringDependenciesIsCaught(t *testing.T) {
	// ACS-HW's negative control: upstream lists computed from empty
	// access sets, by the submitting thread or by checker threads, let
	// the queue dispatch conflicting kernels together.
	p := rl.DefaultParams()
	p.Envs, p.EnvsPerGroup, p.Steps, p.Order = 32, 8, 1, "group"
	prog, err := rl.Generate(p, 3)
	require.NoError(t, err)
	for _, c := range []int{0, 2} {
		dev, err := sim.NewNamed("h100")
		require.NoError(t, err)
		hp := DefaultHWParams()
		hp.Checkers = c
		hw, err := NewHW(hp)
		require.NoError(t, err)
		honest, err := run(t, dev, prog, hw)
		require.NoError(t, err)
		require.Empty(t, honest.races, "checkers=%d", c)
		hw.access = func(*workloads.Instance, int) []device.Arg { return nil }
		r, err := run(t, dev, prog, hw)
		require.NoError(t, err)
		assert.NotEmpty(t, r.races, "checkers=%d", c)
	}
}

func TestACSHWCheckersOverlapTheCheckWithSubmission(t *testing.T) {
	// rl-physics' kernels are shorter than one check plus one submit, so
	// one host thread bounds ACS-HW; checker threads computing the lists
	// ahead leave the submitting thread only the submissions.
	prog := smallRL(t)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	spans := map[int]time.Duration{}
	for _, c := range []int{0, 2} {
		hp := DefaultHWParams()
		hp.Checkers = c
		hw, err := NewHW(hp)
		require.NoError(t, err)
		r, err := run(t, dev, prog, hw)
		require.NoError(t, err)
		require.Empty(t, r.races)
		require.Equal(t, kernelCount(prog), r.stats.Kernels)
		spans[c] = r.makespan
	}
	assert.Less(t, float64(spans[2]), 0.8*float64(spans[0]), "checkers=2 %v, checkers=0 %v", spans[2], spans[0])
}

func TestACSHWPreparedRunsTwice(t *testing.T) {
	prog := smallRL(t)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	hp := DefaultHWParams()
	hp.Checkers = 3
	hw, err := NewHW(hp)
	require.NoError(t, err)
	err = dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		if err := hw.Prepare(h, in); err != nil {
			return err
		}
		for i := 0; i < 2; i++ {
			if err := hw.Run(h, in); err != nil {
				return err
			}
		}
		assert.Error(t, hw.Prepare(h, in), "a second Prepare before Cleanup")
		return hw.Cleanup(h)
	})
	require.NoError(t, err)
	assert.Equal(t, 2*kernelCount(prog), dev.Stats().Kernels)
	assert.Empty(t, dev.Races())
}

func TestACSHWUnsupportedWithoutTheQueue(t *testing.T) {
	dev, err := sim.NewNamed("h100", sim.WithDependencyQueue(false))
	require.NoError(t, err)
	hw, err := NewHW(DefaultHWParams())
	require.NoError(t, err)
	_, err = run(t, dev, smallRL(t), hw)
	require.Error(t, err)
	assert.True(t, errors.Is(err, device.ErrUnsupported))
	assert.Contains(t, err.Error(), "acs-hw: unsupported on this device")
}

func TestSimulatedRunsAreDeterministic(t *testing.T) {
	prog := smallRL(t)
	for _, p := range []Params{DefaultParams(), variants()[5], variants()[7], variants()[len(variants())-2], variants()[len(variants())-1],
		graphParams(32, GraphKeyWidth), graphParams(8, GraphKeyKernels)} {
		dev, err := sim.NewNamed("rtx3070")
		require.NoError(t, err)
		var spans []time.Duration
		for i := 0; i < 2; i++ {
			s, err := New(p)
			require.NoError(t, err)
			r, err := run(t, dev, prog, s)
			require.NoError(t, err)
			spans = append(spans, r.makespan)
		}
		assert.Equal(t, spans[0], spans[1], p.Name())
	}
}

func TestOverlapsIndependentKernels(t *testing.T) {
	// Layers of eight independent long kernels of a few blocks: one
	// stream runs them one at a time, ACS four at a time.
	p := synthetic.Defaults()
	p.Layers, p.Width, p.Steps, p.MinBlocks, p.MaxBlocks, p.Iters = 4, 8, 1, 2, 4, 4096
	prog, err := synthetic.Generate(p, 1)
	require.NoError(t, err)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	serial, err := run(t, dev, prog, sched.NewSerial())
	require.NoError(t, err)
	s, err := New(DefaultParams())
	require.NoError(t, err)
	acs, err := run(t, dev, prog, s)
	require.NoError(t, err)
	assert.Less(t, float64(acs.makespan), 0.6*float64(serial.makespan), "ACS %v, serial %v", acs.makespan, serial.makespan)
}

func TestCheckCostIsCharged(t *testing.T) {
	prog := smallRL(t)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	charged, err := New(DefaultParams())
	require.NoError(t, err)
	p := DefaultParams()
	p.CheckCost = false
	free, err := New(p)
	require.NoError(t, err)
	_, err = run(t, dev, prog, charged)
	require.NoError(t, err)
	_, err = run(t, dev, prog, free)
	require.NoError(t, err)
	// The window thread pays the checks. (Not the makespan: the scheduler
	// threads' launches meet differently on the driver lock when the
	// window thread is slower, and since the configs count every live
	// thread's driver switch (session 20) that can take a little more off
	// than the checks add: 719.0 against 719.5 us here.)
	busy := func(s sched.Scheduler) float64 { return s.(*SW).Stats()["window_busy_ns_per_op"] }
	assert.Greater(t, busy(charged), busy(free)+100, "the check costs 0.2-0.5 us an operation on these windows")
}

func TestPreparedSchedulerRunsTwice(t *testing.T) {
	prog := smallRL(t)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	var shared, batched Params
	for _, v := range variants() {
		if v.Dispatch == DispatchShared && v.Waits && v.Completion == CompletionEvent {
			shared = v
		}
		if v.Handoff == HandoffBatched && v.Batch > 1 {
			batched = v
		}
	}
	require.Equal(t, DispatchShared, shared.Dispatch)
	require.Equal(t, HandoffBatched, batched.Handoff)
	for _, p := range []Params{DefaultParams(), variants()[7], shared, batched, graphParams(32, GraphKeyWidth), graphParams(8, GraphKeyKernels)} {
		s, err := NewSW(p)
		require.NoError(t, err)
		err = dev.Run(func(h device.Host) error {
			in, err := workloads.Bind(h, prog)
			if err != nil {
				return err
			}
			if err := s.Prepare(h, in); err != nil {
				return err
			}
			for i := 0; i < 2; i++ {
				if err := s.Run(h, in); err != nil {
					return err
				}
			}
			assert.Error(t, s.Prepare(h, in), "a second Prepare before Cleanup")
			return s.Cleanup(h)
		})
		require.NoError(t, err, p.Name())
		assert.Equal(t, 2*kernelCount(prog), dev.Stats().Kernels)
		assert.Empty(t, dev.Races())
	}
}

func TestParamsValidation(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Params)
		want string
	}{
		{"threads", func(p *Params) { p.Threads = 0 }, "threads must be in [1, 64]"},
		{"inflight", func(p *Params) { p.InFlight = 0 }, "inflight must be at least 1"},
		{"batch", func(p *Params) { p.Batch = -1 }, "batch must not be negative"},
		{"cache", func(p *Params) { p.GraphCache = true }, "graph_cache needs batch"},
		{"waits", func(p *Params) { p.Waits = true }, "waits needs inflight of at least 2"},
		{"completion", func(p *Params) { p.Completion = "poll" }, `completion must be sync, event or callback, got "poll"`},
		{"dispatch", func(p *Params) { p.Dispatch = "steal" }, `dispatch must be window, shared or graph, got "steal"`},
		{"shared batch", func(p *Params) { p.Dispatch = DispatchShared; p.Batch = 4 }, "dispatch shared launches kernels one by one; batch must be 0 or 1, got 4"},
		{"handoff", func(p *Params) { p.Handoff = "bulk" }, `handoff must be kernel or batched, got "bulk"`},
		{"shared handoff", func(p *Params) { p.Dispatch = DispatchShared; p.Handoff = HandoffBatched }, "handoff batched needs dispatch window"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.mod(&p)
			_, err := New(p)
			assert.ErrorContains(t, err, c.want)
		})
	}
	_, err := NewHW(HWParams{StaleList: 0})
	assert.ErrorContains(t, err, "stale_list must be at least 1")
	_, err = NewHW(HWParams{StaleList: 64, Checkers: -1})
	assert.ErrorContains(t, err, "checkers must be in [0, 64], got -1")
}

func TestNames(t *testing.T) {
	assert.Equal(t, "acs-sw(N=32,K=4,sync)", DefaultParams().Name())
	p := Params{Window: 0, Threads: 8, Completion: CompletionCallback, InFlight: 4, Batch: 4, GraphCache: true}
	assert.Equal(t, "acs-sw(N=inf,K=8,callback,inflight=4,batch=4,cached,free-check)", p.Name())
	p = Params{Window: 32, Threads: 8, Completion: CompletionEvent, InFlight: 8, Waits: true, Dispatch: DispatchShared, CheckCost: true}
	assert.Equal(t, "acs-sw(N=32,K=8,event,inflight=8,waits,shared)", p.Name())
	p = Params{Window: 32, Threads: 8, Completion: CompletionSync, InFlight: 4, Handoff: HandoffBatched, CheckCost: true}
	assert.Equal(t, "acs-sw(N=32,K=8,sync,inflight=4,batched-handoff)", p.Name())
	hw, err := NewHW(DefaultHWParams())
	require.NoError(t, err)
	assert.Equal(t, "acs-hw(M=64)", hw.Name())
	assert.Equal(t, "acs-hw(M=32,checkers=2,free-check)", HWParams{StaleList: 32, Checkers: 2}.Name())
}

func TestEventWaitsRaceFreeOnFullPrograms(t *testing.T) {
	// Waiting on the last-issued upstream kernel of each stream is only
	// right if "last" means last in stream order, not in program order;
	// full-size programs with far-apart dependencies are where the two
	// differ.
	p := rl.DefaultParams()
	p.Order = "group"
	rlGroup, err := rl.Generate(p, 1)
	require.NoError(t, err)
	instanas, err := dnn.Dynamic(dnn.DefaultDynamic("instanas"), 1)
	require.NoError(t, err)
	with := func(f func(*Params)) Params { q := DefaultParams(); f(&q); return q }
	for _, prm := range []Params{
		with(func(q *Params) { q.Completion = CompletionEvent; q.InFlight = 4; q.Waits = true }),
		with(func(q *Params) { q.Completion = CompletionCallback; q.InFlight = 4; q.Waits = true }),
		with(func(q *Params) { q.Completion = CompletionEvent; q.InFlight = 8; q.Waits = true; q.Threads = 8 }),
		with(func(q *Params) {
			q.Completion = CompletionEvent
			q.InFlight = 8
			q.Waits = true
			q.Threads = 8
			q.Dispatch = DispatchShared
		}),
		with(func(q *Params) { q.InFlight = 4; q.Waits = true; q.Dispatch = DispatchShared }),
	} {
		for _, cfg := range simConfigs() {
			dev, err := sim.NewNamed(cfg)
			require.NoError(t, err)
			for name, prog := range map[string]*workloads.Program{"ant-group-order": rlGroup, "instanas": instanas} {
				s, err := New(prm)
				require.NoError(t, err)
				r, err := run(t, dev, prog, s)
				require.NoError(t, err)
				assert.Empty(t, r.races, "%s on %s: %s", prm.Name(), cfg, name)
			}
		}
	}
}

func TestALaunchFailureEndsTheRunWithItsError(t *testing.T) {
	// One kernel with more threads per block than CUDA allows: every
	// scheduler must return the launch's error, with nothing left
	// running or waiting (a hang fails the test by its timeout), and stay
	// usable for the next run.
	good := smallRL(t)
	bad := smallRL(t)
	step := bad.Steps[len(bad.Steps)/2]
	op := -1
	for i := range step.Ops {
		if step.Ops[i].Kind == workloads.OpKernel {
			op = i
		}
	}
	require.GreaterOrEqual(t, op, 0)
	ops := append([]workloads.Op(nil), step.Ops...)
	ops[op].Block = device.Dim3{X: 4096, Y: 1, Z: 1}
	bad.Steps[len(bad.Steps)/2] = workloads.Step{Ops: ops}
	var scheds []sched.Scheduler
	batched := DefaultParams()
	batched.Handoff, batched.InFlight, batched.Threads = HandoffBatched, 4, 8
	for _, p := range []Params{DefaultParams(), variants()[7], variants()[len(variants())-6], variants()[len(variants())-2], variants()[len(variants())-1], batched,
		graphParams(32, GraphKeyWidth), graphParams(8, GraphKeyKernels)} {
		s, err := NewSW(p)
		require.NoError(t, err)
		scheds = append(scheds, s)
	}
	for _, c := range []int{0, 2} {
		hw, err := NewHW(HWParams{StaleList: 64, CheckCost: true, Checkers: c})
		require.NoError(t, err)
		scheds = append(scheds, hw)
	}
	for _, s := range scheds {
		t.Run(s.Name(), func(t *testing.T) {
			dev, err := sim.NewNamed("h100")
			require.NoError(t, err)
			err = dev.Run(func(h device.Host) error {
				prep := s.(sched.Preparer)
				for _, c := range []struct {
					prog *workloads.Program
					fail bool
				}{{bad, true}, {good, false}} {
					in, err := workloads.Bind(h, c.prog)
					if err != nil {
						return err
					}
					if err := prep.Prepare(h, in); err != nil {
						return err
					}
					err = s.Run(h, in)
					if c.fail {
						assert.ErrorContains(t, err, "4096")
					} else {
						assert.NoError(t, err)
					}
					if err := prep.Cleanup(h); err != nil {
						return err
					}
					if err := in.Release(h); err != nil {
						return err
					}
				}
				return nil
			})
			require.NoError(t, err)
		})
	}
}

// countingHost counts the values Put to the queues its threads make.
type countingHost struct {
	device.Host
	puts *atomic.Int64
}

type countingQueue struct {
	device.Queue
	puts *atomic.Int64
}

func (q *countingQueue) Put(v any) { q.puts.Add(1); q.Queue.Put(v) }

func (h countingHost) NewQueue(name string) device.Queue {
	return &countingQueue{Queue: h.Host.NewQueue(name), puts: h.puts}
}

func (h countingHost) Get(q device.Queue) (any, bool) { return h.Host.Get(q.(*countingQueue).Queue) }

func (h countingHost) Go(name string, fn func(device.Host) error) {
	h.Host.Go(name, func(c device.Host) error { return fn(countingHost{c, h.puts}) })
}

func TestBatchedHandoffSendsFewerMessages(t *testing.T) {
	prog, err := rl.Generate(rl.DefaultParams(), 1)
	require.NoError(t, err)
	with := func(f func(*Params)) Params { p := DefaultParams(); f(&p); return p }
	for _, tc := range []struct {
		name string
		p    Params
	}{
		{"sync", DefaultParams()},
		{"sync-inflight4-k8", with(func(p *Params) { p.InFlight, p.Threads = 4, 8 })},
		{"event-inflight4-k8", with(func(p *Params) { p.Completion, p.InFlight, p.Threads = CompletionEvent, 4, 8 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			puts := map[Handoff]int64{}
			for _, handoff := range []Handoff{HandoffKernel, HandoffBatched} {
				p := tc.p
				p.Handoff = handoff
				s, err := NewSW(p)
				require.NoError(t, err)
				dev, err := sim.NewNamed("h100")
				require.NoError(t, err)
				var n atomic.Int64
				err = dev.Run(func(h device.Host) error {
					ch := countingHost{h, &n}
					in, err := workloads.Bind(ch, prog)
					if err != nil {
						return err
					}
					if err := s.Prepare(ch, in); err != nil {
						return err
					}
					n.Store(0)
					if err := s.Run(ch, in); err != nil {
						return err
					}
					puts[handoff] = n.Load()
					return s.Cleanup(ch)
				})
				require.NoError(t, err)
				assert.Empty(t, dev.Races())
				assert.Equal(t, kernelCount(prog), dev.Stats().Kernels)
			}
			// Each kernel is at least one message each way unless batched.
			assert.GreaterOrEqual(t, puts[HandoffKernel], 2*kernelCount(prog))
			if tc.p.InFlight == 1 {
				// One kernel in flight per thread: nothing to batch.
				assert.Equal(t, puts[HandoffKernel], puts[HandoffBatched])
			} else {
				assert.Less(t, puts[HandoffBatched], puts[HandoffKernel])
			}
			t.Logf("messages per kernel: kernel %.2f, batched %.2f", float64(puts[HandoffKernel])/float64(kernelCount(prog)), float64(puts[HandoffBatched])/float64(kernelCount(prog)))
		})
	}
}
