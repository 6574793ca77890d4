package dnn

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
)

// Every launch of every full-size model is one CUDA accepts on the GPUs the
// experiments use (grid and block limits, registers, shared memory).
func TestFullSizeLaunchesAreValid(t *testing.T) {
	var progs []*workloads.Program
	for _, m := range StaticModels {
		p, err := Static(DefaultStatic(m), 1)
		require.NoError(t, err, m)
		progs = append(progs, p)
	}
	for _, v := range DynamicVariants {
		p, err := Dynamic(DynamicParams{Variant: v, Inputs: 2, Scale: 1}, 1)
		require.NoError(t, err, v)
		progs = append(progs, p)
	}
	for _, dev := range []string{"h100", "rtx3070"} {
		cfg, err := sim.LoadConfig(dev)
		require.NoError(t, err)
		for _, p := range progs {
			for _, s := range p.Steps {
				for _, op := range s.Ops {
					l := device.Launch{Kernel: op.Kernel, Grid: op.Grid, Block: op.Block, SharedMem: op.SharedMem, Label: op.Name}
					require.NoError(t, device.ValidateLaunch(&cfg.Info, &l), "%s on %s", p.Name, dev)
				}
			}
		}
	}
}
