package experiments

import (
	"fmt"
	"math"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
)

// observe records what a self-observing device saw in one measured
// repetition: races (the most over repetitions), kernels, and for the last
// repetition the SM utilization over the timed region.
func (j *job) observe(row *Row, obs device.Observer, r once, last bool) {
	st := obs.Stats()
	races := obs.Races()
	if row.Races == nil || len(races) > *row.Races {
		n := len(races)
		row.Races = &n
		row.RaceExamples = nil
		for k := 0; k < len(races) && k < 3; k++ {
			row.RaceExamples = append(row.RaceExamples, formatRace(races[k]))
		}
	}
	if !last {
		return
	}
	s0 := &r.stats0
	k := st.Kernels - s0.Kernels
	row.Kernels = &k
	row.KernelTiming = &KernelTiming{Measured: st.MeasuredLaunches - s0.MeasuredLaunches,
		Profiled: st.ProfiledLaunches - s0.ProfiledLaunches, Estimated: st.EstimatedLaunches - s0.EstimatedLaunches}
	util, series := windowUtilization(st, r.t0, r.t1, utilBins)
	util = round(util, 4)
	row.SMUtil = &util
	row.Utilization = series
}

// SchedulerStats reads the counters a scheduler reports, by either of the
// conventions strategies use (Stats or Metrics), dropping values JSON
// cannot carry; nil if there are none.
func SchedulerStats(s sched.Scheduler) map[string]float64 {
	var m map[string]float64
	switch r := s.(type) {
	case interface{ Stats() map[string]float64 }:
		m = r.Stats()
	case interface{ Metrics() map[string]float64 }:
		m = r.Metrics()
	}
	out := map[string]float64{}
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

const utilBins = 200

// windowUtilization averages the device's utilization samples over the
// timed region [t0, t1) and resamples them into bins of equal width. With no
// samples it falls back to the device's own mean over its busy time.
func windowUtilization(st device.Stats, t0, t1 time.Duration, bins int) (float64, []UtilPoint) {
	span := t1 - t0
	if len(st.Utilization) == 0 || span <= 0 {
		return st.SMUtilization, nil
	}
	width := float64(span) / float64(bins)
	warps := make([]float64, bins)
	busy := make([]float64, bins)
	var total float64
	for _, s := range st.Utilization {
		lo, hi := float64(s.T-t0), float64(s.T+s.Width-t0)
		if hi <= 0 || lo >= float64(span) {
			continue
		}
		lo, hi = max(lo, 0), min(hi, float64(span))
		total += s.Warps * (hi - lo)
		for b := int(lo / width); b < bins && float64(b)*width < hi; b++ {
			blo, bhi := float64(b)*width, float64(b+1)*width
			ov := min(hi, bhi) - max(lo, blo)
			if ov > 0 {
				warps[b] += s.Warps * ov / width
				busy[b] += s.Busy * ov / width
			}
		}
	}
	series := make([]UtilPoint, bins)
	for b := range series {
		series[b] = UtilPoint{T: round(float64(b)*width/1e3, 3), Warps: round(warps[b], 4), Busy: round(busy[b], 4)}
	}
	return total / float64(span), series
}

func formatRace(r device.Race) string {
	return fmt.Sprintf("%s (stream %d, %v-%v) and %s (stream %d, %v-%v) overlap on [%#x, %#x)",
		r.A.Name, r.A.Stream, r.A.Start, r.A.End, r.B.Name, r.B.Stream, r.B.Start, r.B.End, r.Lo, r.Hi)
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
