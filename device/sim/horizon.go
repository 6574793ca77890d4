package sim

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Horizon is the longest simulated time a Run may reach: one simulated
// day. Every event time and every host thread's clock is checked against
// it, and a Run that would pass it ends with a *HorizonError instead of
// reporting a saturated or wrapped-around time. A day is many orders of
// magnitude beyond any experiment (they simulate milliseconds to seconds)
// and far inside int64 picoseconds (about 106 days), so the sum of a time
// within the horizon and a duration (saturated at maxTime, about 13 days)
// never overflows.
const Horizon = 24 * time.Hour

const horizon = Time(Horizon) * 1000

// HorizonError ends a Run whose simulated time would pass Horizon: it names
// the command or host call that got there and the config field (or the
// workload's work figure) whose value took it there.
type HorizonError struct {
	At    string // the time the command would reach ("more than 320h" when saturated)
	What  string // `kernel "s0.n1.0" on stream 1`, `host thread main in cuLaunchKernel`
	Field string // the config field, or the workload figure, that produced the time
	Cause string // how: "one block takes 320h: 2560 bytes of work per block at ..."
}

func (e *HorizonError) Error() string {
	return fmt.Sprintf("simulated time passes the horizon of %v (sim.Horizon) at %s, at %s: %s (from %s)",
		Horizon, e.What, e.At, e.Cause, e.Field)
}

func horizonAt(t Time) string {
	if t >= maxTime || t < 0 {
		return "more than " + maxTime.Duration().String()
	}
	return t.Duration().String()
}

// stopRun ends the Run with err: the engine loop returns it at its next
// turn. From a host thread's context the thread hands control back at
// once, and is ended with the others.
func (d *Device) stopRun(err error) {
	if d.stop == nil {
		d.stop = err
	}
	if th := d.current; th != nil {
		th.yield()
	}
}

// pastHorizon ends the Run at an event time t beyond the horizon, naming
// what the event is for and the figure that produced it.
func (d *Device) pastHorizon(t Time, kind evKind, a int32, k *command) {
	e := &HorizonError{At: horizonAt(t)}
	switch {
	case k == nil:
		e.What = fmt.Sprintf("hardware queue %d", a)
		e.Field, e.Cause = "the issuing host thread's clock", "a command arrives from the host that late"
	case kind == evBatchDone || kind == evBlockDone || kind == evBlockStart:
		e.What = kernelWhat(k)
		dur := d.blockDur(k, &d.sms[a])
		e.Field, e.Cause = d.blockCause(k, &d.sms[a])
		if wait := t - d.now - dur; kind != evBlockStart && wait > dur {
			e.Field = "front_end.block_dispatch_ns"
			e.Cause = fmt.Sprintf("the block distributor starts the block %v after it is placed (front_end.block_dispatch_ns = %g per block)",
				wait.Duration(), d.cfg.FrontEnd.BlockDispatchNs)
		} else if d.now > 0 {
			e.Cause = fmt.Sprintf("it starts at %v; %s", d.now.Duration(), e.Cause)
		}
	default:
		e.What = kernelWhat(k)
		e.Field, e.Cause = d.commandCause(kind, k)
	}
	d.stopRun(e)
}

func kernelWhat(k *command) string {
	name := ""
	switch k.kind {
	case cmdKernel:
		name = fmt.Sprintf(" %q", k.l.Name())
	case cmdCopy:
		if k.cp.Label != "" {
			name = fmt.Sprintf(" %q", k.cp.Label)
		}
	}
	if s := k.streamID(); s >= 0 {
		return fmt.Sprintf("%s%s on stream %d", k.kind, name, s)
	}
	return k.kind.String() + name
}

// commandCause names the config field behind an event other than a
// block's end.
func (d *Device) commandCause(kind evKind, k *command) (field, cause string) {
	fe := d.cfg.FrontEnd
	ns := func(f string, v float64) (string, string) {
		return f, fmt.Sprintf("it comes %g ns after its predecessor (%s)", v, f)
	}
	switch kind {
	case evCopyDone:
		return d.copyCause(k)
	case evCallback:
		if k.cbParked > 0 {
			return ns("front_end.callback_parked_wake_ns", fe.CallbackParkedWakeNs)
		}
		if fe.CallbackWakeNs > fe.CallbackNs {
			return ns("front_end.callback_wake_ns", fe.CallbackWakeNs)
		}
		return ns("front_end.callback_ns", fe.CallbackNs)
	case evCallbackRelease:
		return ns("front_end.callback_release_ns", fe.CallbackReleaseNs)
	case evDQInsert:
		return ns("dependency_queue.insert_cycles", float64(d.cfg.DQ.InsertCycles)*d.cost.cycle)
	case evDQComplete:
		return ns("dependency_queue.complete_cycles", float64(d.cfg.DQ.CompleteCycles)*d.cost.cycle)
	case evGraphRelease:
		if fe.GraphLaunchLatencyNs > fe.GraphNodeNs {
			return ns("front_end.graph_launch_latency_ns", fe.GraphLaunchLatencyNs)
		}
		return ns("front_end.graph_node_ns", fe.GraphNodeNs)
	case evActivate:
		if k.dqID != 0 {
			return ns("dependency_queue.dispatch_ns", d.cfg.DQ.DispatchNs)
		}
		if fe.LaunchLatencyNs >= fe.BackToBackNs {
			return ns("front_end.launch_latency_ns", fe.LaunchLatencyNs)
		}
		return ns("front_end.back_to_back_ns", fe.BackToBackNs)
	}
	return "the simulator", fmt.Sprintf("event kind %d", kind)
}

func (d *Device) copyCause(k *command) (field, cause string) {
	c := &k.cp
	field, rate := "info.mem_bandwidth", d.info.MemBandwidth/1e9
	switch {
	case k.pageable && d.cfg.Copy.PageableGBps < d.cfg.Copy.HtoDGBps:
		field, rate = "copy.pageable_gbps", d.cfg.Copy.PageableGBps
	case c.Kind == device.HostToDevice:
		field, rate = "copy.htod_gbps", d.cfg.Copy.HtoDGBps
	case c.Kind == device.DeviceToHost:
		field, rate = "copy.dtoh_gbps", d.cfg.Copy.DtoHGBps
	}
	if d.cfg.Copy.LatencyNs > float64(c.Bytes)/rate {
		return "copy.latency_ns", fmt.Sprintf("each copy takes copy.latency_ns = %g ns", d.cfg.Copy.LatencyNs)
	}
	return field, fmt.Sprintf("%d bytes at %s = %g GB/s take %v", c.Bytes, field, rate, nsTime(float64(c.Bytes)/rate).Duration())
}

// blockCause names what makes one block of k on sm as long as it is: it
// asks blockDur itself about the work's cycles, flops and bytes one at a
// time (so it follows the cost model as it is), and for bytes whether the
// SM's or the GPU's bandwidth limits.
func (d *Device) blockCause(k *command, sm *smState) (field, cause string) {
	w := k.l.Work
	defer func() { k.l.Work = w }()
	total := d.blockDur(k, sm)
	parts := []struct {
		work        device.Work
		field, what string
		amount      float64
	}{
		{device.Work{Cycles: w.Cycles}, "info.clock_hz", "cycles", w.Cycles},
		{device.Work{Flops: w.Flops}, "sm.flops_per_cycle", "flops", w.Flops},
		{device.Work{Bytes: w.Bytes}, "sm.max_sm_bandwidth", "bytes", w.Bytes},
	}
	best, bestT := -1, d.cost.minBlock
	for i, p := range parts {
		k.l.Work = p.work
		if t := d.blockDur(k, sm); t > bestT {
			best, bestT = i, t
		}
	}
	if best < 0 {
		return "front_end.min_block_ns", fmt.Sprintf("one block takes front_end.min_block_ns = %g ns", d.cfg.FrontEnd.MinBlockNs)
	}
	p := parts[best]
	rate := fmt.Sprintf("%s = %g", p.field, d.fieldValue(p.field))
	if p.what == "bytes" && !d.smBandwidthLimits(k, sm) {
		p.field, rate = "info.mem_bandwidth", fmt.Sprintf("info.mem_bandwidth = %g", d.info.MemBandwidth)
	}
	return p.field, fmt.Sprintf("one block takes %s: %g %s of work per block (the workload's figure) at its share of %s",
		horizonAt(total), p.amount, p.what, rate)
}

// smBandwidthLimits reports whether the SM's bandwidth (not the GPU's)
// bounds k's bytes on sm: whether lifting it shortens the block.
func (d *Device) smBandwidthLimits(k *command, sm *smState) bool {
	k.l.Work = device.Work{Bytes: k.l.Work.Bytes}
	limited := d.blockDur(k, sm)
	keep := d.cfg.SM.MaxSMBandwidth
	d.cfg.SM.MaxSMBandwidth = math.MaxFloat64
	lifted := d.blockDur(k, sm)
	d.cfg.SM.MaxSMBandwidth = keep
	return lifted < limited
}

func (d *Device) fieldValue(field string) float64 {
	switch field {
	case "info.clock_hz":
		return float64(d.info.ClockHz)
	case "sm.flops_per_cycle":
		return d.cfg.SM.FlopsPerCycle
	}
	return d.cfg.SM.MaxSMBandwidth
}

// hostPastHorizon ends the Run when host thread th's clock passes the
// horizon in call, which costs cost.
func (d *Device) hostPastHorizon(th *thread, call string, cost Time) {
	field := hostCallField(call)
	d.stopRun(&HorizonError{
		At: horizonAt(th.clock), What: fmt.Sprintf("host thread %s in %s", th.name, call), Field: field,
		Cause: fmt.Sprintf("the call costs %v (%s)", cost.Duration(), field),
	})
}

// hostCallField is the config field that sets what a driver call costs.
func hostCallField(call string) string {
	if strings.Contains(call, "Capture") || strings.HasSuffix(call, "(capture)") {
		return "host.capture_ns"
	}
	for _, f := range [...]struct{ prefix, field string }{
		{"cuLaunchKernel", "host.launch_ns"}, {"cuMemcpy", "host.copy_enqueue_ns"}, {"cuEventRecord", "host.record_ns"},
		{"cuStreamWaitEvent", "host.wait_ns"}, {"cuEventQuery", "host.query_ns"}, {"cuStreamQuery", "host.query_ns"},
		{"cuEventElapsedTime", "host.query_ns"}, {"cuLaunchHostFunc", "host.host_func_ns"}, {"cuStreamCreate", "host.stream_create_ns"},
		{"cuEventCreate", "host.event_create_ns"}, {"destroy", "host.destroy_ns"}, {"cuMemAllocHost", "host.alloc_host_ns"},
		{"cuMemAlloc", "host.malloc_ns"}, {"cuMemFree", "host.free_ns"}, {"cuGraphInstantiate", "host.instantiate_base_ns and host.instantiate_per_node_ns"},
		{"cuGraphLaunch", "host.graph_launch_ns and the optional graph_launch_* fields"}, {"cuGraphExec", "host.set_node_ns"},
		{"thread start", "host.thread_start_ns"}, {"DQSubmit", "host.dq_submit_ns"}, {"DQDone", "host.dq_poll_ns"},
		{"Spend", "the scheduler's own host work (Host.Spend)"},
	} {
		if strings.HasPrefix(call, f.prefix) {
			return f.field
		}
	}
	if strings.Contains(call, "ynchronize") {
		return "host.sync_call_ns"
	}
	return "host costs"
}
