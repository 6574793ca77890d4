// Package calibrate measures a GPU through the device.Device interface and
// writes what it finds as a simulator device config (device/sim.Config), so
// that the simulator can be fitted to a real GPU (`gpusched calibrate`).
//
// Every measurement uses only Host calls, Now and event timing, so the same
// code runs against the CUDA backend and against the simulator; calibrating
// the simulator gives back the config it was built from (a test checks that
// within 2%). Each figure is the median over several rounds; each round
// times a batch of calls, so clock granularity and one-off stalls wash out.
//
// What is measured, and how (L is the launch API cost, D a spin kernel's
// known duration, e0/e1 events recorded around the work):
//
//   - Host API costs: a batch of N calls timed with Host.Now, divided by N
//     (launch, copy enqueue, event record, stream wait, query, synchronize
//     on an idle stream, host-function enqueue, stream/event create,
//     destroy, malloc, free, pinned host allocation, capture of a command,
//     host-thread start).
//   - Graph launch host cost: Host.Now around batches of launches of
//     graphs of 1 and 8 independent empty kernels and of a chain of 8
//     (per kernel node from the chain's slope, per parallel branch from
//     the independent kernels' slope less it, the fixed part from the
//     intercept) and of two pinned copies in a chain (per copy node, less
//     the fixed part and one branch). Kernel-node updates, each
//     followed by a launch of the one-node graph: keeping the kernel gives
//     the update cost; changing it every call gives what a kernel change
//     adds to the update and to the launch after it.
//   - Launch-to-start latency: Elapsed(e0, e1) around one spin kernel on an
//     idle stream is L + latency + D.
//   - Back-to-back gap: N spin kernels on one stream, launched faster than
//     they run: Elapsed grows by D + gap per kernel (two sizes, the slope).
//   - Synchronize wake-up: Launch then StreamSynchronize on an idle device
//     takes L + latency + D + wake-up of host time.
//   - Graphs: instantiate time of graphs of two sizes (fixed and per-node
//     cost); a captured chain of spin kernels of two lengths: Elapsed grows
//     by D + per-node gap per node, and its intercept gives the graph
//     launch latency.
//   - Host callbacks: behind a long kernel, N host functions queue up; once
//     the kernel ends they run back to back: Elapsed / N.
//   - Copies: Elapsed around a pinned copy of two sizes per direction
//     (bandwidth from the slope, latency from the intercept less the
//     enqueue cost); pageable copies block the host, so Host.Now around the
//     call gives their bandwidth; a device-to-device copy reads and writes
//     every byte, giving device memory bandwidth.
//   - Block dispatch: an empty kernel of k full waves (SMs x blocks per SM)
//     for two k: the slope is the shortest block's lifetime (min_block_ns),
//     and blocks over time is the dispatch rate.
//   - Memory bandwidth of one SM: a streaming kernel (cal_stream) of one
//     block reading two sizes; the slope of Elapsed is the bandwidth. With
//     32 warps it is sm.max_sm_bandwidth (assuming 32 warps saturate an
//     SM); with 4 warps it is 4/saturation of that, which gives
//     sm.sm_mem_saturation_warps. With one 32-warp block per SM, the
//     whole GPU's streaming bandwidth (reported, beside the copy's).
//   - Launch throughput with 1, 2, 4 and 8 host threads, each launching on
//     its own stream (reported; the simulator's driver lock serializes them).
//
// The SM arithmetic model (flops_per_cycle, saturation_warps) and ACS-HW's
// dependency queue are not measured (the latter does not exist on real
// GPUs); they are kept from the base config, and the report says so.
package calibrate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// Measurement is one measured figure.
type Measurement struct {
	Name   string  // what was measured
	Field  string  // the config field it sets ("host.launch_ns"), or "" when reported only
	Value  float64 // the median over rounds
	Unit   string
	Min    float64 // the smallest and largest round
	Max    float64
	Method string
}

// Report is everything Run measured, in the order measured.
type Report struct {
	Device       string
	Measurements []Measurement
	Notes        []string
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
	b.WriteString("| measurement | value | unit | min | max | config field | method |\n|---|---:|---|---:|---:|---|---|\n")
	for _, m := range r.Measurements {
		field := m.Field
		if field == "" {
			field = "(reported)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Name, num(m.Value), m.Unit, num(m.Min), num(m.Max), field, m.Method)
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
	c, err := newCalibrator(dev, progress)
	if err != nil {
		return nil, nil, err
	}
	steps := []struct {
		name string
		fn   func(h device.Host) error
	}{
		{"host API costs", c.hostCosts},
		{"launch latency, back-to-back gap, wake-up", c.frontEnd},
		{"graphs", c.graphs},
		{"host callbacks", c.callbacks},
		{"copies", c.copies},
		{"block dispatch", c.blockDispatch},
		{"memory bandwidth per SM", c.smBandwidth},
		{"launch throughput", c.throughput},
	}
	for _, s := range steps {
		if err := dev.Run(s.fn); err != nil {
			return nil, nil, fmt.Errorf("calibrate: %s: %w", s.name, err)
		}
	}
	out, err := c.config(base)
	if err != nil {
		return nil, nil, err
	}
	return out, c.report, nil
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
	launchNs, copyEnqNs, graphChainNs, graphNodeNs float64
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
	return &calibrator{
		dev: dev, info: info, empty: empty, spin: spin, stream: stream, rounds: 7, progress: progress,
		report: &Report{Device: info.Name},
	}, nil
}

// record adds a measurement from its per-round values.
func (c *calibrator) record(name, field, unit, method string, rounds []float64) float64 {
	s := append([]float64(nil), rounds...)
	sort.Float64s(s)
	m := Measurement{Name: name, Field: field, Unit: unit, Method: method, Min: s[0], Max: s[len(s)-1], Value: median(s)}
	c.report.Measurements = append(c.report.Measurements, m)
	if c.progress != nil {
		fmt.Fprintf(c.progress, "calibrate: %-40s %12s %s\n", name, num(m.Value), unit)
	}
	return m.Value
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
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

// perCall times fn called n times per round and returns per-call costs in
// ns, one per round. setup and teardown run outside the timed region.
func (c *calibrator) perCall(h device.Host, n int, setup func() error, fn func(i int) error, teardown func() error) ([]float64, error) {
	out := make([]float64, 0, c.rounds)
	for r := 0; r < c.rounds+1; r++ { // the first round warms up
		if setup != nil {
			if err := setup(); err != nil {
				return nil, err
			}
		}
		t0 := h.Now()
		for i := 0; i < n; i++ {
			if err := fn(i); err != nil {
				return nil, err
			}
		}
		dt := h.Now() - t0
		if teardown != nil {
			if err := teardown(); err != nil {
				return nil, err
			}
		}
		if r > 0 {
			out = append(out, ns(dt)/float64(n))
		}
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
