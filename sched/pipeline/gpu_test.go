//go:build cuda

package pipeline

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda/cudatest"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// gpuOutputs runs prog under s on d as the runner does (Prepare, the warm
// run, the run) and returns its outputs.
func gpuOutputs(t *testing.T, d device.Device, prog *workloads.Program, s sched.Scheduler) map[string][]byte {
	t.Helper()
	var out map[string][]byte
	err := d.Run(func(h device.Host) (err error) {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, in.Release(h)) }()
		if prep, ok := s.(sched.Preparer); ok {
			if err := prep.Prepare(h, in); err != nil {
				return errors.Join(err, prep.Cleanup(h))
			}
			defer func() { err = errors.Join(err, prep.Cleanup(h)) }()
		}
		if err := sched.Warm(h, s, in); err != nil {
			return err
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

// TestGPUChunkGraphMatchesSerial runs chunk-graph on GPU 0 on every job
// workload (29 jobs: chunks with a short tail, fewer lanes than a chunk's
// jobs and as many) and requires its outputs to equal the serial
// schedule's bit for bit, and serial's to pass the CPU reference.
//
//	go test -tags cuda ./sched/pipeline -run GPU -v
func TestGPUChunkGraphMatchesSerial(t *testing.T) {
	d := cudatest.Open(t)
	for _, w := range testWorkloads(t, 29) {
		t.Run(w.Program.Name, func(t *testing.T) {
			want := gpuOutputs(t, d, w.Program, sched.NewSerial())
			require.NoError(t, w.Program.Check(want), "the serial schedule against the CPU reference")
			for _, c := range [][2]int{{4, 2}, {8, 8}, {16, 16}} {
				s := newChunkGraph(t, c[0], c[1])
				got := gpuOutputs(t, d, w.Program, s)
				for buf, b := range want {
					assert.True(t, bytes.Equal(b, got[buf]), "%s: output %s differs from serial", s.Name(), buf)
				}
			}
		})
	}
}
