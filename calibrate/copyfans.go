package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "copies one way on many streams" (issue #18, session 26): the random
// DAGs' uploads (independent pinned host-to-device copies of 16 KiB to
// 4 MiB) finish on the H200 in less time than the simulator's one engine a
// direction takes to run them one after the other, each paying
// copy.latency_ns (seed 1593488677's draw 1: 21 copies of 405 KB, 276 us
// on the simulated engine, where the GPU runs the whole AutoGraph step in
// 253 us). This probe times, behind a gate kernel, n = 1, 2, 4 and 8
// copies the same way issued at once on n streams, and the same n copies
// back to back on one stream, at 4 KiB, 64 KiB and 512 KiB: an engine per
// stream whose latencies overlap shows as n streams faster than n back to
// back, by up to (n - 1) latencies.
var cfSizes = []int64{4 << 10, 64 << 10, 512 << 10}

var cfCounts = []int{1, 2, 4, 8}

const cfReps = 4

// cfTime issues n copies of bytes the kind's way behind a 50 us gate
// kernel, on n streams (spread) or back to back on the first, and returns
// the gate's end to the last copy's end (ns).
func (c *calibrator) cfTime(h device.Host, env *gatedCopyEnv, kind device.CopyKind, n int, spread bool, bytes int64) (float64, error) {
	if err := c.gateOpen(h, env); err != nil {
		return 0, err
	}
	streams := 1
	if spread {
		streams = n
	}
	for i := 0; i < streams; i++ {
		if err := h.Wait(env.streams[i], env.gate.e0); err != nil {
			return 0, err
		}
	}
	for i := 0; i < n; i++ {
		s := 0
		if spread {
			s = i
		}
		if err := h.Copy(env.streams[s], env.copy(kind, i, bytes)); err != nil {
			return 0, err
		}
	}
	for i := 0; i < streams; i++ {
		if err := h.Record(env.ends[i], env.streams[i]); err != nil {
			return 0, err
		}
	}
	return env.lastEnd(h, streams)
}

// copiesOneWayOnManyStreams records per direction and size the time of n
// copies on n streams and back to back on one (median of cfReps a round),
// and per round what each copy past the first adds either way:
// (time(n) - time(1)) / (n - 1) over n = 2, 4, 8, least squares through
// the one-copy point.
func (c *calibrator) copiesOneWayOnManyStreams(h device.Host) error {
	env, err := newGatedCopyEnv(h, cfCounts[len(cfCounts)-1], cfSizes[len(cfSizes)-1])
	if err != nil {
		return err
	}
	for _, kind := range []device.CopyKind{device.HostToDevice, device.DeviceToHost} {
		for _, size := range cfSizes {
			if err := c.cfSize(h, env, kind, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// cfSize measures and records one direction and size of
// copiesOneWayOnManyStreams.
func (c *calibrator) cfSize(h device.Host, env *gatedCopyEnv, kind device.CopyKind, size int64) error {
	way := "host-to-device"
	if kind == device.DeviceToHost {
		way = "device-to-host"
	}
	// times[spread][count] per round
	var times [2][][]float64
	for sp := range times {
		times[sp] = make([][]float64, len(cfCounts))
	}
	if err := c.warmRounds(func(measured bool) error {
		for sp, spread := range []bool{false, true} {
			for k, n := range cfCounts {
				var reps []float64
				for r := 0; r < cfReps; r++ {
					t, err := c.cfTime(h, env, kind, n, spread, size)
					if err != nil {
						return fmt.Errorf("copies one way on many streams, %s: %w", way, err)
					}
					reps = append(reps, t)
				}
				if measured {
					times[sp][k] = append(times[sp][k], stats.Median(reps))
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	kib := size >> 10
	const method = "Elapsed from a 50 us gate kernel's end to the last copy's end, pinned, each copy its own buffers; median of 4 a round"
	for k, n := range cfCounts {
		c.record(fmt.Sprintf("copies one way, %s, %d KiB, %d back to back on one stream", way, kib, n), "", "ns", method, times[0][k])
		if n > 1 {
			c.record(fmt.Sprintf("copies one way, %s, %d KiB, %d on %d streams at once", way, kib, n, n), "", "ns", method, times[1][k])
		}
	}
	for sp, how := range []string{"back to back on one stream", "on as many streams at once"} {
		c.record(fmt.Sprintf("copies one way, %s, %d KiB, each copy past the first, %s", way, kib, how), "", "ns",
			"per round, the least-squares slope through the one-copy point of the time over the copies past the first (n = 2, 4, 8)", perExtraCopy(times[sp]))
	}
	return nil
}

// perExtraCopy is, per round, the least-squares slope through the first
// count's point of the time against the copies past the first; times is
// per count (cfCounts) per round.
func perExtraCopy(times [][]float64) []float64 {
	out := make([]float64, len(times[0]))
	for r := range out {
		var sxy, sxx float64
		for k, n := range cfCounts[1:] {
			x := float64(n - 1)
			sxy += x * (times[k+1][r] - times[0][r])
			sxx += x * x
		}
		out[r] = sxy / sxx
	}
	return out
}
