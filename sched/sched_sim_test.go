package sched_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/synthetic"
)

// runOnSim binds prog on the simulated H100, runs s in a timed region as the
// experiments runner does, and returns the makespan and the device's view.
func runOnSim(t *testing.T, s sched.Scheduler, prog *workloads.Program) (time.Duration, device.Stats, []device.Race) {
	t.Helper()
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	var span time.Duration
	err = dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		if p, ok := s.(sched.Preparer); ok {
			if err := p.Prepare(h, in); err != nil {
				return err
			}
			defer func() { assert.NoError(t, p.Cleanup(h)) }()
		}
		t0 := h.Now()
		if err := s.Run(h, in); err != nil {
			return err
		}
		span = h.Now() - t0
		return nil
	})
	require.NoError(t, err, s.Name())
	return span, dev.Stats(), dev.Races()
}

func wideDAG(t *testing.T, steps int) *workloads.Program {
	p := synthetic.Defaults()
	p.Iters, p.Steps = 4096, steps
	prog, err := synthetic.Generate(p, 1)
	require.NoError(t, err)
	return prog
}

func TestBaselinesAreRaceFreeAndComplete(t *testing.T) {
	prog := wideDAG(t, 2)
	rr := func(k int) sched.Scheduler { s, err := sched.NewRoundRobin(k); require.NoError(t, err); return s }
	per, err := sched.NewGraphPerStep(4)
	require.NoError(t, err)
	// graph-once is checked on a static program below: this one's steps differ.
	for _, s := range []sched.Scheduler{sched.NewSerial(), rr(1), rr(2), rr(8), per} {
		t.Run(s.Name(), func(t *testing.T) {
			_, st, races := runOnSim(t, s, prog)
			assert.Empty(t, races, "a correct schedule never races")
			// Bind's uploads are copies, not kernels: every kernel counted is the program's.
			assert.EqualValues(t, prog.NumOps(), st.Kernels)
		})
	}
}

func TestRoundRobinOverlapsIndependentKernels(t *testing.T) {
	prog := wideDAG(t, 2)
	serial, _, _ := runOnSim(t, sched.NewSerial(), prog)
	rr, err := sched.NewRoundRobin(4)
	require.NoError(t, err)
	four, _, _ := runOnSim(t, rr, prog)
	// 8 independent kernels per layer of ~17 us each, one host thread
	// launching at 3.3 us: four streams must run layers at least twice as
	// fast as one.
	assert.Less(t, float64(four), float64(serial)/2, "serial %v, round-robin(4) %v", serial, four)
	rr1, err := sched.NewRoundRobin(1)
	require.NoError(t, err)
	one, _, _ := runOnSim(t, rr1, prog)
	assert.InDelta(t, float64(serial), float64(one), float64(serial)*0.01, "one stream is serial")
}

func TestGraphOnceNeedsAStaticProgram(t *testing.T) {
	prog := wideDAG(t, 2) // step 1 reads step 0's outputs: its arguments differ
	once, err := sched.NewGraphOnce(2)
	require.NoError(t, err)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	err = dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		return once.Run(h, in)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "step 1")
	assert.Contains(t, err.Error(), "graph-per-step")
}

func TestGraphOnceReplaysAStaticProgram(t *testing.T) {
	p := synthetic.Defaults()
	p.Steps = 1
	prog, err := synthetic.Generate(p, 2)
	require.NoError(t, err)
	// Repeat the one step: the same operations on the same buffers.
	prog.Steps = append(prog.Steps, prog.Steps[0], prog.Steps[0])
	once, err := sched.NewGraphOnce(4)
	require.NoError(t, err)
	span, st, races := runOnSim(t, once, prog)
	assert.Empty(t, races)
	assert.EqualValues(t, prog.NumOps(), st.Kernels)
	serial, _, _ := runOnSim(t, sched.NewSerial(), prog)
	assert.Less(t, span, serial, "graph replay pays no per-kernel launch cost and runs branches concurrently")
}

// Round-robin plans in Prepare, outside the timed region, as the static
// planners do; a run on another instance than the prepared one plans
// again, so it still waits on every cross-stream dependency (no races).
func TestRoundRobinPlansInPrepare(t *testing.T) {
	prog := wideDAG(t, 2)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	rr, err := sched.NewRoundRobin(4)
	require.NoError(t, err)
	err = dev.Run(func(h device.Host) error {
		a, err := workloads.Bind(h, prog)
		require.NoError(t, err)
		b, err := workloads.Bind(h, prog)
		require.NoError(t, err)
		require.NoError(t, rr.Prepare(h, a))
		first := rr.Stats()["waits"]
		assert.Positive(t, first, "planned before any run: the wide DAG crosses streams")
		require.NoError(t, rr.Run(h, a))
		require.NoError(t, rr.Run(h, b), "an instance Prepare did not see")
		assert.Equal(t, first, rr.Stats()["waits"], "the same program, the same waits")
		require.NoError(t, rr.Cleanup(h))
		require.NoError(t, a.Release(h))
		return b.Release(h)
	})
	require.NoError(t, err)
	assert.Empty(t, dev.Races())
}
