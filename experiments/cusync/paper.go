// Package cusync is the reproduction of cuSync (Jangda et al., CGO 2024;
// docs/REFERENCES.md): the GPT-3 and LLaMA-65B MLPs and the ResNet-38 and
// VGG-19 convolution pairs of workloads/tiles under stream synchronization
// and under each tile-synchronization policy of sched/tilesync, on the
// simulator and on a GPU, plus the deadlock that spinning consumers hit
// without cuSync's wait kernel. It registers the paper "cusync":
//
//	gpusched paper cusync run configs/experiments/cusync-sim.yaml -o results/cusync-sim
//	gpusched paper cusync report -o docs/results/cusync.md docs/results/cusync-sim.json docs/results/cusync-gpu.json
//
// Beside what the runner measures for every row (on a GPU in interleaved
// rounds, outputs poisoned after Prepare and compared with the serial
// schedule's bit for bit), each row records the producer's and consumer's
// waves on its device, and each simulator device runs the deadlock probe:
// GPT-3's GEMM2 issued before its producer, without and with the wait
// kernel. On a GPU, rows warm up three times where the file says nothing
// (the tile kernels' first runs load modules and ramp clocks).
package cusync

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/sched/tilesync"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/tiles"
)

func init() {
	experiments.RegisterPaper(&experiments.Paper{
		Name:      "cusync",
		Title:     "cuSync: tile-level synchronization of dependent kernels (sched/tilesync against stream order)",
		Configs:   []string{"configs/experiments/cusync-sim.yaml", "configs/experiments/cusync-gpu.yaml"},
		GPUWarmup: 3,
		Facts:     waves,
		Probes:    deadlocks,
		Report:    report,
	})
}

// waves are the producer's and consumer's wave counts on the device, for a
// program of one tile pair.
func waves(prog *workloads.Program, info *device.Info) map[string]float64 {
	pair := stagesOf(prog)
	if len(pair) != 2 {
		return nil
	}
	out := map[string]float64{}
	for i, name := range []string{"producer_waves", "consumer_waves"} {
		w, err := tilesync.Waves(info, pair[i])
		if err != nil {
			return nil
		}
		out[name] = w
	}
	return out
}

// stagesOf is the first pair of tile stages of a program.
func stagesOf(p *workloads.Program) []tiles.Stage {
	var out []tiles.Stage
	if len(p.Steps) == 0 {
		return nil
	}
	for _, op := range p.Steps[0].Ops {
		if s, err := tiles.FromOp(&op); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// deadlockPair names the probe's pair in the results.
const deadlockPair = "gpt3 T=1024 GEMM1 -> GEMM2 (row), consumer issued first"

// deadlocks reproduces the spinning-consumer deadlock on simulator dev:
// GPT-3's GEMM2 at T = 1024 (768 tiles > the 264 an H100 holds) issued
// before its producer, without and with the wait kernel.
func deadlocks(dev string) ([]experiments.Probe, error) {
	m, err := tiles.NewMLP(tiles.MLPParams{Model: "gpt3", Tokens: 1024, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
	if err != nil {
		return nil, err
	}
	pair, err := tilesync.NewPair(tilesync.RowSync, m.GEMM1, m.GEMM2)
	if err != nil {
		return nil, err
	}
	var out []experiments.Probe
	for _, wait := range []bool{false, true} {
		d, err := experiments.OpenDevice(dev)
		if err != nil {
			return nil, err
		}
		info := d.Info()
		err = d.Run(func(h device.Host) error { return tilesync.ConsumerFirst(h, &info, pair, wait, 50*time.Microsecond) })
		if cerr := d.Close(); cerr != nil {
			return nil, cerr
		}
		res := "completed"
		var dl *device.DeadlockError
		switch {
		case errors.As(err, &dl):
			res = dl.Error()
		case err != nil:
			return nil, err
		}
		out = append(out, experiments.Probe{Name: deadlockPair, Device: dev,
			Params: map[string]string{"wait_kernel": fmt.Sprint(wait)}, Result: res})
	}
	return out, nil
}
