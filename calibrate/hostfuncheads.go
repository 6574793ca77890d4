package calibrate

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "host functions after heads" (issue #18, session 29): "set-batch
// chunks" queued behind a gate with a no-op host function after each
// launch take 18-30% longer on an H200 than simulated on 2-8 streams, for
// every chunk shape, the copies alone included, and within 3-14% on one
// stream; the same host functions after 20 and 60 us spin kernels are
// simulated within -6..+18% on every stream count. What a host function
// follows is the difference: this probe puts it after six heads, one
// difference at a time,
//
//	35 us spin kernel                a one-block kernel (as "set-batch
//	                                 host functions", between its 20 and 60)
//	35 us spin kernel graph          the same kernel as a one-node graph
//	HtoD copy                        one pinned copy of SET-batch's chunk
//	                                 bytes (about 35 us), paced by one engine
//	HtoD copy graph                  the same copy as a one-node graph
//	copies both ways                 a copy in and a copy out (the chunk
//	                                 without its jobs), as plain copies
//	copy graph both ways             the same as a graph ("set-batch chunks"'
//	                                 copies shape)
//
// each sbLaunches times round-robin over 1, 2, 4 and 8 streams behind a
// gate, with a no-op host function after each or not. A graph head is one
// exec per launch, as SET-batch's chunks are.
var hhHeads = []hhHead{
	{name: "35 us spin kernel", kernel: true},
	{name: "35 us spin kernel graph", kernel: true, graph: true},
	{name: "HtoD copy", in: true},
	{name: "HtoD copy graph", in: true, graph: true},
	{name: "copies both ways", in: true, out: true},
	{name: "copy graph both ways", in: true, out: true, graph: true},
}

const hhSpin = 35 * time.Microsecond

// hhHead is what a host function follows: a spin kernel or copies of
// sbChunkBytes, issued on its stream or captured as a graph.
type hhHead struct {
	name            string
	kernel, in, out bool
	graph           bool
}

// hhName is the name of a "host functions after heads" measurement.
func hhName(head string, streams int, hostFunc bool) string {
	name := fmt.Sprintf("host functions after %s on %d streams", head, streams)
	if hostFunc {
		name += ", host functions"
	}
	return name
}

func (c *calibrator) hostFuncsAfterHeads(h device.Host) error {
	env, err := c.newGDEnv(h, sbChunkBytes)
	if err != nil {
		return err
	}
	spin := c.spinLaunch(hhSpin, env.ss.t.done)
	for _, hd := range hhHeads {
		issue := func(st device.Stream) error {
			if hd.kernel {
				if err := h.Launch(st, spin); err != nil {
					return err
				}
			}
			if hd.in {
				if err := h.Copy(st, env.copy(device.HostToDevice, sbChunkBytes)); err != nil {
					return err
				}
			}
			if hd.out {
				return h.Copy(st, env.copy(device.DeviceToHost, sbChunkBytes))
			}
			return nil
		}
		var xs []device.GraphExec
		if hd.graph {
			if xs, err = c.uploadedExecs(h, env, sbLaunches, func() error { return issue(env.ss.t.s) }); err != nil {
				return fmt.Errorf("%s: %w", hd.name, err)
			}
			issue = nil
		}
		for _, s := range sbStreams {
			for _, hostFunc := range []bool{false, true} {
				out, err := c.hhRounds(h, env, s, hostFunc, func(j int, st device.Stream) error {
					if xs != nil {
						return h.GraphLaunch(xs[j], st)
					}
					return issue(st)
				})
				if err != nil {
					return fmt.Errorf("host functions after %s on %d streams: %w", hd.name, s, err)
				}
				c.record(hhName(hd.name, s, hostFunc), "", "ns",
					fmt.Sprintf("Elapsed behind a gate kernel of %d heads (%s) round-robin over the streams, each followed by a no-op host function or not, total", sbLaunches, hd.name), out)
			}
		}
		if err := destroyExecs(h, xs); err != nil {
			return err
		}
	}
	return nil
}

// hhRounds is, per round, the gated Elapsed of sbLaunches heads
// round-robin over s streams (head j on stream j mod s), each followed by
// a no-op host function when hostFunc.
func (c *calibrator) hhRounds(h device.Host, env *gdEnv, s int, hostFunc bool, head func(j int, st device.Stream) error) ([]float64, error) {
	nop := func() {}
	return c.gatedRounds(h, env.ss, s, 3*sbLaunches, func() error {
		for j := 0; j < sbLaunches; j++ {
			st := env.ss.stream(j % s)
			if err := head(j, st); err != nil {
				return err
			}
			if hostFunc {
				if err := h.HostFunc(st, nop); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
