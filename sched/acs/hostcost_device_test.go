package acs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/rl"
)

// runOnHostCost runs s over prog on dev twice (the window is reused
// across Runs) and returns the second run's races.
func runOnHostCost(t *testing.T, dev *hostCostDevice, prog *workloads.Program, s *SW) [][2]int {
	t.Helper()
	var in *workloads.Instance
	err := dev.Run(func(h device.Host) error {
		var err error
		if in, err = workloads.Bind(h, prog); err != nil {
			return err
		}
		if err := s.Prepare(h, in); err != nil {
			return err
		}
		for rep := 0; rep < 2; rep++ {
			if err := h.Synchronize(); err != nil {
				return err
			}
			dev.r.log = dev.r.log[:0]
			if err := s.Run(h, in); err != nil {
				return err
			}
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		return s.Cleanup(h)
	})
	require.NoError(t, err)
	require.Len(t, dev.r.log, in.N(), "every operation ran once")
	return dev.r.conflicts(hostCostAccess(in))
}

// The host-cost device's race check is what makes BenchmarkSWHostCost's
// numbers those of a correct schedule: ACS-SW passes it, and the same
// scheduler told that no operation touches memory fails it.
func TestHostCostDeviceCatchesIgnoredDependencies(t *testing.T) {
	p := rl.DefaultParams()
	p.Envs, p.EnvsPerGroup, p.Steps, p.Order = 32, 8, 1, "group"
	prog, err := rl.Generate(p, 3)
	require.NoError(t, err)
	inflight := DefaultParams()
	inflight.Completion, inflight.InFlight, inflight.Threads = CompletionEvent, 4, 8
	waits := inflight
	waits.Waits = true
	for _, prm := range []Params{DefaultParams(), inflight, waits} {
		t.Run(prm.Name(), func(t *testing.T) {
			// Kernels long against launches, so that kernels on
			// different streams overlap unless ordered.
			dev := &hostCostDevice{launchCost: time.Microsecond, callCost: 0, kernel: 30 * time.Microsecond, queueSpin: 50 * time.Microsecond}
			s, err := NewSW(prm)
			require.NoError(t, err)
			assert.Empty(t, runOnHostCost(t, dev, prog, s), "honest schedule")
			s, err = NewSW(prm)
			require.NoError(t, err)
			s.access = func(*workloads.Instance, int) []device.Arg { return nil }
			assert.NotEmpty(t, runOnHostCost(t, dev, prog, s), "dependencies ignored")
		})
	}
}
