// Package sim is gpusched's discrete-event GPU simulator: a device.Device
// that runs the CUDA stream model in simulated time, at thread-block
// granularity, deterministically (same inputs, same output, byte for byte).
//
// Use it like any device:
//
//	dev, err := sim.NewNamed("h100") // configs/devices/h100.yaml, or a .yaml path
//	err = dev.Run(func(h device.Host) error { ... launches, copies, events, graphs ... })
//	st := dev.Stats() // kernels, SM utilization, launches timed from a profile
//
// A Config (strict YAML, configs/devices) describes the hardware
// (device.Info) and every cost: host API calls (charged to the calling
// host thread, partly under a driver lock all threads share), the front end
// (hardware queues with their false dependencies, launch latency,
// back-to-back gaps, graph launches per branch and node), the block
// scheduler (per-SM limits, stream priorities, a BlockPolicy), copy
// engines, host callbacks, and ACS-HW's dependency queue (WithDependencyQueue).
//
// A block's duration is fixed when it starts. A kernel the config's kernel
// Profile covers (measured on a GPU by `gpusched profile`) takes the
// measured time of the profile point its launch matches exactly, else its
// block model's time for the launch's Work (corrected by the nearest
// profiled launches of the kernel where the model has a neighbor rule,
// profile_neighbors.go), times a co-residency factor at
// its SM's resident warps; any other kernel takes its Work estimate (cycles,
// flops and bytes against the SM's and the memory system's rates, shared
// among co-resident blocks, scaled by the achieved fractions of peak).
// Stats says how many launches each timed. With copy.dtod_contention, a
// device-to-device copy and memory-moving blocks share the memory
// bandwidth by progress rates (bandwidth.go): both slow while both run,
// and their ends move whenever either's load changes. With
// copy.duplex_slowdown, pinned copies each way at once slow each other
// (pcie.go); with copy.back_to_back_latency_ns and copy.queued_latency_ns,
// host copies that follow copies on a busy engine wait less (hostcopies.go).
//
// Host threads are coroutines in simulated time: only the engine or one
// host thread runs at a time, and every host action happens in global time
// order. Blocking calls park a thread until the engine wakes it, after a
// wake-up cost (a hand-off cost for a Queue Get).
//
// The simulator checks what a GPU would not: races between commands that
// overlapped in time or that nothing orders (vector clocks over streams,
// events, host synchronization, queues, graph edges and cuSync counters;
// WithRaceMode), deadlocks (a *device.DeadlockError naming what waits),
// livelocks (host threads polling work nothing can complete: the same
// error marked Livelock, past WithLivelockBudget's budgets), times past
// the Horizon of one simulated day (a *HorizonError naming the command
// and the config field behind it; no time is ever saturated or wrapped),
// and launches the device could not run. It moves no data: kernels compute
// nothing (Program.Check is for GPUs). WithTrace records a Chrome trace
// (WriteTrace) that Perfetto opens.
//
// docs/SIMULATOR.md is the full cost model (every config field, the
// profile format and its fit, calibration, what the model leaves out) with
// its sources; docs/results/cuda-calibration.md has the GPU measurements.
package sim
