//go:build cuda

// Package cudatest opens the real GPU for the GPU-only tests of other
// packages (build tag cuda): Open gives GPU 0 with every compiled kernel
// module, closed when the test ends, or skips the test, saying why, where
// the machine has no GPU. In the manner of net/http/httptest.
package cudatest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// Open opens GPU 0 with every compiled module (kernels.Images), or skips
// the test saying why there is no GPU; any other error fails it. The device
// is closed, and its Close error checked, when the test ends.
func Open(t testing.TB) *cuda.Device {
	t.Helper()
	d, err := cuda.Open(cuda.Options{Modules: kernels.Images()})
	if errors.Is(err, device.ErrNoDevice) {
		t.Skipf("no GPU: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	return d
}
