package calibrate

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
)

// Config is base with every field the report measures replaced, and Info
// the report's (the measured device's, with its measured memory
// bandwidth). notes say what was clamped and what was kept.
func Config(rep *Report, base *sim.Config) (cfg *sim.Config, notes []string, err error) {
	rep, kept, notes := upgrade(rep)
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
		"front_end.block_dispatch_ns": &out.FrontEnd.BlockDispatchNs, "front_end.event_wait_ns": &out.FrontEnd.EventWaitNs,
		"host.capture_event_ns": &out.Host.CaptureEventNs,
		"copy.latency_ns":       &out.Copy.LatencyNs, "copy.htod_gbps": &out.Copy.HtoDGBps, "copy.dtoh_gbps": &out.Copy.DtoHGBps,
		"copy.pageable_gbps": &out.Copy.PageableGBps, "info.mem_bandwidth": &out.Info.MemBandwidth, "host.handoff_ns": &out.Host.HandoffNs, "host.busy_stream_ns": &out.Host.BusyStreamNs,
		"host.callback_handoff_ns": &out.Host.CallbackHandoffNs,
		"host.park_after_ns":       &out.Host.ParkAfterNs, "host.parked_wake_ns": &out.Host.ParkedWakeNs, "host.parked_callback_wake_ns": &out.Host.ParkedCallbackWakeNs,
		"host.sync_park_after_ns": &out.Host.SyncParkAfterNs, "host.sync_parked_wake_ns": &out.Host.SyncParkedWakeNs,
		"sm.max_sm_bandwidth":   &out.SM.MaxSMBandwidth,
		"host.stream_switch_ns": &out.Host.StreamSwitchNs, "host.wait_pending_ns": &out.Host.WaitPendingNs, "host.record_pending_ns": &out.Host.RecordPendingNs, "front_end.event_wait_doubling_ns": &out.FrontEnd.EventWaitDoublingNs,
		"host.first_graph_launch_per_node_ns": &out.Host.FirstGraphLaunchPerNodeNs, "host.destroy_exec_per_node_ns": &out.Host.DestroyExecPerNodeNs,
		"host.instantiate_per_arg_ns": &out.Host.InstantiatePerArgNs, "host.sync_switch_ns": &out.Host.SyncSwitchNs,
		"tile_sync.post_fraction": &out.TileSync.PostFraction, "tile_sync.poll_fraction": &out.TileSync.PollFraction,
		"tile_sync.release_ns": &out.TileSync.ReleaseNs,
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
		*p = sig4(v)
		seen[m.Field] = true
	}
	for f := range set {
		if !seen[f] && !kept[f] {
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

// laterFields are config fields whose measurements came after the first
// reports: a report without one keeps the base config's value.
var laterFields = []string{"host.handoff_ns", "host.callback_handoff_ns", "host.busy_stream_ns",
	"front_end.min_block_ns", "front_end.block_dispatch_ns", "front_end.event_wait_ns", "host.capture_event_ns",
	"host.park_after_ns", "host.parked_wake_ns", "host.parked_callback_wake_ns", "host.sync_park_after_ns", "host.sync_parked_wake_ns",
	"host.stream_switch_ns", "host.wait_pending_ns", "host.record_pending_ns", "front_end.event_wait_doubling_ns", "host.first_graph_launch_per_node_ns", "host.destroy_exec_per_node_ns",
	"host.instantiate_per_arg_ns", "tile_sync.post_fraction", "tile_sync.poll_fraction", "tile_sync.release_ns", "host.sync_switch_ns"}

// upgrade reads a report written before some measurements existed as
// today's: a report that timed only full waves of empty blocks (its
// "shortest block lifetime" was such a wave, bound by the block
// distributor) gives the dispatch time per block from it and leaves
// front_end.min_block_ns to the base config; a callback hand-off reported
// only sets its field. kept lists the fields left to the base.
func upgrade(rep *Report) (*Report, map[string]bool, []string) {
	out := *rep
	out.Measurements = append([]Measurement(nil), rep.Measurements...)
	var notes []string
	if _, ok := out.byName("block dispatch time per block"); !ok {
		if d, ok := fullWaveDispatch(&out); ok {
			out.Measurements = append(out.Measurements, d)
			notes = append(notes, fmt.Sprintf("this report timed only full waves of empty blocks: that is the block distributor's time "+
				"(front_end.block_dispatch_ns %.2f ns per block); front_end.min_block_ns is kept from the base config", d.Value))
		}
	}
	for i, m := range out.Measurements {
		if m.Name == "callback to host thread hand-off" && m.Field == "" { // reported only, then
			out.Measurements[i].Field = "host.callback_handoff_ns"
		}
	}
	refitRegimes(&out)
	kept := map[string]bool{}
	for _, f := range laterFields {
		if _, ok := out.Get(f); !ok {
			kept[f] = true
		}
	}
	return &out, kept, notes
}

// fullWaveDispatch turns an early report's full-wave "shortest block
// lifetime" into the dispatch time per block (and makes the lifetime
// reported only).
func fullWaveDispatch(rep *Report) (Measurement, bool) {
	wave, okW := rep.byName("shortest block lifetime")
	rate, okR := rep.byName("block dispatch rate")
	if !okW || !okR || wave.Value <= 0 {
		return Measurement{}, false
	}
	blocks := math.Round(rate.Value * wave.Value / 1e9)
	d := Measurement{Name: "block dispatch time per block", Field: "front_end.block_dispatch_ns", Unit: "ns",
		Method: fmt.Sprintf("a full wave of %.0f empty blocks (the report's shortest block lifetime) over its blocks", blocks)}
	for _, r := range wave.Rounds {
		d.Rounds = append(d.Rounds, r/blocks)
	}
	sorted := append([]float64(nil), d.Rounds...)
	sort.Float64s(sorted)
	d.Value, d.Min, d.Max = stats.MedianSorted(sorted), sorted[0], sorted[len(sorted)-1]
	for i := range rep.Measurements {
		if rep.Measurements[i].Name == "shortest block lifetime" {
			rep.Measurements[i].Field = ""
		}
	}
	return d, true
}

// sig4 keeps 4 significant digits: no measurement here is better than
// that (see each one's spread).
func sig4(x float64) float64 {
	if x == 0 {
		return 0
	}
	e := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

// regimeSweeps are the parked hand-off measurement's sweeps and the fields
// their two-regime fits set.
var regimeSweeps = []struct {
	what, afterField, wakeField string
	idles                       []int
}{
	{"queue hand-off", "host.park_after_ns", "host.parked_wake_ns", parkedIdles},
	{"callback hand-off", "", "host.parked_callback_wake_ns", callbackIdles},
	{"stream synchronize return", "host.sync_park_after_ns", "host.sync_parked_wake_ns", syncIdles},
}

// refitRegimes fits every parked sweep in rep again from its per-idle
// rounds, so that a report measured before the fit changed (or before a
// sweep's field existed) gives today's fields.
func refitRegimes(rep *Report) {
	for _, sw := range regimeSweeps {
		byIdle := make([][]float64, len(sw.idles))
		for i, idle := range sw.idles {
			m, ok := rep.byName(fmt.Sprintf("%s after %d us idle", sw.what, idle))
			if !ok {
				break
			}
			byIdle[i] = m.Rounds
		}
		if byIdle[len(byIdle)-1] == nil || len(byIdle[0]) == 0 {
			continue
		}
		for _, fit := range regimeMeasurements(sw.what, sw.afterField, sw.wakeField, sw.idles, byIdle) {
			if i := slices.IndexFunc(rep.Measurements, func(m Measurement) bool { return m.Name == fit.Name }); i >= 0 {
				rep.Measurements[i] = fit
			} else {
				rep.Measurements = append(rep.Measurements, fit)
			}
		}
	}
}
