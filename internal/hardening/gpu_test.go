//go:build cuda

package hardening

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/experiments"
)

// TestGPUMutationSuite runs the mutation suite on the GPU, where a
// mutation is caught when an output differs from the serial schedule's:
//
//	go test -tags cuda -run TestGPUMutationSuite -v -timeout 9m ./hardening
//
// HARDENING_GPU_REPORT=path writes the table and the details there. The
// catch rate is reported, not asserted (a race that does not happen in time
// changes nothing); what is asserted is that every unmutated schedule
// reproduces the serial outputs.
func TestGPUMutationSuite(t *testing.T) {
	gpu, err := experiments.OpenDevice(experiments.CUDADevice)
	if errors.Is(err, device.ErrNoDevice) {
		t.Skipf("no GPU: %v", err)
	}
	require.NoError(t, err)
	defer gpu.Close()
	rep, err := GPUMutationSuite(gpu, true, "h100", GPUFamilies, 3, 1)
	require.NoError(t, err)
	text := "catch rate on " + rep.Device + ":\n\n" + rep.Table() + "\n" + rep.Details()
	t.Log("\n" + text)
	if p := os.Getenv("HARDENING_GPU_REPORT"); p != "" {
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	for k, n := range rep.Controls {
		assert.Zero(t, n, "unmutated %s must reproduce the serial outputs", k)
	}
}
