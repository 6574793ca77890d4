package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// "copies and kernels issued live" (issue #18, session 32): behind a gate
// kernel, each job of a 64 KiB copy in and an empty kernel costs an H200
// 13.1 us on one stream where the simulator gives 8.9 ("copies around
// kernels in a graph", session 31), as if a kernel that waits on a copy
// (or a copy on a kernel) paid about 4 us more than back_to_back_ns. Yet
// SET's synchronous rows, the same jobs issued one at a time with a
// synchronize after each, are simulated 9% slow already, and charging
// the 4 us there makes them 30% slow. This probe tells the cases apart
// on one stream: a copy then a kernel (and a kernel then a copy) with the
// second issued d us after the first call returned, or behind a gate that
// holds both until they are queued; jobs issued live, with a synchronize
// after each or one at the end; and the copy and the kernel alone.
var (
	// cklDelays are the host's waits (us) between the two calls.
	cklDelays = []int{0, 3, 6, 10, 20}
	// cklJobs is how many jobs a job loop issues.
	cklJobs = 8
	// cklStreams is how many fresh streams the gated pairs are timed on
	// one by one: a cost that differs by stream within one process is
	// the stream's (its copy engine's), not the process's.
	cklStreams = 8
)

const (
	cklBytes    = 64 << 10
	cklSpinUs   = 5  // the kernel a copy out follows
	cklGateUs   = 50 // the gate the queued pairs wait behind
	cklReps     = 8  // measurements per case and round (their median)
	cklGateName = "behind a gate"
)

// cklEnv is the probe's stream, its events and buffers.
type cklEnv struct {
	t *timedStream
	copySlots
}

func (c *calibrator) copiesAndKernelsIssuedLive(h device.Host) error {
	env := &cklEnv{}
	var err error
	if env.t, err = newTimedStream(h); err != nil {
		return err
	}
	if env.copySlots, err = newCopySlots(h, cklJobs, cklBytes); err != nil {
		return err
	}
	for _, pair := range []struct {
		name   string
		first  func() error
		second func() error
		less   float64
	}{
		{"copy in then empty kernel", func() error { return h.Copy(env.t.s, env.copy(device.HostToDevice, 0, cklBytes)) },
			func() error { return h.Launch(env.t.s, c.emptyLaunch(1)) }, 0},
		{fmt.Sprintf("%d us kernel then copy out", cklSpinUs), func() error { return h.Launch(env.t.s, c.spinLaunch(us(cklSpinUs), env.t.done)) },
			func() error { return h.Copy(env.t.s, env.copy(device.DeviceToHost, 0, cklBytes)) }, ns(us(cklSpinUs))},
	} {
		if err := c.cklPair(h, env, pair.name, pair.first, pair.second, pair.less); err != nil {
			return fmt.Errorf("copies and kernels issued live, %s: %w", pair.name, err)
		}
	}
	for _, alone := range []struct {
		name  string
		issue func() error
	}{
		{"copy in alone", func() error { return h.Copy(env.t.s, env.copy(device.HostToDevice, 0, cklBytes)) }},
		{"empty kernel alone", func() error { return h.Launch(env.t.s, c.emptyLaunch(1)) }},
	} {
		rounds, err := c.medianRounds(cklReps, func() (float64, error) { return env.t.elapsed(h, alone.issue) })
		if err != nil {
			return fmt.Errorf("copies and kernels issued live, %s: %w", alone.name, err)
		}
		c.record("copies and kernels issued live, "+alone.name, "", "ns",
			fmt.Sprintf("Elapsed around it on an idle stream (64 KiB pinned); median of %d a round", cklReps), rounds)
	}
	if err := c.cklLoops(h, env); err != nil {
		return err
	}
	return c.cklOnStreams(h, env)
}

// cklOnStreams times the two gated pairs on cklStreams fresh streams,
// each with its own events, one stream after the other.
func (c *calibrator) cklOnStreams(h device.Host, env *cklEnv) error {
	for j := 1; j <= cklStreams; j++ {
		t, err := newTimedStream(h)
		if err != nil {
			return err
		}
		for _, pair := range []struct {
			name  string
			issue func() error
			less  float64
		}{
			{"copy in then empty kernel", func() error {
				if err := h.Copy(t.s, env.copy(device.HostToDevice, 0, cklBytes)); err != nil {
					return err
				}
				return h.Launch(t.s, c.emptyLaunch(1))
			}, 0},
			{fmt.Sprintf("%d us kernel then copy out", cklSpinUs), func() error {
				if err := h.Launch(t.s, c.spinLaunch(us(cklSpinUs), t.done)); err != nil {
					return err
				}
				return h.Copy(t.s, env.copy(device.DeviceToHost, 0, cklBytes))
			}, ns(us(cklSpinUs))},
		} {
			rounds, err := c.medianRounds(cklReps, func() (float64, error) {
				if err := h.Launch(t.s, c.spinLaunch(us(cklGateUs), t.done)); err != nil {
					return 0, err
				}
				d, err := t.elapsed(h, pair.issue)
				return d - pair.less, err
			})
			if err != nil {
				return fmt.Errorf("copies and kernels issued live, %s, stream %d: %w", pair.name, j, err)
			}
			c.record(fmt.Sprintf("copies and kernels issued live, %s, %s, stream %d of %d", pair.name, cklGateName, j, cklStreams), "", "ns",
				fmt.Sprintf("as the pair behind a gate, on the %d-th of %d streams created one after the other, each with its own events; median of %d a round", j, cklStreams, cklReps), rounds)
		}
	}
	return nil
}

// cklPair times first and second on an idle stream, second issued each
// delay after first returned and once both behind a gate, less less.
func (c *calibrator) cklPair(h device.Host, env *cklEnv, name string, first, second func() error, less float64) error {
	for _, d := range cklDelays {
		rounds, err := c.medianRounds(cklReps, func() (float64, error) {
			t, err := env.t.elapsed(h, func() error {
				if err := first(); err != nil {
					return err
				}
				hold(h, us(d))
				return second()
			})
			return t - less, err
		})
		if err != nil {
			return err
		}
		c.record(fmt.Sprintf("copies and kernels issued live, %s, the second %d us after", name, d), "", "ns",
			fmt.Sprintf("Elapsed around both on an idle stream, the second issued %d us after the first call returned (the host polling its clock), 64 KiB pinned, less the kernel's spin; median of %d a round", d, cklReps), rounds)
	}
	rounds, err := c.medianRounds(cklReps, func() (float64, error) {
		if err := h.Launch(env.t.s, c.spinLaunch(us(cklGateUs), env.t.done)); err != nil {
			return 0, err
		}
		t, err := env.t.elapsed(h, func() error {
			if err := first(); err != nil {
				return err
			}
			return second()
		})
		return t - less, err
	})
	if err != nil {
		return err
	}
	c.record(fmt.Sprintf("copies and kernels issued live, %s, %s", name, cklGateName), "", "ns",
		fmt.Sprintf("Elapsed from a record behind a %d us gate kernel on the same stream to the pair's end, both queued behind the gate, less the kernel's spin; median of %d a round", cklGateUs, cklReps), rounds)
	return nil
}

// cklLoops times cklJobs jobs of a copy in, an empty kernel and a copy
// out issued live: a stream synchronize after each (Host.Now per job,
// SET's synchronous loop) or one at the end (Elapsed per job).
func (c *calibrator) cklLoops(h device.Host, env *cklEnv) error {
	job := func(i int) error {
		if err := h.Copy(env.t.s, env.copy(device.HostToDevice, i, cklBytes)); err != nil {
			return err
		}
		if err := h.Launch(env.t.s, c.emptyLaunch(1)); err != nil {
			return err
		}
		return h.Copy(env.t.s, env.copy(device.DeviceToHost, i, cklBytes))
	}
	synced, err := c.medianRounds(cklReps, func() (float64, error) {
		t0 := h.Now()
		for i := 0; i < cklJobs; i++ {
			if err := job(i); err != nil {
				return 0, err
			}
			if err := h.StreamSynchronize(env.t.s); err != nil {
				return 0, err
			}
		}
		return ns(h.Now()-t0) / float64(cklJobs), nil
	})
	if err != nil {
		return fmt.Errorf("copies and kernels issued live, job loop: %w", err)
	}
	c.record(fmt.Sprintf("copies and kernels issued live, %d jobs of copy in, empty kernel, copy out, a synchronize after each, per job", cklJobs), "", "ns",
		fmt.Sprintf("Host.Now around the loop over the jobs (each its own 64 KiB pinned buffers), each job's three calls and a stream synchronize; median of %d a round", cklReps), synced)
	once, err := c.medianRounds(cklReps, func() (float64, error) {
		t, err := env.t.elapsed(h, func() error {
			for i := 0; i < cklJobs; i++ {
				if err := job(i); err != nil {
					return err
				}
			}
			return nil
		})
		return t / float64(cklJobs), err
	})
	if err != nil {
		return fmt.Errorf("copies and kernels issued live, job loop: %w", err)
	}
	c.record(fmt.Sprintf("copies and kernels issued live, %d jobs of copy in, empty kernel, copy out, one synchronize, per job", cklJobs), "", "ns",
		fmt.Sprintf("Elapsed around the jobs issued one after the other on an idle stream, over the jobs; median of %d a round", cklReps), once)
	return nil
}
