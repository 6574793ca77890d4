package calibrate

import (
	"fmt"
	"math"

	"github.com/gpusched/gpusched/device/sim"
)

// Config is base with every field the report measures replaced, and Info
// the report's (the measured device's, with its measured memory
// bandwidth). notes say what was clamped and what was kept.
func Config(rep *Report, base *sim.Config) (cfg *sim.Config, notes []string, err error) {
	out := *base
	out.Info = rep.Info
	set := map[string]*float64{
		"host.launch_ns": &out.Host.LaunchNs, "host.copy_enqueue_ns": &out.Host.CopyEnqueueNs,
		"host.record_ns": &out.Host.RecordNs, "host.wait_ns": &out.Host.WaitNs, "host.query_ns": &out.Host.QueryNs,
		"host.sync_call_ns": &out.Host.SyncCallNs, "host.wakeup_ns": &out.Host.WakeupNs,
		"host.host_func_ns": &out.Host.HostFuncNs, "host.stream_create_ns": &out.Host.StreamCreateNs,
		"host.event_create_ns": &out.Host.EventCreateNs, "host.destroy_ns": &out.Host.DestroyNs,
		"host.malloc_ns": &out.Host.MallocNs, "host.free_ns": &out.Host.FreeNs, "host.alloc_host_ns": &out.Host.AllocHostNs,
		"host.capture_ns": &out.Host.CaptureNs, "host.instantiate_base_ns": &out.Host.InstantiateBaseNs,
		"host.instantiate_per_node_ns": &out.Host.InstantiatePerNodeNs, "host.graph_launch_ns": &out.Host.GraphLaunchNs,
		"host.set_node_ns": &out.Host.SetNodeNs, "host.thread_start_ns": &out.Host.ThreadStartNs,
		"host.graph_launch_node_ns": &out.Host.GraphLaunchNodeNs, "host.graph_launch_copy_node_ns": &out.Host.GraphLaunchCopyNodeNs,
		"host.graph_launch_branch_ns": &out.Host.GraphLaunchBranchNs, "host.graph_launch_kernel_change_ns": &out.Host.GraphLaunchKernelChangeNs, "host.set_node_kernel_change_ns": &out.Host.SetNodeKernelChangeNs,
		"front_end.launch_latency_ns": &out.FrontEnd.LaunchLatencyNs, "front_end.back_to_back_ns": &out.FrontEnd.BackToBackNs,
		"front_end.graph_launch_latency_ns": &out.FrontEnd.GraphLaunchLatencyNs, "front_end.graph_node_ns": &out.FrontEnd.GraphNodeNs,
		"front_end.callback_ns": &out.FrontEnd.CallbackNs, "front_end.min_block_ns": &out.FrontEnd.MinBlockNs,
		"copy.latency_ns": &out.Copy.LatencyNs, "copy.htod_gbps": &out.Copy.HtoDGBps, "copy.dtoh_gbps": &out.Copy.DtoHGBps,
		"copy.pageable_gbps": &out.Copy.PageableGBps, "info.mem_bandwidth": &out.Info.MemBandwidth, "host.handoff_ns": &out.Host.HandoffNs, "host.busy_stream_ns": &out.Host.BusyStreamNs,
		"sm.max_sm_bandwidth": &out.SM.MaxSMBandwidth,
	}
	setInt := map[string]*int{"sm.sm_mem_saturation_warps": &out.SM.SMMemSaturationWarps}
	seen := map[string]bool{}
	for _, m := range rep.Measurements {
		if m.Field == "" {
			continue
		}
		if p, ok := setInt[m.Field]; ok {
			// A saturation under 4 warps cannot be told from 4 by this
			// method, and the model treats them alike.
			*p = max(4, int(math.Round(m.Value)))
			seen[m.Field] = true
			continue
		}
		p, ok := set[m.Field]
		if !ok {
			return nil, nil, fmt.Errorf("calibrate: measurement %q names unknown field %s", m.Name, m.Field)
		}
		v := m.Value
		if v < 0 || v != v {
			// A derived figure below zero means the effect is under the
			// measurement's resolution on this device.
			notes = append(notes, fmt.Sprintf("%s came out %.0f %s (under this method's resolution here); the config uses 0", m.Name, v, m.Unit))
			v = 0
		}
		*p = v
		seen[m.Field] = true
	}
	for f := range set {
		if !seen[f] {
			return nil, nil, fmt.Errorf("calibrate: no measurement for %s", f)
		}
	}
	for f := range setInt {
		if !seen[f] {
			return nil, nil, fmt.Errorf("calibrate: no measurement for %s", f)
		}
	}
	notes = append(notes,
		"Not measured, kept from the base config: sm.flops_per_cycle, sm.saturation_warps, dependency_queue (ACS-HW is proposed hardware), host.dq_submit_ns, host.dq_poll_ns.",
		"info is what the device reports, except mem_bandwidth, which is measured.")
	return &out, notes, nil
}
