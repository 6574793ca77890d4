package calibrate

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// Calibrating the simulator must give back the config it was built from:
// every measured figure within 2%. h100-datasheet is the reference config
// (the calibrated h100 times unprofiled kernels, calibrate's own among
// them, at its fitted fractions of peak); rtx3070 has
// other costs throughout and a flat graph launch cost (no per-node fields);
// measured-h200 is a real GPU's calibration, with irregular values.
func TestCalibratingTheSimulatorRecoversItsConfig(t *testing.T) {
	configs := []string{"h100-datasheet", "rtx3070", "measured-h200"}
	if raceDetector {
		configs = configs[:1] // the same code on other figures
	}
	for _, name := range configs {
		t.Run(name, func(t *testing.T) {
			base := loadConfig(t, name)
			recovers(t, base)
		})
	}
	// The optional costs the datasheet configs leave out: a hand-off
	// slower than a wake-up, host costs growing with busy streams.
	t.Run("handoff and busy streams", func(t *testing.T) {
		base := loadConfig(t, "h100-datasheet")
		base.Host.HandoffNs, base.Host.BusyStreamNs, base.Host.CallbackHandoffNs = 25000, 40, 70000
		base.FrontEnd.BlockDispatchNs = 0.6 // full waves of empty blocks bound by the distributor
		base.FrontEnd.EventWaitNs = 2500    // dependencies across streams slower than on one
		base.Host.CaptureEventNs = 4000     // captured records and waits dearer than launches
		// Waiting threads that park: a Get whose value arrives 190 us
		// after it (the sweep's 150 us idle plus the 25 us hand-off arrives
		// under, 180 us over), a synchronize past 2 ms (midway between the
		// sweep's 1 and 3 ms) wake slower.
		base.Host.ParkAfterNs, base.Host.ParkedWakeNs, base.Host.ParkedCallbackWakeNs = 190e3, 35e3, 15e3
		base.Host.SyncParkAfterNs, base.Host.SyncParkedWakeNs = 2e6, 20e3
		base.Host.SyncSwitchNs = 1300 // a synchronize of another stream than the last dearer than of the same
		recovers(t, base)
	})
}

func recovers(t *testing.T, base *sim.Config) {
	dev := mustSim(t, base)
	var progress bytes.Buffer
	got, rep, err := Run(dev, base, &progress)
	require.NoError(t, err)

	want := map[string]float64{
		"host.launch_ns": base.Host.LaunchNs, "host.copy_enqueue_ns": base.Host.CopyEnqueueNs,
		"host.record_ns": base.Host.RecordNs, "host.wait_ns": base.Host.WaitNs, "host.query_ns": base.Host.QueryNs,
		"host.sync_call_ns": base.Host.SyncCallNs, "host.wakeup_ns": base.Host.WakeupNs,
		"host.host_func_ns": base.Host.HostFuncNs, "host.stream_create_ns": base.Host.StreamCreateNs,
		"host.event_create_ns": base.Host.EventCreateNs, "host.destroy_ns": base.Host.DestroyNs,
		"host.malloc_ns": base.Host.MallocNs, "host.free_ns": base.Host.FreeNs, "host.alloc_host_ns": base.Host.AllocHostNs,
		"host.capture_ns": base.Host.CaptureNs, "host.instantiate_base_ns": base.Host.InstantiateBaseNs,
		"host.instantiate_per_node_ns": base.Host.InstantiatePerNodeNs, "host.graph_launch_ns": base.Host.GraphLaunchNs,
		"host.set_node_ns": base.Host.SetNodeNs, "host.thread_start_ns": base.Host.ThreadStartNs,
		"host.graph_launch_node_ns": base.Host.GraphLaunchNodeNs, "host.graph_launch_copy_node_ns": base.Host.GraphLaunchCopyNodeNs,
		"host.graph_launch_branch_ns": base.Host.GraphLaunchBranchNs, "host.graph_launch_kernel_change_ns": base.Host.GraphLaunchKernelChangeNs, "host.set_node_kernel_change_ns": base.Host.SetNodeKernelChangeNs,
		"front_end.launch_latency_ns": base.FrontEnd.LaunchLatencyNs, "front_end.back_to_back_ns": base.FrontEnd.BackToBackNs,
		"front_end.graph_launch_latency_ns": base.FrontEnd.GraphLaunchLatencyNs, "front_end.graph_node_ns": base.FrontEnd.GraphNodeNs,
		"front_end.callback_ns": base.FrontEnd.CallbackNs, "front_end.min_block_ns": base.FrontEnd.MinBlockNs,
		"front_end.block_dispatch_ns": base.FrontEnd.BlockDispatchNs, "host.callback_handoff_ns": base.Host.CallbackHandoffNs,
		"copy.latency_ns": base.Copy.LatencyNs, "copy.htod_gbps": base.Copy.HtoDGBps, "copy.dtoh_gbps": base.Copy.DtoHGBps,
		"copy.pageable_gbps": base.Copy.PageableGBps, "info.mem_bandwidth": base.Info.MemBandwidth,
		"sm.max_sm_bandwidth": base.SM.MaxSMBandwidth, "sm.sm_mem_saturation_warps": float64(base.SM.SMMemSaturationWarps),
		"host.handoff_ns": base.Host.HandoffNs, "host.busy_stream_ns": base.Host.BusyStreamNs,
		"front_end.event_wait_ns": base.FrontEnd.EventWaitNs, "host.capture_event_ns": cmp.Or(base.Host.CaptureEventNs, base.Host.CaptureNs),
		"host.park_after_ns": base.Host.ParkAfterNs, "host.parked_wake_ns": base.Host.ParkedWakeNs,
		"host.parked_callback_wake_ns": cmp.Or(base.Host.ParkedCallbackWakeNs, base.Host.ParkedWakeNs),
		"host.sync_park_after_ns":      base.Host.SyncParkAfterNs, "host.sync_parked_wake_ns": base.Host.SyncParkedWakeNs,
		"host.sync_switch_ns": base.Host.SyncSwitchNs,
	}
	if base.Host.HandoffNs == 0 {
		want["host.handoff_ns"] = base.Host.WakeupNs // a config without it hands off at the wake-up cost
	}
	if base.Host.CallbackHandoffNs == 0 {
		want["host.callback_handoff_ns"] = want["host.handoff_ns"]
	}
	for field, w := range want {
		m, ok := rep.Get(field)
		if !assert.True(t, ok, "no measurement for %s", field) {
			continue
		}
		if w == 0 {
			// The optional fields configs leave out: measured as nothing.
			assert.InDelta(t, 0, m.Value, 1, "%s: measured %g, config 0", field, m.Value)
			continue
		}
		assert.InDelta(t, 0, math.Abs(m.Value-w)/w, 0.02, "%s: measured %g, config %g", field, m.Value, w)
	}
	// The returned config carries the measured values and loads back.
	assert.InDelta(t, base.Host.LaunchNs, got.Host.LaunchNs, 0.02*base.Host.LaunchNs)
	assert.InDelta(t, base.Info.MemBandwidth, got.Info.MemBandwidth, 0.02*base.Info.MemBandwidth)
	assert.Equal(t, base.SM.FlopsPerCycle, got.SM.FlopsPerCycle, "not measured: kept")
	assert.Equal(t, base.SM.SaturationWarps, got.SM.SaturationWarps, "not measured: kept")
	assert.InDelta(t, base.SM.MaxSMBandwidth, got.SM.MaxSMBandwidth, 0.02*base.SM.MaxSMBandwidth)
	assert.Equal(t, base.SM.SMMemSaturationWarps, got.SM.SMMemSaturationWarps, "rounded to whole warps")
	assert.Equal(t, base.DQ, got.DQ)
	data, err := got.Marshal()
	require.NoError(t, err)
	back, err := sim.ParseConfig(data, "calibrated")
	require.NoError(t, err)
	assert.Equal(t, got, back)

	// Report-only figures are there too.
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	for _, s := range []string{"block dispatch rate", "launch throughput, 8 host thread(s)", "pageable HtoD bandwidth", "streaming bandwidth, one 32-warp block per SM"} {
		assert.Contains(t, md.String(), s)
	}
	assert.Contains(t, progress.String(), "launch API cost")
}

func TestRunRejectsMissingInputs(t *testing.T) {
	_, _, err := Run(nil, nil, nil)
	assert.ErrorContains(t, err, "device and base config are required")
	dev, err := sim.NewNamed("h100-datasheet")
	require.NoError(t, err)
	_, err = Measure(dev, []string{"cross-stream waits"}, nil)
	assert.ErrorContains(t, err, `no measurement "cross-stream waits"`)
}

// Measure runs only the measurements named; Merge adds them to a full
// report, replacing those of the same name, and the merged report fits
// the field the part measured.
func TestMeasureSomeAndMerge(t *testing.T) {
	cfg := loadConfig(t, "h100-datasheet")
	full, err := Measure(mustSim(t, cfg), []string{"host API costs"}, nil)
	require.NoError(t, err)
	cfg.FrontEnd.EventWaitNs = 1500
	part, err := Measure(mustSim(t, cfg), []string{"cross-stream dependencies"}, nil)
	require.NoError(t, err)
	for _, m := range part.Measurements {
		assert.Contains(t, m.Name, "cross-stream", "only the measurement asked for")
	}
	launch, _ := full.Get("host.launch_ns")
	part.Measurements = append(part.Measurements, Measurement{Name: launch.Name, Field: launch.Field, Value: 1, Rounds: []float64{1}})
	merged, err := Merge(full, part)
	require.NoError(t, err)
	assert.Len(t, merged.Measurements, len(full.Measurements)+len(part.Measurements)-1, "the same name replaced, the others added")
	m, ok := merged.Get("host.launch_ns")
	require.True(t, ok)
	assert.Equal(t, 1.0, m.Value, "the later report's measurement")
	w, ok := merged.Get("front_end.event_wait_ns")
	require.True(t, ok)
	assert.InDelta(t, 1500, w.Value, 30)
	other := *part
	other.Info.Name = "NVIDIA H200"
	_, err = Merge(full, &other)
	assert.ErrorContains(t, err, "cannot merge a report of NVIDIA H200")
}

// The raw report round-trips through JSON, and fitting it gives back the
// config: the measured fields, the hardware queues the stream
// concurrency implies, a comment on every fitted field.
func TestFitFromRawMeasurements(t *testing.T) {
	base := loadConfig(t, "h100-datasheet")
	dev := mustSim(t, base)
	got, rep, err := Run(dev, base, nil)
	require.NoError(t, err)
	var js bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	path := filepath.Join(t.TempDir(), "raw.json")
	require.NoError(t, os.WriteFile(path, js.Bytes(), 0o644))
	back, err := ReadReport(path)
	require.NoError(t, err)
	assert.Equal(t, rep.Measurements, back.Measurements)

	other := *base
	other.Info.HardwareQueues = 2 // the fit must find 8 again
	fitted, err := Fit(back, &other, nil)
	require.NoError(t, err)
	assert.Equal(t, base.Info.HardwareQueues, fitted.Config.Info.HardwareQueues)
	assert.InDelta(t, base.Host.DriverLockFraction, fitted.Config.Host.DriverLockFraction, 0.05, "fitted to the launch throughput, in twentieths")
	fittedHost := fitted.Config.Host
	fittedHost.DriverLockFraction = got.Host.DriverLockFraction
	assert.Equal(t, got.Host, fittedHost)
	assert.Contains(t, fitted.Comments["info.hardware_queues"], "8 fits best")
	assert.Contains(t, fitted.Comments["host.launch_ns"], "measured: median of 3 rounds")
	data, err := fitted.Marshal("# test\n")
	require.NoError(t, err)
	cfg, err := sim.ParseConfig(data, "fitted.yaml")
	require.NoError(t, err)
	assert.Equal(t, fitted.Config.Host, cfg.Host)
	assert.Contains(t, string(data), "launch_ns: 3300 # measured: median of 3 rounds")

	// Checking the config against its own measurements finds no error
	// beyond the lock fraction's twentieths.
	cfg.Host.DriverLockFraction = base.Host.DriverLockFraction
	rows, err := Check(back, cfg)
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	for _, r := range rows {
		assert.InDelta(t, 0, r.ErrPct, 2, r.Name)
	}
}

// A report of the parked sweeps is fitted again from its per-idle rounds
// (a report recorded before the fit changed gives today's fields):
// hand-computed steps.
func TestParkedSweepsRefit(t *testing.T) {
	rep := &Report{}
	sweep := func(what string, idles []int, costs []float64) {
		for i, idle := range idles {
			rep.Measurements = append(rep.Measurements, measurement(fmt.Sprintf("%s after %d us idle", what, idle), "", "ns", "", []float64{costs[i], costs[i]}))
		}
	}
	// Spinning 700 ns up to 195 us, parked from 205 us on.
	sweep("queue hand-off", parkedIdles, []float64{700, 700, 700, 700, 700, 86000, 83000, 85700, 111000})
	rep.Measurements = append(rep.Measurements, measurement("queue hand-off: extra cost once parked", "host.parked_wake_ns", "ns", "", []float64{110300}))
	sweep("callback hand-off", callbackIdles, []float64{41000, 41000, 41000, 41000, 41000, 84000, 86000, 91000, 132000})
	sweep("stream synchronize return", syncIdles, []float64{15800, 10100, 11400, 11600, 13500, 15500})
	got, kept, _ := upgrade(rep)
	want := map[string]float64{
		"host.park_after_ns":           200e3 + 700,           // midway between 195 and 205 us, plus the spinning cost
		"host.parked_wake_ns":          (85700+86000)/2 - 700, // the median past the step, less the spinning cost
		"host.parked_callback_wake_ns": (86000+91000)/2 - 41000,
		"host.sync_park_after_ns":      0, // a step under 2 us: one regime
		"host.sync_parked_wake_ns":     0,
	}
	for field, w := range want {
		m, ok := got.Get(field)
		require.True(t, ok, field)
		assert.InDelta(t, w, m.Value, 1e-6, field)
		assert.False(t, kept[field], field)
	}
	assert.Len(t, got.Measurements, len(rep.Measurements)+4, "the four fits added, the recorded one replaced")
}

// The probe is calibrate's launch API cost: on the simulator, the config's
// host.launch_ns, every round.
func TestHostLaunchProbeIsTheConfigsLaunchCost(t *testing.T) {
	cfg := loadConfig(t, "h100")
	cfg.Host.LaunchNs = 3_700
	dev := mustSim(t, cfg)
	m, err := HostLaunchProbe(dev)
	require.NoError(t, err)
	assert.Equal(t, "host.launch_ns", m.Field)
	assert.InDelta(t, 3_700, m.Value, 1)
	assert.Len(t, m.Rounds, 3)
	assert.InDelta(t, 0, m.Spread(), 1e-9)
	_, err = HostLaunchProbe(nil)
	require.Error(t, err)
}

// meanLogError is the mean absolute log ratio, and the same float however
// the map happens to iterate: the fits compare errors 1e-9 apart.
func TestMeanLogErrorIsTheMeanInKeyOrder(t *testing.T) {
	want := map[int]float64{1: 1, 2: 2, 4: 4}
	got := map[int]float64{1: math.E, 2: 2, 4: 4 / math.E}
	assert.InDelta(t, 2.0/3, meanLogError(want, func(k int) float64 { return got[k] }), 1e-12)

	// Terms of very different sizes: their sum depends on the order added.
	many, ratio := map[int]float64{}, map[int]float64{}
	for k := 0; k < 40; k++ {
		many[k], ratio[k] = 1, math.Exp(math.Pow(10, float64(k%9-4)))
	}
	first := meanLogError(many, func(k int) float64 { return ratio[k] })
	var sum float64
	for k := 0; k < 40; k++ {
		sum += math.Log(ratio[k])
	}
	assert.Equal(t, sum/40, first, "summed in key order")
	for i := 0; i < 50; i++ {
		require.Equal(t, first, meanLogError(many, func(k int) float64 { return ratio[k] }))
	}
}
