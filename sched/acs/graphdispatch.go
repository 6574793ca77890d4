package acs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// DispatchGraph has one host thread and one stream. Kernels enter the
// window in program order; every kernel whose upstream kernels in the
// window have all been launched (not finished) is ready, and each dispatch
// launches every ready kernel as one graph of independent kernel nodes.
// Every launch goes to the same stream, so stream order finishes each
// graph before the next starts: a kernel leaves the window as soon as it
// is launched, and the host never waits for the GPU until the run's final
// synchronize.
const DispatchGraph Dispatch = "graph"

// GraphKey is how dispatch graph finds the instantiated graph a batch is
// launched from.
type GraphKey string

const (
	// GraphKeyWidth keeps one graph per batch width w: w independent
	// kernel nodes, updated to the batch's launches (kernel included)
	// with one SetKernelNode each before every launch. The graphs of
	// widths 1..N are instantiated by Prepare, from a kernel that does
	// nothing (calibrate's cal_empty), since their shapes do not depend on
	// the program.
	GraphKeyWidth GraphKey = "width"
	// GraphKeyKernels keeps one graph per sequence of kernels (the batch
	// sorted by kernel, then program order), captured from the first batch
	// of that sequence inside Run, and updated (same kernels, new
	// arguments and grids) for every later one: for drivers that refuse
	// to change a node's kernel.
	GraphKeyKernels GraphKey = "kernels"
)

// maxGraphWidth bounds the window under dispatch graph: one graph per
// width is kept, and capturing the widest forks it over width-1 streams.
const maxGraphWidth = 64

// graphDispatch is ACS-SW's state under DispatchGraph, set up by Prepare
// and kept across Runs until Cleanup.
type graphDispatch struct {
	stream device.Stream
	// side are the streams a capture forks to, so that its nodes have no
	// edges between them; fork and join are the capture's events.
	side       []device.Stream
	fork, join device.Event
	lanes      int                // Params.Lanes
	byWidth    []device.GraphExec // GraphKeyWidth: index w-1
	// nodeKernels[w-1][i] is the kernel node i of byWidth[w-1] launches
	// now: a batch's kernels are assigned to nodes that already launch
	// the same kernel where they can.
	nodeKernels [][]*device.Kernel
	byKernels   map[string]device.GraphExec

	// Per-batch buffers, reused.
	batch, kernelOps, assigned []int
	opKernels                  []*device.Kernel
	taken                      []bool
	launches                   []*device.Launch
	key                        []byte
}

// graphStats count what dispatch graph did since the scheduler was made.
type graphStats struct {
	instPrepare, instRun int64 // graphs instantiated by Prepare and inside Run
	hits                 int64 // batches launched from an instantiated graph
	updates              int64 // SetKernelNode calls
	kernelChanges        int64 // of which changed the node's kernel
	batches, kernels     int64 // graph launches and the kernels they held
	maxWidth             int64
	copies               int64 // copies issued on the stream directly
}

// graphHook breaks dispatch graph on purpose, for the negative controls
// of the tests; the zero value is the scheduler.
type graphHook struct {
	// eager puts into a batch, beside the ready kernels, the pending
	// kernels whose unlaunched upstream kernels are all in the batch: they
	// then run at the same time as kernels they depend on.
	eager bool
	// alternate launches every other batch on a second stream: stream
	// order no longer finishes a batch before the next one starts.
	alternate bool
}

// Stats reports dispatch graph's counters: graphs instantiated (by
// Prepare and inside Run), batches launched from an already instantiated
// graph (graph_hits), node updates, batches (graph launches) and their
// mean and largest width, and copies issued on the stream directly. They
// count from the scheduler's creation, over every Prepare and Run.
// Dispatch window reports its window thread's time per operation
// (windowStats: busy, its own work; blocked, waiting for completions),
// which dispatch graph adds to its counters (busy: the check, the node
// updates and graph launches; blocked: the final synchronize), and its
// scheduler threads' time per job (threadStats). Dispatch shared reports
// none.
func (s *SW) Stats() map[string]float64 {
	if s.p.Dispatch == DispatchWindow {
		return s.addWindowCalls(addThreads(s.wstats.add(nil), s.tstats))
	}
	if s.p.Dispatch != DispatchGraph {
		return nil
	}
	st := &s.gstats
	m := map[string]float64{
		"graph_instantiations_prepare": float64(st.instPrepare),
		"graph_instantiations_run":     float64(st.instRun),
		"graph_hits":                   float64(st.hits),
		"node_updates":                 float64(st.updates),
		"node_kernel_changes":          float64(st.kernelChanges),
		"batches":                      float64(st.batches),
		"max_batch_width":              float64(st.maxWidth),
		"copies_direct":                float64(st.copies),
	}
	if st.batches > 0 {
		m["mean_batch_width"] = float64(st.kernels) / float64(st.batches)
	}
	return s.addWindowCalls(s.wstats.add(m))
}

// prepareGraph creates the stream, the capture's side streams and events,
// and under GraphKeyWidth instantiates the graphs of widths 1..N.
func (s *SW) prepareGraph(h device.Host) error {
	g := &graphDispatch{byKernels: map[string]device.GraphExec{}, lanes: s.p.Lanes}
	s.g = g
	var err error
	if g.stream, err = h.NewStream(device.StreamOptions{}); err != nil {
		return fmt.Errorf("acs-sw: stream: %w", err)
	}
	for i := 1; i < s.p.Window; i++ {
		st, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return fmt.Errorf("acs-sw: capture stream %d: %w", i, err)
		}
		g.side = append(g.side, st)
	}
	for _, ev := range []*device.Event{&g.fork, &g.join} {
		if *ev, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
			return fmt.Errorf("acs-sw: event: %w", err)
		}
	}
	if s.p.graphKey() != GraphKeyWidth {
		return nil
	}
	empty, err := kernels.Lookup("calibrate", "cal_empty")
	if err != nil {
		return fmt.Errorf("acs-sw: dispatch graph: the kernel its graphs are instantiated with: %w", err)
	}
	nop := &device.Launch{Kernel: empty, Grid: device.D1(1), Block: device.D1(32), Label: "cal_empty"}
	g.byWidth = make([]device.GraphExec, s.p.Window)
	g.nodeKernels = make([][]*device.Kernel, s.p.Window)
	for w := 1; w <= s.p.Window; w++ {
		g.launches = g.launches[:0]
		for range w {
			g.launches = append(g.launches, nop)
			g.nodeKernels[w-1] = append(g.nodeKernels[w-1], empty)
		}
		if g.byWidth[w-1], err = g.instantiate(h); err != nil {
			return fmt.Errorf("acs-sw: dispatch graph: graph of width %d: %w", w, err)
		}
		s.gstats.instPrepare++
	}
	return nil
}

// destroyGraph releases what prepareGraph made.
func (s *SW) destroyGraph(h device.Host) error {
	g := s.g
	if g == nil {
		return nil
	}
	s.g = nil
	var errs []error
	for _, x := range g.byWidth {
		if x != nil {
			errs = append(errs, h.Destroy(x))
		}
	}
	for _, x := range g.byKernels {
		errs = append(errs, h.Destroy(x))
	}
	for _, ev := range []device.Event{g.fork, g.join} {
		if ev != nil {
			errs = append(errs, h.Destroy(ev))
		}
	}
	for _, st := range append(g.side, g.stream) {
		if st != nil {
			errs = append(errs, h.Destroy(st))
		}
	}
	return errors.Join(errs...)
}

// instantiate captures g.launches as a graph of kernel nodes without
// edges between them (node i launching g.launches[i]), or with Lanes k as
// min(k, w) chains of consecutive nodes, and instantiates it. The first
// branch is captured on the stream itself, every other one on a side
// stream forked from the capture before any node and joined back after
// its last launch.
func (g *graphDispatch) instantiate(h device.Host) (device.GraphExec, error) {
	w := len(g.launches)
	if w > len(g.side)+1 {
		return nil, fmt.Errorf("acs-sw: a batch of %d kernels, wider than the window (bug)", w)
	}
	branches := w
	if g.lanes > 0 && g.lanes < w {
		branches = g.lanes
	}
	st := g.stream
	if err := h.BeginCapture(st); err != nil {
		return nil, err
	}
	err := h.Record(g.fork, st)
	for j := 0; j < branches && err == nil; j++ {
		on := st
		if j > 0 {
			on = g.side[j-1]
			if err = h.Wait(on, g.fork); err != nil {
				break
			}
		}
		// Branch j launches nodes [j*w/branches, (j+1)*w/branches) in order.
		for _, l := range g.launches[j*w/branches : (j+1)*w/branches] {
			if err = h.Launch(on, l); err != nil {
				break
			}
		}
		if j > 0 {
			// Joined back even when a launch fails, so that ending the
			// capture ends it on the side stream too.
			if e := h.Record(g.join, on); err == nil {
				err = e
			}
			if e := h.Wait(st, g.join); err == nil {
				err = e
			}
		}
	}
	gr, endErr := h.EndCapture(st)
	if err == nil {
		err = endErr
	}
	if err != nil {
		if endErr == nil {
			err = errors.Join(err, h.Destroy(gr))
		}
		return nil, err
	}
	x, err := h.Instantiate(gr)
	return x, errors.Join(err, h.Destroy(gr))
}

// runGraph is Run under DispatchGraph.
func (s *SW) runGraph(h device.Host, in *workloads.Instance) error {
	g := s.g
	w := s.window(in)
	streams := []device.Stream{g.stream}
	if s.hook.alternate && len(g.side) > 0 {
		streams = append(streams, g.side[0])
	}
	var runErr error
	start := h.Now()
	for n := 0; !w.finished(); n++ {
		s.timedPart(h, &s.wcalls.check, func() {
			if w.admit() > 0 {
				h.Spend(w.takeCost())
			}
		})
		if len(w.ready) == 0 {
			runErr = fmt.Errorf("acs-sw: %d of %d operations launched and none ready: a dependency cycle (bug)", w.done, w.n)
			break
		}
		st := streams[n%len(streams)]
		s.timedPart(h, &s.wcalls.dispatch, func() { runErr = s.dispatchGraph(h, in, w, st) })
		if runErr != nil {
			break
		}
	}
	// The run's one synchronization: every batch is on the stream.
	launched := h.Now()
	var errs []error
	for _, st := range streams {
		errs = append(errs, h.StreamSynchronize(st))
	}
	st, end := &s.wstats, h.Now()
	st.wall += end - start
	st.blocked += end - launched
	st.kernels += int64(in.N())
	if runErr != nil {
		return runErr
	}
	return errors.Join(errs...)
}

// dispatchGraph launches every ready operation on st: copies on the
// stream directly, kernels as one graph. They are an antichain (a ready
// operation has no upstream operation left in the window, and those that
// left are launched earlier on st), so their order on st does not matter
// and the graph's nodes need no edges. Each leaves the window at once.
func (s *SW) dispatchGraph(h device.Host, in *workloads.Instance, w *window, st device.Stream) error {
	g := s.g
	ops := append(g.batch[:0], w.ready...)
	if s.hook.eager {
		ops = eagerBatch(w, ops)
	}
	g.batch = ops
	kernelOps := g.kernelOps[:0]
	for _, k := range ops {
		w.issue(k, 0)
		if in.Op(k).Kind != workloads.OpKernel {
			s.gstats.copies++
			if err := in.Issue(h, st, k); err != nil {
				return err
			}
			continue
		}
		kernelOps = append(kernelOps, k)
	}
	g.kernelOps = kernelOps
	if len(kernelOps) > 0 {
		if err := s.launchBatch(h, in, kernelOps, st); err != nil {
			return err
		}
	}
	for _, k := range ops {
		w.complete(k)
	}
	return nil
}

// eagerBatch is graphHook.eager's batch: ops (the ready operations) and
// the pending ones whose upstream operations are all in it.
func eagerBatch(w *window, ops []int) []int {
	for _, p := range w.pending {
		all := true
		for _, u := range w.up[p] {
			if !slices.Contains(ops, u) {
				all = false
				break
			}
		}
		if all {
			ops = append(ops, p)
		}
	}
	return ops
}

// launchBatch launches kernels ops as one graph on st: an instantiated
// graph of the batch's width (or kernel sequence) with every node updated
// to the batch's launches, or, the first time under GraphKeyKernels, a
// graph captured from them.
func (s *SW) launchBatch(h device.Host, in *workloads.Instance, ops []int, st device.Stream) error {
	g, cnt := s.g, &s.gstats
	byWidth := s.p.graphKey() == GraphKeyWidth
	var x device.GraphExec
	var nodes []*device.Kernel // GraphKeyWidth: the kernels of x's nodes
	if byWidth {
		if len(ops) > len(g.byWidth) {
			return fmt.Errorf("acs-sw: a batch of %d kernels, wider than the window (bug)", len(ops))
		}
		x, nodes = g.byWidth[len(ops)-1], g.nodeKernels[len(ops)-1]
		if x != nil {
			g.matchNodes(in, nodes, ops)
		}
	} else {
		slices.SortFunc(ops, func(a, b int) int {
			ka, kb := in.Op(a).Kernel, in.Op(b).Kernel
			if c := strings.Compare(ka.Name, kb.Name); c != 0 {
				return c
			}
			if c := strings.Compare(ka.Module, kb.Module); c != 0 {
				return c
			}
			return a - b
		})
		g.key = appendSequenceKey(g.key[:0], in, ops)
		x = g.byKernels[string(g.key)]
	}
	g.launches = g.launches[:0]
	for _, k := range ops {
		g.launches = append(g.launches, in.Launch(k))
	}
	if x == nil {
		var err error
		if x, err = g.instantiate(h); err != nil {
			return err
		}
		cnt.instRun++
		if byWidth {
			g.byWidth[len(ops)-1] = x
			g.nodeKernels[len(ops)-1] = nodes[:0]
			for _, k := range ops {
				g.nodeKernels[len(ops)-1] = append(g.nodeKernels[len(ops)-1], in.Op(k).Kernel)
			}
		} else {
			g.byKernels[string(g.key)] = x
		}
	} else {
		cnt.hits++
		// An exec may be updated while an earlier launch of it is still
		// queued or running: CUDA applies the update to later launches
		// only ("already enqueued or running launches are not
		// affected"), and so does the simulator.
		var err error
		s.timedPart(h, &s.wcalls.graphUpdate, func() { err = s.updateNodes(h, x, nodes, len(ops)) })
		if err != nil {
			return err
		}
	}
	cnt.batches++
	cnt.kernels += int64(len(ops))
	cnt.maxWidth = max(cnt.maxWidth, int64(len(ops)))
	var err error
	s.timedPart(h, &s.wcalls.graphLaunch, func() { err = h.GraphLaunch(x, st) })
	return err
}

// updateNodes sets every node of x to the batch's launch (g.launches; n
// of them), noting in nodes (GraphKeyWidth) the kernels they now hold.
func (s *SW) updateNodes(h device.Host, x device.GraphExec, nodes []*device.Kernel, n int) error {
	cnt := &s.gstats
	for i, l := range s.g.launches {
		cnt.updates++
		if nodes != nil && !sameKernel(nodes[i], l.Kernel) {
			cnt.kernelChanges++
		}
		if err := h.SetKernelNode(x, i, l); err != nil {
			return fmt.Errorf("acs-sw: update node %d of a graph of %d kernels to %s: %w", i, n, l.Name(), err)
		}
		if nodes != nil {
			nodes[i] = l.Kernel
		}
	}
	return nil
}

// matchNodes orders ops (a batch, as many as nodes) so that ops[i] goes
// to node i: each node that launches the kernel of one of the batch's
// kernels gets one of those (the first in program order), the others get
// the rest in program order. The nodes are independent, so any order is
// right; this one changes as few nodes' kernels as it can, since on a GPU
// an update and the next launch cost more for a node whose kernel changes
// (device/cuda TestKernelNodeUpdateCosts).
func (g *graphDispatch) matchNodes(in *workloads.Instance, nodes []*device.Kernel, ops []int) {
	n := len(ops)
	ks := g.opKernels[:0]
	for _, k := range ops {
		ks = append(ks, in.Op(k).Kernel)
	}
	g.opKernels = ks
	out := resize(g.assigned, n)
	taken := resize(g.taken, n)
	g.assigned, g.taken = out, taken
	for i, nk := range nodes {
		out[i] = -1
		for j, k := range ks {
			if !taken[j] && sameKernel(k, nk) {
				out[i], taken[j] = ops[j], true
				break
			}
		}
	}
	j := 0
	for i := range out {
		if out[i] >= 0 {
			continue
		}
		for taken[j] {
			j++
		}
		out[i], taken[j] = ops[j], true
	}
	copy(ops, out)
}

// sameKernel reports whether a and b are one kernel (one function).
func sameKernel(a, b *device.Kernel) bool {
	return a == b || (a != nil && b != nil && a.Module == b.Module && a.Name == b.Name)
}
