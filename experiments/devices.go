package experiments

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// CUDADevice is the device name that selects the first real GPU.
const CUDADevice = "cuda"

// IsCUDA reports whether a device spec names the real GPU rather than a
// simulator config.
func IsCUDA(spec string) bool { return strings.EqualFold(spec, CUDADevice) }

// checkDeviceSpec reports whether spec names a loadable simulator config
// (or cuda, which can only be checked by opening it).
func checkDeviceSpec(spec string) error {
	if IsCUDA(spec) {
		return nil
	}
	_, err := sim.LoadConfig(spec)
	return err
}

// openSim builds a simulator for spec, recording a timeline if trace is set.
func openSim(spec string, trace bool) (device.Device, error) {
	cfg, err := loadSimConfig(spec)
	if err != nil {
		return nil, err
	}
	d, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("simulator %s: %w", spec, err)
	}
	d.EnableTrace(trace)
	return d, nil
}

// builtinConfigs are the built-in simulator configs parsed so far: name ->
// *sim.Config. Parsing one with its kernel profile costs more CPU than
// simulating most rows; sim.New copies a config and only reads its
// profile, so devices share them.
var builtinConfigs sync.Map

// loadSimConfig is sim.LoadConfig, parsing each built-in config once per
// process (a config file is read every time: it may change).
func loadSimConfig(spec string) (*sim.Config, error) {
	if strings.HasSuffix(spec, ".yaml") || strings.HasSuffix(spec, ".yml") {
		return sim.LoadConfig(spec)
	}
	if c, ok := builtinConfigs.Load(spec); ok {
		return c.(*sim.Config), nil
	}
	c, err := sim.LoadConfig(spec)
	if err != nil {
		return nil, err
	}
	builtinConfigs.Store(spec, c)
	return c, nil
}

// OpenCUDA opens the first GPU with every compiled kernel module loaded. In
// a build without the cuda tag it returns an error wrapping
// device.ErrNoDevice that says how to build with CUDA.
func OpenCUDA() (device.Device, error) {
	d, err := cuda.Open(cuda.Options{Modules: kernels.Images()})
	if err != nil {
		return nil, err // not a typed nil in an interface
	}
	return d, nil
}

// OpenDevice opens the device an experiment file names: a simulator config
// (by name or path) or cuda.
func OpenDevice(spec string) (device.Device, error) {
	if IsCUDA(spec) {
		return OpenCUDA()
	}
	return openSim(spec, false)
}

// SimConfigs lists the simulator's built-in device configs.
func SimConfigs() []string { return sim.ConfigNames() }

// SimInfo is the hardware description of a simulator config.
func SimInfo(nameOrPath string) (device.Info, error) {
	cfg, err := loadSimConfig(nameOrPath)
	if err != nil {
		return device.Info{}, err
	}
	return cfg.Info, nil
}
