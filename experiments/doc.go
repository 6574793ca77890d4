// Package experiments runs matrices of workload x device x scheduler x
// repetition, computes statistics, and writes results people and scripts
// read. Workload families and schedulers register themselves here (files
// register_<strategy>.go) so experiment files can name them.
//
// The model. An experiment file (configs/experiments/*.yaml, decoded
// strictly by ParseExperiment: an unknown field is an error naming its file,
// line and field) lists workloads, schedulers and devices. Every (workload,
// device, scheduler) is a row; a row runs the scheduler Warmup+Repetitions
// times on a freshly bound program and keeps the measured repetitions. One
// repetition is, on the device's main host thread:
//
//	inst := workloads.Bind(h, prog)      // allocate, upload inputs
//	sched.Prepare(h, inst)               // if the scheduler is a Preparer
//	h.Synchronize(); t0 := h.Now()
//	sched.Run(h, inst)
//	h.Synchronize(); t1 := h.Now()       // makespan = t1 - t0
//	inst.Outputs(h)                      // on a GPU: compared with serial's
//	sched.Cleanup(h); inst.Release(h)
//
// so set-up that a real system does once (stream creation, graph capture)
// is outside the timed region, exactly as for every scheduler alike.
// Speedups are the baseline's median makespan over the row's, within one
// group (sweep point, workload, device). On a device that computes (CUDA),
// every scheduler's outputs must equal the serial schedule's byte for byte
// and pass the program's own CPU check; a difference is an error in the row.
// On a device that observes itself (the simulator), rows also report SM
// utilization over the timed region, kernel count and races.
//
// Simulator rows run in parallel, each on its own simulator; GPU rows run one
// at a time afterwards. Results never depend on completion order or on wall
// time, so the same experiment writes byte-identical files every time, and
// the shards of a sweep (Shard) merge (Merge) into exactly the files the
// unsharded sweep writes.
//
// Statistics (Summarize) are the median, mean, sample standard deviation and
// the 95% Student-t confidence interval of the mean, via gonum/stat. Rows
// report the baseline's absolute makespan next to every speedup, medians
// with their range, and the interval for measurements that vary, following
// Hoefler and Belli, "Scientific Benchmarking of Parallel Computing
// Systems" (SC 2015). The t interval assumes roughly normal means; with few
// repetitions of a noisy GPU, read the range, not only the interval.
// Validate runs one experiment on the simulator and on a GPU, and
// ValidateFiles re-simulates committed GPU results (no GPU needed); both
// join the rows, refusing rows that are not the same scheduler with the
// same parameters, and report the simulator's fidelity (experiments/fidelity:
// errors, pair order, best-pick regret, the GPU's own spread).
package experiments
