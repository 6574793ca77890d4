package experiments

import (
	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/synthetic"
)

func init() {
	RegisterScheduler("serial", "every operation in program order on one stream",
		func(params *yaml.Node) (sched.Scheduler, error) {
			var p struct{}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return sched.NewSerial(), nil
		})
	RegisterScheduler("round-robin", "operation k on stream k mod K, events for cross-stream dependencies (params: k)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := struct {
				K int `yaml:"k"`
			}{K: 4}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return sched.NewRoundRobin(p.K)
		})
	RegisterScheduler("graph-once", "each step captured once into a multi-stream CUDA graph, launched per step; static programs only (params: streams)",
		withStreams(sched.NewGraphOnce))
	RegisterScheduler("graph-per-step", "a multi-stream CUDA graph captured, instantiated and launched every step (params: streams)",
		withStreams(sched.NewGraphPerStep))
	RegisterWorkload("synthetic", "random layered DAG of synth_node kernels (params: layers, width, fan_in, min_blocks, max_blocks, threads, iters, steps, skip; widths, max_iters, copies, copy_bytes, downloads)",
		func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			p := synthetic.Defaults()
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return synthetic.Generate(p, seed)
		})
}

// withStreams is the constructor of a scheduler whose one parameter is
// streams (default 8): graph-once and graph-per-step.
func withStreams[S sched.Scheduler](build func(streams int) (S, error)) SchedulerFactory {
	return func(params *yaml.Node) (sched.Scheduler, error) {
		p := struct {
			Streams int `yaml:"streams"`
		}{Streams: 8}
		if err := DecodeParams(params, &p); err != nil {
			return nil, err
		}
		s, err := build(p.Streams)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}
