//go:build !cuda

package cuda

import (
	"fmt"
	"io"

	"github.com/gpusched/gpusched/device"
)

// errNotBuilt says why this binary cannot reach a GPU.
var errNotBuilt = fmt.Errorf("%w: this binary was built without CUDA (rebuild with `make build-cuda`, i.e. go build -tags cuda)", device.ErrNoDevice)

// Device is the CUDA backend; in a binary built without the cuda tag it
// cannot be opened.
type Device struct{}

// Open reports that the binary was built without CUDA.
func Open(opts Options) (*Device, error) { return nil, errNotBuilt }

// Devices reports that the binary was built without CUDA.
func Devices() ([]Summary, error) { return nil, errNotBuilt }

// Info implements device.Device; a Device cannot be opened in this build.
func (*Device) Info() device.Info { return device.Info{} }

// Run implements device.Device; a Device cannot be opened in this build.
func (*Device) Run(func(device.Host) error) error { return errNotBuilt }

// Close implements device.Device.
func (*Device) Close() error { return nil }

// EnableTrace implements device.Tracer; a Device cannot be opened in this build.
func (*Device) EnableTrace(bool) {}

// WriteTrace implements device.Tracer; a Device cannot be opened in this build.
func (*Device) WriteTrace(io.Writer) error { return errNotBuilt }

// LastTimeline implements device.TimelineSource; a Device cannot be opened in this build.
func (*Device) LastTimeline() (*device.Timeline, error) { return nil, errNotBuilt }
