package graph

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kesco"
)

// simRun runs s on p on the simulated H100 (prepare untimed, then one
// timed run) and returns the run's host time and the device's races.
func simRun(t *testing.T, dev *sim.Device, s sched.Scheduler, p *workloads.Program) (time.Duration, []device.Race) {
	t.Helper()
	var span time.Duration
	err := dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, p)
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		if pr, ok := s.(sched.Preparer); ok {
			if err := pr.Prepare(h, in); err != nil {
				return err
			}
			defer func() { assert.NoError(t, pr.Cleanup(h)) }()
		}
		t0 := h.Now()
		if err := s.Run(h, in); err != nil {
			return err
		}
		span = h.Now() - t0
		return nil
	})
	require.NoError(t, err, "%s on %s", s.Name(), p.Name)
	return span, dev.Races()
}

func newH100(t *testing.T) *sim.Device {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	dev, err := sim.New(cfg)
	require.NoError(t, err)
	return dev
}

func TestEverySchedulerRunsEveryBenchmarkOnTheSimulator(t *testing.T) {
	dev := newH100(t)
	for _, name := range kesco.Names {
		p, err := kesco.New(name, kesco.Params{Scale: 1.0 / 1024}, 1)
		require.NoError(t, err)
		for _, s := range allSchedulers(t) {
			span, races := simRun(t, dev, s, p)
			assert.Empty(t, races, "%s on %s", s.Name(), name)
			assert.Greater(t, span, time.Duration(0))
		}
	}
}

func TestMultiProcessOnAMix(t *testing.T) {
	dev := newH100(t)
	p, err := kesco.Mix(kesco.MixParams{Tasks: 8, Large: 1, Small: 1, Scale: 1.0 / 1024}, 2)
	require.NoError(t, err)
	for _, inner := range []Policy{PolicySerial, PolicyKeSCo} {
		for _, procs := range []int{0, 3} {
			inner := inner
			mp, err := NewMultiProcess(procs, string(inner), func() (sched.Scheduler, error) { return New(Options{Policy: inner}) })
			require.NoError(t, err)
			_, races := simRun(t, dev, mp, p)
			assert.Empty(t, races, mp.Name())
			assert.Equal(t, float64(map[int]int{0: 8, 3: 3}[procs]), mp.Stats()["processes"], mp.Name())
		}
	}
}

// On M1 (width 8) with its small grids, KeSCo over 8 streams overlaps the
// eight-wide layers, so it must beat one stream clearly on the simulator;
// and pruning must remove waits without changing correctness.
func TestKeSCoBeatsSerialOnM1(t *testing.T) {
	dev := newH100(t)
	// Half scale: at 1/16 the kernels are so small that launch and event
	// costs decide (serial 78 us, KeSCo 87 us) once a lone block draws its
	// SM's bandwidth (device/sim's per-SM memory model).
	p, err := kesco.New("M1", kesco.Params{Scale: 1.0 / 2}, 1)
	require.NoError(t, err)
	serial, _ := New(Options{Policy: PolicySerial})
	ks, _ := New(Options{Policy: PolicyKeSCo})
	ts, _ := simRun(t, dev, serial, p)
	tk, races := simRun(t, dev, ks, p)
	require.Empty(t, races)
	assert.Greater(t, float64(ts)/float64(tk), 2.0, fmt.Sprintf("serial %v, kesco %v", ts, tk))
	assert.Equal(t, 8.0, ks.Stats()["streams"])
}
