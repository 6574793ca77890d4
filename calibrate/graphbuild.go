package calibrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Node counts of the graph-build measurement: the synthetic DAGs' steps
// are 40 to 64 nodes, imported models' hundreds.
const gbN1, gbN2 = 40, 200

// gbCosts are the host times of building, launching and destroying one
// captured chain, and the elapsed times of its two launches.
type gbCosts struct {
	capture, instantiate, destroyGraph, first, relaunch, destroyExec float64
	firstElapsed, relaunchElapsed                                    float64
}

func (a gbCosts) perNode(b gbCosts) gbCosts {
	n := float64(gbN2 - gbN1)
	return gbCosts{(a.capture - b.capture) / n, (a.instantiate - b.instantiate) / n, (a.destroyGraph - b.destroyGraph) / n,
		(a.first - b.first) / n, (a.relaunch - b.relaunch) / n, (a.destroyExec - b.destroyExec) / n,
		(a.firstElapsed - b.firstElapsed) / n, (a.relaunchElapsed - b.relaunchElapsed) / n}
}

// gbCase is a kernel and the streams its chain is captured over.
type gbCase struct {
	name    string
	l       *device.Launch
	args    int
	streams int
}

// graphBuildOnce does what graph-per-step does with one step: captures a
// chain of n launches of l over s streams (as crossChain orders them, each
// side stream joined back), instantiates it, destroys the graph, launches
// the fresh exec and launches it again (each timed on the host and by
// Elapsed), and destroys the exec.
func graphBuildOnce(h device.Host, ss *streamSet, evs []device.Event, l *device.Launch, s, n int) (gbCosts, error) {
	var g gbCosts
	half := len(evs) / 2
	t0 := h.Now()
	gr, err := capture(h, ss.t.s, func() error {
		if err := crossChain(h, ss, evs[:half], l, s, n); err != nil {
			return err
		}
		return joinSides(h, ss, evs[half:], s)
	})
	if err != nil {
		return g, err
	}
	t1 := h.Now()
	x, err := h.Instantiate(gr)
	if err != nil {
		return g, errors.Join(err, h.Destroy(gr))
	}
	t2 := h.Now()
	if err := h.Destroy(gr); err != nil {
		return g, errors.Join(err, h.Destroy(x))
	}
	t3 := h.Now()
	g.capture, g.instantiate, g.destroyGraph = ns(t1-t0), ns(t2-t1), ns(t3-t2)
	launch := func(into *float64) func() error {
		return func() error {
			t := h.Now()
			err := h.GraphLaunch(x, ss.t.s)
			*into = ns(h.Now() - t)
			return err
		}
	}
	if g.firstElapsed, err = ss.t.elapsed(h, launch(&g.first)); err != nil {
		return g, errors.Join(err, h.Destroy(x))
	}
	if g.relaunchElapsed, err = ss.t.elapsed(h, launch(&g.relaunch)); err != nil {
		return g, errors.Join(err, h.Destroy(x))
	}
	t4 := h.Now()
	err = h.Destroy(x)
	g.destroyExec = ns(h.Now() - t4)
	return g, err
}

// graphBuilds measures graph-per-step's host costs on chains of 40 and
// 200 kernels (#18: graph launch and per-node costs): per node, the slope
// of capturing, instantiating, destroying the graph, the first launch of
// the fresh exec and a relaunch, and destroying the exec; for synth_node
// (the synthetic DAGs' kernel, 12 arguments) captured on one stream and
// over 8, and for the 2-argument spin kernel and the argument-less empty
// kernel on one stream (what instantiation costs per kernel argument).
func (c *calibrator) graphBuilds(h device.Host) error {
	const maxS = 8
	ss, evs, err := newStreamsAndEvents(h, maxS, 2*maxS)
	if err != nil {
		return err
	}
	ls, err := newSynthLaunches(h, synthChain, 1)
	if err != nil {
		return err
	}
	synth := ls[0]
	cases := []gbCase{
		{"synth_node, 1 stream", synth, len(synth.Args), 1},
		{"synth_node, 8 streams", synth, len(synth.Args), maxS},
		{"cal_spin (2 us), 1 stream", c.spinLaunch(2*time.Microsecond, ss.t.done), 2, 1},
		{"cal_empty, 1 stream", c.emptyLaunch(1), 0, 1},
	}
	per := make([][]gbCosts, len(cases))
	if err := c.warmRounds(func(measured bool) error {
		for i, k := range cases {
			a, err := graphBuildOnce(h, ss, evs, k.l, k.streams, gbN1)
			if err != nil {
				return err
			}
			b, err := graphBuildOnce(h, ss, evs, k.l, k.streams, gbN2)
			if err != nil {
				return err
			}
			if measured {
				per[i] = append(per[i], b.perNode(a))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for i, k := range cases {
		c.recordGraphBuild(k, per[i])
	}
	c.recordGraphBuildFields(cases, per)
	return nil
}

func (c *calibrator) recordGraphBuild(k gbCase, rounds []gbCosts) {
	how := fmt.Sprintf("chains of %d and %d %s kernels captured over %d streams (kernel j on stream j mod %d waiting on an event recorded behind kernel j-1)", gbN1, gbN2, k.l.Label, k.streams, k.streams)
	if k.streams == 1 {
		how = fmt.Sprintf("chains of %d and %d %s kernels captured on one stream", gbN1, gbN2, k.l.Label)
	}
	for _, m := range []struct {
		what string
		f    func(gbCosts) float64
	}{
		{"capture", func(x gbCosts) float64 { return x.capture }},
		{"instantiate", func(x gbCosts) float64 { return x.instantiate }},
		{"graph destroy", func(x gbCosts) float64 { return x.destroyGraph }},
		{"first launch", func(x gbCosts) float64 { return x.first }},
		{"relaunch", func(x gbCosts) float64 { return x.relaunch }},
		{"exec destroy", func(x gbCosts) float64 { return x.destroyExec }},
	} {
		c.record(fmt.Sprintf("graph build: %s per node, %s", m.what, k.name), "", "ns", "slope of Host.Now around it over "+how, pick(rounds, m.f))
	}
	c.record("graph build: relaunch's elapsed per node, "+k.name, "", "ns", "slope of Elapsed around the second launch of the exec, over "+how,
		pick(rounds, func(x gbCosts) float64 { return x.relaunchElapsed }))
	c.record("graph build: first launch's elapsed less a relaunch's per node, "+k.name, "", "ns",
		"slope of Elapsed around the fresh exec's first launch less around its second, over "+how,
		pick(rounds, func(x gbCosts) float64 { return x.firstElapsed - x.relaunchElapsed }))
}

// recordGraphBuildFields records the config fields: the first launch's
// host cost per node over a relaunch's and the exec destroy per node
// (synth_node over 8 streams, graph-per-step's shape), and the
// instantiate cost per kernel argument (synth_node's slope less the
// empty kernel's, over its arguments, on one stream).
func (c *calibrator) recordGraphBuildFields(cases []gbCase, per [][]gbCosts) {
	synth1, synth8, empty := per[0], per[1], per[3]
	c.record("first graph launch per node", "host.first_graph_launch_per_node_ns", "ns",
		fmt.Sprintf("per round, the slope per node of a fresh exec's first launch less its relaunch, Host.Now, synth_node chains of %d and %d over 8 streams", gbN1, gbN2),
		pick(synth8, func(x gbCosts) float64 { return x.first - x.relaunch }))
	c.record("graph exec destroy per node", "host.destroy_exec_per_node_ns", "ns",
		fmt.Sprintf("per round, the slope per node of Host.Now around destroying the exec, synth_node chains of %d and %d over 8 streams", gbN1, gbN2),
		pick(synth8, func(x gbCosts) float64 { return x.destroyExec }))
	perArg := make([]float64, len(synth1))
	for r := range perArg {
		perArg[r] = (synth1[r].instantiate - empty[r].instantiate) / float64(cases[0].args)
	}
	c.record("instantiate per kernel argument", "host.instantiate_per_arg_ns", "ns",
		fmt.Sprintf("per round, synth_node's instantiate slope per node less cal_empty's (one stream), over synth_node's %d arguments", cases[0].args), perArg)
}
