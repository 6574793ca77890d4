package sim

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// gnode is one node of a captured graph: a kernel, a copy or a host
// function, with the nodes it depends on.
type gnode struct {
	kind cmdKind
	l    device.Launch
	cp   device.Copy
	fn   func()
	deps []int32
}

// capture is one stream capture in progress: the origin stream and every
// stream that joined it by waiting on an event recorded in it.
type capture struct {
	d       *Device
	origin  *stream
	g       *graph
	streams []*stream
	invalid string
	ended   bool
}

func (c *capture) invalidate(why string) {
	if c.invalid == "" {
		c.invalid = why
	}
}

func (c *capture) add(st *stream, n gnode) error {
	if c.invalid != "" {
		return &device.APIError{Call: "capture", Code: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", Msg: c.invalid}
	}
	n.deps = append([]int32(nil), st.capTail...)
	idx := int32(len(c.g.nodes))
	c.g.nodes = append(c.g.nodes, n)
	st.capTail = append(st.capTail[:0], idx)
	return nil
}

// join makes st depend on the nodes ev captured (a fork when st was not
// capturing; a join otherwise).
func (c *capture) join(st *stream, ev *eventObj) error {
	if c.invalid != "" {
		return &device.APIError{Call: "cuStreamWaitEvent", Code: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", Msg: c.invalid}
	}
	switch st.capture {
	case nil:
		st.capture = c
		st.capTail = append(st.capTail[:0], ev.capNodes...)
		c.streams = append(c.streams, st)
	case c:
	next:
		for _, n := range ev.capNodes {
			for _, m := range st.capTail {
				if m == n {
					continue next
				}
			}
			st.capTail = append(st.capTail, n)
		}
	default:
		return &device.APIError{Call: "cuStreamWaitEvent", Code: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
			Msg: fmt.Sprintf("stream %d is capturing into another graph than event %d", st.id, ev.id)}
	}
	return nil
}

// graph is a device.Graph.
type graph struct {
	device.Base
	d         *Device
	run       int
	nodes     []gnode
	destroyed bool
}

func (g *graph) Nodes() int { return len(g.nodes) }

// graphExec is a device.GraphExec: nodes, successor lists, predecessor
// counts. nodes is copy-on-write: a launch keeps the slice it was issued
// with, so SetKernelNode only affects later launches, as in CUDA.
type graphExec struct {
	device.Base
	d         *Device
	run       int
	nodes     []gnode
	shared    bool // nodes is referenced by an issued launch
	succ      [][]int32
	npred     []int32
	destroyed bool
	running   *graphRun
	hbDone    vclock // the last finished launch's clock (ordering check)
	// launchCost is what cuGraphLaunch charges for this exec before kernel
	// changes: graph_launch_ns plus its nodes' per-node costs plus its
	// branches' per-branch cost.
	launchCost Time
	launched   bool // launched before (host.first_graph_launch_per_node_ns)
	segments   int  // with the per-segment costs set: dagSegments of succ
	// lanes is the branches a launch runs beside its stream (on internal
	// streams), with graph_branch_queue_ns set: its width less one; and
	// branchHead marks the nodes that begin a branch (branchHeads).
	lanes      int
	branchHead []bool
	// With graph_launch_kernel_change_ns or graph_launch_changed_node_ns
	// set: each kernel node's launch configuration at the exec's previous
	// launch (or instantiation), and the kernel nodes updated since then
	// (once each, marked in updated).
	launchedCfg  []nodeConfig
	updatedNodes []int32
	updated      []bool
}

// nodeConfig is what a kernel node's launch is set up with, its arguments
// aside: an update that changes any of it costs the next cuGraphLaunch
// graph_launch_changed_node_ns (and graph_launch_kernel_change_ns when the
// kernel changes).
type nodeConfig struct {
	kernel      *device.Kernel
	grid, block device.Dim3
	shared      int
}

func configOf(l *device.Launch) nodeConfig {
	return nodeConfig{kernel: l.Kernel, grid: l.Grid, block: l.Block, shared: l.SharedMem}
}

func (x *graphExec) Nodes() int { return len(x.nodes) }

// graphRun is one launch of a graph exec in progress.
type graphRun struct {
	x         *graphExec
	nodes     []gnode
	cmd       *command
	npend     []int32
	ready     []Time // per node: when its last predecessor finished (the launch's start for a root)
	remaining int
	nvc       []vclock // per node: the join of its finished predecessors' clocks
	all       vclock   // the join of its finished nodes' clocks
	// nextRelease is the soonest the next node may be released, with
	// graph_dispatch_ns set.
	nextRelease Time
	// streamStart and streamCost: a launch call that hands its nodes over
	// as it goes (host.graph_launch_stream_after_ns) began its work at
	// streamStart and took streamCost; 0: not streamed.
	streamStart, streamCost Time
	// busy is the launch's nodes released to the device and not finished
	// (front_end.graph_branch_queue_busy).
	busy int
}

// busyLanes is the internal streams gr is busy on: one per node in flight
// beyond the first, at most the lanes its exec holds.
func (gr *graphRun) busyLanes() int { return min(max(gr.busy-1, 0), gr.x.lanes) }

// noteBusy adds dn to gr's nodes in flight, keeping the device's count of
// busy lanes (front_end.graph_branch_queue_busy) in step.
func (d *Device) noteBusy(gr *graphRun, dn int) {
	if !d.cfg.FrontEnd.GraphBranchQueueBusy {
		return
	}
	d.graphBusy -= gr.busyLanes()
	gr.busy += dn
	d.graphBusy += gr.busyLanes()
}

func (d *Device) graphOf(g device.Graph, call string) error {
	x, ok := g.(*graph)
	switch {
	case g == nil || !ok || x == nil:
		return invalidHandle(call, fmt.Sprintf("%T is not a graph of this simulator", g))
	case x.d != d || x.run != d.run:
		return invalidHandle(call, "graph from another device or Run")
	case x.destroyed:
		return invalidHandle(call, "graph was destroyed")
	}
	return nil
}

func (d *Device) execOf(g device.GraphExec, call string) error {
	x, ok := g.(*graphExec)
	switch {
	case g == nil || !ok || x == nil:
		return invalidHandle(call, fmt.Sprintf("%T is not a graph exec of this simulator", g))
	case x.d != d || x.run != d.run:
		return invalidHandle(call, "graph exec from another device or Run")
	case x.destroyed:
		return invalidHandle(call, "graph exec was destroyed")
	}
	return nil
}

func (th *thread) BeginCapture(s device.Stream) error {
	d := th.d
	st, err := d.streamOf(s, "cuStreamBeginCapture")
	if err != nil {
		return err
	}
	if st.capture != nil {
		return &device.APIError{Call: "cuStreamBeginCapture", Code: "CUDA_ERROR_ILLEGAL_STATE", Msg: fmt.Sprintf("stream %d is already capturing", st.id)}
	}
	th.chargeGraphBuild(d.cost.capture, "cuStreamBeginCapture")
	c := &capture{d: d, origin: st, g: &graph{d: d, run: d.run}}
	c.streams = []*stream{st}
	st.capture = c
	st.capTail = st.capTail[:0]
	return nil
}

func (th *thread) EndCapture(s device.Stream) (device.Graph, error) {
	d := th.d
	st, err := d.streamOf(s, "cuStreamEndCapture")
	if err != nil {
		return nil, err
	}
	c := st.capture
	if c == nil {
		return nil, &device.APIError{Call: "cuStreamEndCapture", Code: "CUDA_ERROR_ILLEGAL_STATE", Msg: fmt.Sprintf("stream %d is not capturing", st.id)}
	}
	if c.origin != st {
		return nil, &device.APIError{Call: "cuStreamEndCapture", Code: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
			Msg: fmt.Sprintf("stream %d joined a capture that began on stream %d; end it there", st.id, c.origin.id)}
	}
	th.chargeGraphBuild(d.cost.capture, "cuStreamEndCapture")
	// Every node must be an ancestor of (or be) the origin's last nodes:
	// every forked stream must have joined back.
	joined := make([]bool, len(c.g.nodes))
	stack := append([]int32(nil), st.capTail...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if joined[n] {
			continue
		}
		joined[n] = true
		stack = append(stack, c.g.nodes[n].deps...)
	}
	var unjoined error
	for _, o := range c.streams {
		for _, n := range o.capTail {
			if !joined[n] && unjoined == nil {
				unjoined = &device.APIError{Call: "cuStreamEndCapture", Code: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
					Msg: fmt.Sprintf("stream %d forked from the capture on stream %d and never joined back (node %d)", o.id, st.id, n)}
			}
		}
		o.capture = nil
		o.capTail = nil
	}
	c.ended = true
	if c.invalid != "" {
		return nil, &device.APIError{Call: "cuStreamEndCapture", Code: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", Msg: c.invalid}
	}
	if unjoined != nil {
		return nil, unjoined
	}
	return c.g, nil
}

func (th *thread) Instantiate(g device.Graph) (device.GraphExec, error) {
	d := th.d
	if err := d.graphOf(g, "cuGraphInstantiate"); err != nil {
		return nil, err
	}
	gr := g.(*graph)
	n := len(gr.nodes)
	copies := int64(copyNodes(gr.nodes))
	nodes := addTime(mulTime(int64(n)-copies, d.cost.instNode), mulTime(copies, d.cost.instCopyNode))
	th.chargeGraphBuild(addTime(d.cost.instBase, addTime(nodes, mulTime(int64(kernelArgs(gr.nodes)), d.cost.instArg))), "cuGraphInstantiate")
	x := &graphExec{d: d, run: d.run, nodes: make([]gnode, n), succ: make([][]int32, n), npred: make([]int32, n)}
	x.launchCost = d.cost.graphLaunch
	roots := 0
	track := d.cost.graphKernelChange > 0 || d.cost.graphChangedNode > 0
	if track {
		x.launchedCfg = make([]nodeConfig, n)
		x.updated = make([]bool, n)
	}
	for i, nd := range gr.nodes {
		x.nodes[i] = nd
		if nd.kind == cmdKernel {
			x.nodes[i].l = copyLaunch(&nd.l)
			if track {
				x.launchedCfg[i] = configOf(&nd.l)
			}
		}
		// Host-function nodes cost what kernel nodes do.
		if nd.kind == cmdCopy {
			x.launchCost = addTime(x.launchCost, d.cost.graphCopyLaunch)
		} else {
			x.launchCost = addTime(x.launchCost, d.cost.graphNodeLaunch)
		}
		x.npred[i] = int32(len(nd.deps))
		if len(nd.deps) == 0 {
			roots++
		}
		for _, p := range nd.deps {
			x.succ[p] = append(x.succ[p], int32(i))
			x.launchCost = addTime(x.launchCost, d.copyEdgeLaunch(gr.nodes, x.succ[p], p, i))
		}
	}
	if d.cost.instSegment > 0 || d.cost.destroyExecSegment > 0 {
		// Computed only when charged, as the branches below.
		x.segments = dagSegments(x.succ)
		th.chargeGraphBuild(mulTime(int64(x.segments), d.cost.instSegment), "cuGraphInstantiate (per segment)")
	}
	if d.cost.graphBranchQueue > 0 {
		x.lanes = max(0, dagWidth(x.succ)-1)
		x.branchHead = branchHeads(x.succ, x.npred)
	}
	if d.cost.graphBranchLaunch > 0 || d.cost.graphJoinLaunch > 0 {
		// Computed only when charged: a config without
		// graph_launch_branch_ns and graph_launch_join_ns runs exactly
		// as before the fields.
		w := dagWidth(x.succ)
		x.launchCost = addTime(x.launchCost, mulTime(int64(roots), d.cost.graphBranchLaunch))
		if d.cost.graphOpenEndLaunch > 0 {
			x.launchCost = addTime(x.launchCost, mulTime(int64(max(0, openEnds(x.succ)-roots)), d.cost.graphOpenEndLaunch))
		} else {
			x.launchCost = addTime(x.launchCost, mulTime(int64(w-roots), d.cost.graphBranchLaunch))
		}
		x.launchCost = addTime(x.launchCost, mulTime(int64(dagJoins(x.succ, w)), d.cost.graphJoinLaunch))
	}
	return x, nil
}

// openEnds is the number of the DAG's nodes without successors.
func openEnds(succ [][]int32) int {
	n := 0
	for _, s := range succ {
		if len(s) == 0 {
			n++
		}
	}
	return n
}

// copyEdgeLaunch is what the edge from node p to node i adds to the
// launch call: graph_launch_copy_edge_ns into a copy, or out of a copy to
// its first non-copy successor, graph_launch_copy_fan_edge_ns out of a
// copy to each non-copy successor past that; nothing between non-copies.
// succ is p's successors so far, i last.
func (d *Device) copyEdgeLaunch(nodes []gnode, succ []int32, p int32, i int) Time {
	switch {
	case nodes[i].kind == cmdCopy:
		return d.cost.graphCopyEdgeLaunch
	case nodes[p].kind != cmdCopy:
		return 0
	}
	for _, s := range succ[:len(succ)-1] {
		if nodes[s].kind != cmdCopy {
			return d.cost.graphCopyFanEdgeLaunch
		}
	}
	return d.cost.graphCopyEdgeLaunch
}

// kernelArgs is the number of arguments of the kernel nodes.
// copyNodes is how many of nodes are copies.
func copyNodes(nodes []gnode) int {
	n := 0
	for i := range nodes {
		if nodes[i].kind == cmdCopy {
			n++
		}
	}
	return n
}

func kernelArgs(nodes []gnode) int {
	n := 0
	for i := range nodes {
		if nodes[i].kind == cmdKernel {
			n += len(nodes[i].l.Args)
		}
	}
	return n
}

func (th *thread) GraphLaunch(gx device.GraphExec, s device.Stream) error {
	d := th.d
	if err := d.execOf(gx, "cuGraphLaunch"); err != nil {
		return err
	}
	st, err := d.streamOf(s, "cuGraphLaunch")
	if err != nil {
		return err
	}
	if st.capture != nil {
		return &device.APIError{Call: "cuGraphLaunch", Code: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
			Msg: "launching a graph into a capturing stream (child graphs) is not modelled"}
	}
	x := gx.(*graphExec)
	kernels, changed := x.nodeChanges()
	cost := addTime(x.launchCost, addTime(mulTime(int64(kernels), d.cost.graphKernelChange), mulTime(int64(changed), d.cost.graphChangedNode)))
	if !x.launched {
		// The driver uploads a fresh exec at its first launch.
		cost = addTime(cost, mulTime(int64(len(x.nodes)), d.cost.firstGraphLaunchNode))
		x.launched = true
	}
	cost = addTime(cost, th.coldCost())
	th.charge(cost, "cuGraphLaunch")
	k := d.newCommand(cmdGraph)
	k.gx = x
	k.gr = &graphRun{x: x, nodes: x.nodes, cmd: k}
	x.shared = true
	at := th.clock
	if f := d.cost.graphStreamAfter; f > 0 && cost > f {
		// The call's work ended at th.clock; the device has the graph
		// from f into it (graphRun.handed).
		k.gr.streamStart, k.gr.streamCost = th.clock-cost, cost
		at = k.gr.streamStart + f
	}
	d.enqueue(st, k, at)
	return nil
}

// handed is when node i reaches the device: with
// host.graph_launch_stream_after_ns and a launch call longer than it,
// graph_launch_stream_after_ns into the call or (i+1)/n of the way
// through it, whichever is later; otherwise at once (the launch arrived
// after its call).
func (gr *graphRun) handed(i int32, after Time) Time {
	if gr.streamCost == 0 {
		return 0
	}
	n := int64(len(gr.nodes))
	part := Time(int64(gr.streamCost) / n * (int64(i) + 1))
	if int64(i)+1 == n {
		part = gr.streamCost
	}
	return gr.streamStart + max(after, part)
}

// nodeChanges counts the kernel nodes whose kernel differs from the one
// they launched at the exec's previous launch (or were instantiated
// with), and those whose launch configuration (kernel, grid, block,
// dynamic shared memory) differs, and makes the current configurations
// the launched ones.
func (x *graphExec) nodeChanges() (kernels, changed int) {
	for _, i := range x.updatedNodes {
		now, was := configOf(&x.nodes[i].l), x.launchedCfg[i]
		if !sameKernel(now.kernel, was.kernel) {
			kernels++
			changed++
		} else if now.grid != was.grid || now.block != was.block || now.shared != was.shared {
			changed++
		}
		x.launchedCfg[i] = now
		x.updated[i] = false
	}
	x.updatedNodes = x.updatedNodes[:0]
	return kernels, changed
}

// sameKernel reports whether a and b name the same compiled function.
func sameKernel(a, b *device.Kernel) bool {
	return a == b || (a != nil && b != nil && a.Module == b.Module && a.Name == b.Name)
}

// ownNodes makes x's node slice private before an update (copy-on-write).
func (x *graphExec) ownNodes() {
	if x.shared {
		x.nodes = append([]gnode(nil), x.nodes...)
		x.shared = false
	}
}

func (th *thread) SetKernelNode(gx device.GraphExec, node int, l *device.Launch) error {
	d := th.d
	const call = "cuGraphExecKernelNodeSetParams"
	if err := d.execOf(gx, call); err != nil {
		return err
	}
	x := gx.(*graphExec)
	if node < 0 || node >= len(x.nodes) || x.nodes[node].kind != cmdKernel {
		return &device.APIError{Call: call, Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("node %d is not a kernel node of this graph (%d nodes)", node, len(x.nodes))}
	}
	if err := d.validateLaunch(l); err != nil {
		return err
	}
	// The launch may be of another kernel (CUDA 12: all parameters may
	// change, the function's context not; every kernel here is on this
	// device). The node becomes l entirely: its cost, its trace name and
	// its access set for the race checker are l's from the next launch.
	cost := d.cost.setNode
	if !sameKernel(x.nodes[node].l.Kernel, l.Kernel) {
		cost += d.cost.setNodeKernelChange
	}
	th.charge(cost, call)
	x.ownNodes()
	x.nodes[node].l = copyLaunch(l)
	if x.updated != nil && !x.updated[node] {
		x.updated[node] = true
		x.updatedNodes = append(x.updatedNodes, int32(node))
	}
	return nil
}

func (th *thread) SetCopyNode(gx device.GraphExec, node int, c *device.Copy) error {
	d := th.d
	const call = "cuGraphExecMemcpyNodeSetParams"
	if err := d.execOf(gx, call); err != nil {
		return err
	}
	x := gx.(*graphExec)
	if node < 0 || node >= len(x.nodes) || x.nodes[node].kind != cmdCopy {
		return &device.APIError{Call: call, Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("node %d is not a copy node of this graph (%d nodes)", node, len(x.nodes))}
	}
	if err := device.ValidateCopy(c); err != nil {
		return err
	}
	if c.Kind != x.nodes[node].cp.Kind {
		return &device.APIError{Call: call, Code: "CUDA_ERROR_INVALID_VALUE", Msg: fmt.Sprintf("node %d copies %s; it cannot become %s", node, x.nodes[node].cp.Kind, c.Kind)}
	}
	if c.Kind != device.DeviceToDevice && !c.Host.Pinned {
		return &device.APIError{Call: call, Code: "CUDA_ERROR_INVALID_VALUE", Msg: "a graph copy node needs pinned host memory"}
	}
	th.charge(d.cost.setNode, call)
	x.ownNodes()
	x.nodes[node].cp = *c
	return nil
}

// startGraph begins a graph launch that reached the head of its stream.
func (d *Device) startGraph(k *command) {
	gr := k.gr
	x := gr.x
	x.running = gr
	d.graphLanes += x.lanes
	n := len(gr.nodes)
	gr.remaining = n
	gr.npend = make([]int32, n)
	copy(gr.npend, x.npred)
	gr.ready = make([]Time, n)
	if n == 0 {
		d.graphFinished(gr)
		return
	}
	for i := range gr.nodes {
		if gr.nodes[i].kind == cmdCopy {
			d.noteCopyIssued(&gr.nodes[i].cp, false)
		}
	}
	for i := range gr.nodes {
		if gr.npend[i] == 0 {
			d.scheduleRelease(gr, int32(i), d.cost.graphLatency)
		}
	}
}

// scheduleRelease schedules node i of gr's release delay from now, but
// with graph_dispatch_ns set no sooner than that after the launch's
// previous release (its executor releases nodes one at a time, in the
// order they become ready) plus, after a node that begins a branch,
// graph_branch_queue_ns per branch the other running launches run beside
// their streams; plus graph_copy_node_ns for a copy node.
func (d *Device) scheduleRelease(gr *graphRun, i int32, delay Time) {
	gr.ready[i] = d.now
	at := max(d.now+delay, gr.handed(i, d.cost.graphStreamAfter))
	if d.cost.graphDispatch > 0 || d.cost.graphBranchQueue > 0 {
		at = max(at, gr.nextRelease)
		gap := d.cost.graphDispatch
		if x := gr.x; x.branchHead != nil && x.branchHead[i] {
			gap = addTime(gap, d.branchQueueGap(x))
		}
		gr.nextRelease = addTime(at, gap)
	}
	if gr.nodes[i].kind == cmdCopy {
		at = addTime(at, d.cost.graphCopyNode)
	}
	d.schedule(at, evGraphRelease, 0, i, gr.cmd)
}

// branchQueueGap is what the branches of the other running launches add
// to the spacing of x's releases: graph_branch_queue_ns for each (one
// internal stream each beyond the first), however many connections the
// device has, and nothing with one connection, where every branch shares
// the streams' queue (CUDA_DEVICE_MAX_CONNECTIONS=1 removes the loss).
func (d *Device) branchQueueGap(x *graphExec) Time {
	if d.cost.graphBranchQueue == 0 || d.info.HardwareQueues <= 1 {
		return 0
	}
	q := d.graphLanes - x.lanes
	if d.cfg.FrontEnd.GraphBranchQueueBusy {
		q = d.graphBusy
		if x.running != nil {
			q -= x.running.busyLanes()
		}
	}
	if q <= 0 {
		return 0
	}
	return mulTime(int64(q), d.cost.graphBranchQueue)
}

// branchHeads marks the nodes that begin a branch: the roots of a graph
// of several, and the successors of a fork (a node of several). A
// branch's later nodes and a join do not.
func branchHeads(succ [][]int32, npred []int32) []bool {
	heads := make([]bool, len(succ))
	roots := 0
	for _, p := range npred {
		if p == 0 {
			roots++
		}
	}
	for i, ss := range succ {
		if roots > 1 && npred[i] == 0 {
			heads[i] = true
		}
		if len(ss) > 1 {
			for _, s := range ss {
				heads[s] = true
			}
		}
	}
	return heads
}

// graphRelease starts node i of the graph run of launch command gk.
func (d *Device) graphRelease(gk *command, i int) {
	gr := gk.gr
	nd := &gr.nodes[i]
	k := d.newCommand(nd.kind)
	k.st, k.prio, k.arrive = gk.st, gk.st.prio, d.now
	k.gr, k.node = gr, int32(i)
	switch nd.kind {
	case cmdKernel:
		k.setLaunch(&nd.l)
	case cmdCopy:
		k.cp = nd.cp
	case cmdHostFunc:
		k.fn = nd.fn
	}
	d.hbGraphRelease(k, gk, i)
	d.noteBusy(gr, 1)
	switch nd.kind {
	case cmdKernel:
		k.firstAt = d.now
		d.acquireSlot(k)
	case cmdCopy:
		d.startCopy(k)
	case cmdHostFunc:
		d.startCallback(k)
	}
}

// graphNodeDone releases the successors of a finished node.
func (d *Device) graphNodeDone(k *command) {
	gr := k.gr
	d.hbGraphNodeDone(k)
	for _, s := range gr.x.succ[k.node] {
		gr.npend[s]--
		if gr.npend[s] == 0 {
			d.scheduleRelease(gr, s, d.cost.graphNode)
		}
	}
	gr.remaining--
	d.noteBusy(gr, -1)
	d.release(k)
	if gr.remaining == 0 {
		d.graphFinished(gr)
	}
}

func (d *Device) graphFinished(gr *graphRun) {
	gr.x.running = nil
	d.graphLanes -= gr.x.lanes
	k := gr.cmd
	st := k.st
	d.streamDone(k)
	d.release(k)
	// Another launch of the same exec may wait at some queue's head.
	for i := range d.conns {
		if c := &d.conns[i]; c != st.conn && c.head != nil && c.head.kind == cmdGraph {
			d.kick(c)
		}
	}
}
