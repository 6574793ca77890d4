package experiments

import (
	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/acs"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/rl"
)

func init() {
	RegisterScheduler("acs-sw", "ACS-SW: out-of-order window of N kernels, RAW/WAR/WAW range checks, K scheduler threads with a stream each "+
		"(params: window=32 (<=0 unbounded), threads=4, completion=sync|event|callback, inflight=1, waits=false, batch=0, graph_cache=false, "+
		"dispatch=window|shared|graph (graph: one thread and one stream, every ready kernel in one graph launch; needs threads 1), "+
		"graph_key=width|kernels (dispatch graph), lanes=0 (dispatch graph: a batch's kernels on that many parallel branches, 0 one each), handoff=kernel|batched, check_cost=true)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := acs.DefaultParams()
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return acs.New(p)
		})
	RegisterScheduler("acs-hw", "ACS-HW: kernels submitted to the device's hardware dependency queue with upstream ids from the host's list of the last M (simulator only; params: stale_list=64, check_cost=true, checkers=0 (host threads computing upstream lists ahead of the submitting one))",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := acs.DefaultHWParams()
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return acs.NewHW(p)
		})
	RegisterWorkload("rl-physics", "batched rigid-body physics step (Brax-like; contact kernels chosen per step by the host) "+
		"(params: env=ant|humanoid|halfcheetah|walker2d|grasp, envs, envs_per_group, steps, warmup, iterations, dt, damping, action_scale, drop, block, order=phase|group)",
		func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			p := rl.DefaultParams()
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return rl.Generate(p, seed)
		})
}
