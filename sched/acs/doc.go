// Package acs is ACS, out-of-order kernel scheduling for input-dependent
// kernel graphs (Durvasula et al., "ACS: Concurrent Kernel Execution on
// Irregular, Input-Dependent Computational Graphs", arXiv 2401.12377), in
// its software form (ACS-SW) on any device and its hardware form (ACS-HW)
// on a device with a hardware dependency queue (the simulator).
//
// ACS-SW (SW, New). Operations enter a window of N slots in program order.
// On insertion an operation's byte ranges (its buffer arguments) are
// compared with those of every operation in the window: each
// read-after-write, write-after-read or write-after-write overlap puts the
// older operation on its upstream list, and an operation is ready when
// the list is empty. One window thread owns the window; K scheduler
// threads each own a stream, take a ready kernel, launch it, wait for it
// and report the completion. The window thread is charged each insertion's
// dependency check with Host.Spend (CheckCost, from the paper's figures);
// on a GPU the check takes its real time.
//
// Params selects the paper's configuration (DefaultParams: N = 32, K = 4,
// completion by stream synchronization, one kernel in flight per stream)
// or gpusched's variants, each named in the scheduler's Name:
//
//   - completion event or callback instead of stream synchronization;
//   - inflight > 1: a kernel whose unfinished upstream kernels are all on
//     one stream is issued behind them; with waits, behind event waits on
//     several streams, so the GPU resolves the dependency;
//   - dispatch shared: no window thread, the scheduler threads share the
//     window under a lock; handoff batched: fewer queue messages;
//   - batch > 1 (with graph_cache): short runs of kernels as one graph;
//   - dispatch graph: one host thread and one stream, every batch of ready
//     kernels launched as one graph (graph_key, lanes shape the graphs).
//
// ACS-HW (HW, NewHW). The window lives in the device's front end
// (device.DependencyQueue, found on the Host). The host keeps a list of
// the last M kernels it submitted, computes each new kernel's upstream ids
// against it and submits; the hardware drops ids already done and
// dispatches ready kernels without a host round trip. HWParams.Checkers
// computes upstream lists on helper threads. On a device without the
// queue ACS-HW returns an error wrapping device.ErrUnsupported.
//
// Use: acs.New(acs.DefaultParams()) gives a sched.Scheduler that is also a
// sched.Preparer (Prepare starts the scheduler threads outside the timed
// run; Cleanup stops them); Stats reports its counters. In an experiment
// file:
//
//	schedulers:
//	  - kind: acs-sw                     # the paper's ACS-SW
//	  - kind: acs-sw
//	    params: {dispatch: graph, threads: 1, lanes: 4}
//	  - kind: acs-hw                     # simulator only
//
// Host threads coordinate only through device.Queue values and host
// callbacks, never through Go locks or channels: on the simulator host
// threads are coroutines in simulated time. Why each variant exists and
// what the GPU runs showed: docs/history/acs.md; the paper's claims:
// docs/REFERENCES.md.
package acs
