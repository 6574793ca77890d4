package experiments

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/file"
)

// fileParams are the file family's parameters.
type fileParams struct {
	Path       string `yaml:"path"`
	OverheadNS int64  `yaml:"overhead_ns"`
	FloorNS    int64  `yaml:"floor_ns"`
	ProfilerNS int64  `yaml:"profiler_ns"`
	PinHost    bool   `yaml:"pin_host"`
}

func init() {
	RegisterWorkload("file", "a recorded workload from a workload file (docs/WORKLOADS.md), every kernel replayed "+
		"(params: path (required; YAML, JSON, or either gzipped; relative to the experiment file), overhead_ns=0 taken off each replayed block's time, floor_ns=0 the shortest a simulated replayed block lasts, profiler_ns=0 taken off each recorded kernel duration (what the profiler times beyond the kernel's work), pin_host=false replays pageable copies from pinned memory, so that graphs can capture them)",
		func(params *yaml.Node, _ int64) (*workloads.Program, error) {
			var p fileParams
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			if p.Path == "" {
				return nil, fmt.Errorf("parameter path is required (a workload file, YAML or JSON)")
			}
			f, err := file.Load(p.Path)
			if err != nil {
				return nil, err
			}
			return file.Program(f, file.Options{OverheadNS: p.OverheadNS, FloorNS: p.FloorNS, ProfilerNS: p.ProfilerNS, PinHost: p.PinHost})
		})
	RegisterPathParams("file", "path")
}
