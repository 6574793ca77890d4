package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "copies both ways at once" (issue #18, session 24): Queue's rows are
// simulated 18-19% fast on both GPUs (docs/results/fidelity.md, by
// scheduler kind), and on set-park-gpu's copy-bound sobel jobs each of
// Queue's two threads waits ~16 us a job longer than Synchronous's one,
// where the simulator has a host-to-device and a device-to-host copy on
// two streams run side by side at full speed (two copy engines, one
// direction each). This probe times, behind a gate kernel, a pinned copy
// alone each way, one each way at once on two streams, and two the same
// way at once, at 4 and 64 MiB: a link that does not carry both
// directions at full speed at once shows as "both ways" over the longer
// alone above 1.
var cwSizes = []int64{4 << 20, 64 << 20}

const cwReps = 4

// cwCase is one timed case: the copies issued on streams 0 and 1.
type cwCase struct {
	name  string
	kinds []device.CopyKind
}

var cwCases = []cwCase{
	{"host-to-device alone", []device.CopyKind{device.HostToDevice}},
	{"device-to-host alone", []device.CopyKind{device.DeviceToHost}},
	{"one each way at once", []device.CopyKind{device.HostToDevice, device.DeviceToHost}},
	{"two host-to-device at once", []device.CopyKind{device.HostToDevice, device.HostToDevice}},
	{"two device-to-host at once", []device.CopyKind{device.DeviceToHost, device.DeviceToHost}},
}

// gatedCopyEnv is what the gated copy probes share ("copies both ways at
// once", "copies one way on many streams"): a gate stream, n copy streams
// with an end event each, and per copy slot its own device buffer and
// pinned host memory of the largest size (no two copies of a case touch
// the same bytes).
type gatedCopyEnv struct {
	gate    *timedStream
	streams []device.Stream
	ends    []device.Event
	copySlots
}

func newGatedCopyEnv(h device.Host, n int, largest int64) (*gatedCopyEnv, error) {
	gate, err := newTimedStream(h)
	if err != nil {
		return nil, err
	}
	env := &gatedCopyEnv{gate: gate}
	if env.ends, err = newEventsWith(h, n, device.EventOptions{}); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, err
		}
		env.streams = append(env.streams, s)
		if err := env.add(h, largest); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// copySlots is, per copy slot, its own device buffer and pinned host
// memory, so that no two copies of a case touch the same bytes.
type copySlots struct {
	dev []device.Buffer
	pin []*device.HostMem
}

// newCopySlots allocates n slots of bytes each.
func newCopySlots(h device.Host, n int, bytes int64) (copySlots, error) {
	var s copySlots
	for i := 0; i < n; i++ {
		if err := s.add(h, bytes); err != nil {
			return s, err
		}
	}
	return s, nil
}

// add allocates one more slot of bytes.
func (s *copySlots) add(h device.Host, bytes int64) error {
	b, err := h.Malloc(bytes)
	if err != nil {
		return err
	}
	m, err := h.AllocHost(bytes, true)
	if err != nil {
		return err
	}
	s.dev, s.pin = append(s.dev, b), append(s.pin, m)
	return nil
}

// copy is slot i's copy of bytes the kind's way.
func (s copySlots) copy(kind device.CopyKind, i int, bytes int64) *device.Copy {
	cp := &device.Copy{Kind: kind, Host: s.pin[i], Bytes: bytes}
	if kind == device.HostToDevice {
		cp.Dst = s.dev[i]
	} else {
		cp.Src = s.dev[i]
	}
	return cp
}

// gateOpen launches a 50 us gate kernel and records its end on the gate
// stream: the copies issued behind it reach their engines at one instant.
func (c *calibrator) gateOpen(h device.Host, env *gatedCopyEnv) error {
	if err := h.Launch(env.gate.s, c.spinLaunch(us(50), env.gate.done)); err != nil {
		return err
	}
	return h.Record(env.gate.e0, env.gate.s)
}

// lastEnd synchronizes and returns the gate's end to the latest of the
// first n streams' end events (ns).
func (env *gatedCopyEnv) lastEnd(h device.Host, n int) (float64, error) {
	if err := h.Synchronize(); err != nil {
		return 0, err
	}
	var last float64
	for i := 0; i < n; i++ {
		d, err := h.Elapsed(env.gate.e0, env.ends[i])
		if err != nil {
			return 0, err
		}
		last = max(last, ns(d))
	}
	return last, nil
}

// cwTime issues the case's copies of bytes behind a 50 us gate kernel and
// returns the gate's end to the last copy's end (ns).
func (c *calibrator) cwTime(h device.Host, env *gatedCopyEnv, cs cwCase, bytes int64) (float64, error) {
	if err := c.gateOpen(h, env); err != nil {
		return 0, err
	}
	for i, kind := range cs.kinds {
		for _, issue := range []func() error{
			func() error { return h.Wait(env.streams[i], env.gate.e0) },
			func() error { return h.Copy(env.streams[i], env.copy(kind, i, bytes)) },
			func() error { return h.Record(env.ends[i], env.streams[i]) },
		} {
			if err := issue(); err != nil {
				return 0, err
			}
		}
	}
	return env.lastEnd(h, len(cs.kinds))
}

// copiesBothWays records each case's time per size (median of cwReps a
// round) and, per round, "one each way at once" over the longer of the
// two alone and "two the same way" over twice the one alone (1: the link
// carries them as if alone; 2 for both ways: one after the other). It
// sets copy.duplex_slowdown (duplexSlowdown).
func (c *calibrator) copiesBothWays(h device.Host) error {
	env, err := newGatedCopyEnv(h, 2, cwSizes[len(cwSizes)-1])
	if err != nil {
		return err
	}
	bySize := make([][][]float64, len(cwSizes)) // size, case, round
	for z, size := range cwSizes {
		times := make([][]float64, len(cwCases))
		bySize[z] = times
		if err := c.warmRounds(func(measured bool) error {
			for k, cs := range cwCases {
				var reps []float64
				for r := 0; r < cwReps; r++ {
					t, err := c.cwTime(h, env, cs, size)
					if err != nil {
						return fmt.Errorf("copies both ways at once, %s: %w", cs.name, err)
					}
					reps = append(reps, t)
				}
				if measured {
					times[k] = append(times[k], stats.Median(reps))
				}
			}
			return nil
		}); err != nil {
			return err
		}
		mib := size >> 20
		const method = "Elapsed from a 50 us gate kernel's end to the last copy's end, pinned, each stream its own buffers; median of 4 a round"
		for k, cs := range cwCases {
			c.record(fmt.Sprintf("copies, %d MiB, %s", mib, cs.name), "", "ns", method, times[k])
		}
		both, sameH, sameD := make([]float64, len(times[0])), make([]float64, len(times[0])), make([]float64, len(times[0]))
		for r := range times[0] {
			both[r] = times[2][r] / max(times[0][r], times[1][r])
			sameH[r] = times[3][r] / (2 * times[0][r])
			sameD[r] = times[4][r] / (2 * times[1][r])
		}
		c.record(fmt.Sprintf("copies, %d MiB, one each way at once over the longer alone", mib), "", "", "per round, the ratio of the medians (1: both directions at full speed at once)", both)
		c.record(fmt.Sprintf("copies, %d MiB, two host-to-device at once over twice one alone", mib), "", "", "per round, the ratio of the medians (1: shared at no loss)", sameH)
		c.record(fmt.Sprintf("copies, %d MiB, two device-to-host at once over twice one alone", mib), "", "", "per round, the ratio of the medians (1: shared at no loss)", sameD)
	}
	c.record("copies, duplex slowdown", "copy.duplex_slowdown", "",
		"per round, the transfer part of one each way at once over the longer alone's, less the intercept of the longer alone over the two sizes, averaged over the sizes", duplexSlowdown(bySize))
	return nil
}

// duplexSlowdown is, per round, what moving bytes both ways at once
// stretches a transfer by (the simulator's copy.duplex_slowdown): at each
// size (both - L) / (alone - L), alone the longer of the two alone and L
// the latency the alone times of the two sizes extrapolate to at 0 bytes,
// averaged over the sizes. times is per size (cwSizes) per case (cwCases)
// per round.
func duplexSlowdown(times [][][]float64) []float64 {
	alone := func(z, r int) float64 { return max(times[z][0][r], times[z][1][r]) }
	first, last := 0, len(cwSizes)-1
	out := make([]float64, len(times[0][0]))
	for r := range out {
		slope := (alone(last, r) - alone(first, r)) / float64(cwSizes[last]-cwSizes[first])
		lat := alone(first, r) - slope*float64(cwSizes[first])
		for z := range cwSizes {
			out[r] += (times[z][2][r] - lat) / (alone(z, r) - lat) / float64(len(cwSizes))
		}
	}
	return out
}
