package acs

import "time"

// The paper's measured CPU cost of one dependency check (inserting one
// kernel into a window of 16 or 32 kernels, each with 6 or 10 memory
// ranges), in microseconds (Durvasula et al., arXiv 2401.12377: the
// software window's dependency-check overhead).
var measuredCheck = [2][2]float64{
	{0.41, 0.70}, // window 16: 6 ranges, 10 ranges
	{0.51, 1.64}, // window 32: 6 ranges, 10 ranges
}

const (
	measuredWinLo, measuredWinHi       = 16, 32
	measuredRangesLo, measuredRangesHi = 6, 10
)

// The window thread's own Go work on the GPU hosts (issue #18, session 17),
// measured by call_stats on configs/experiments/acsgap-gpu.yaml
// (scripts/gpu/acsgap.sh; the lead's calls on an H100 and an H200, median
// over the 30 dispatch-window rows of each; docs/results/calibration-h100.md
// "Session 17"), charged with Host.Spend, which a GPU ignores (there the
// work takes its real time):
//   - checkHostScale: the dependency check (window_check_ns_per_op) took
//     2.1x (H100; H200 2.2x, rows 1.4-3.6x) what CheckCost charges;
//   - a work queue's Put from the window thread (the queue's mutex and
//     the spinning scheduler thread's cache line), 446 ns (H100; H200
//     435; rows 239-1,161): since session 33 the simulator charges every
//     host thread's Put and Len itself (host.queue_call_ns and
//     queue_call_per_thread_ns, fitted on these rows' window Puts and
//     their scheduler threads' Len and Put), so it is no longer Spent here;
//   - windowRetireCost: retiring one finished job (its completion's Get,
//     the queue's Len, completing its operations in the window), 628 ns
//     (H100; H200 595; rows 358-1,285). Its Len is charged again by the
//     simulator since session 33; taking it out made every checked
//     figure worse, so it stays (calibration-h100.md "Session 33").
//
// The simulator charged none of these before (its queues' calls are free
// unless host.queue_lock_ns is set), so the window thread, which binds
// ACS-SW's rows on DNN and random-DAG shapes, ran 3-7x too fast.
const (
	checkHostScale   = 2.1
	windowRetireCost = 628 * time.Nanosecond
)

// CheckCost is the CPU time charged for comparing a new kernel with ranges
// memory ranges against the window kernels currently in the window.
//
// Inside the measured box (16 to 32 kernels, 6 to 10 ranges) it is the
// bilinear interpolation of the paper's four measurements. Outside it, the
// box's nearest edge is scaled in proportion (window/edge, ranges/edge):
// the check is a loop over kernels and ranges, so its cost grows linearly
// in each, and this never extrapolates below zero, as a bilinear
// extrapolation of these four points would for small windows. An empty
// window costs nothing.
func CheckCost(window, ranges int) time.Duration {
	if window <= 0 {
		return 0
	}
	ranges = max(ranges, 1)
	w := min(max(window, measuredWinLo), measuredWinHi)
	r := min(max(ranges, measuredRangesLo), measuredRangesHi)
	fw := float64(w-measuredWinLo) / float64(measuredWinHi-measuredWinLo)
	fr := float64(r-measuredRangesLo) / float64(measuredRangesHi-measuredRangesLo)
	lo := measuredCheck[0][0]*(1-fr) + measuredCheck[0][1]*fr
	hi := measuredCheck[1][0]*(1-fr) + measuredCheck[1][1]*fr
	us := lo*(1-fw) + hi*fw
	us *= float64(window) / float64(w) * float64(ranges) / float64(r)
	return time.Duration(us * float64(time.Microsecond))
}
