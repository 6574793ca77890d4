package acs

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/rl"
)

// The host-cost device's costs, settable for BenchmarkSWHostCost:
//
//	go test ./sched/acs -run '^$' -bench SWHostCost -args -hostcost.locked 1us
var (
	hostCostLaunch = flag.Duration("hostcost.launch", 4*time.Microsecond, "host time of one kernel launch")
	hostCostCall   = flag.Duration("hostcost.call", time.Microsecond, "host time of any other driver call")
	hostCostKernel = flag.Duration("hostcost.kernel", 2*time.Microsecond, "how long each kernel runs")
	hostCostLocked = flag.Duration("hostcost.locked", 0, "part of each driver call made under one device-wide lock (the driver's serialization; 0: calls scale with threads)")
)

// hostCostVariants are the ACS-SW variants BenchmarkSWHostCost runs: the
// paper's and the best ones on the H100 (docs/results/acs.md, acs-gpu).
func hostCostVariants() []struct {
	name string
	p    Params
} {
	with := func(f func(*Params)) Params { p := DefaultParams(); f(&p); return p }
	return []struct {
		name string
		p    Params
	}{
		{"acs-sw", DefaultParams()},
		{"inflight4-k8", with(func(p *Params) { p.InFlight, p.Threads = 4, 8 })},
		{"event-inflight4-k8", with(func(p *Params) { p.Completion, p.InFlight, p.Threads = CompletionEvent, 4, 8 })},
		{"event-inflight4", with(func(p *Params) { p.Completion, p.InFlight = CompletionEvent, 4 })},
		{"inflight4-k8-batched", with(func(p *Params) { p.InFlight, p.Threads, p.Handoff = 4, 8, HandoffBatched })},
		{"event-inflight4-k8-batched", with(func(p *Params) {
			p.Completion, p.InFlight, p.Threads, p.Handoff = CompletionEvent, 4, 8, HandoffBatched
		})},
	}
}

// newHostCostDevice costs, by default, what the H100's host measured
// (docs/results/gpu-runs.md, batch E2): a launch 4 us, other driver calls
// 1 us; kernels run 2 us (rl-physics kernels are 1-4 blocks of short
// loops). The flags above change them.
func newHostCostDevice() *hostCostDevice {
	return &hostCostDevice{launchCost: *hostCostLaunch, callCost: *hostCostCall, kernel: *hostCostKernel, locked: *hostCostLocked, queueSpin: 200 * time.Microsecond}
}

// BenchmarkSWHostCost runs the real ACS-SW scheduler on rl-physics
// programs on hostCostDevice, one program per iteration, and reports the
// window thread's own time per kernel (its wall time outside Queue.Get:
// the check, the handoffs' Puts, the bookkeeping) and kernels per second.
// kernels/s depends on how many cores the machine has for the K+1 host
// threads; window-ns/kernel much less (a host thread keeps its core while
// it works). The last iteration's run intervals are checked for races.
//
//	go test ./sched/acs -run '^$' -bench SWHostCost -benchtime 20x
func BenchmarkSWHostCost(b *testing.B) {
	for _, env := range []string{"ant", "humanoid", "grasp"} {
		rp := rl.DefaultParams()
		rp.Env = env
		prog, err := rl.Generate(rp, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("serial/"+env, func(b *testing.B) { benchHostCost(b, prog, sched.NewSerial()) })
		for _, v := range hostCostVariants() {
			b.Run(fmt.Sprintf("%s/%s", v.name, env), func(b *testing.B) {
				s, err := NewSW(v.p)
				if err != nil {
					b.Fatal(err)
				}
				benchHostCost(b, prog, s)
			})
		}
	}
}

// benchHostCost runs s over prog b.N times; for serial, "window" is the
// one thread that launches everything.
func benchHostCost(b *testing.B, prog *workloads.Program, s sched.Scheduler) {
	dev := newHostCostDevice()
	var busy, wall time.Duration
	var kernels int
	var in *workloads.Instance
	prep, _ := s.(sched.Preparer)
	err := dev.Run(func(h device.Host) error {
		var err error
		if in, err = workloads.Bind(h, prog); err != nil {
			return err
		}
		if prep != nil {
			if err := prep.Prepare(h, in); err != nil {
				return err
			}
		}
		hh := h.(*hcHost)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := h.Synchronize(); err != nil {
				return err
			}
			dev.r.mu.Lock()
			dev.r.log = dev.r.log[:0]
			dev.r.mu.Unlock()
			t0, g0 := time.Now(), hh.blockedInGet
			if err := s.Run(h, in); err != nil {
				return err
			}
			d := time.Since(t0)
			wall += d
			busy += d - (hh.blockedInGet - g0)
			kernels += in.N()
		}
		b.StopTimer()
		if prep != nil {
			return prep.Cleanup(h)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if races := dev.r.conflicts(hostCostAccess(in)); len(races) > 0 {
		b.Fatalf("%d races, first between operations %v", len(races), races[0])
	}
	b.ReportMetric(float64(busy.Nanoseconds())/float64(kernels), "window-ns/kernel")
	b.ReportMetric(float64(kernels)/wall.Seconds(), "kernels/s")
	b.ReportMetric(float64(wall.Nanoseconds())/float64(kernels), "ns/kernel")
}

// hostCostAccess maps a logged operation back to its access set.
func hostCostAccess(in *workloads.Instance) func(iv interval) []device.Arg {
	byLaunch := map[*device.Launch]int{}
	byCopy := map[*device.Copy]int{}
	for k := 0; k < in.N(); k++ {
		if l := in.Launch(k); l != nil {
			byLaunch[l] = k
		} else {
			byCopy[in.CopyCmd(k)] = k
		}
	}
	return func(iv interval) []device.Arg {
		if iv.launch != nil {
			return in.Access(byLaunch[iv.launch])
		}
		return in.Access(byCopy[iv.copy])
	}
}
