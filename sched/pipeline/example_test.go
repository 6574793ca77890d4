package pipeline_test

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/pipeline"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

// SET with its default parameters (the paper's) runs 16 Sobel jobs on 4
// workers: each worker's graph is captured once, and every later job of a
// worker updates only its two copy nodes. Params.Validate names a bad
// combination before anything runs.
func ExampleNew() {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 16, Size: 64}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := pipeline.New(pipeline.DefaultParams())
	if err != nil {
		fmt.Println(err)
		return
	}
	dev, err := sim.NewNamed("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := dev.Close(); err != nil {
			fmt.Println(err)
		}
	}()
	err = dev.Run(func(h device.Host) error {
		return workloads.WithInstance(h, w.Program, func(in *workloads.Instance) error {
			return sched.RunOnce(h, in, s)
		})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := s.Metrics()
	fmt.Printf("%s: %v jobs, %v node updates, %v syncs\n", s.Name(), m["jobs"], m["node_updates"], m["syncs"])

	bad := pipeline.DefaultParams()
	bad.JobsPerLaunch = 4 // a chain of jobs per launch needs a ring of execs
	_, err = pipeline.New(bad)
	fmt.Println(err)
	// Output:
	// set(b=4,warm): 16 jobs, 24 node updates, 0 syncs
	// set: jobs_per_launch is 4 but ring is 0; several jobs per launch need a ring (ring: 1 or more), since a chain of jobs is prepared only into an exec whose last launch has completed
}
