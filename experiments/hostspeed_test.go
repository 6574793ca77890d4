package experiments

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// The probe runs before the first row and after the last, with nothing
// else running: when it runs the second time, every row but the last has
// been passed on and the last is held back until it returns.
func TestGPURowsProbeBeforeFirstAndAfterLast(t *testing.T) {
	e, err := ParseExperiment([]byte(`name: tiny
seed: 1
repetitions: 1
workloads: [{name: dag, family: synthetic, params: {layers: 1, width: 2, steps: 1, iters: 64, min_blocks: 1, max_blocks: 2}}]
schedulers: [{kind: serial}, {kind: round-robin, params: {k: 2}}]
devices: [h100]
`), "tiny.yaml")
	require.NoError(t, err)
	jobs, _, err := plan(e, nil, Shard{})
	require.NoError(t, err)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	rows := make([]Row, len(jobs))
	done := make(chan int, len(jobs))
	var passed []int
	calls := 0
	probe := func(d device.Device) (LaunchProbe, error) {
		assert.Same(t, dev, d)
		passed = append(passed, len(done))
		if calls++; calls == 2 {
			return LaunchProbe{}, errors.New("no GPU")
		}
		return LaunchProbe{Ns: 4000 + float64(calls), Spread: 0.01, Rounds: []float64{4001, 4001}}, nil
	}
	host := measureGPURows(dev, jobs, idx, rows, nil, done, probe)
	require.NotNil(t, host)
	assert.Equal(t, []int{0, len(jobs) - 1}, passed)
	assert.Len(t, done, len(jobs))
	require.NotNil(t, host.LaunchBefore)
	assert.InDelta(t, 4001, host.LaunchBefore.Ns, 0)
	assert.Nil(t, host.LaunchAfter)
	assert.Equal(t, []string{"launch probe after the last row: no GPU"}, host.Errors)
	assert.Positive(t, host.LogicalCPUs)
	for i := range rows { // measured (the simulator computes no outputs to check)
		assert.Len(t, rows[i].MakespansNS, 1)
	}
	ns, ok := host.LaunchNs()
	assert.True(t, ok)
	assert.InDelta(t, 4001, ns, 0)

	// Without a probe: no host record.
	done = make(chan int, len(jobs))
	assert.Nil(t, measureGPURows(dev, jobs, idx, rows, nil, done, nil))
	assert.Len(t, done, len(jobs))
}

func TestHostLaunchNsIsTheMeanOfItsProbes(t *testing.T) {
	var none *Host
	_, ok := none.LaunchNs()
	assert.False(t, ok)
	_, ok = (&Host{CPU: "x"}).LaunchNs()
	assert.False(t, ok)
	ns, ok := (&Host{LaunchBefore: &LaunchProbe{Ns: 4000}, LaunchAfter: &LaunchProbe{Ns: 4400}}).LaunchNs()
	assert.True(t, ok)
	assert.InDelta(t, 4200, ns, 1e-9)
	ns, ok = (&Host{LaunchAfter: &LaunchProbe{Ns: 3900}}).LaunchNs()
	assert.True(t, ok)
	assert.InDelta(t, 3900, ns, 1e-9)
}

// Every host CPU cost is scaled, nothing else (the queue lock and the
// queue calls, like the hand-offs and the graph lock's, are the CPU's): the list is explicit so
// that a new host field is a decision (scaled or in unscaledHostFields).
func TestScaleHostCostsScalesHostCPUCostsOnly(t *testing.T) {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	before := *cfg
	scaled := scaleHostCosts(cfg, 0.5)
	assert.Equal(t, []string{"launch_ns", "copy_enqueue_ns", "record_ns", "wait_ns", "query_ns", "sync_call_ns", "wakeup_ns",
		"host_func_ns", "host_func_after_graph_ns", "stream_create_ns", "event_create_ns", "destroy_ns", "malloc_ns", "free_ns", "alloc_host_ns", "capture_ns",
		"graph_lock_handoff_ns", "capture_event_ns", "instantiate_base_ns", "instantiate_per_node_ns", "graph_launch_ns", "set_node_ns", "thread_start_ns",
		"handoff_ns", "callback_handoff_ns", "queue_lock_ns", "queue_lock_handoff_ns", "queue_call_ns", "queue_call_per_thread_ns", "untimed_record_ns", "driver_lock_handoff_ns", "driver_switch_ns", "busy_stream_ns", "graph_launch_branch_ns", "graph_launch_open_end_ns", "graph_launch_join_ns", "graph_launch_node_ns",
		"graph_launch_copy_node_ns", "graph_launch_copy_edge_ns", "graph_launch_copy_fan_edge_ns", "graph_launch_kernel_change_ns", "graph_launch_changed_node_ns", "graph_launch_stream_after_ns", "set_node_kernel_change_ns", "stream_switch_ns",
		"wait_pending_ns", "record_pending_ns", "first_graph_launch_per_node_ns", "instantiate_per_arg_ns", "instantiate_per_copy_node_ns",
		"destroy_exec_per_node_ns", "instantiate_per_segment_ns", "destroy_exec_per_segment_ns", "sync_switch_ns"}, scaled)
	assert.InDelta(t, before.Host.LaunchNs/2, cfg.Host.LaunchNs, 1e-9)
	assert.InDelta(t, before.Host.HandoffNs/2, cfg.Host.HandoffNs, 1e-9)
	assert.InDelta(t, before.Host.InstantiatePerSegmentNs/2, cfg.Host.InstantiatePerSegmentNs, 1e-9)
	assert.Equal(t, before.Host.ParkedWakeNs, cfg.Host.ParkedWakeNs, "an OS wake-up from sleep")
	assert.Equal(t, before.Host.DQSubmitNs, cfg.Host.DQSubmitNs, "ACS-HW's queue is not the host")
	assert.Equal(t, before.Host.DriverLockFraction, cfg.Host.DriverLockFraction)
	assert.Equal(t, before.FrontEnd, cfg.FrontEnd, "the device's side stays")
}

func TestThousands(t *testing.T) {
	assert.Equal(t, "4,816", thousands(4816.4))
	assert.Equal(t, "816", thousands(816))
	assert.Equal(t, "1,234,568", thousands(1234567.5))
	assert.Equal(t, "-4,190", thousands(-4190))
}

// hostBound is an experiment whose serial rows are bound by the host's
// launches: 1-block kernels of a few us, launched 10 us apart.
const hostBound = `name: hostbound
seed: 3
repetitions: 1
baseline: serial
workloads:
  - {name: dag, family: synthetic, params: {layers: 3, width: 4, steps: 2, iters: 64, min_blocks: 1, max_blocks: 1}}
schedulers: [{kind: serial}]
devices: [CONFIG]
`

// A file whose host probe says its host launches twice as fast as the
// config is simulated with the config's host costs halved: on a config
// whose only host cost is the launch, a host-bound serial row is shorter
// by exactly half its launches' cost. Without the probe, or with
// --host-speed=off, the rows are simulated as before.
func TestValidateScalesHostCostsByTheProbe(t *testing.T) {
	dir := t.TempDir()
	cfg, err := sim.LoadConfig("h100-datasheet")
	require.NoError(t, err)
	const launchNs = 10_000.0
	cfg.Host = sim.HostCosts{LaunchNs: launchNs}
	cfg.Name = "launch-only"
	data, err := cfg.Marshal()
	require.NoError(t, err)
	cfgPath := filepath.Join(dir, "launch-only.yaml")
	require.NoError(t, os.WriteFile(cfgPath, data, 0o644))
	path := writeGPUResults(t, dir, strings.Replace(hostBound, "CONFIG", cfgPath, 1))
	plain, err := ReadResults(path)
	require.NoError(t, err)
	require.NotNil(t, plain.Rows[0].Kernels)
	kernels := *plain.Rows[0].Kernels
	require.Positive(t, kernels)

	probed := *plain
	probed.Provenance = []Provenance{plain.Provenance[0]}
	probed.Provenance[0].Host = &Host{CPU: "test", LogicalCPUs: 2,
		LaunchBefore: &LaunchProbe{Ns: 4_900, Spread: 0.01, Rounds: []float64{4_900}},
		LaunchAfter:  &LaunchProbe{Ns: 5_100, Spread: 0.02, Rounds: []float64{5_100}}}
	b, err := json.Marshal(&probed)
	require.NoError(t, err)
	probedPath := filepath.Join(dir, "probed-gpu.json")
	require.NoError(t, os.WriteFile(probedPath, b, 0o644))
	back, err := ReadResults(probedPath)
	require.NoError(t, err, "the host section loads")
	assert.Equal(t, probed.Provenance[0].Host, back.Provenance[0].Host)

	opt := ValidateOptions{Sim: cfgPath, HostSpeed: true}
	v, _, err := ValidateFiles([]string{path, probedPath}, opt)
	require.NoError(t, err)
	require.Len(t, v.Rows, 2)
	base, fast := v.Rows[0], v.Rows[1]
	assert.InDelta(t, 0, *base.MakespanErr, 1e-9, "no probe: the config as it is")
	assert.Equal(t, cfgPath, base.SimConfig)
	assert.InDelta(t, base.SimMakespan-float64(kernels)*launchNs/2/1e3, fast.SimMakespan, 1e-6,
		"%d launches at 5,000 ns instead of 10,000", kernels)
	assert.Equal(t, cfgPath+" (host x0.500)", fast.SimConfig)
	assert.Empty(t, v.Sources[0].Notes)
	assert.Equal(t, []string{"host speed x0.500 (probe 5,000 ns vs config 10,000 ns): " + cfgPath + "'s host costs scaled"}, v.Sources[1].Notes)

	opt.HostSpeed = false
	v, _, err = ValidateFiles([]string{probedPath}, opt)
	require.NoError(t, err)
	assert.InDelta(t, 0, *v.Rows[0].MakespanErr, 1e-9, "--host-speed=off: the config as it is")
	assert.Equal(t, []string{"host speed x0.500 (probe 5,000 ns vs config 10,000 ns) on " + cfgPath + ", not applied (--host-speed=off)"},
		v.Sources[0].Notes)
}
