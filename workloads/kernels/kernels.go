package kernels

import (
	"fmt"
	"sort"

	"github.com/gpusched/gpusched/device"
)

// Module is one compiled .cu file.
type Module struct {
	Name         string // file name without .cu
	Source       string // file name
	Compiler     string // the nvcc release that built Image
	Flags        string // its nvcc flags; Regs and StaticShared are for sm_90
	SourceSHA256 string // hex SHA-256 of the source the image was built from
	ImageSHA256  string // hex SHA-256 of Image
	Image        []byte // the fat binary, as cuModuleLoadData takes it
	Kernels      []*device.Kernel
}

// modules is filled at init by the generated zz_<module>.go files, sorted by
// name.
var modules []Module

func register(m Module) {
	modules = append(modules, m)
	sort.Slice(modules, func(i, j int) bool { return modules[i].Name < modules[j].Name })
}

// Modules lists the compiled modules, sorted by name. The slice is a copy;
// the descriptors it points to are shared and must not be modified.
func Modules() []Module {
	return append([]Module(nil), modules...)
}

// Images maps each module's name to its fat binary, for the CUDA backend's
// Options.Modules.
func Images() map[string][]byte {
	out := make(map[string][]byte, len(modules))
	for _, m := range modules {
		out[m.Name] = m.Image
	}
	return out
}

// Lookup finds kernel name in module. The descriptor is shared: callers must
// not modify it.
func Lookup(module, name string) (*device.Kernel, error) {
	for i := range modules {
		m := &modules[i]
		if m.Name != module {
			continue
		}
		for _, k := range m.Kernels {
			if k.Name == name {
				return k, nil
			}
		}
		return nil, fmt.Errorf("kernels: module %q has no kernel %q (it has %s)", module, name, kernelNames(m))
	}
	return nil, fmt.Errorf("kernels: no module %q (modules are the .cu files in workloads/kernels: %s)", module, moduleNames())
}

func kernelNames(m *Module) string {
	s := ""
	for i, k := range m.Kernels {
		if i > 0 {
			s += ", "
		}
		s += k.Name
	}
	return s
}

func moduleNames() string {
	s := ""
	for i, m := range modules {
		if i > 0 {
			s += ", "
		}
		s += m.Name
	}
	return s
}
