package sim

import (
	"fmt"
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
func (p *Profile) LoneNs(m *BlockModel, pt *ProfilePoint) float64 {
	want := p.DurationNs(pt)
	lo, hi := 0.0, max(want, 1)
	for p.KernelNs(m, pt, hi) < want {
		hi *= 2
	}
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if p.KernelNs(m, pt, mid) < want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
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
// profile (profiles are shared and read-only).
var measuredPoints sync.Map // *Profile -> map[pointKey]*pointSet

func pointsOf(p *Profile) map[pointKey]*pointSet {
	if x, ok := measuredPoints.Load(p); ok {
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
			m := measuredPoint{p.LoneNs(&k.Model, pt), pt.PerSM}
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
	shared, _ := measuredPoints.LoadOrStore(p, x)
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
