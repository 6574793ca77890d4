//go:build cuda

package cuda

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// fixture is what the fault cases act on, made before a fault is armed.
type fixture struct {
	s, s2          device.Stream
	e, e2          device.Event
	buf, spare     device.Buffer
	pinned, spareH *device.HostMem
	graph          device.Graph
	exec           device.GraphExec
	spin           *device.Kernel
}

func makeFixture(h device.Host, spin *device.Kernel) (*fixture, error) {
	f := &fixture{spin: spin}
	steps := []func() error{
		func() (err error) { f.s, err = h.NewStream(device.StreamOptions{}); return },
		func() (err error) { f.s2, err = h.NewStream(device.StreamOptions{}); return },
		func() (err error) { f.e, err = h.NewEvent(device.EventOptions{}); return },
		func() (err error) { f.e2, err = h.NewEvent(device.EventOptions{}); return },
		func() (err error) { f.buf, err = h.Malloc(4096); return },
		func() (err error) { f.spare, err = h.Malloc(4096); return },
		func() (err error) { f.pinned, err = h.AllocHost(4096, true); return },
		func() (err error) { f.spareH, err = h.AllocHost(4096, true); return },
		func() error { return h.Record(f.e, f.s) },
		func() error { return h.Record(f.e2, f.s) },
		func() error { return h.Synchronize() },
		func() error { return h.BeginCapture(f.s) },
		func() error {
			return h.Copy(f.s, &device.Copy{Kind: device.DeviceToDevice, Src: f.buf, Dst: f.spare, Bytes: 64})
		},
		func() (err error) { f.graph, err = h.EndCapture(f.s); return },
		func() (err error) { f.exec, err = h.Instantiate(f.graph); return },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// TestInjectedDriverFailuresBecomeAPIErrors makes one driver call fail at a
// time (injectFault) and requires the Host method that made it to return a
// *device.APIError naming that call and the injected code. It needs a GPU:
// go test -tags cuda -run TestInjectedDriverFailures ./device/cuda
func TestInjectedDriverFailuresBecomeAPIErrors(t *testing.T) {
	spin, err := kernels.Lookup("devicetest", "spin")
	require.NoError(t, err)
	cases := []struct {
		call string
		act  func(h device.Host, f *fixture) error
	}{
		{"cuMemAlloc", func(h device.Host, f *fixture) error { _, err := h.Malloc(256); return err }},
		{"cuMemFree", func(h device.Host, f *fixture) error { return h.Free(f.spare) }},
		{"cuMemAllocHost", func(h device.Host, f *fixture) error { _, err := h.AllocHost(64, true); return err }},
		{"cuMemFreeHost", func(h device.Host, f *fixture) error { return h.FreeHost(f.spareH) }},
		{"cuStreamCreateWithPriority", func(h device.Host, f *fixture) error {
			_, err := h.NewStream(device.StreamOptions{Priority: -1})
			return err
		}},
		{"cuEventCreate", func(h device.Host, f *fixture) error { _, err := h.NewEvent(device.EventOptions{}); return err }},
		{"cuEventRecord", func(h device.Host, f *fixture) error { return h.Record(f.e, f.s) }},
		{"cuStreamWaitEvent", func(h device.Host, f *fixture) error { return h.Wait(f.s2, f.e) }},
		{"cuStreamSynchronize", func(h device.Host, f *fixture) error { return h.StreamSynchronize(f.s) }},
		{"cuEventSynchronize", func(h device.Host, f *fixture) error { return h.EventSynchronize(f.e) }},
		{"cuCtxSynchronize", func(h device.Host, f *fixture) error { return h.Synchronize() }},
		{"cuEventElapsedTime", func(h device.Host, f *fixture) error { _, err := h.Elapsed(f.e, f.e2); return err }},
		{"cuStreamDestroy", func(h device.Host, f *fixture) error { return h.Destroy(f.s2) }},
		{"cuEventDestroy", func(h device.Host, f *fixture) error { return h.Destroy(f.e2) }},
		{"cuStreamBeginCapture", func(h device.Host, f *fixture) error { return h.BeginCapture(f.s2) }},
		{"cuStreamEndCapture", func(h device.Host, f *fixture) error {
			if err := h.BeginCapture(f.s2); err != nil {
				return err
			}
			if err := h.Copy(f.s2, &device.Copy{Kind: device.DeviceToDevice, Src: f.buf, Dst: f.spare, Bytes: 64}); err != nil {
				return err
			}
			_, err := h.EndCapture(f.s2)
			return err
		}},
		{"cuGraphInstantiateWithFlags", func(h device.Host, f *fixture) error { _, err := h.Instantiate(f.graph); return err }},
		{"cuGraphUpload", func(h device.Host, f *fixture) error { _, err := h.Instantiate(f.graph); return err }},
		{"cuGraphLaunch", func(h device.Host, f *fixture) error { return h.GraphLaunch(f.exec, f.s) }},
		{"cuGraphExecMemcpyNodeSetParams", func(h device.Host, f *fixture) error {
			return h.SetCopyNode(f.exec, 0, &device.Copy{Kind: device.DeviceToDevice, Src: f.spare, Dst: f.buf, Bytes: 32})
		}},
		{"cuGraphExecDestroy", func(h device.Host, f *fixture) error { return h.Destroy(f.exec) }},
		{"cuGraphDestroy", func(h device.Host, f *fixture) error { return h.Destroy(f.graph) }},
		{"cuModuleGetFunction", func(h device.Host, f *fixture) error {
			return h.Launch(f.s, &device.Launch{Kernel: f.spin, Grid: device.D1(1), Block: device.D1(32), Args: []device.Arg{device.U64(0), device.Out(f.buf)}})
		}},
		{"cuFuncGetAttribute", func(h device.Host, f *fixture) error {
			return h.Launch(f.s, &device.Launch{Kernel: f.spin, Grid: device.D1(1), Block: device.D1(32), Args: []device.Arg{device.U64(0), device.Out(f.buf)}})
		}},
		{"cuLaunchKernel", func(h device.Host, f *fixture) error {
			return h.Launch(f.s, &device.Launch{Kernel: f.spin, Grid: device.D1(1), Block: device.D1(32), Args: []device.Arg{device.U64(0), device.Out(f.buf)}})
		}},
		{"cuMemcpyHtoDAsync", func(h device.Host, f *fixture) error {
			return h.Copy(f.s, &device.Copy{Kind: device.HostToDevice, Dst: f.buf, Host: f.pinned, Bytes: 64})
		}},
		{"cuMemcpyDtoHAsync", func(h device.Host, f *fixture) error {
			return h.Copy(f.s, &device.Copy{Kind: device.DeviceToHost, Src: f.buf, Host: f.pinned, Bytes: 64})
		}},
		{"cuMemcpyDtoDAsync", func(h device.Host, f *fixture) error {
			return h.Copy(f.s, &device.Copy{Kind: device.DeviceToDevice, Src: f.buf, Dst: f.spare, Bytes: 64})
		}},
		{"cuLaunchHostFunc", func(h device.Host, f *fixture) error { return h.HostFunc(f.s, func() {}) }},
		{"cuEventQuery", func(h device.Host, f *fixture) error { _, err := h.Query(f.e); return err }},
		{"cuStreamQuery", func(h device.Host, f *fixture) error { _, err := h.StreamQuery(f.s); return err }},
		{"cuCtxSetCurrent", func(h device.Host, f *fixture) error {
			h.Go("worker", func(device.Host) error { return nil })
			return nil
		}},
	}
	const code = "CUDA_ERROR_LAUNCH_FAILED"
	for _, tc := range cases {
		t.Run(tc.call, func(t *testing.T) {
			d, err := Open(Options{Modules: kernels.Images()})
			if errors.Is(err, device.ErrNoDevice) {
				t.Skipf("no GPU: %v", err)
			}
			require.NoError(t, err)
			defer func() { assert.NoError(t, d.Close()) }()
			var actErr, setupErr error
			var disarm func()
			runErr := d.Run(func(h device.Host) error {
				f, err := makeFixture(h, spin)
				if err != nil {
					setupErr = err
					return nil
				}
				// Armed until Run returns, not just until main does: a
				// graph destroyed while an executable lives is destroyed
				// at the end of the run, and a host thread started by Go
				// makes its context current after main may have returned.
				// The fault fires once, so later calls succeed.
				d, err := injectFault(tc.call, 1, code)
				if err != nil {
					setupErr = err
					return nil
				}
				disarm = d
				actErr = tc.act(h, f)
				return nil
			})
			if disarm != nil {
				disarm()
			}
			require.NoError(t, setupErr, "fixture")
			// A failure in a host thread's start comes back from Run.
			err = actErr
			if err == nil {
				err = runErr
			}
			require.Error(t, err, "an injected %s failure must not be swallowed", tc.call)
			var api *device.APIError
			require.True(t, errors.As(err, &api), "want a *device.APIError, got %T: %v", err, err)
			assert.Equal(t, tc.call, api.Call)
			assert.Equal(t, code, api.Code)
			assert.Contains(t, err.Error(), tc.call)
		})
	}
}

// TestRunSetupFailure: a driver failure while Run sets up (the base stream
// a traced run measures command times from) is Run's error, naming the call.
func TestRunSetupFailure(t *testing.T) {
	d, err := Open(Options{Modules: kernels.Images(), Trace: true})
	if errors.Is(err, device.ErrNoDevice) {
		t.Skipf("no GPU: %v", err)
	}
	require.NoError(t, err)
	defer func() { assert.NoError(t, d.Close()) }()
	disarm, err := injectFault("cuStreamCreate", 1, "CUDA_ERROR_OUT_OF_MEMORY")
	require.NoError(t, err)
	defer disarm()
	err = d.Run(func(h device.Host) error { return nil })
	var api *device.APIError
	require.True(t, errors.As(err, &api), "got %T: %v", err, err)
	assert.Equal(t, "cuStreamCreate", api.Call)
	assert.Equal(t, "CUDA_ERROR_OUT_OF_MEMORY", api.Code)
	// Disarmed, the device works again.
	disarm()
	require.NoError(t, d.Run(func(h device.Host) error { return h.Synchronize() }))
}

func TestInjectFaultRejectsBadArguments(t *testing.T) {
	_, err := injectFault("cuMemAlloc", 1, "CUDA_ERROR_NO_SUCH_THING")
	assert.ErrorContains(t, err, "unknown code")
	_, err = injectFault("cuMemAlloc", 0, "CUDA_ERROR_UNKNOWN")
	assert.ErrorContains(t, err, "at least 1")
}
