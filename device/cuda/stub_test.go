//go:build !cuda

package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

func TestStubSaysBuiltWithoutCUDA(t *testing.T) {
	d, err := Open(Options{})
	require.Error(t, err)
	assert.Nil(t, d)
	assert.ErrorIs(t, err, device.ErrNoDevice)
	assert.Contains(t, err.Error(), "built without CUDA")
	_, err = Devices()
	assert.ErrorIs(t, err, device.ErrNoDevice)
	var _ device.Device = (*Device)(nil)
	var _ device.Tracer = (*Device)(nil)
}
