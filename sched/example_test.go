package sched_test

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Four independent kernels of 1 ms, each too small to fill the GPU: serial
// runs them one after another, round-robin over 4 streams at once. Times
// are simulated (the H100 config) and rounded to 0.1 ms, far above the
// host's launch costs.
func Example() {
	k := &device.Kernel{Module: "example", Name: "spin", Regs: 32}
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
	oneMillisecond := float64(dev.Info().ClockHz) * 1e-3
	prog := &workloads.Program{Name: "four independent kernels"}
	var step workloads.Step
	for i := 0; i < 4; i++ {
		prog.Buffers = append(prog.Buffers, workloads.BufferSpec{Name: fmt.Sprintf("out%d", i), Bytes: 256})
		step.Ops = append(step.Ops, workloads.Op{Name: fmt.Sprintf("k%d", i), Kind: workloads.OpKernel, Kernel: k,
			Grid: device.D1(1), Block: device.D1(64), Args: []workloads.ArgSpec{workloads.BufArg(i, device.Write)},
			Work: device.Work{Cycles: oneMillisecond}})
	}
	prog.Steps = []workloads.Step{step}
	rr, err := sched.NewRoundRobin(4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range []sched.Scheduler{sched.NewSerial(), rr} {
		err := dev.Run(func(h device.Host) error {
			return workloads.WithInstance(h, prog, func(in *workloads.Instance) error {
				start := h.Now()
				if err := sched.RunOnce(h, in, s); err != nil {
					return err
				}
				fmt.Printf("%s: %v\n", s.Name(), (h.Now() - start).Round(100*time.Microsecond))
				return nil
			})
		})
		if err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// serial: 4ms
	// round-robin(k=4): 1ms
}
