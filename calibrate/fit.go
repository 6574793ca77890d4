package calibrate

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
)

// Fitted is a config fitted to a GPU's raw measurements, with what every
// fitted field came from (Comments, by field path, e.g. host.launch_ns).
type Fitted struct {
	Config   *sim.Config
	Comments map[string]string
	Notes    []string
}

// Fit turns raw measurements (a Report, and optionally a kernel profile)
// into a simulator config: base with every measured field replaced
// (Config), the hardware queues that best reproduce the measured stream
// concurrency, and, with a profile, the profile and the achieved fractions
// of peak that best time its kernels from their Work estimate. Every
// fitted field gets a comment with its source and its error.
func Fit(rep *Report, base *sim.Config, prof *sim.Profile) (*Fitted, error) {
	rep, _, upgraded := upgrade(rep)
	cfg, notes, err := Config(rep, base)
	if err != nil {
		return nil, err
	}
	notes = append(upgraded, notes...)
	f := &Fitted{Config: cfg, Comments: map[string]string{}, Notes: notes}
	for _, m := range rep.Measurements {
		if m.Field != "" {
			f.Comments[m.Field] = fmt.Sprintf("measured: median of %d rounds, %s-%s %s (spread %.0f%%); %s",
				len(m.Rounds), num(m.Min), num(m.Max), m.Unit, 100*m.Spread(), m.Method)
		}
	}
	if err := f.fitQueues(rep); err != nil {
		return nil, err
	}
	if err := f.fitRecordsPass(rep); err != nil {
		return nil, err
	}
	if err := f.fitLockFraction(rep); err != nil {
		return nil, err
	}
	if err := f.fitGraphLock(rep); err != nil {
		return nil, err
	}
	if prof != nil {
		if err := prof.Fits(&cfg.Info); err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		cfg.Profile = prof
		// The simulator must floor and dispatch blocks as the profile's
		// models were fitted to.
		cfg.FrontEnd.MinBlockNs, cfg.FrontEnd.BlockDispatchNs = prof.MinBlockNs, prof.BlockDispatchNs
		for _, field := range []string{"front_end.min_block_ns", "front_end.block_dispatch_ns"} {
			f.Comments[field] = "the kernel profile's, which its block models were fitted with"
		}
		f.fitFractions(prof)
	}
	// Last: the kernel beside the copy is timed by what is fitted above.
	if err := f.fitCopyContention(rep); err != nil {
		return nil, err
	}
	// The callback wake before the graph device costs, whose comment
	// gives the chunk chain with host functions after it.
	f.fitCallbackWake(rep)
	if err := f.fitGraphDeviceCosts(rep); err != nil {
		return nil, err
	}
	if err := f.fitGraphSteps(rep); err != nil {
		return nil, err
	}
	return f, nil
}

// fitQueues sets info.hardware_queues to the count (1 to 32) whose
// simulated stream concurrency is closest to the measured one (mean
// absolute log ratio over the stream counts).
func (f *Fitted) fitQueues(rep *Report) error {
	var names []string
	for _, order := range []string{"round-robin", "stream by stream"} {
		for _, s := range concurrencyStreams {
			names = append(names, concurrencyName(s, order))
		}
	}
	want := rep.measuredByName(names)
	if len(want) == 0 {
		f.Notes = append(f.Notes, "no stream concurrency measured: info.hardware_queues kept from the base config")
		return nil
	}
	// The base config's count first: it stays unless another fits better.
	qs := []float64{float64(f.Config.Info.HardwareQueues)}
	for q := 1; q <= 32; q++ {
		qs = append(qs, float64(q))
	}
	bestQ, bestErr, err := f.bySimulation("stream concurrency", want, qs, func(c *sim.Config, q float64) { c.Info.HardwareQueues = int(q) })
	if err != nil {
		return err
	}
	best := int(bestQ)
	f.Config.Info.HardwareQueues = best
	f.Comments["info.hardware_queues"] = fmt.Sprintf("fitted: the stream concurrency measurements (1 to 32 streams, two issue orders) simulated with 1 to 32 queues; "+
		"%d fits best, mean error %.0f%%", best, 100*(math.Exp(bestErr)-1))
	return nil
}

// fitRecordsPass sets front_end.records_pass_queue to whichever of
// false and true (after the hardware queues' fit) simulates "records over
// streams" closer to the measurement: the kernel-then-record and
// record-wait-kernel patterns on 2 to 32 streams (mean absolute log
// ratio). The base config's value first: it stays unless the other fits
// better.
func (f *Fitted) fitRecordsPass(rep *Report) error {
	var names []string
	for _, pattern := range recordPatterns[1:] {
		for _, s := range recordStreams {
			names = append(names, recordsName(s, pattern))
		}
	}
	want := rep.measuredByName(names)
	if len(want) == 0 {
		f.Notes = append(f.Notes, "no records over streams measured: front_end.records_pass_queue kept from the base config")
		return nil
	}
	base := 0.0
	if f.Config.FrontEnd.RecordsPassQueue {
		base = 1
	}
	best, bestErr, err := f.bySimulation("records over streams", want, []float64{base, 1 - base},
		func(c *sim.Config, v float64) { c.FrontEnd.RecordsPassQueue = v == 1 })
	if err != nil {
		return err
	}
	f.Config.FrontEnd.RecordsPassQueue = best == 1
	f.Comments["front_end.records_pass_queue"] = fmt.Sprintf("fitted: \"records over streams\" (a kernel and a record per stream on 2 to 32 streams, and a second level waiting on the next stream) simulated "+
		"with records holding their hardware queue and passing it; %s fits best, mean error %.0f%%", map[bool]string{true: "passing", false: "holding"}[best == 1], 100*(math.Exp(bestErr)-1))
	return nil
}

// fitLockFraction sets host.driver_lock_fraction to the one (0 to 1 in
// twentieths) whose simulated launch throughput over 1 to 8 host threads
// is closest to the measured one (mean absolute log ratio).
func (f *Fitted) fitLockFraction(rep *Report) error {
	var names []string
	for _, threads := range []int{1, 2, 4, 8} {
		names = append(names, fmt.Sprintf("launch throughput, %d host thread(s)", threads))
	}
	want := rep.measuredByName(names)
	if len(want) == 0 {
		f.Notes = append(f.Notes, "no launch throughput measured: host.driver_lock_fraction kept from the base config")
		return nil
	}
	var fs []float64
	for i := 0; i <= 20; i++ {
		fs = append(fs, float64(i)/20)
	}
	best, bestErr, err := f.bySimulation("launch throughput", want, fs, func(c *sim.Config, v float64) { c.Host.DriverLockFraction = v })
	if err != nil {
		return err
	}
	f.Config.Host.DriverLockFraction = best
	f.Comments["host.driver_lock_fraction"] = fmt.Sprintf("fitted: the launch throughput measurement (1, 2, 4, 8 host threads) simulated "+
		"with fractions 0 to 1; %.2f fits best, mean error %.0f%%", best, 100*(math.Exp(bestErr)-1))
	return nil
}

// fitCopyContention sets copy.dtod_contention to the one (0 to 2 in
// twentieths) whose simulated device-to-device copy beside a streaming
// kernel is closest to the measured one (copyOverlap).
func (f *Fitted) fitCopyContention(rep *Report) error {
	const name = "DtoD beside kernel: time over the longer alone"
	m, ok := rep.byName(name)
	if !ok {
		f.Notes = append(f.Notes, "no copy beside a kernel measured: copy.dtod_contention kept from the base config")
		return nil
	}
	cs := []float64{f.Config.Copy.DtoDContention}
	for i := 0; i <= 40; i++ {
		cs = append(cs, float64(i)/20)
	}
	best, bestErr, err := f.bySimulation("copies beside kernels", map[string]float64{name: m.Value}, cs,
		func(c *sim.Config, v float64) { c.Copy.DtoDContention = v })
	if err != nil {
		return err
	}
	f.Config.Copy.DtoDContention = best
	f.Comments["copy.dtod_contention"] = fmt.Sprintf("fitted: a 64 MiB device-to-device copy beside a kernel reading 64 MiB on every SM "+
		"(%.3gx the longer alone, median of %d rounds, spread %.0f%%) simulated with 0 to 2; %.2f fits best, error %.1f%%",
		m.Value, len(m.Rounds), 100*m.Spread(), best, 100*(math.Exp(bestErr)-1))
	return nil
}

// bySimulation runs a measurement on simulators of the config with each
// value set, and returns the value whose figures are closest to want
// (mean absolute log ratio; the first of equals) and that error.
func (f *Fitted) bySimulation(measurement string, want map[string]float64, values []float64, set func(*sim.Config, float64)) (float64, float64, error) {
	best, bestErr := values[0], math.Inf(1)
	for _, v := range values {
		cfg := *f.Config
		set(&cfg, v)
		got, err := simulate(&cfg, measurement)
		if err != nil {
			return 0, 0, err
		}
		e := meanLogError(want, func(name string) float64 {
			m, _ := got.byName(name)
			return m.Value
		})
		if e < bestErr-1e-9 {
			best, bestErr = v, e
		}
	}
	return best, bestErr, nil
}

// meanLogError is the mean over want's keys of |log(got(k) / want[k])|,
// what the fits by simulation minimize; summed in key order, so that the
// same figures give the same error every run (a map's order varies).
func meanLogError[K cmp.Ordered](want map[K]float64, got func(K) float64) float64 {
	e := 0.0
	for _, k := range slices.Sorted(maps.Keys(want)) {
		e += math.Abs(math.Log(got(k) / want[k]))
	}
	return e / float64(len(want))
}

// simulate runs one named measurement on a simulator of cfg.
func simulate(cfg *sim.Config, name string) (*Report, error) {
	for _, m := range measurements {
		if m.name == name {
			return simulateOn(cfg, name, m.run)
		}
	}
	return nil, fmt.Errorf("no measurement %q", name)
}

// simulateOn runs measure with a fresh calibrator on a simulator of cfg
// (without its race check) and returns the calibrator's report; what
// names the measurement in an error. The fits that simulate one part of a
// measurement set the calibrator up (rounds, the one loop) in measure.
func simulateOn(cfg *sim.Config, what string, measure func(c *calibrator, h device.Host) error) (*Report, error) {
	dev, err := sim.New(cfg, sim.WithRaceCheck(false))
	if err != nil {
		return nil, err
	}
	c, err := newCalibrator(dev, nil)
	if err != nil {
		return nil, err
	}
	if err := dev.Run(func(h device.Host) error { return measure(c, h) }); err != nil {
		return nil, fmt.Errorf("simulating %s: %w", what, err)
	}
	return c.report, nil
}

// simulatedValues is simulateOn's report as every measurement's value by
// name: what the fits that compare whole figure sets simulate.
func simulatedValues(cfg *sim.Config, what string, measure func(c *calibrator, h device.Host) error) (map[string]float64, error) {
	rep, err := simulateOn(cfg, what, measure)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(rep.Measurements))
	for _, m := range rep.Measurements {
		out[m.Name] = m.Value
	}
	return out, nil
}

func (r *Report) byName(name string) (Measurement, bool) {
	for _, m := range r.Measurements {
		if m.Name == name {
			return m, true
		}
	}
	return Measurement{}, false
}

// measuredByName is the value of each named measurement the report has,
// by name: what a fit by simulation compares against (names it lacks are
// left out).
func (r *Report) measuredByName(names []string) map[string]float64 {
	want := map[string]float64{}
	for _, n := range names {
		if m, ok := r.byName(n); ok {
			want[m.Name] = m.Value
		}
	}
	return want
}

// Check runs every measurement on a simulator of cfg and compares it with
// the GPU's report, measurement by measurement: the check of every model
// against what it models.
func Check(rep *Report, cfg *sim.Config) ([]CheckRow, error) {
	dev, err := sim.New(cfg, sim.WithRaceCheck(false))
	if err != nil {
		return nil, err
	}
	_, got, err := Run(dev, cfg, nil)
	if err != nil {
		return nil, err
	}
	var rows []CheckRow
	for _, m := range rep.Measurements {
		s, ok := got.byName(m.Name)
		if !ok {
			continue
		}
		row := CheckRow{Name: m.Name, Unit: m.Unit, GPU: m.Value, Sim: s.Value, SpreadPct: 100 * m.Spread()}
		if m.Value != 0 {
			row.ErrPct = 100 * (s.Value/m.Value - 1)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// CheckRow is one measurement on the GPU and on the simulator.
type CheckRow struct {
	Name, Unit string
	GPU, Sim   float64
	ErrPct     float64 // simulator against GPU, percent
	SpreadPct  float64 // the GPU's spread between rounds, percent
}

// WriteCheck writes check rows as a Markdown table, the largest errors
// first.
func WriteCheck(w io.Writer, device string, rows []CheckRow) error {
	rows = append([]CheckRow(nil), rows...)
	sort.SliceStable(rows, func(i, j int) bool { return math.Abs(rows[i].ErrPct) > math.Abs(rows[j].ErrPct) })
	var b strings.Builder
	fmt.Fprintf(&b, "Simulator against %s, every calibration measurement\n\n", device)
	b.WriteString("| measurement | GPU | simulator | unit | error | GPU spread |\n|---|---:|---:|---|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %+.1f%% | %.0f%% |\n", r.Name, num(r.GPU), num(r.Sim), r.Unit, r.ErrPct, r.SpreadPct)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fitFractions sets the achieved fractions of peak flops and bandwidth
// that make the Work estimate of a lone block closest to the profiled
// kernels' lone-block times (each kernel weighs the same: the median over
// kernels of the median absolute log error over its points), on a
// logarithmic grid from 0.001 to 1.
func (f *Fitted) fitFractions(prof *sim.Profile) {
	type point struct{ c, fl, by, t float64 }
	var kernels [][]point
	sm := f.Config.SM
	cycle := 1e9 / float64(f.Config.Info.ClockHz)
	for _, k := range prof.Kernels {
		var pts []point
		for _, pt := range k.Points {
			wb := float64(sim.PointWarps(pt.Threads))
			flopRate := sm.FlopsPerCycle / cycle * wb / max(wb, float64(sm.SaturationWarps))                             // flops per ns
			byteRate := sm.MaxSMBandwidth * wb / max(wb, float64(sm.SMMemSaturationWarps)) / 1e9                         // bytes per ns
			lone := k.Model.Lone(&device.Work{Cycles: pt.Cycles, Flops: pt.Flops, Bytes: pt.Bytes}, beyondL2(prof, &pt)) //
			pts = append(pts, point{pt.Cycles * cycle, pt.Flops / flopRate, pt.Bytes / byteRate, max(lone, 1)})          //
		}
		kernels = append(kernels, pts)
	}
	errAt := func(ff, fb float64) (typical, worst float64) {
		var ks []float64
		for _, pts := range kernels {
			var es []float64
			for _, p := range pts {
				est := max(p.c, p.fl/ff, p.by/fb, prof.MinBlockNs)
				es = append(es, math.Abs(math.Log(est/p.t)))
			}
			e := stats.Median(es)
			ks = append(ks, e)
			worst = max(worst, e)
		}
		return stats.Median(ks), worst
	}
	grid := func(i int) float64 { return math.Pow(10, -3+float64(i)/20) }
	bf, bb, best, worst := 1.0, 1.0, math.Inf(1), 0.0
	for i := 0; i <= 60; i++ {
		for j := 0; j <= 60; j++ {
			if e, w := errAt(grid(i), grid(j)); e < best {
				bf, bb, best, worst = grid(i), grid(j), e, w
			}
		}
	}
	f.Config.SM.FlopsFraction, f.Config.SM.BandwidthFraction = round3(bf), round3(bb)
	how := fmt.Sprintf("over the %d profiled kernels' lone-block times: median kernel's error %.0f%%, worst kernel %.0f%%",
		len(kernels), 100*(math.Exp(best)-1), 100*(math.Exp(worst)-1))
	f.Comments["sm.achieved_flops_fraction"] = "fitted: the fraction of peak flops the Work estimate uses, " + how
	f.Comments["sm.achieved_bandwidth_fraction"] = "fitted: the fraction of peak bandwidth the Work estimate uses, " + how
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// Marshal writes the fitted config as YAML that sim.ParseConfig reads,
// header (comment lines) first and every fitted field's comment beside it.
func (f *Fitted) Marshal(header string) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(f.Config); err != nil {
		return nil, err
	}
	comment(&n, "", f.Comments)
	body, err := sim.MarshalNode(&n)
	if err != nil {
		return nil, err
	}
	return append([]byte(header), body...), nil
}

// comment sets the line comment of every mapping value whose path (keys
// joined by dots) has one.
func comment(n *yaml.Node, path string, comments map[string]string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := n.Content[i].Value
		if path != "" {
			p = path + "." + p
		}
		if c, ok := comments[p]; ok {
			n.Content[i+1].LineComment = c
		}
		comment(n.Content[i+1], p, comments)
	}
}
