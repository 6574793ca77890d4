package tilesync

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// Probes (Options.Probe) measure what the synchronization code costs a
// kernel when it never waits: a synchronized pair's launches are issued in
// stream order, the consumer behind its producer on the producer's stream,
// so every counter a consumer block polls is complete when it polls.
// Set against stream order's own time (both with Options.Phases, each
// kernel's end), they separate the per-block costs of posting and polling
// from what overlapping the two kernels gains or loses. Not in the paper.
//
//   - post: only the producer's posts (a barrier, a fence and an atomic
//     increment per tile); the consumer is the plain kernel.
//   - wait: only the consumer's polls, on counters set complete before the
//     first run (its waits are met at once); the producer is plain.
//   - all: every synchronization argument the policy sets (posts, polls,
//     the tile-order counters, the start flag) and the wait kernel, which
//     then finds its flag raised.
const (
	ProbePost = "post"
	ProbeWait = "wait"
	ProbeAll  = "all"
)

// presetCount is what a wait probe's counters hold from the start: more
// than any run's target (run number x posts per counter).
const presetCount = 1 << 30

func checkProbe(opt Options, stream bool) error {
	switch opt.Probe {
	case "":
		return nil
	case ProbePost, ProbeWait, ProbeAll:
	default:
		return fmt.Errorf("probe %q: want %s, %s or %s", opt.Probe, ProbePost, ProbeWait, ProbeAll)
	}
	if stream || opt.Policy == "auto" {
		return fmt.Errorf("probe %s: give a synchronizing policy (row, tile, strided, conv2d or fine): the probe runs that policy's kernels in stream order", opt.Probe)
	}
	if opt.shaping() || opt.TailRowsAt > 0 {
		return fmt.Errorf("probe %s: blocks_per_sm, producer_alone and tail_rows_at change the overlapped run, which a probe does not make", opt.Probe)
	}
	return nil
}

// consumerStream is the stream a pair's consumer (and wait kernel) is
// issued on: the producer's under a probe.
func (s *Scheduler) consumerStream() device.Stream {
	if s.opt.Probe != "" {
		return s.prodS
	}
	return s.consS
}

// counterInit is the initial content of a pair's counter buffer: zeros,
// or under the wait probe the policy's counters already complete.
func (s *Scheduler) counterInit(p *Pair) []int32 {
	if s.opt.Probe != ProbeWait {
		return nil
	}
	data := make([]int32, p.Counters)
	for i := range data {
		data[i] = presetCount
	}
	return data
}

// applyProbe strips the parts of a built pair that the probe leaves out.
func (s *Scheduler) applyProbe(pr *pairRun) {
	if s.opt.Probe == "" || s.opt.Probe == ProbeAll {
		return
	}
	pa, ca := pr.prodL.Args, pr.consL.Args
	for _, a := range [][]device.Arg{pa, ca} {
		a[tiles.ArgOrderCounter] = device.U64(0)
		a[tiles.ArgStartFlag] = device.U64(0)
	}
	psync := pr.prodL.Sync.(*ProducerSync)
	psync.Order, psync.Flag, pr.consSync.Order = nil, false, nil
	pr.choice.WaitKernel, pr.waitSync = false, nil
	switch s.opt.Probe {
	case ProbePost:
		ca[tiles.ArgWait] = device.U64(0)
		for i := tiles.ArgWaitRowStride; i <= tiles.ArgWaitPer; i++ {
			ca[i] = device.I32(0)
		}
		ca[tiles.ArgFlags] = device.I32(0)
		pr.consL.Sync = nil
	case ProbeWait:
		pa[tiles.ArgPost] = device.U64(0)
		for i := tiles.ArgPostRowStride; i <= tiles.ArgPostColDiv; i++ {
			pa[i] = device.I32(0)
		}
		pr.prodL.Sync = nil
		pr.presetWaits = true
	}
}
