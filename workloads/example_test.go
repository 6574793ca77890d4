package workloads_test

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
)

// A program is buffers and steps of operations whose arguments say which
// bytes they read and write; Bind allocates it on a device, and the
// instance's access sets are what schedulers derive dependencies from.
func Example() {
	k := &device.Kernel{Module: "example", Name: "axpy", Regs: 32}
	kernel := func(name string, args ...workloads.ArgSpec) workloads.Op {
		return workloads.Op{Name: name, Kind: workloads.OpKernel, Kernel: k, Grid: device.D1(4), Block: device.D1(256),
			Args: args, Work: device.Work{Cycles: 1000}}
	}
	const x, a, b, y = 0, 1, 2, 3 // buffer indices
	prog := &workloads.Program{
		Name: "fork-join",
		Buffers: []workloads.BufferSpec{
			{Name: "x", Bytes: 4096}, {Name: "a", Bytes: 4096}, {Name: "b", Bytes: 4096}, {Name: "y", Bytes: 4096, Output: true},
		},
		Steps: []workloads.Step{{Ops: []workloads.Op{
			kernel("left", workloads.BufArg(x, device.Read), workloads.BufArg(a, device.Write)),
			kernel("right", workloads.BufArg(x, device.Read), workloads.BufArg(b, device.Write)),
			kernel("join", workloads.BufArg(a, device.Read), workloads.BufArg(b, device.Read), workloads.BufArg(y, device.Write), workloads.Scalar32(2)),
		}}},
	}
	if err := prog.Validate(); err != nil {
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
		return workloads.WithInstance(h, prog, func(in *workloads.Instance) error {
			names := map[uint64]string{}
			for i, b := range in.Bufs {
				names[b.Addr] = prog.Buffers[i].Name
			}
			for op := 0; op < in.N(); op++ {
				fmt.Printf("%s:", in.Op(op).Name)
				for _, arg := range in.Access(op) {
					fmt.Printf(" %s %s", arg.Mode, names[arg.Buf.Addr])
				}
				fmt.Println()
			}
			return nil
		})
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// left: read x write a
	// right: read x write b
	// join: read a read b write y
}
