package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "graph launch of uploads" (issue #18, session 26): the random DAGs'
// graphs hold tens of uploads, each a root (a pinned host-to-device copy)
// feeding kernels, and the simulator charges their launch per copy node
// (host.graph_launch_copy_node_ns), per copy edge
// (graph_launch_copy_edge_ns) and per root (graph_launch_branch_ns), all
// fitted on graphs of one to three copies; on seed 1593488677's draw 1
// (21 uploads) AutoGraph's row is simulated 71% slow. This probe captures N
// = 1, 8, 16, 32 parallel branches of three kinds, forked from and joined
// back to one stream: a 4 KiB upload then a 2 us kernel ("upload, kernel"),
// the kernel alone ("kernel"), the upload alone ("upload"), and times the
// launch call (Host.Now, median of 16 launches a round, the stream
// synchronized after each).
var ugBranches = []int{1, 8, 16, 32}

const (
	ugLaunches = 16
	ugBytes    = 4 << 10
)

var ugKinds = []string{"upload, kernel", "kernel", "upload"}

// graphLaunchOfUploads records each kind's launch call per N.
func (c *calibrator) graphLaunchOfUploads(h device.Host) error {
	n := ugBranches[len(ugBranches)-1]
	pin, err := h.AllocHost(int64(n)*ugBytes, true)
	if err != nil {
		return err
	}
	bufs := make([]device.Buffer, n)
	for i := range bufs {
		if bufs[i], err = h.Malloc(ugBytes); err != nil {
			return err
		}
	}
	return c.branchLaunchCalls(h, branchProbe{
		kinds: ugKinds,
		label: func(kind string, branches int) (string, string) {
			return fmt.Sprintf("graph launch of uploads, %d branches of %s: launch call", branches, kind),
				fmt.Sprintf("a graph captured as %d parallel branches forked from one stream and joined back, each %s (4 KiB pinned host-to-device copy, 2 us spin kernel); Host.Now around cuGraphLaunch, median of %d launches, the stream synchronized after each", branches, kind, ugLaunches)
		},
		capture: func(ss *streamSet, evs []device.Event, spin *device.Launch, kind string, branches int) error {
			return ugCapture(h, ss, evs[0], evs[1], kind, branches, pin, bufs, spin)
		},
	})
}

// branchProbe is one of the probes that time a graph's launch call per
// count of ugBranches ("graph launch of uploads", "of upload fans", "of
// joins"): its kinds, each kind and count's record name and method, and
// the capture of its graph on the stream set's origin stream.
type branchProbe struct {
	kinds   []string
	label   func(kind string, branches int) (name, method string)
	capture func(ss *streamSet, evs []device.Event, spin *device.Launch, kind string, branches int) error
}

// branchLaunchCalls makes the streams, the two events and the 2 us spin
// kernel the probes share, and records per kind and count the launch
// calls of p's graph (launchCalls, ugLaunches a round).
func (c *calibrator) branchLaunchCalls(h device.Host, p branchProbe) error {
	ss, evs, err := newStreamsAndEvents(h, ugBranches[len(ugBranches)-1]+1, 2)
	if err != nil {
		return err
	}
	spin := c.spinLaunch(us(2), ss.t.done)
	for _, kind := range p.kinds {
		for _, branches := range ugBranches {
			name, method := p.label(kind, branches)
			x, err := c.instantiate(h, ss.t.s, func() error { return p.capture(ss, evs, spin, kind, branches) })
			if err != nil {
				return err
			}
			calls, err := c.launchCalls(h, ss.t.s, x, ugLaunches)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			c.record(name, "", "ns", method, calls)
			if err := h.Destroy(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// ugCapture issues one graph of the probe on ss's origin stream.
func ugCapture(h device.Host, ss *streamSet, fork, join device.Event, kind string, branches int, pin *device.HostMem, bufs []device.Buffer, spin *device.Launch) error {
	s := ss.stream(0)
	if err := h.Record(fork, s); err != nil {
		return err
	}
	return sideIssues(h, s, ss.side[:branches], fork, join, func(i int, side device.Stream) error {
		if kind != "kernel" {
			cp := &device.Copy{Kind: device.HostToDevice, Dst: bufs[i], Host: pin, HostOff: int64(i) * ugBytes, Bytes: ugBytes}
			if err := h.Copy(side, cp); err != nil {
				return err
			}
		}
		if kind != "upload" {
			return h.Launch(side, spin)
		}
		return nil
	})
}

// launchCalls launches x n times a round on s, synchronizing after each,
// and returns per round the median launch call (ns).
func (c *calibrator) launchCalls(h device.Host, s device.Stream, x device.GraphExec, n int) ([]float64, error) {
	var out []float64
	err := c.warmRounds(func(measured bool) error {
		var calls []float64
		for range n {
			t0 := h.Now()
			if err := h.GraphLaunch(x, s); err != nil {
				return err
			}
			calls = append(calls, ns(h.Now()-t0))
			if err := h.StreamSynchronize(s); err != nil {
				return err
			}
		}
		if measured {
			out = append(out, stats.Median(calls))
		}
		return nil
	})
	return out, err
}
