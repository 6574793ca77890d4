package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// besideCounts are the side streams of "chains beside other streams"; its
// chains are besideShort and besideLong kernels long (the slope between
// them is a kernel's cost), of besideSpins kernels.
var (
	besideCounts = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32, 63}
	besideSpins  = []time.Duration{2 * time.Microsecond, 20 * time.Microsecond}
)

const besideShort, besideLong = 8, 32

// besideMode is what the side streams of "chains beside other streams" do
// while the chain runs.
type besideMode struct {
	name string
	// issue issues side stream st's work; end is recorded on the chain's
	// stream behind its last kernel, long a spin that outlasts the chain.
	issue func(h device.Host, st device.Stream, end device.Event, long, short *device.Launch) error
}

var besideModes = []besideMode{
	{"waiting on the chain's end", func(h device.Host, st device.Stream, end device.Event, _, short *device.Launch) error {
		if err := h.Wait(st, end); err != nil {
			return err
		}
		return h.Launch(st, short)
	}},
	{"running a long kernel", func(h device.Host, st device.Stream, _ device.Event, long, _ *device.Launch) error {
		return h.Launch(st, long)
	}},
	{"running a long kernel, one queued behind", func(h device.Host, st device.Stream, _ device.Event, long, short *device.Launch) error {
		if err := h.Launch(st, long); err != nil {
			return err
		}
		return h.Launch(st, short)
	}},
}

// chainsBeside is "chains beside other streams" (#18, session 17): the
// device time per kernel of a chain of one-block spin kernels on one
// stream while k other streams wait on the chain's end, run a kernel
// that outlasts it, or run one with another queued behind, all released
// at once behind a gate (the slope over besideShort and besideLong
// kernels, less the spin). "runs over streams" showed a chain's kernels
// start up to 2 us later when other streams wait, as much with 2 as with
// 20 us kernels: this tells whether waiting streams, busy ones or queued
// commands cost it, and how it grows with k (8 hardware queues).
func (c *calibrator) chainsBeside(h device.Host) error {
	maxK := besideCounts[len(besideCounts)-1]
	ss, err := newStreamSet(h, maxK+1)
	if err != nil {
		return err
	}
	end, err := h.NewEvent(device.EventOptions{DisableTiming: true})
	if err != nil {
		return err
	}
	short := c.spinLaunch(time.Microsecond, ss.t.done)
	for _, d := range besideSpins {
		spin := c.spinLaunch(d, ss.t.done)
		long := c.spinLaunch(time.Duration(besideLong)*(d+10*time.Microsecond)+100*time.Microsecond, ss.t.done)
		for _, m := range besideModes {
			for _, k := range besideCounts {
				if k == 0 && m.name != besideModes[0].name {
					continue // no side stream: one variant
				}
				chain := func(n int) (float64, error) {
					return c.besideOnce(h, ss, end, spin, long, short, m, k, n)
				}
				var slope []float64
				if err := c.warmRounds(func(measured bool) error {
					a, err := chain(besideShort)
					if err != nil {
						return err
					}
					b, err := chain(besideLong)
					if err != nil {
						return err
					}
					if measured {
						slope = append(slope, (b-a)/float64(besideLong-besideShort)-ns(d))
					}
					return nil
				}); err != nil {
					return err
				}
				what := fmt.Sprintf("%d us spins, %d streams %s", d.Microseconds(), k, m.name)
				if k == 1 {
					what = fmt.Sprintf("%d us spins, 1 stream %s", d.Microseconds(), m.name)
				}
				if k == 0 {
					what = fmt.Sprintf("%d us spins, alone", d.Microseconds())
				}
				c.record("chain beside other streams, "+what, "", "ns",
					fmt.Sprintf("slope of Elapsed over chains of %d and %d one-block spin kernels on one stream, all released at once behind a gate, less the spin", besideShort, besideLong), slope)
			}
		}
	}
	return nil
}

// besideOnce is the device time of a chain of n spin kernels on the timed
// stream with k side streams in mode m, released behind a gate.
func (c *calibrator) besideOnce(h device.Host, ss *streamSet, end device.Event, spin, long, short *device.Launch, m besideMode, k, n int) (float64, error) {
	if err := h.Synchronize(); err != nil {
		return 0, err
	}
	gate := c.spinLaunch(time.Duration(gateBaseNs+gatePerLaunch*float64(n+3*k)), ss.t.done)
	if err := h.Launch(ss.t.s, gate); err != nil {
		return 0, err
	}
	if err := h.Record(ss.fork, ss.t.s); err != nil {
		return 0, err
	}
	for i := 1; i <= k; i++ {
		if err := h.Wait(ss.stream(i), ss.fork); err != nil {
			return 0, err
		}
	}
	y, err := ss.t.elapsed(h, func() error {
		for j := 0; j < n; j++ {
			if err := h.Launch(ss.t.s, spin); err != nil {
				return err
			}
		}
		if err := h.Record(end, ss.t.s); err != nil {
			return err
		}
		for i := 1; i <= k; i++ {
			if err := m.issue(h, ss.stream(i), end, long, short); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return y, h.Synchronize()
}
