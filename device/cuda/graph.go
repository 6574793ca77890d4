//go:build cuda

package cuda

/*
#include "gs.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gpusched/gpusched/device"
)

type nodeKind uint8

const (
	nodeKernel nodeKind = iota
	nodeCopy
	nodeHost
)

func (k nodeKind) String() string {
	switch k {
	case nodeKernel:
		return "kernel"
	case nodeCopy:
		return "copy"
	}
	return "host callback"
}

// captureNode is one captured command and the graph node it became.
type captureNode struct {
	kind     nodeKind
	node     C.CUgraphNode
	kernel   *device.Kernel // kernel nodes: the kernel captured
	copyKind device.CopyKind
}

// capture is one stream capture: its origin stream, the streams that joined
// it through events, and its nodes in capture order.
type capture struct {
	origin  *stream
	mu      sync.Mutex
	members []*stream
	nodes   []captureNode
	ended   bool
}

// join adds st to the capture unless it has ended.
func (c *capture) join(st *stream) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false
	}
	c.members = append(c.members, st)
	return true
}

// graph is a captured graph (device.Graph). Its node handles stay valid
// while an instantiation of it needs them (SetKernelNode), so destroying a
// graph that still has live executables is deferred until they go.
type graph struct {
	device.Base
	id        int
	g         C.CUgraph
	r         *run
	nodes     []captureNode
	dead      atomic.Bool // destroyed by the user
	execs     int         // live instantiations
	destroyed bool        // cuGraphDestroy done
}

func (g *graph) ID() int    { return g.id }
func (g *graph) Nodes() int { return len(g.nodes) }

// graphExec is an instantiated graph (device.GraphExec).
type graphExec struct {
	device.Base
	id        int
	x         C.CUgraphExec
	r         *run
	g         *graph
	hostNodes int
	// kernels[i] is the kernel node i launches now (nil for other
	// nodes): the captured one until SetKernelNode changes it. It is the
	// exec's own, not its graph's: execs of one graph update apart.
	kernels []*device.Kernel
	dead    atomic.Bool
}

func (x *graphExec) ID() int    { return x.id }
func (x *graphExec) Nodes() int { return len(x.g.nodes) }

// captured appends the node the command just issued to st became.
func (h *host) captured(st *stream, c *capture, n captureNode) error {
	if err := check("cuStreamGetCaptureInfo", C.gs_capture_last(h.args.sc, st.s)); err != nil {
		return err
	}
	if h.args.sc.status != C.CU_STREAM_CAPTURE_STATUS_ACTIVE || h.args.sc.ndeps != 1 {
		return fmt.Errorf("cuda: stream %d: capture is not active or the captured %s has %d dependencies where 1 was expected",
			st.id, n.kind, int(h.args.sc.ndeps))
	}
	n.node = h.args.sc.node
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	return nil
}

func (h *host) BeginCapture(s device.Stream) error {
	defer h.traceCall("cuStreamBeginCapture", h.callStart())
	st, err := h.stream(s, "BeginCapture")
	if err != nil {
		return err
	}
	if st.capture.Load() != nil {
		return &device.APIError{Call: "cuStreamBeginCapture", Code: "CUDA_ERROR_ILLEGAL_STATE", Msg: fmt.Sprintf("stream %d is already capturing", st.id)}
	}
	if err := check("cuStreamBeginCapture", C.cuStreamBeginCapture(st.s, C.CU_STREAM_CAPTURE_MODE_RELAXED)); err != nil {
		return err
	}
	c := &capture{origin: st, members: []*stream{st}}
	st.capture.Store(c)
	return nil
}

func (h *host) EndCapture(s device.Stream) (device.Graph, error) {
	defer h.traceCall("cuStreamEndCapture", h.callStart())
	st, err := h.stream(s, "EndCapture")
	if err != nil {
		return nil, err
	}
	c := st.capture.Load()
	if c == nil {
		return nil, &device.APIError{Call: "cuStreamEndCapture", Code: "CUDA_ERROR_ILLEGAL_STATE", Msg: fmt.Sprintf("stream %d is not capturing", st.id)}
	}
	if c.origin != st {
		return nil, &device.APIError{Call: "cuStreamEndCapture", Code: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
			Msg: fmt.Sprintf("stream %d joined the capture begun on stream %d; end it there", st.id, c.origin.id)}
	}
	var g C.CUgraph
	r := injected("cuStreamEndCapture", C.cuStreamEndCapture(st.s, &g))
	// Whatever the outcome, the capture is over for every member.
	c.mu.Lock()
	c.ended = true
	for _, m := range c.members {
		m.capture.Store(nil)
	}
	nodes := c.nodes
	c.mu.Unlock()
	if r != C.CUDA_SUCCESS {
		return nil, apiErr("cuStreamEndCapture", r)
	}
	gr := &graph{id: nextID(&h.r.graphIDs), g: g, r: h.r, nodes: nodes}
	h.r.mu.Lock()
	h.r.graphs[gr] = true
	h.r.mu.Unlock()
	return gr, nil
}

func (h *host) graphOf(g device.Graph, op string) (*graph, error) {
	return resolve[*graph](h, g, op, "a graph", "graph")
}

func (h *host) execOf(x device.GraphExec, op string) (*graphExec, error) {
	return resolve[*graphExec](h, x, op, "an instantiated graph", "graph exec")
}

func (g *graph) owner() (*run, *atomic.Bool) {
	if g == nil {
		return nil, nil
	}
	return g.r, &g.dead
}

func (x *graphExec) owner() (*run, *atomic.Bool) {
	if x == nil {
		return nil, nil
	}
	return x.r, &x.dead
}

func (h *host) Instantiate(g device.Graph) (device.GraphExec, error) {
	defer h.traceCall("cuGraphInstantiate+cuGraphUpload", h.callStart())
	gr, err := h.graphOf(g, "Instantiate")
	if err != nil {
		return nil, err
	}
	ex := &graphExec{id: nextID(&h.r.graphIDs), r: h.r, g: gr}
	if err := check("cuGraphInstantiateWithFlags", C.cuGraphInstantiateWithFlags(&ex.x, gr.g, 0)); err != nil {
		return nil, err
	}
	// Upload now (asynchronously, on the legacy stream, which our
	// non-blocking streams do not wait for) rather than on the first
	// launch: a scheduler that instantiates ahead of its timed region, as
	// SET's workers and the captured-once graphs do, should not pay the
	// upload inside it. The driver orders a later launch, on any stream,
	// after the upload of its exec.
	if err := check("cuGraphUpload", C.cuGraphUpload(ex.x, nil)); err != nil {
		C.cuGraphExecDestroy(ex.x)
		return nil, err
	}
	ex.kernels = make([]*device.Kernel, len(gr.nodes))
	for i, n := range gr.nodes {
		switch n.kind {
		case nodeHost:
			ex.hostNodes++
		case nodeKernel:
			ex.kernels[i] = n.kernel
		}
	}
	h.r.mu.Lock()
	gr.execs++
	h.r.execs[ex] = true
	h.r.mu.Unlock()
	return ex, nil
}

func (h *host) GraphLaunch(x device.GraphExec, s device.Stream) error {
	ex, err := h.execOf(x, "GraphLaunch")
	if err != nil {
		return err
	}
	st, err := h.stream(s, "GraphLaunch")
	if err != nil {
		return err
	}
	if st.capture.Load() != nil {
		return &device.APIError{Call: "cuGraphLaunch", Code: "CUDA_ERROR_NOT_SUPPORTED", Msg: "launching a graph into a capturing stream is not supported by this backend"}
	}
	if ex.hostNodes > 0 {
		h.r.th.callbackQueued(ex.hostNodes)
	}
	var tr tracePoint
	if h.r.tracing {
		if tr, err = h.traceBegin(st); err != nil {
			return err
		}
	}
	if r := injected("cuGraphLaunch", C.cuGraphLaunch(ex.x, st.s)); r != C.CUDA_SUCCESS {
		for i := 0; i < ex.hostNodes; i++ {
			h.r.th.callbackDone()
		}
		return apiErr("cuGraphLaunch", r)
	}
	if tr.on {
		return h.traceEnd(st, tr, fmt.Sprintf("graph %d", ex.g.id), "graph",
			device.TraceArg{Key: "nodes", Value: len(ex.g.nodes)},
			device.TraceArg{Key: "kernels", Value: ex.kernelNames()})
	}
	return nil
}

func (h *host) node(ex *graphExec, i int, want nodeKind, op string) (*captureNode, error) {
	if i < 0 || i >= len(ex.g.nodes) {
		return nil, fmt.Errorf("cuda: %s: node %d is out of range; the graph has %d nodes", op, i, len(ex.g.nodes))
	}
	n := &ex.g.nodes[i]
	if n.kind != want {
		return nil, fmt.Errorf("cuda: %s: node %d is a %s node, not a %s node", op, i, n.kind, want)
	}
	return n, nil
}

func (h *host) SetKernelNode(x device.GraphExec, i int, l *device.Launch) error {
	defer h.traceCall("cuGraphExecKernelNodeSetParams", h.callStart())
	ex, err := h.execOf(x, "SetKernelNode")
	if err != nil {
		return err
	}
	n, err := h.node(ex, i, nodeKernel, "SetKernelNode")
	if err != nil {
		return err
	}
	if err := device.ValidateLaunch(&h.r.d.info, l); err != nil {
		return err
	}
	// The kernel may change (CUDA 12: "all nodeParams fields may change"
	// but the function's owning context; every module of this device is
	// loaded in its one context).
	f, err := h.fn(l.Kernel)
	if err != nil {
		return err
	}
	if err := h.args.marshal(l); err != nil {
		return err
	}
	if err := check("cuGraphExecKernelNodeSetParams", C.gs_set_kernel_node(ex.x, n.node, f.f,
		C.uint(l.Grid.X), C.uint(l.Grid.Y), C.uint(l.Grid.Z),
		C.uint(l.Block.X), C.uint(l.Block.Y), C.uint(l.Block.Z), C.uint(l.SharedMem), h.args.params)); err != nil {
		return err
	}
	ex.kernels[i] = l.Kernel
	return nil
}

// kernelNames lists the kernels of the exec's kernel nodes now, in node
// order, for traces.
func (x *graphExec) kernelNames() string {
	var b strings.Builder
	for _, k := range x.kernels {
		if k == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k.String())
	}
	return b.String()
}

func (h *host) SetCopyNode(x device.GraphExec, i int, c *device.Copy) error {
	defer h.traceCall("cuGraphExecMemcpyNodeSetParams", h.callStart())
	ex, err := h.execOf(x, "SetCopyNode")
	if err != nil {
		return err
	}
	n, err := h.node(ex, i, nodeCopy, "SetCopyNode")
	if err != nil {
		return err
	}
	if err := device.ValidateCopy(c); err != nil {
		return err
	}
	if c.Kind != device.DeviceToDevice && !c.Host.Pinned {
		return &device.APIError{Call: "cuGraphExecMemcpyNodeSetParams", Code: "CUDA_ERROR_INVALID_VALUE", Msg: "a graph copy node needs pinned host memory"}
	}
	if c.Kind != n.copyKind {
		return fmt.Errorf("cuda: SetCopyNode: node %d was captured as a %s copy; its direction cannot change to %s", i, n.copyKind, c.Kind)
	}
	dst, src, hp, err := h.copyPointers(c, "SetCopyNode")
	if err != nil {
		return err
	}
	return check("cuGraphExecMemcpyNodeSetParams", C.gs_set_copy_node(ex.x, n.node, h.r.d.cctx(), C.int(c.Kind), dst, src, hp, C.size_t(c.Bytes)))
}

func (h *host) destroyExec(ex *graphExec) error {
	if _, err := h.execOf(ex, "Destroy"); err != nil {
		return err
	}
	// Forgotten before it is destroyed, as streams are (host.go).
	ex.dead.Store(true)
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.execs, ex)
	ex.g.execs--
	if err := check("cuGraphExecDestroy", C.cuGraphExecDestroy(ex.x)); err != nil {
		return err
	}
	if ex.g.dead.Load() && ex.g.execs == 0 && !ex.g.destroyed {
		ex.g.destroyed = true
		delete(r.graphs, ex.g)
		return check("cuGraphDestroy", C.cuGraphDestroy(ex.g.g))
	}
	return nil
}

func (h *host) destroyGraph(gr *graph) error {
	if _, err := h.graphOf(gr, "Destroy"); err != nil {
		return err
	}
	gr.dead.Store(true)
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if gr.execs > 0 {
		return nil // destroyed with its last executable (or at the end of the run)
	}
	gr.destroyed = true
	delete(r.graphs, gr)
	return check("cuGraphDestroy", C.cuGraphDestroy(gr.g))
}
