package sim

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/gpusched/gpusched/device"
)

// The lone launches a profile measured, as the simulator runs them: the
// fit (calibrate.FitProfile) inverts this timing to find each point's lone
// block time, and the simulator times a launch that matches a point from
// that time (measuredLone), so that the matched launch alone takes the
// point's measured duration.

// profileWarpSize is the warp width of every GPU the project models; a
// point's block warps are counted with it.
const profileWarpSize = 32

// PointWarps is the warps of a block of threads threads.
func PointWarps(threads int) int { return (threads + profileWarpSize - 1) / profileWarpSize }

// Wave is Count waves of a lone launch with Blocks blocks on its most
// loaded SM and Total blocks on the GPU.
type Wave struct{ Blocks, Total, Count int }

// Waves decomposes a lone launch of grid blocks, perSM per SM, on sms SMs:
// full waves, then one of the rest (ceil(rest/sms) on the busiest SM).
func Waves(grid, perSM, sms int) []Wave {
	full := grid / (perSM * sms)
	rest := grid - full*perSM*sms
	var ws []Wave
	if full > 0 {
		ws = append(ws, Wave{perSM, perSM * sms, full})
	}
	if rest > 0 {
		ws = append(ws, Wave{(rest + sms - 1) / sms, rest, 1})
	}
	return ws
}

// Effective is a wave's co-residency in blocks per SM under a gpu share:
// its busiest SM's and the GPU's mean, weighted.
func (w Wave) Effective(share float64, sms int) float64 {
	return (1-share)*float64(w.Blocks) + share*float64(w.Total)/float64(sms)
}

// DurationNs is a point's kernel duration: its median per-launch time less
// the back-to-back gap.
func (p *Profile) DurationNs(pt *ProfilePoint) float64 {
	return max(pt.Median()-p.BackToBackNs, 0)
}

// KernelNs is a lone launch's duration in the simulator when its blocks
// last lone x their wave's factor under m (at least the shortest block):
// the sum of its waves plus the last wave's block dispatch, or, when the
// block distributor bounds it, every block's dispatch plus the last wave.
func (p *Profile) KernelNs(m *BlockModel, pt *ProfilePoint, lone float64) float64 {
	wb := PointWarps(pt.Threads)
	sum, last, lastN := 0.0, 0.0, 0
	for _, w := range Waves(pt.Grid, pt.PerSM, p.SMs) {
		mean := float64(w.Total*wb) / float64(p.SMs)
		last = max(lone*m.Factor(float64(w.Blocks*wb), mean, wb, p.DefaultWarpSlope), p.MinBlockNs)
		sum += float64(w.Count) * last
		lastN = w.Total
	}
	d := p.BlockDispatchNs
	return max(sum+float64(lastN)*d, float64(pt.Grid)*d+last)
}

// LoneNs is the lone block time under m that makes KernelNs the point's
// duration (bisection: KernelNs grows with it); the smallest such time
// when the shortest block or the dispatch hides it.
func (p *Profile) LoneNs(m *BlockModel, pt *ProfilePoint) float64 { return p.LoneNsAt(m, pt, 0) }

// LoneNsAt is LoneNs for a simulator with the residency rate model at
// threshold retime (RatedKernelNs; 0: off, KernelNs).
func (p *Profile) LoneNsAt(m *BlockModel, pt *ProfilePoint, retime float64) float64 {
	kernelNs := func(lone float64) float64 {
		if retime > 0 {
			return p.RatedKernelNs(m, pt, lone, retime)
		}
		return p.KernelNs(m, pt, lone)
	}
	want := p.DurationNs(pt)
	lo, hi := 0.0, max(want, 1)
	for kernelNs(hi) < want {
		hi *= 2
	}
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if kernelNs(mid) < want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// RatedKernelNs is KernelNs under the residency rate model at threshold
// retime, as the simulator runs a lone launch then (retime.go). Its first
// placement of N = kS blocks (k per SM on S SMs) is dispatched
// breadth-first, so the SMs start d (block_dispatch_ns) apart, each with
// its k-th block; every later placement on a freed SM dispatches its
// blocks one after another, behind the distributor's backlog. A full wave
// of k blocks per SM lasts T x factor(k). A partial wave (the last, or
// the only one) runs floor(rest/S) blocks on most SMs and one more on
// rest mod S of them, the first to free (the blocks spread as the SMs
// empty): its SMs of either count run at their factor beside the other's
// until the shorter ones end, and the others' remaining fraction then at
// their factor alone (if that moves it by more than retime). The kernel
// ends with the later of its two kinds of SMs, or, when the distributor
// bounds it, with every block's dispatch plus the last wave.
func (p *Profile) RatedKernelNs(m *BlockModel, pt *ProfilePoint, lone, retime float64) float64 {
	wb, S, d := PointWarps(pt.Threads), p.SMs, p.BlockDispatchNs
	k := pt.PerSM
	dur := func(blocks int, meanBlocks float64) float64 {
		return max(lone*m.Factor(float64(blocks*wb), meanBlocks*float64(wb), wb, p.DefaultWarpSlope), p.MinBlockNs)
	}
	full := pt.Grid / (k * S)
	rest := pt.Grid - full*k*S
	lvl, extra := rest/S, rest%S
	tail := func(loStart, hiStart float64) float64 {
		return partialWaveEnd(dur, lvl, extra, S, retime, loStart, hiStart)
	}
	last := dur(max(lvl+min(extra, 1), 1), float64(rest)/float64(S))
	if full == 0 {
		return max(tail(float64(lvl*S)*d, float64(rest)*d), float64(pt.Grid)*d+last)
	}
	one, n1 := dur(k, float64(k)), float64(k*S)
	// The last SM's start of its last full wave: the first wave's SMs free
	// d apart, and the distributor refills each with k blocks, k d apart
	// from then on.
	lastStart, gap := n1*d, d
	if full > 1 {
		lastStart = float64((k-1)*S+1)*d + n1*d + float64(full-1)*one + float64((full-2)*k)*d
		gap = float64(k) * d
	}
	end := lastStart + one
	switch {
	case rest == 0:
		last = one
	case full == 1: // frees d apart: the distributor falls behind
		free0 := end - float64(S-1)*d
		end = tail(free0+float64(rest)*d, free0+float64(extra*(lvl+1))*d)
	default:
		end = tail(end+float64(lvl)*d, end-float64(S-extra)*gap+float64(lvl+1)*d)
	}
	return max(end, float64(pt.Grid)*d+last)
}

// partialWaveEnd is when a partial wave of lvl blocks on S-extra SMs and
// lvl+1 on extra SMs ends, the last SM of each kind starting at loStart
// and hiStart, from blocks' durations dur(blocks on the SM, mean blocks
// per SM): both kinds run at their factor beside each other until the
// one that ends first does, then the other at its factor alone for the
// fraction it has left, if that moves its duration by more than retime.
func partialWaveEnd(dur func(int, float64) float64, lvl, extra, S int, retime, loStart, hiStart float64) float64 {
	mean := float64(lvl*S+extra) / float64(S)
	switch {
	case extra == 0:
		return loStart + dur(lvl, mean)
	case lvl == 0:
		return hiStart + dur(1, mean)
	}
	lo, hi := dur(lvl, mean), dur(lvl+1, mean)
	first, start, d, alone := loStart+lo, hiStart, hi, dur(lvl+1, float64(extra*(lvl+1))/float64(S))
	if hiStart+hi < first {
		first, start, d, alone = hiStart+hi, loStart, lo, dur(lvl, float64((S-extra)*lvl)/float64(S))
	}
	if math.Abs(alone-d) <= retime*d {
		return max(first, start+d)
	}
	done := min(max((first-start)/d, 0), 1)
	return max(first, start) + (1-done)*alone
}

// pointKey is a launch as a profile point records it: kernel, blocks,
// threads per block, dynamic shared memory and Work per block.
type pointKey struct {
	kernel                kernelName
	grid, threads, shared int
	work                  device.Work
}

func (pt *ProfilePoint) key(k kernelName) pointKey {
	return pointKey{k, pt.Grid, pt.Threads, pt.Shared, device.Work{Cycles: pt.Cycles, Flops: pt.Flops, Bytes: pt.Bytes}}
}

// measuredPoint is a point's lone block time under its kernel's model and
// the blocks per SM it was measured at.
type measuredPoint struct {
	loneNs float64
	perSM  int
}

// pointSet is the points of one launch shape: the one without scalars
// (any) and those with, by signature.
type pointSet struct {
	any    *measuredPoint
	signed map[string]measuredPoint
}

// match is the point that times a launch with scalar arguments args: the
// one with its signature, else the one without any.
func (s *pointSet) match(args []device.Arg) (measuredPoint, bool) {
	if len(s.signed) > 0 {
		if pt, ok := s.signed[ScalarSignature(args)]; ok {
			return pt, true
		}
	}
	if s.any != nil {
		return *s.any, true
	}
	return measuredPoint{}, false
}

// measuredPoints indexes a profile's points by launch, computed once per
// profile and rate model (profiles are shared and read-only).
var measuredPoints sync.Map // inversionKey -> map[pointKey]*pointSet

// inversionKey is a profile as the simulator inverts its points: with the
// residency rate model at threshold retime, or without (0).
type inversionKey struct {
	p      *Profile
	retime float64
}

func pointsOf(p *Profile, retime float64) map[pointKey]*pointSet {
	key := inversionKey{p, retime}
	if x, ok := measuredPoints.Load(key); ok {
		return x.(map[pointKey]*pointSet)
	}
	x := map[pointKey]*pointSet{}
	for i := range p.Kernels {
		k := &p.Kernels[i]
		name := kernelNameOf(k.Kernel)
		for j := range k.Points {
			pt := &k.Points[j]
			set := x[pt.key(name)]
			if set == nil {
				set = &pointSet{}
				x[pt.key(name)] = set
			}
			m := measuredPoint{p.LoneNsAt(&k.Model, pt, retime), pt.PerSM}
			if pt.Scalars == "" {
				set.any = &m
				continue
			}
			if set.signed == nil {
				set.signed = map[string]measuredPoint{}
			}
			set.signed[pt.Scalars] = m
		}
	}
	shared, _ := measuredPoints.LoadOrStore(key, x)
	return shared.(map[pointKey]*pointSet)
}

// measuredLone is the lone block time of the profile point that l
// matches (same kernel, blocks, threads, dynamic shared memory and Work,
// the same scalar arguments when the point records them, and perSM, the
// launch's blocks per SM on this device, equal to the point's), or false
// when no point matches.
func (x *profileIndex) measuredLone(l *device.Launch, perSM func() int) (float64, bool) {
	if x == nil || l.Kernel == nil {
		return 0, false
	}
	set, ok := x.points[pointKey{kernelName{l.Kernel.Module, l.Kernel.Name}, l.Grid.Count(), l.Block.Count(), l.SharedMem, l.Work}]
	if !ok {
		return 0, false
	}
	pt, ok := set.match(l.Args)
	if !ok || pt.perSM != perSM() {
		return 0, false
	}
	return pt.loneNs, true
}

// ScalarSignature is a launch's scalar arguments in order, as a profile
// point records them: SIZE:BITS each (bytes, then the low SIZE bytes in
// hex), separated by spaces; "" without scalars.
func ScalarSignature(args []device.Arg) string {
	var b strings.Builder
	for _, a := range args {
		if a.Kind != device.ArgScalar {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		bits := a.Bits
		if a.Size < 8 {
			bits &= 1<<(8*uint(a.Size)) - 1
		}
		fmt.Fprintf(&b, "%d:%x", a.Size, bits)
	}
	return b.String()
}

// checkScalars validates a point's scalars field: ScalarSignature's form,
// 4- or 8-byte values that fit their size, written as it writes them.
func checkScalars(sig string) error {
	args, err := parseScalars(sig)
	if err != nil {
		return err
	}
	if want := ScalarSignature(args); want != sig {
		return fmt.Errorf("scalars %q: write it %q (one space between scalars, lower-case hex without leading zeros)", sig, want)
	}
	return nil
}

func errBadScalar(sig, field string) error {
	return fmt.Errorf("scalars %q: %q is not SIZE:BITS (4 or 8 bytes, the bits in hex)", sig, field)
}
