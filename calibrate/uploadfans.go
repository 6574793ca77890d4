package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// "graph launch of upload fans" (issue #18, session 27): the simulator
// charges cuGraphLaunch host.graph_launch_copy_edge_ns for every edge with
// a copy at either end, fitted on SET's jobs, whose copies have one edge
// out. The random DAGs' uploads feed three kernels each on average: seed
// 1593488677's draw 1 AutoGraph graph (90 nodes, 21 uploads, 67 copy
// edges) is simulated to launch in 149 us where the H200 takes 82 (its GPU
// timeline, session 27). This probe captures a root feeding N = 1, 8, 16
// and 32 parallel branches of one 2 us kernel each, the root a 4 KiB
// upload ("upload root") or a 2 us kernel ("kernel root"), and times the
// launch call as "graph launch of uploads" does: the difference of the two
// slopes over N is what a copy's edge out costs beyond a kernel's.
var ufKinds = []string{"upload root", "kernel root"}

// graphLaunchOfUploadFans records each kind's launch call per N.
func (c *calibrator) graphLaunchOfUploadFans(h device.Host) error {
	pin, err := h.AllocHost(ugBytes, true)
	if err != nil {
		return err
	}
	buf, err := h.Malloc(ugBytes)
	if err != nil {
		return err
	}
	return c.branchLaunchCalls(h, branchProbe{
		kinds: ufKinds,
		label: func(kind string, branches int) (string, string) {
			return fmt.Sprintf("graph launch of upload fans, %s feeding %d branches: launch call", kind, branches),
				fmt.Sprintf("a graph captured as a root (%s: 4 KiB pinned host-to-device copy or 2 us spin kernel) feeding %d parallel branches of one 2 us spin kernel, joined back; Host.Now around cuGraphLaunch, median of %d launches, the stream synchronized after each", kind, branches, ugLaunches)
		},
		capture: func(ss *streamSet, evs []device.Event, spin *device.Launch, kind string, branches int) error {
			return ufCapture(h, ss, evs, kind, branches, pin, buf, spin)
		},
	})
}

// ufCapture issues one graph of the probe on ss's origin stream: the root,
// then branches one-kernel branches forked from it.
func ufCapture(h device.Host, ss *streamSet, evs []device.Event, kind string, branches int, pin *device.HostMem, buf device.Buffer, spin *device.Launch) error {
	s := ss.stream(0)
	var err error
	if kind == ufKinds[0] {
		err = h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: pin, Bytes: ugBytes})
	} else {
		err = h.Launch(s, spin)
	}
	if err != nil {
		return err
	}
	if err := h.Record(evs[0], s); err != nil {
		return err
	}
	return sideIssues(h, s, ss.side[:branches], evs[0], evs[1], func(_ int, side device.Stream) error {
		return h.Launch(side, spin)
	})
}

// "graph launch of joins" (issue #18, session 27): with forked branches
// charged 0.25-0.4 us each ("graph launch of upload fans"), the graph DNN
// checks got worse, their graphs joining every fork again. This probe
// times the launch call of a 2 us kernel feeding N = 1, 8, 16, 32
// one-kernel branches, left open ("open fan") or joined into one 2 us
// tail kernel ("joined fan"): the difference of the two slopes over N is
// what a join's edge costs.
var jnKinds = []string{"open fan", "joined fan"}

// graphLaunchOfJoins records each kind's launch call per N.
func (c *calibrator) graphLaunchOfJoins(h device.Host) error {
	return c.branchLaunchCalls(h, branchProbe{
		kinds: jnKinds,
		label: func(kind string, branches int) (string, string) {
			ends := "left open (their streams joined back, no node after them)"
			if kind == jnKinds[1] {
				ends = "joined into one 2 us tail kernel"
			}
			return fmt.Sprintf("graph launch of joins, %s of %d branches: launch call", kind, branches),
				fmt.Sprintf("a graph captured as a 2 us spin kernel feeding %d parallel branches of one 2 us spin kernel, %s; Host.Now around cuGraphLaunch, median of %d launches, the stream synchronized after each", branches, ends, ugLaunches)
		},
		capture: func(ss *streamSet, evs []device.Event, spin *device.Launch, kind string, branches int) error {
			if err := ufCapture(h, ss, evs, ufKinds[1], branches, nil, device.Buffer{}, spin); err != nil {
				return err
			}
			if kind == jnKinds[1] {
				return h.Launch(ss.stream(0), spin)
			}
			return nil
		},
	})
}
