//go:build cuda

package acs

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda/cudatest"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/dnn"
	"github.com/gpusched/gpusched/workloads/rl"
)

// outputsOf runs prog under s on d and returns its outputs.
func outputsOf(t *testing.T, d device.Device, prog *workloads.Program, s sched.Scheduler) map[string][]byte {
	t.Helper()
	var out map[string][]byte
	err := d.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer in.Release(h)
		if prep, ok := s.(sched.Preparer); ok {
			if err := prep.Prepare(h, in); err != nil {
				return err
			}
			defer prep.Cleanup(h)
		}
		if err := s.Run(h, in); err != nil {
			return err
		}
		out, err = in.Outputs(h)
		return err
	})
	require.NoError(t, err, s.Name())
	return out
}

// TestGPUVariantsMatchSerial runs every ACS-SW variant on GPU 0 and
// requires its outputs to equal the serial schedule's bit for bit, and the
// serial schedule's to pass the workload's CPU reference; ACS-HW must
// report that the GPU has no dependency queue.
//
//	go test -tags cuda ./sched/acs -run GPU -v
func TestGPUVariantsMatchSerial(t *testing.T) {
	d := cudatest.Open(t)

	rp := rl.DefaultParams()
	rp.Steps = 4
	physics, err := rl.Generate(rp, 1)
	require.NoError(t, err)
	rp.Env, rp.Order = "humanoid", "group"
	humanoid, err := rl.Generate(rp, 2)
	require.NoError(t, err)
	dp := dnn.DefaultDynamic("instanas")
	dp.Inputs = 2
	instanas, err := dnn.Dynamic(dp, 1)
	require.NoError(t, err)

	for name, prog := range map[string]*workloads.Program{"ant": physics, "humanoid-group-order": humanoid, "instanas": instanas} {
		t.Run(name, func(t *testing.T) {
			want := outputsOf(t, d, prog, sched.NewSerial())
			require.NoError(t, prog.Check(want), "the serial schedule against the CPU reference")
			for _, p := range variants() {
				s, err := New(p)
				require.NoError(t, err)
				got := outputsOf(t, d, prog, s)
				for buf, w := range want {
					assert.True(t, bytes.Equal(w, got[buf]), "%s: output %s differs from serial", s.Name(), buf)
				}
			}
		})
	}

	hw, err := NewHW(DefaultHWParams())
	require.NoError(t, err)
	err = d.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, physics)
		if err != nil {
			return err
		}
		defer in.Release(h)
		return hw.Run(h, in)
	})
	assert.ErrorIs(t, err, device.ErrUnsupported)
	assert.ErrorContains(t, err, "acs-hw: unsupported on this device")
}
