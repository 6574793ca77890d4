package acs

import (
	"testing"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/rl"
)

// BenchmarkWindowCheck measures the real CPU cost of one insertion into a
// full window of 32 on rl-physics' access sets, to set beside the paper's
// 0.51 us (6 ranges) to 1.64 us (10 ranges) that the simulator charges.
func BenchmarkWindowCheck(b *testing.B) {
	prog, err := rl.Generate(rl.DefaultParams(), 1)
	if err != nil {
		b.Fatal(err)
	}
	dev, err := sim.NewNamed("h100")
	if err != nil {
		b.Fatal(err)
	}
	var sets [][]device.Arg
	if err := dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		for k := 0; k < in.N(); k++ {
			sets = append(sets, in.Access(k))
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	access := func(k int) []device.Arg { return sets[k%len(sets)] }
	b.ResetTimer()
	inserted := 0
	// One window, reset per pass over the program, as ACS-SW keeps its
	// window across Runs.
	w := newWindow(len(sets), 32, access, false)
	for inserted < b.N {
		w.reset(len(sets), 32, access, false)
		// Fill the window, then insert one kernel per retired one.
		w.admit()
		for !w.finished() && inserted < b.N {
			k := w.members[0]
			w.issue(k, 0)
			w.complete(k)
			inserted += w.admit()
		}
	}
}
