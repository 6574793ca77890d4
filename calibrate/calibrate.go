// Package calibrate measures a GPU through the device.Device interface, for
// the simulator: Run writes what it finds as a simulator device config
// (device/sim.Config; `gpusched calibrate`), and ProfileKernels times the
// kernels of workloads alone into a kernel profile (device/sim.Profile;
// `gpusched profile`); MixedCoResidency times pairs of different kernels
// co-resident on every SM, alone and together (`gpusched profile pairs`).
//
// Every measurement uses only Host calls, Now and event timing, so the same
// code runs against the CUDA backend and against the simulator;
// calibrating the simulator gives back the config it was built from (a
// test checks that within 2%), and profiling it gives back its block times.
//
// Run's measurements are a table (measurements), each in its own
// device.Run: host API costs (a table of calls, hostCalls), launch latency,
// back-to-back gap and synchronize wake-up, graph costs (small graphs for
// the config's launch and update costs, graphs of 128 and 512 nodes on 1
// to 64 branches to check them), host callbacks, copies, block dispatch,
// memory bandwidth per SM, launch throughput over host threads, concurrency
// of 1 to 32 streams, host costs with many busy streams, dependencies
// through events across 2 to 8 streams (and such chains captured into
// graphs), the hand-off of a
// host thread blocked in a Queue Get (and after idle times past its spin,
// when it has parked, and a synchronize's return after such waits; and
// launches, hand-offs and synchronizes beside threads waiting in
// StreamSynchronize), copies beside kernels, and the device time of
// graphs of copy nodes and of 1 to 16 branches; and, only when named,
// graph-per-step's steps part by part ("graph steps"). Each
// figure is the median over rounds; each round times a batch, so clock
// granularity and one-off stalls wash out, and every round is kept
// (Report.WriteJSON): the spread between rounds is the GPU's own. Config
// turns a report into a config again, so raw measurements can be refitted
// without the GPU.
//
// HostLaunchProbe is the launch API cost alone (a few ms), which gpusched
// run times beside every GPU run: host-bound rows carry the host's speed.
//
// The SM arithmetic model (flops_per_cycle, saturation_warps) and ACS-HW's
// dependency queue are not measured (the latter does not exist on real
// GPUs); they are kept from the base config, and the report says so.
// docs/SIMULATOR.md describes every measurement, the profile and its fit.
package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// Measurement is one measured figure.
type Measurement struct {
	Name   string  `json:"name"`  // what was measured
	Field  string  `json:"field"` // the config field it sets ("host.launch_ns"), or "" when reported only
	Value  float64 `json:"value"` // the median over rounds
	Unit   string  `json:"unit"`
	Min    float64 `json:"min"` // the smallest and largest round
	Max    float64 `json:"max"`
	Method string  `json:"method"`
	// Rounds are the per-round values, in the order measured.
	Rounds []float64 `json:"rounds"`
}

// Spread is the measurement's run-to-run spread: (largest - smallest
// round) / |median|, or 0 for a zero median.
func (m *Measurement) Spread() float64 {
	if m.Value == 0 {
		return 0
	}
	return (m.Max - m.Min) / math.Abs(m.Value)
}

// Report is everything Run measured, in the order measured.
type Report struct {
	Device string `json:"device"`
	// Info is what the device reports of itself.
	Info         device.Info   `json:"info"`
	Measurements []Measurement `json:"measurements"`
	Notes        []string      `json:"notes"`
}

// Get returns the measurement that sets field.
func (r *Report) Get(field string) (Measurement, bool) {
	for _, m := range r.Measurements {
		if m.Field == field {
			return m, true
		}
	}
	return Measurement{}, false
}

// WriteMarkdown writes the report as a Markdown table.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Calibration of %s\n\n", r.Device)
	b.WriteString("| measurement | value | unit | min | max | spread | config field | method |\n|---|---:|---|---:|---:|---:|---|---|\n")
	for _, m := range r.Measurements {
		field := m.Field
		if field == "" {
			field = "(reported)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.0f%% | %s | %s |\n", m.Name, num(m.Value), m.Unit, num(m.Min), num(m.Max), 100*m.Spread(), field, m.Method)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e6:
		return fmt.Sprintf("%.4g", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// Run calibrates dev: it measures every figure listed in the package
// comment and returns base with the measured fields replaced (and Info
// taken from dev, with the measured device memory bandwidth), and the
// report. progress, if not nil, gets a line per measurement.
func Run(dev device.Device, base *sim.Config, progress io.Writer) (*sim.Config, *Report, error) {
	if dev == nil || base == nil {
		return nil, nil, fmt.Errorf("calibrate: device and base config are required")
	}
	rep, err := Measure(dev, nil, progress)
	if err != nil {
		return nil, nil, err
	}
	out, notes, err := Config(rep, base)
	if err != nil {
		return nil, nil, err
	}
	rep.Notes = append(rep.Notes, notes...)
	return out, rep, nil
}

// Measure runs the measurements named (the names of the measurements
// table, MeasurementNames; nil: all of them but those run only when named,
// "graph steps") and returns their report. A
// report of some of them is no config on its own: `calibrate fit` adds it
// to a full one (Merge). Measurements that build on earlier ones' figures
// (the launch cost, the latency) take 0 for those not run.
func Measure(dev device.Device, names []string, progress io.Writer) (*Report, error) {
	if dev == nil {
		return nil, fmt.Errorf("calibrate: device is required")
	}
	want := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(MeasurementNames(), n) {
			return nil, fmt.Errorf("calibrate: no measurement %q (the measurements: %s)", n, strings.Join(MeasurementNames(), "; "))
		}
		want[n] = true
	}
	c, err := newCalibrator(dev, progress)
	if err != nil {
		return nil, err
	}
	for _, m := range measurements {
		if len(want) > 0 && !want[m.name] || len(want) == 0 && m.onlyNamed {
			continue
		}
		if err := dev.Run(func(h device.Host) error { return m.run(c, h) }); err != nil {
			return nil, fmt.Errorf("calibrate: %s: %w", m.name, err)
		}
	}
	return c.report, nil
}

// Leave makes the measurements of field reported only, so that a config
// fitted from rep keeps the base config's value (an optional field
// measured but not to be used yet), and notes it; false when no
// measurement sets field.
func Leave(rep *Report, field string) bool {
	found := false
	for i, m := range rep.Measurements {
		if m.Field == field {
			rep.Measurements[i].Field = ""
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s measured %s %s but left to the base config (calibrate fit --leave)", field, num(m.Value), m.Unit))
			found = true
		}
	}
	return found
}

// MeasurementNames are the names of Run's measurements, in order.
func MeasurementNames() []string {
	var out []string
	for _, m := range measurements {
		out = append(out, m.name)
	}
	return out
}

// Merge is base with the measurements of add: one of add replaces base's
// of the same name, the others come after base's. Both must be of the
// same device model.
func Merge(base, add *Report) (*Report, error) {
	if base.Info.Name != add.Info.Name {
		return nil, fmt.Errorf("calibrate: cannot merge a report of %s into one of %s", add.Info.Name, base.Info.Name)
	}
	out := *base
	out.Measurements = append([]Measurement(nil), base.Measurements...)
	out.Notes = append(append([]string(nil), base.Notes...), add.Notes...)
	for _, m := range add.Measurements {
		i := slices.IndexFunc(out.Measurements, func(o Measurement) bool { return o.Name == m.Name })
		if i >= 0 {
			out.Measurements[i] = m
		} else {
			out.Measurements = append(out.Measurements, m)
		}
	}
	return &out, nil
}

// measurements is every measurement Run makes, in order, each in its own
// device.Run; later ones use figures of earlier ones (the launch cost,
// the latency, the callback duration).
var measurements = []struct {
	name string
	run  func(c *calibrator, h device.Host) error
	// onlyNamed sections run only when named (Measure's names, --only):
	// probes of one question that a full calibration need not repeat.
	onlyNamed bool
}{
	{name: "host API costs", run: (*calibrator).hostCosts},
	{name: "launch latency, back-to-back gap, wake-up", run: (*calibrator).frontEnd},
	{name: "graphs", run: (*calibrator).graphs},
	{name: "host callbacks", run: (*calibrator).callbacks},
	{name: "copies", run: (*calibrator).copies},
	{name: "block dispatch", run: (*calibrator).blockDispatch},
	{name: "memory bandwidth per SM", run: (*calibrator).smBandwidth},
	{name: "launch throughput", run: (*calibrator).throughput},
	{name: "stream concurrency", run: (*calibrator).streamConcurrency},
	{name: "host costs with busy streams", run: (*calibrator).busyStreamCosts},
	{name: "cross-stream dependencies", run: (*calibrator).crossStreamWaits},
	{name: "captured chains over streams", run: (*calibrator).capturedChains},
	{name: "host thread hand-off", run: (*calibrator).handoff},
	{name: "parked hand-offs", run: (*calibrator).parkedHandoffs},
	{name: "beside synchronizing threads", run: (*calibrator).besideSynchronizingThreads},
	{name: "graphs of hundreds of nodes", run: (*calibrator).bigGraphs},
	{name: "copies beside kernels", run: (*calibrator).copyOverlap},
	{name: "graph device costs", run: (*calibrator).graphDeviceCosts},
	{name: "chains interleaved over streams", run: (*calibrator).interleavedStreams},
	{name: "graph builds over streams", run: (*calibrator).graphBuilds},
	{name: "synchronizes over streams", run: (*calibrator).syncOverManyStreams},
	{name: "graph steps", run: (*calibrator).graphSteps, onlyNamed: true},
	{name: "host threads at once", run: (*calibrator).threadedHostCalls, onlyNamed: true},
	{name: "graph chunks over streams", run: (*calibrator).graphChunksOverStreams, onlyNamed: true},
	{name: "records over streams", run: (*calibrator).recordsOverStreams, onlyNamed: true},
	{name: "set-batch chunks", run: (*calibrator).setBatchChunks, onlyNamed: true},
	{name: "set-batch deep chunks", run: (*calibrator).setBatchDeepChunks, onlyNamed: true},
	{name: "scheduler threads behind a window", run: (*calibrator).windowHandoffs, onlyNamed: true},
	{name: "host callbacks spaced", run: (*calibrator).callbackSpacing, onlyNamed: true},
	{name: "device idle wake", run: (*calibrator).idleWake, onlyNamed: true},
	{name: "per-run reset", run: (*calibrator).perRunReset, onlyNamed: true},
	{name: "event records without timing", run: (*calibrator).untimedRecords, onlyNamed: true},
	{name: "queue calls over threads", run: (*calibrator).queueCallsOverThreads, onlyNamed: true},
	{name: "launches over threads", run: (*calibrator).launchesOverThreads, onlyNamed: true},
	{name: "runs over streams", run: (*calibrator).runStreams, onlyNamed: true},
	{name: "chains beside other streams", run: (*calibrator).chainsBeside, onlyNamed: true},
	{name: "small graph builds", run: (*calibrator).smallGraphBuilds, onlyNamed: true},
	{name: "host functions over streams", run: (*calibrator).hostFuncsOverStreams, onlyNamed: true},
	{name: "host functions before graphs", run: (*calibrator).hostFuncsBeforeGraphs, onlyNamed: true},
	{name: "callbacks beside running graphs", run: (*calibrator).callbacksBesideGraphs, onlyNamed: true},
	{name: "host functions after chunk graphs", run: (*calibrator).hostFuncsAfterChunks, onlyNamed: true},
	{name: "copies both ways at once", run: (*calibrator).copiesBothWays, onlyNamed: true},
	{name: "copies one way on many streams", run: (*calibrator).copiesOneWayOnManyStreams, onlyNamed: true},
	{name: "copies at once, each timed", run: (*calibrator).copiesAtOnceEachTimed, onlyNamed: true},
	{name: "reached graphs' waiting branches", run: (*calibrator).reachedBranches, onlyNamed: true},
	{name: "graphs behind a host function", run: (*calibrator).graphsBehindCallbacks, onlyNamed: true},
	{name: "host function releases beside driver calls", run: (*calibrator).releasesBesideCalls, onlyNamed: true},
	{name: "graph launch beside its first nodes", run: (*calibrator).graphLaunchOverlap, onlyNamed: true},
	{name: "graph launch of uploads", run: (*calibrator).graphLaunchOfUploads, onlyNamed: true},
	{name: "copies in a graph", run: (*calibrator).copiesInAGraph, onlyNamed: true},
	{name: "copies around kernels in a graph", run: (*calibrator).copiesAroundKernelsInAGraph, onlyNamed: true},
	{name: "copy jobs over streams", run: (*calibrator).copyJobsOverStreams, onlyNamed: true},
	{name: "copies and kernels issued live", run: (*calibrator).copiesAndKernelsIssuedLive, onlyNamed: true},
	{name: "waits across engines", run: (*calibrator).waitsAcrossEngines, onlyNamed: true},
	{name: "graph launch of upload fans", run: (*calibrator).graphLaunchOfUploadFans, onlyNamed: true},
	{name: "graph launch of joins", run: (*calibrator).graphLaunchOfJoins, onlyNamed: true},
	{name: "long waits", run: (*calibrator).longWaits, onlyNamed: true},
	{name: "graph exec updates", run: (*calibrator).graphExecUpdates, onlyNamed: true},
	{name: "SET's job loop", run: (*calibrator).setJobLoop, onlyNamed: true},
	{name: "host thread starts", run: (*calibrator).threadStarts, onlyNamed: true},
	{name: "host functions after heads", run: (*calibrator).hostFuncsAfterHeads, onlyNamed: true},
	{name: "branchy graphs over streams", run: (*calibrator).branchyGraphs, onlyNamed: true},
	{name: "queued graphs' branches", run: (*calibrator).queuedBranches, onlyNamed: true},
}

type calibrator struct {
	dev      device.Device
	info     device.Info
	empty    *device.Kernel
	spin     *device.Kernel
	stream   *device.Kernel
	report   *Report
	progress io.Writer
	rounds   int
	// Intermediate results the later steps build on.
	launchNs, copyEnqNs, graphChainNs, graphNodeNs, latencyNs, callbackNs float64
	// threadedToken is the token queue of the round of "host threads at
	// once" under way.
	threadedToken device.Queue
	// threadedOnly, when set, limits "host threads at once" to the loop of
	// that name (a fit simulates only the loop it fits).
	threadedOnly string
	// windowOnly, when set, limits "scheduler threads behind a window" to
	// the loop of that name (the queue lock fit simulates only it).
	windowOnly string
	// callsOnly, when set, limits "queue calls over threads" and
	// "launches over threads" to the loop of that name (a fit simulates
	// only the loop it fits).
	callsOnly string
}

func newCalibrator(dev device.Device, progress io.Writer) (*calibrator, error) {
	empty, err := kernels.Lookup("calibrate", "cal_empty")
	if err != nil {
		return nil, err
	}
	spin, err := kernels.Lookup("calibrate", "cal_spin")
	if err != nil {
		return nil, err
	}
	stream, err := kernels.Lookup("calibrate", "cal_stream")
	if err != nil {
		return nil, err
	}
	info := dev.Info()
	rounds := 7
	if _, ok := dev.(*sim.Device); ok {
		rounds = 3 // deterministic: every round the same, so few suffice
	}
	return &calibrator{
		dev: dev, info: info, empty: empty, spin: spin, stream: stream, rounds: rounds, progress: progress,
		report: &Report{Device: info.Name, Info: info},
	}, nil
}

// record adds a measurement from its per-round values.
func (c *calibrator) record(name, field, unit, method string, rounds []float64) float64 {
	m := measurement(name, field, unit, method, rounds)
	c.report.Measurements = append(c.report.Measurements, m)
	if c.progress != nil {
		// Progress is best effort: a lost line must not fail a measurement.
		_, _ = fmt.Fprintf(c.progress, "calibrate: %-40s %12s %s\n", name, num(m.Value), unit)
	}
	return m.Value
}

// measurement is a Measurement of its per-round values: their median,
// smallest and largest.
func measurement(name, field, unit, method string, rounds []float64) Measurement {
	s := append([]float64(nil), rounds...)
	sort.Float64s(s)
	return Measurement{Name: name, Field: field, Unit: unit, Method: method, Min: s[0], Max: s[len(s)-1], Value: stats.MedianSorted(s),
		Rounds: append([]float64(nil), rounds...)}
}

// emptyLaunch is a one-thread launch of the empty kernel.
func (c *calibrator) emptyLaunch(blocks int) *device.Launch {
	return &device.Launch{Kernel: c.empty, Grid: device.D1(blocks), Block: device.D1(32), Label: "cal_empty"}
}

// spinLaunch is one block that lasts d: it spins on the GPU's global timer;
// on the simulator its Work is d in SM cycles.
func (c *calibrator) spinLaunch(d time.Duration, done device.Buffer) *device.Launch {
	return &device.Launch{
		Kernel: c.spin, Grid: device.D1(1), Block: device.D1(32), Label: "cal_spin",
		Args: []device.Arg{device.U64(uint64(d.Nanoseconds())), device.InOut(done)},
		Work: device.Work{Cycles: float64(d.Nanoseconds()) * float64(c.info.ClockHz) / 1e9},
	}
}

func ns(d time.Duration) float64 { return float64(d.Nanoseconds()) }

// warmRounds runs round c.rounds+1 times, stopping at its first error:
// the first run warms up and is not measured, so round keeps its figures
// only when measured is true (c.rounds rounds of them).
func (c *calibrator) warmRounds(round func(measured bool) error) error {
	for r := 0; r < c.rounds+1; r++ {
		if err := round(r > 0); err != nil {
			return err
		}
	}
	return nil
}

// medianRounds calls measure reps times a round in warmRounds' rounds and
// returns each measured round's median.
func (c *calibrator) medianRounds(reps int, measure func() (float64, error)) ([]float64, error) {
	var rounds []float64
	err := c.warmRounds(func(measured bool) error {
		var ts []float64
		for r := 0; r < reps; r++ {
			t, err := measure()
			if err != nil {
				return err
			}
			ts = append(ts, t)
		}
		if measured {
			rounds = append(rounds, stats.Median(ts))
		}
		return nil
	})
	return rounds, err
}

// pick is f of every round.
func pick[T any](rounds []T, f func(T) float64) []float64 {
	out := make([]float64, len(rounds))
	for i, x := range rounds {
		out[i] = f(x)
	}
	return out
}

// perCall times fn called n times per round and returns per-call costs in
// ns, one per round. setup and teardown run outside the timed region.
func (c *calibrator) perCall(h device.Host, n int, setup func() error, fn func(i int) error, teardown func() error) ([]float64, error) {
	out := make([]float64, 0, c.rounds)
	err := c.warmRounds(func(measured bool) error {
		if setup != nil {
			if err := setup(); err != nil {
				return err
			}
		}
		t0 := h.Now()
		for i := 0; i < n; i++ {
			if err := fn(i); err != nil {
				return err
			}
		}
		dt := h.Now() - t0
		if teardown != nil {
			if err := teardown(); err != nil {
				return err
			}
		}
		if measured {
			out = append(out, ns(dt)/float64(n))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// elapsed records e0 on s, runs issue, records e1 and returns the time
// between the two events once s is idle.
func elapsed(h device.Host, s device.Stream, e0, e1 device.Event, issue func() error) (float64, error) {
	if err := h.Record(e0, s); err != nil {
		return 0, err
	}
	if err := issue(); err != nil {
		return 0, err
	}
	if err := h.Record(e1, s); err != nil {
		return 0, err
	}
	if err := h.StreamSynchronize(s); err != nil {
		return 0, err
	}
	d, err := h.Elapsed(e0, e1)
	return ns(d), err
}

// WriteJSON writes the report, every round included, as JSON: the raw
// measurements `gpusched calibrate fit` turns into a config.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a report written by WriteJSON, strictly.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Measurements) == 0 {
		return nil, fmt.Errorf("%s: no measurements", path)
	}
	deriveSyncSwitch(&r)
	return &r, nil
}
