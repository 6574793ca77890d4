// Package tilesync is cuSync (Jangda et al., "A Framework for Fine-Grained
// Synchronization of Dependent GPU Kernels", CGO 2024, arXiv 2305.13450):
// a producer kernel and the consumer that reads its output run at the same
// time on two streams, the consumer's tiles waiting on per-tile counters in
// device memory instead of on the producer's completion, so consumer blocks
// fill the SMs that the producer's last, partial wave leaves idle.
//
// The programs are workloads/tiles' tile kernels (GEMM and convolution
// stages with synchronization arguments); a producer/consumer pair is two
// consecutive tile operations of a step where the second reads, as its A
// operand, what the first writes. Everything else runs in program order.
//
// How it works: the producer runs on a high-priority stream, the consumer
// on a low-priority one. A finished producer tile increments a counter; a
// consumer tile polls the counters its reduction needs (warp 0, with
// exponential backoff up to Options.PollSleepNS) before reading. A Policy
// maps tiles to counters (RowSync, TileSync, StridedSync, Conv2DTileSync);
// one Pair drives both the kernels' arguments and the simulator's
// block-by-block model (ProducerSync, ConsumerSync), and tells the race
// checker each tile's rows, so a correct policy reports no race. The wait
// kernel (WaitKernelSync) keeps spinning consumers from taking every SM
// before the producer has started, the deadlock the paper describes; the
// custom tile order makes producer rows finish in order; the independent
// operand is loaded before the wait.
//
// The rule (Choose) synchronizes a pair only where wave quantization
// leaves SMs idle that ready consumer tiles can fill (WaveCounts, Gain),
// and only above Options.MinGain; every fallback is the stream-ordered
// schedule itself, so policy auto costs nothing where it finds no gain.
// Decide explains a choice; Scheduler.Choices lists them after Prepare.
//
// Use: New(Defaults()) is the rule for every pair; Options names a policy
// (stream, row, tile, strided, conv2d, fine), the wait kernel, tile order,
// independent operand and the extras (Phases: per-operation end times;
// BlocksPerSM, ProducerAlone, TailRowsAt: occupancy shaping and tail-rows
// order, not in the paper and not used by the rule; Probe: a policy's
// kernels in stream order with only some of their synchronization, to
// measure what it costs). Prepare, outside the
// timed run, creates the streams, counters and launches; Run issues them;
// Cleanup releases them. In an experiment file:
//
//	schedulers:
//	  - kind: stream-sync           # the baseline: one stream
//	  - kind: tilesync              # the rule
//	  - kind: tilesync
//	    params: {policy: row, wait_kernel: on}
//
// On the simulator the counters are modelled block by block; on a GPU
// (device/cuda) the same kernels spin on real counters. Design notes and
// the measurements behind the rule's constants: docs/history/tilesync.md;
// the paper's claims: docs/REFERENCES.md.
package tilesync
