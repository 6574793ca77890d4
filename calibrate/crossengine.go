package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// "waits across engines" (issue #18, session 32): on an H200 a 64 KiB
// copy out issued 0 us after a 5 us kernel's launch returned ends 18.7 us
// after the kernel's launch, issued 3 us later 21.7 and 6 us later (once
// the kernel has ended) 16.5 ("copies and kernels issued live"): a copy
// that reaches the device while the kernel before it on its stream runs
// starts about 10.6 us after it arrived, however soon the kernel ends, as
// if a command waiting on another engine's work were looked at again only
// a fixed time after it first was. This probe sweeps the issue delay
// finely to show that period: a 5 us kernel then a 64 KiB copy out, and a
// 512 KiB copy in then an empty kernel, the second issued d = 0, 1, ...,
// 14 us after the first call returned.
var ceDelays = func() []int {
	var d []int
	for i := 0; i <= 14; i++ {
		d = append(d, i)
	}
	return d
}()

const (
	ceBigBytes = 512 << 10
	ceLongUs   = 20 // the kernel a copy waits on over several periods
)

func (c *calibrator) waitsAcrossEngines(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	slot, err := newCopySlots(h, 1, ceBigBytes)
	if err != nil {
		return err
	}
	in, outBig := slot.copy(device.HostToDevice, 0, ceBigBytes), slot.copy(device.DeviceToHost, 0, ceBigBytes)
	in64, out := slot.copy(device.HostToDevice, 0, cklBytes), slot.copy(device.DeviceToHost, 0, cklBytes)
	for _, pair := range []struct {
		name          string
		first, second func() error
		less          float64
	}{
		{fmt.Sprintf("%d us kernel then 64 KiB copy out", cklSpinUs), func() error { return h.Launch(t.s, c.spinLaunch(us(cklSpinUs), t.done)) },
			func() error { return h.Copy(t.s, out) }, ns(us(cklSpinUs))},
		{fmt.Sprintf("%d us kernel then 64 KiB copy out", ceLongUs), func() error { return h.Launch(t.s, c.spinLaunch(us(ceLongUs), t.done)) },
			func() error { return h.Copy(t.s, out) }, ns(us(ceLongUs))},
		{"512 KiB copy in then empty kernel", func() error { return h.Copy(t.s, in) },
			func() error { return h.Launch(t.s, c.emptyLaunch(1)) }, 0},
		{"512 KiB copy out then 64 KiB copy in", func() error { return h.Copy(t.s, outBig) },
			func() error { return h.Copy(t.s, in64) }, 0},
		// The control: a kernel waiting on a kernel, one engine.
		{fmt.Sprintf("%d us kernel then empty kernel", ceLongUs), func() error { return h.Launch(t.s, c.spinLaunch(us(ceLongUs), t.done)) },
			func() error { return h.Launch(t.s, c.emptyLaunch(1)) }, ns(us(ceLongUs))},
	} {
		for _, d := range ceDelays {
			rounds, err := c.medianRounds(cklReps, func() (float64, error) {
				e, err := t.elapsed(h, func() error {
					if err := pair.first(); err != nil {
						return err
					}
					hold(h, us(d))
					return pair.second()
				})
				return e - pair.less, err
			})
			if err != nil {
				return fmt.Errorf("waits across engines, %s, %d us: %w", pair.name, d, err)
			}
			c.record(fmt.Sprintf("waits across engines, %s, the second %d us after", pair.name, d), "", "ns",
				fmt.Sprintf("Elapsed around both on an idle stream, the second issued %d us after the first call returned (the host polling its clock), pinned, less the kernel's spin; median of %d a round", d, cklReps), rounds)
		}
	}
	if err := c.ceAcrossStreams(h, t, in, out); err != nil {
		return err
	}
	return c.ceJobLoops(h, t)
}

// ceAcrossStreams times the waits when the second command is on another
// stream, behind a wait on an event recorded after the first: a 20 us
// kernel then a 64 KiB copy out, a 512 KiB copy in then an empty kernel,
// a 20 us kernel then an empty kernel.
// Elapsed from a record before the first, on its stream, to one after
// the second, on the other.
func (c *calibrator) ceAcrossStreams(h device.Host, t *timedStream, in, out *device.Copy) error {
	s2, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return err
	}
	ev, err := h.NewEvent(device.EventOptions{})
	if err != nil {
		return err
	}
	for _, pair := range []struct {
		name          string
		first, second func() error
		less          float64
	}{
		{fmt.Sprintf("%d us kernel then 64 KiB copy out on another stream", ceLongUs), func() error { return h.Launch(t.s, c.spinLaunch(us(ceLongUs), t.done)) },
			func() error { return h.Copy(s2, out) }, ns(us(ceLongUs))},
		{"512 KiB copy in then empty kernel on another stream", func() error { return h.Copy(t.s, in) },
			func() error { return h.Launch(s2, c.emptyLaunch(1)) }, 0},
		// One engine, two streams: does a kernel behind another stream's
		// kernel poll too?
		{fmt.Sprintf("%d us kernel then empty kernel on another stream", ceLongUs), func() error { return h.Launch(t.s, c.spinLaunch(us(ceLongUs), t.done)) },
			func() error { return h.Launch(s2, c.emptyLaunch(1)) }, ns(us(ceLongUs))},
	} {
		for _, d := range ceDelays {
			rounds, err := c.medianRounds(cklReps, func() (float64, error) {
				if err := h.Record(t.e0, t.s); err != nil {
					return 0, err
				}
				if err := pair.first(); err != nil {
					return 0, err
				}
				if err := h.Record(ev, t.s); err != nil {
					return 0, err
				}
				hold(h, us(d))
				if err := h.Wait(s2, ev); err != nil {
					return 0, err
				}
				if err := pair.second(); err != nil {
					return 0, err
				}
				if err := h.Record(t.e1, s2); err != nil {
					return 0, err
				}
				if err := h.Synchronize(); err != nil {
					return 0, err
				}
				e, err := h.Elapsed(t.e0, t.e1)
				return ns(e) - pair.less, err
			})
			if err != nil {
				return fmt.Errorf("waits across engines, %s, %d us: %w", pair.name, d, err)
			}
			c.record(fmt.Sprintf("waits across engines, %s, the second %d us after", pair.name, d), "", "ns",
				fmt.Sprintf("Elapsed from a record before the first to one after the second on its own stream, the second issued %d us after the first's record returned, behind a wait on it (the host polling its clock), pinned, less the kernel's spin; median of %d a round", d, cklReps), rounds)
		}
	}
	return nil
}

// ceLoopJobs is how many jobs ceJobLoops issues; ceLoopSpins the kernels'
// spins (us).
var ceLoopSpins = []int{5, 20}

const ceLoopJobs = 16

// ceJobLoops times 16 jobs of a 64 KiB copy in, a spinning kernel and a
// 64 KiB copy out on one stream, issued live (the GPU falls behind the
// host with the 20 us kernel: its commands queue behind running work as
// they arrive) or all queued behind a 200 us gate first: per job, Elapsed
// from a record before the first job (behind the gate, for the gated) to
// one after the last, over the jobs, less the spin. Queued behind a gate
// every command of a chain waits for a poll; whether commands queued
// behind work issued as it runs do is what tells the model.
func (c *calibrator) ceJobLoops(h device.Host, t *timedStream) error {
	slots, err := newCopySlots(h, ceLoopJobs, cklBytes)
	if err != nil {
		return err
	}
	for _, spin := range ceLoopSpins {
		issue := func() error {
			for i := 0; i < ceLoopJobs; i++ {
				if err := h.Copy(t.s, slots.copy(device.HostToDevice, i, cklBytes)); err != nil {
					return err
				}
				if err := h.Launch(t.s, c.spinLaunch(us(spin), t.done)); err != nil {
					return err
				}
				if err := h.Copy(t.s, slots.copy(device.DeviceToHost, i, cklBytes)); err != nil {
					return err
				}
			}
			return nil
		}
		for _, gated := range []bool{false, true} {
			rounds, err := c.medianRounds(cklReps/2, func() (float64, error) {
				if gated {
					if err := h.Launch(t.s, c.spinLaunch(us(200), t.done)); err != nil {
						return 0, err
					}
				}
				e, err := t.elapsed(h, issue)
				return e/ceLoopJobs - ns(us(spin)), err
			})
			if err != nil {
				return fmt.Errorf("waits across engines, job loop, %d us kernel: %w", spin, err)
			}
			how := "issued live"
			if gated {
				how = "queued behind a gate"
			}
			c.record(fmt.Sprintf("waits across engines, %d jobs of copy in, %d us kernel, copy out %s, per job less the spin", ceLoopJobs, spin, how), "", "ns",
				fmt.Sprintf("Elapsed from a record before the first job (behind a 200 us gate kernel when queued) to one after the last, over the jobs, less the kernel's spin; 64 KiB pinned copies, each job its own buffers; median of %d a round", cklReps/2), rounds)
		}
	}
	return nil
}
