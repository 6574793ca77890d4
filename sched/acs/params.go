package acs

import (
	"fmt"
	"strings"
)

// Completion is how a scheduler thread learns that its kernel finished.
type Completion string

const (
	// CompletionSync blocks the thread in cuStreamSynchronize (the paper).
	CompletionSync Completion = "sync"
	// CompletionEvent records an event after each launch and blocks in
	// cuEventSynchronize on the oldest unfinished one.
	CompletionEvent Completion = "event"
	// CompletionCallback enqueues a host function after each launch that
	// posts the completion to the window thread; the thread never blocks
	// on the device.
	CompletionCallback Completion = "callback"
)

// Handoff is how many kernels and completions one message between the
// window thread and a scheduler thread carries.
type Handoff string

const (
	// HandoffKernel sends each kernel (or graph) to its scheduler thread
	// in a message of its own, and each completion back in one of its own
	// (the paper's model: two handoffs per kernel).
	HandoffKernel Handoff = "kernel"
	// HandoffBatched sends every kernel that one dispatch pass gives a
	// thread in one message, and, under completion sync, every kernel that
	// one stream synchronization finished back in one message. What each
	// thread runs, and when the window thread learns of it, is unchanged:
	// the thread took every kernel waiting in its queue before launching
	// and the window thread retires every completion waiting in its queue
	// before dispatching anyway. Only the number of queue operations (each
	// a lock and possibly a wake-up on a GPU's host) shrinks.
	HandoffBatched Handoff = "batched"
)

// Params configure ACS-SW. DefaultParams is the paper's configuration.
type Params struct {
	// Window is N, the window's slots. Window <= 0 is an unbounded window
	// (every operation enters at once: a GrSched-like runtime).
	Window int `yaml:"window"`
	// Threads is K, the scheduler threads, each owning one stream.
	Threads int `yaml:"threads"`
	// Completion is sync, event or callback.
	Completion Completion `yaml:"completion"`
	// InFlight is how many kernels (or graphs) a stream may hold at once.
	// 1 is the paper; above 1, kernels whose unfinished upstream kernels
	// are all on one stream are issued behind them.
	InFlight int `yaml:"inflight"`
	// Waits issues a pending kernel whose unfinished upstream kernels have
	// all been launched, on any streams, behind cuStreamWaitEvent on their
	// events, instead of waiting for their completion on the host. Needs
	// InFlight > 1.
	Waits bool `yaml:"waits"`
	// Batch is the longest run of kernels (a ready kernel, its chain of
	// dependents, surplus ready kernels) an idle thread launches as one
	// CUDA graph; 0 or 1 launches kernels one by one.
	Batch int `yaml:"batch"`
	// GraphCache reuses an instantiated graph of the same kernel sequence,
	// updating its nodes' parameters, instead of capturing and
	// instantiating every batch. Needs Batch > 1.
	GraphCache bool `yaml:"graph_cache"`
	// Dispatch is window (the paper: a window thread hands kernels to the
	// scheduler threads and learns of their completions), shared (the
	// scheduler threads share the window under a lock and each takes its
	// own next kernel) or graph (one host thread and one stream: every
	// batch of ready kernels goes out as one graph launch); "" is window.
	Dispatch Dispatch `yaml:"dispatch"`
	// GraphKey is how dispatch graph finds the instantiated graph a batch
	// is launched from: width (one per batch width, its nodes updated to
	// the batch's kernels) or kernels (one per sequence of kernels, for
	// drivers that refuse to change a node's kernel); "" is width. Needs
	// dispatch graph.
	GraphKey GraphKey `yaml:"graph_key"`
	// Lanes is how many parallel branches a dispatch graph batch of w
	// kernels is captured on: min(Lanes, w) chains of consecutive nodes;
	// 0 is a branch per kernel. A batch's kernels are independent, so a
	// chain only adds order; it pays where the driver charges a graph
	// launch per branch (docs/history/acs.md) more than the device
	// loses. Needs dispatch graph.
	Lanes int `yaml:"lanes"`
	// Handoff is kernel (the paper) or batched: how many kernels and
	// completions one message between the window thread and a scheduler
	// thread carries; "" is kernel. Needs dispatch window.
	Handoff Handoff `yaml:"handoff"`
	// CheckCost charges each insertion's dependency check to the window
	// thread (CheckCost); turning it off models a free check. It only
	// matters on the simulator: on a GPU the check takes its real time.
	CheckCost bool `yaml:"check_cost"`
	// CallStats adds to Stats where the host time of a run goes, call by
	// call (callstats.go): each scheduler-thread launch by how many other
	// scheduler threads were in a launch or a synchronize when it began,
	// and the window thread's check, Puts and retiring. A diagnostic for
	// comparing the GPU with the simulator (issue #18): it changes no
	// schedule, only adds clock reads.
	CallStats bool `yaml:"call_stats"`
}

// DefaultParams is ACS-SW as the paper evaluates it: a window of 32, four
// scheduler threads with one kernel in flight each, completion by stream
// synchronization, the measured check cost.
func DefaultParams() Params {
	return Params{Window: 32, Threads: 4, Completion: CompletionSync, InFlight: 1, Dispatch: DispatchWindow, CheckCost: true}
}

// Validate reports the first invalid parameter.
func (p *Params) Validate() error {
	switch {
	case p.Threads < 1 || p.Threads > 64:
		return fmt.Errorf("acs-sw: threads must be in [1, 64], got %d", p.Threads)
	case p.InFlight < 1:
		return fmt.Errorf("acs-sw: inflight must be at least 1, got %d", p.InFlight)
	case p.Batch < 0:
		return fmt.Errorf("acs-sw: batch must not be negative, got %d", p.Batch)
	case p.Waits && p.InFlight < 2:
		return fmt.Errorf("acs-sw: waits needs inflight of at least 2, got %d", p.InFlight)
	case p.GraphCache && p.Batch < 2:
		return fmt.Errorf("acs-sw: graph_cache needs batch of at least 2, got %d", p.Batch)
	}
	switch p.Completion {
	case CompletionSync, CompletionEvent, CompletionCallback:
	default:
		return fmt.Errorf("acs-sw: completion must be sync, event or callback, got %q", p.Completion)
	}
	switch p.Handoff {
	case "", HandoffKernel:
	case HandoffBatched:
		if p.Dispatch == DispatchShared {
			return fmt.Errorf("acs-sw: handoff batched needs dispatch window (shared dispatch has no window thread to hand off from)")
		}
	default:
		return fmt.Errorf("acs-sw: handoff must be kernel or batched, got %q", p.Handoff)
	}
	switch p.Dispatch {
	case "", DispatchWindow:
	case DispatchShared:
		if p.Batch > 1 {
			return fmt.Errorf("acs-sw: dispatch shared launches kernels one by one; batch must be 0 or 1, got %d", p.Batch)
		}
	case DispatchGraph:
		return p.validateGraph()
	default:
		return fmt.Errorf("acs-sw: dispatch must be window, shared or graph, got %q", p.Dispatch)
	}
	if p.GraphKey != "" {
		return fmt.Errorf("acs-sw: graph_key needs dispatch graph, got dispatch %q", p.dispatch())
	}
	if p.Lanes != 0 {
		return fmt.Errorf("acs-sw: lanes needs dispatch graph, got dispatch %q", p.dispatch())
	}
	return nil
}

// validateGraph checks the parameters of dispatch graph: one host thread
// launching every ready kernel of the window as one graph on one stream,
// so none of the scheduler threads' settings apply.
func (p *Params) validateGraph() error {
	const why = "acs-sw: dispatch graph launches every batch from one host thread on one stream"
	switch {
	case p.Window < 1 || p.Window > maxGraphWidth:
		return fmt.Errorf("acs-sw: dispatch graph keeps a graph per batch width up to the window; window must be in [1, %d], got %d", maxGraphWidth, p.Window)
	case p.Threads != 1:
		return fmt.Errorf("%s; threads must be 1, got %d", why, p.Threads)
	case p.Completion != CompletionSync:
		return fmt.Errorf("%s and never waits for a kernel (stream order does); completion must be sync (the run's one final stream synchronize), got %q", why, p.Completion)
	case p.InFlight != 1:
		return fmt.Errorf("%s, every batch behind the last; inflight must be 1, got %d", why, p.InFlight)
	case p.Waits:
		return fmt.Errorf("%s: there are no event waits; waits must be false", why)
	case p.Batch > 1 || p.GraphCache:
		return fmt.Errorf("%s, made of every ready kernel, with its own graph cache (graph_key); batch must be 0 or 1 and graph_cache false, got batch %d, graph_cache %v", why, p.Batch, p.GraphCache)
	case p.Handoff == HandoffBatched:
		return fmt.Errorf("%s: there is no handoff between host threads; handoff must be kernel, got %q", why, p.Handoff)
	case p.Lanes < 0 || p.Lanes > p.Window:
		return fmt.Errorf("acs-sw: lanes must be in [0, window %d] (0: a branch per kernel of a batch), got %d", p.Window, p.Lanes)
	}
	switch p.GraphKey {
	case "", GraphKeyWidth, GraphKeyKernels:
	default:
		return fmt.Errorf("acs-sw: graph_key must be width or kernels, got %q", p.GraphKey)
	}
	return nil
}

func (p *Params) dispatch() Dispatch {
	if p.Dispatch == "" {
		return DispatchWindow
	}
	return p.Dispatch
}

func (p *Params) graphKey() GraphKey {
	if p.GraphKey == "" {
		return GraphKeyWidth
	}
	return p.GraphKey
}

// Name is "acs-sw(N=32,K=4,sync)" plus the variants that differ from the
// paper; under dispatch graph, "acs-sw(N=32,dispatch=graph,key=width)".
func (p Params) Name() string {
	var b strings.Builder
	b.WriteString("acs-sw(")
	if p.Window <= 0 {
		b.WriteString("N=inf")
	} else {
		fmt.Fprintf(&b, "N=%d", p.Window)
	}
	if p.Dispatch == DispatchGraph {
		fmt.Fprintf(&b, ",dispatch=graph,key=%s", p.graphKey())
		if p.Lanes > 0 {
			fmt.Fprintf(&b, ",lanes=%d", p.Lanes)
		}
		if !p.CheckCost {
			b.WriteString(",free-check")
		}
		if p.CallStats {
			b.WriteString(",call-stats")
		}
		b.WriteString(")")
		return b.String()
	}
	fmt.Fprintf(&b, ",K=%d,%s", p.Threads, p.Completion)
	if p.InFlight > 1 {
		fmt.Fprintf(&b, ",inflight=%d", p.InFlight)
	}
	if p.Waits {
		b.WriteString(",waits")
	}
	if p.Dispatch == DispatchShared {
		b.WriteString(",shared")
	}
	if p.Handoff == HandoffBatched {
		b.WriteString(",batched-handoff")
	}
	if p.Batch > 1 {
		fmt.Fprintf(&b, ",batch=%d", p.Batch)
		if p.GraphCache {
			b.WriteString(",cached")
		}
	}
	if !p.CheckCost {
		b.WriteString(",free-check")
	}
	if p.CallStats {
		b.WriteString(",call-stats")
	}
	b.WriteString(")")
	return b.String()
}

// HWParams configure ACS-HW.
type HWParams struct {
	// StaleList is M, the host's list of recently submitted kernels that
	// each new kernel is checked against. It must be at least the
	// device's M (configs/devices/*.yaml dependency_queue.stale_list, 64):
	// the hardware guarantees only that kernels more than its M
	// submissions old are done.
	StaleList int `yaml:"stale_list"`
	// CheckCost charges the host-side check as ACS-SW's.
	CheckCost bool `yaml:"check_cost"`
	// Checkers is how many host threads compute upstream lists ahead of
	// the submitting thread (kernel k by checker k mod Checkers); 0 has
	// the submitting thread check each kernel itself before submitting
	// it. Submissions stay in program order on one thread either way.
	Checkers int `yaml:"checkers"`
}

// DefaultHWParams matches the device configs' M = 64.
func DefaultHWParams() HWParams { return HWParams{StaleList: 64, CheckCost: true} }

// Validate reports the first invalid parameter.
func (p *HWParams) Validate() error {
	if p.StaleList < 1 {
		return fmt.Errorf("acs-hw: stale_list must be at least 1, got %d", p.StaleList)
	}
	if p.Checkers < 0 || p.Checkers > 64 {
		return fmt.Errorf("acs-hw: checkers must be in [0, 64], got %d", p.Checkers)
	}
	return nil
}

// Name is "acs-hw(M=64)" plus the settings that differ from the default.
func (p HWParams) Name() string {
	n := fmt.Sprintf("acs-hw(M=%d", p.StaleList)
	if p.Checkers > 0 {
		n += fmt.Sprintf(",checkers=%d", p.Checkers)
	}
	if !p.CheckCost {
		n += ",free-check"
	}
	return n + ")"
}
