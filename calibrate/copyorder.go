package calibrate

import (
	"fmt"
	"slices"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "copies at once, each timed" (issue #18, session 30): SET-batch's chunk
// graphs side by side run 1.5-2.2x longer on an H200 than simulated (the
// CUDA backend's timelines, session 30: 138-158 us a 12-job chunk on four
// workers against 64-102), while alone they are simulated within 6%. Their
// time is mostly their batched copies (a 0.75-1.5 MiB copy in and out).
// The simulator runs a direction's copies one after the other on one
// engine; "copies one way on many streams" (session 26) timed only the last
// of n copies issued at once, which is the same whether an engine runs
// them in turn or several engines share the link. This probe tells the two
// apart: behind a gate kernel, one pinned copy on each of n streams, and
// the gate's end to each copy's end. Run in turn, the first copy ends after
// one copy's time and the last after n; sharing the link, all end together
// near n.
var (
	coCounts = []int{2, 4, 8}
	coSizes  = []int64{256 << 10, 1 << 20}
)

const coReps = 4

// coName is a "copies at once, each timed" measurement's name.
func coName(way string, kib int64, n int, which string) string {
	return fmt.Sprintf("copies at once, %s, %d KiB, %d streams: %s copy's end", way, kib, n, which)
}

// coTimes issues one copy of bytes the kind's way on each of n streams
// behind a 50 us gate kernel and returns the gate's end to each copy's end
// (ns), sorted.
func (c *calibrator) coTimes(h device.Host, env *gatedCopyEnv, kind device.CopyKind, n int, bytes int64) ([]float64, error) {
	if err := c.gateOpen(h, env); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		for _, issue := range []func() error{
			func() error { return h.Wait(env.streams[i], env.gate.e0) },
			func() error { return h.Copy(env.streams[i], env.copy(kind, i, bytes)) },
			func() error { return h.Record(env.ends[i], env.streams[i]) },
		} {
			if err := issue(); err != nil {
				return nil, err
			}
		}
	}
	if err := h.Synchronize(); err != nil {
		return nil, err
	}
	ends := make([]float64, n)
	for i := range ends {
		d, err := h.Elapsed(env.gate.e0, env.ends[i])
		if err != nil {
			return nil, err
		}
		ends[i] = ns(d)
	}
	slices.Sort(ends)
	return ends, nil
}

// copiesAtOnceEachTimed records, per direction, size and stream count, the
// first, middle and last copy's end (each the median of coReps a round),
// and a lone copy's end for scale.
func (c *calibrator) copiesAtOnceEachTimed(h device.Host) error {
	env, err := newGatedCopyEnv(h, coCounts[len(coCounts)-1], coSizes[len(coSizes)-1])
	if err != nil {
		return err
	}
	for _, kind := range []device.CopyKind{device.HostToDevice, device.DeviceToHost} {
		for _, size := range coSizes {
			if err := c.coSize(h, env, kind, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// coSize measures and records one direction and size of
// copiesAtOnceEachTimed.
func (c *calibrator) coSize(h device.Host, env *gatedCopyEnv, kind device.CopyKind, size int64) error {
	way := "host-to-device"
	if kind == device.DeviceToHost {
		way = "device-to-host"
	}
	counts := append([]int{1}, coCounts...)
	picks := []string{"first", "middle", "last"}
	// rounds[count][pick] per round
	rounds := make([][3][]float64, len(counts))
	if err := c.warmRounds(func(measured bool) error {
		for k, n := range counts {
			var reps [3][]float64
			for r := 0; r < coReps; r++ {
				ends, err := c.coTimes(h, env, kind, n, size)
				if err != nil {
					return fmt.Errorf("copies at once, each timed, %s: %w", way, err)
				}
				for p, at := range []int{0, (n - 1) / 2, n - 1} {
					reps[p] = append(reps[p], ends[at])
				}
			}
			if measured {
				for p := range reps {
					rounds[k][p] = append(rounds[k][p], stats.Median(reps[p]))
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	kib := size >> 10
	const method = "Elapsed from a 50 us gate kernel's end to each copy's end, one pinned copy on each of n streams issued at once, the ends sorted; median of 4 a round"
	c.record(fmt.Sprintf("copies at once, %s, %d KiB, a lone copy's end", way, kib), "", "ns", method, rounds[0][0])
	for k, n := range counts[1:] {
		for p, which := range picks {
			c.record(coName(way, kib, n, which), "", "ns", method, rounds[k+1][p])
		}
	}
	return nil
}
