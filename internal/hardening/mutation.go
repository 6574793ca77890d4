// Package hardening shows that nothing unsafe slips through gpusched, that no
// input crashes it and that nothing leaks (issue 10).
//
//   - Mutation suite (MutationSuite): every workload family is scheduled by
//     correct schedulers whose schedules sched/mutate breaks in one named way
//     at a time (a dropped event wait, a wait on the wrong event, a buffer
//     reused too early, a stream shared by two in-flight jobs split, a graph
//     missing an edge). On the simulator the race checker must report each
//     broken schedule; the unmutated control run of every scheduler must
//     report none. The result is a catch-rate table, mutation x family.
//   - Determinism (the tests): every simulator experiment under
//     configs/experiments reruns byte-identically.
//   - Deadlocks (the tests): event waits that never fire, host threads waiting
//     on each other, spinning blocks that fill the GPU each end in a
//     *device.DeadlockError that names what waits on what.
//   - Soak (Soak; cmd/gpusched-soak runs it on a GPU): many small kernels
//     through each scheduler, sampling streams, events, device memory and
//     host memory between rounds, to show none of them grows.
//
// The fuzzers live beside what they fuzz (device, device/sim, experiments),
// in files named fuzz_test.go with corpora under testdata/fuzz; the results
// and the commands are in docs/results/hardening.md.
package hardening

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/mutate"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Spec names a registered workload family or scheduler and its parameters
// (YAML flow mapping, "" for the defaults).
type Spec struct {
	Kind   string
	Params string
}

func (s Spec) String() string {
	if s.Params == "" {
		return s.Kind
	}
	return s.Kind + s.Params
}

// Family is one workload family of the suite at a small size, with the
// correct schedulers whose schedules the mutations break.
type Family struct {
	Name       string
	Workload   Spec
	Schedulers []Spec
}

// Families is the suite's matrix: every workload family at a size that keeps
// the whole suite to seconds, each with the concurrent schedulers that give
// the mutations something to break (serial schedules have no waits, no
// second stream and no concurrency to break).
var Families = []Family{
	{"synthetic", Spec{"synthetic", "{layers: 4, width: 6, fan_in: 2, min_blocks: 4, max_blocks: 32, iters: 65536, steps: 2}"},
		[]Spec{{"round-robin", "{k: 4}"}, {"acs-sw", "{inflight: 4, completion: event}"}, {"graph-per-step", "{streams: 4}"}}},
	{"kesco", Spec{"kesco-mix", "{tasks: 4, scale: 0.05, blocks: 4}"},
		[]Spec{{"kesco", ""}, {"round-robin", "{k: 4}"}, {"kesco", "{graph: true}"}}},
	{"rl", Spec{"rl-physics", "{env: ant, envs: 32, envs_per_group: 8, steps: 2}"},
		[]Spec{{"acs-sw", "{inflight: 4, completion: event}"}, {"round-robin", "{k: 4}"}, {"graph-per-step", "{streams: 4}"}}},
	{"dnn", Spec{"dnn-static", "{model: squeezenet, scale: 2}"},
		[]Spec{{"nimble", ""}, {"round-robin", "{k: 4}"}, {"nimble", "{graph: true}"}}},
	{"jobs", Spec{"jobs-sobel", "{jobs: 8, size: 256}"},
		[]Spec{{"set", "{b: 2, depth: 2}"}, {"batching", "{b: 4}"}, {"round-robin", "{k: 4}"}, {"graph-per-step", "{streams: 4}"}}},
	{"tiles", Spec{"tiles-mlp", "{model: gpt3, tokens: 8, hidden: 1024, ff: 1024, steps: 2, no_data: true}"},
		[]Spec{{"tilesync", "{policy: row}"}, {"round-robin", "{k: 2}"}, {"graph-per-step", "{streams: 2}"}}},
}

// SitesPerScheduler caps the mutated runs per (mutation, family, scheduler):
// sites are taken evenly spaced over the probe's effective sites.
const SitesPerScheduler = 3

// Run is one mutated run.
type Run struct {
	Scheduler string
	Site      int
	Why       string // the ordering the mutation removes (from the probe)
	Detail    string // what the mutation changed
	Races     int
	Err       error
	// Timing, for a missed run: when the two commands named in Why ran in
	// the mutated run (simulated microseconds, every occurrence).
	Timing string
	// Miss classifies a missed run from Timing: MissLatent, MissInverted
	// or "" (unknown).
	Miss string
}

// Kinds of miss.
const (
	// MissLatent: the two commands ran apart in time, in the right order
	// (other work or the timing ordered them): the race did not happen.
	MissLatent = "latent"
	// MissInverted: the dependent command ran wholly before the one it
	// depends on: the race happened as a wrong order, which a checker of
	// overlaps in time cannot see.
	MissInverted = "inverted"
)

// Caught reports whether the simulator caught the run.
func (r Run) Caught() bool { return r.Races > 0 }

// Cell is one (mutation, family) entry of the table.
type Cell struct {
	Mutation mutate.Kind
	Family   string
	Runs     []Run
	// Sites is the number of effective sites per scheduler (0: the
	// mutation does not apply to that scheduler's schedule).
	Sites map[string]int
}

// Caught counts the caught runs.
func (c *Cell) Caught() int {
	n := 0
	for _, r := range c.Runs {
		if r.Caught() {
			n++
		}
	}
	return n
}

// missNote is " (L latent, I inverted)" for the cell's classified misses.
func (c *Cell) missNote() string {
	l, i := 0, 0
	for _, r := range c.Runs {
		switch r.Miss {
		case MissLatent:
			l++
		case MissInverted:
			i++
		}
	}
	if l+i == 0 {
		return ""
	}
	return fmt.Sprintf(" (%dL %dI)", l, i)
}

// Applies reports whether any scheduler of the family offered a site.
func (c *Cell) Applies() bool { return len(c.Runs) > 0 }

// Report is the suite's result.
type Report struct {
	Device   string
	Jitter   uint64
	Delay    float64
	Controls map[string]int // "family/scheduler" -> races of the unmutated run
	Cells    []*Cell
	Elapsed  []string // wall time per family, for keeping the suite fast
}

func node(params string) (*yaml.Node, error) {
	if params == "" {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(params), &doc); err != nil {
		return nil, fmt.Errorf("params %q: %w", params, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// NewProgram builds a workload spec through the experiments registry.
func NewProgram(s Spec, seed int64) (*workloads.Program, error) {
	n, err := node(s.Params)
	if err != nil {
		return nil, err
	}
	return experiments.NewWorkload(s.Kind, n, seed)
}

// NewScheduler builds a scheduler spec through the experiments registry.
func NewScheduler(s Spec) (sched.Scheduler, error) {
	n, err := node(s.Params)
	if err != nil {
		return nil, err
	}
	return experiments.NewScheduler(s.Kind, n)
}

// RunOnce binds prog on dev, runs s as the experiments runner does (Prepare,
// Run, Synchronize, Cleanup) and returns the races the simulator saw.
func RunOnce(dev *sim.Device, prog *workloads.Program, s sched.Scheduler) (int, error) {
	err := dev.Run(func(h device.Host) error {
		return workloads.WithInstance(h, prog, func(in *workloads.Instance) error { return sched.RunOnce(h, in, s) })
	})
	return len(dev.Races()), err
}

// spread picks up to n of xs, evenly spaced, first and last included.
func spread(xs []int, n int) []int {
	if len(xs) <= n {
		return xs
	}
	out := make([]int, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, xs[i*(len(xs)-1)/(n-1)])
	}
	return out
}

// stressWidth multiplies the SMs of a slowed config.
const stressWidth = 16

// SlowConfig loads the simulator config named dev, divides its SM clock,
// memory bandwidth and copy bandwidths by factor, so that every kernel and
// copy outlasts the host's issue gaps, and (for factor > 1) multiplies its SMs
// by stressWidth. The race checker sees conflicting
// commands that overlapped in time; on the real config, kernels of a few
// microseconds often finish before the host issues their unordered consumer
// (the host is the bottleneck), and the race stays latent. Slowing the GPU
// makes such latent races manifest, as a sanitizer's slowdown does.
func SlowConfig(dev string, factor float64) (*sim.Config, error) {
	cfg, err := sim.LoadConfig(dev)
	if err != nil {
		return nil, err
	}
	if factor < 1 {
		return nil, fmt.Errorf("slow-down factor %g must be at least 1", factor)
	}
	if factor == 1 {
		return cfg, nil
	}
	cfg.Name = fmt.Sprintf("%s/%g", cfg.Name, factor)
	cfg.Info.ClockHz = max(1, int64(float64(cfg.Info.ClockHz)/factor))
	cfg.Info.MemBandwidth /= factor
	cfg.Copy.HtoDGBps /= factor
	cfg.Copy.DtoHGBps /= factor
	cfg.Copy.PageableGBps /= factor
	cfg.FrontEnd.MinBlockNs *= factor
	// Kernels are timed from their Work, which the slower clock and
	// bandwidth stretch: a kernel profile's measured times would not be.
	cfg.Profile, cfg.ProfileName = nil, ""
	// Room: with the SMs full, a dependent kernel's blocks wait for its
	// producer's to leave, which orders them by resources, not by the
	// schedule. A GPU this many times wider lets whatever the schedule
	// leaves unordered run side by side.
	cfg.Info.SMs *= stressWidth
	return cfg, nil
}

// MutationSuite runs every mutation against every family on the simulator
// config named dev (an embedded name or a path), its GPU slowed down by
// slow (1: as configured; see SlowConfig).
//
// jitter, when not zero, is the seed of sched/mutate's kernel-duration
// jitter (the same for a scheduler's probe and its mutated runs); delay,
// when above 1, stretches the kernel of the producer whose ordering the
// mutation removes (sched/mutate's delay injection).
func MutationSuite(dev string, slow float64, jitter uint64, delay float64, families []Family, seed int64) (_ *Report, err error) {
	cfg, err := SlowConfig(dev, slow)
	if err != nil {
		return nil, err
	}
	d, err := sim.New(cfg, sim.WithRaceCheck(true))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	m := &simSuite{cfg: cfg, d: d, jitter: jitter, delay: delay,
		rep: &Report{Device: cfg.Name, Jitter: jitter, Delay: delay, Controls: map[string]int{}}}
	for _, f := range families {
		start := time.Now()
		prog, err := NewProgram(f.Workload, seed)
		if err != nil {
			return nil, fmt.Errorf("family %s: %w", f.Name, err)
		}
		for _, ss := range f.Schedulers {
			s, err := NewScheduler(ss)
			if err != nil {
				return nil, fmt.Errorf("family %s: %w", f.Name, err)
			}
			races, err := RunOnce(d, prog, s)
			if err != nil {
				return nil, fmt.Errorf("family %s, scheduler %s, unmutated: %w", f.Name, ss, err)
			}
			m.rep.Controls[f.Name+"/"+ss.String()] = races
		}
		for _, kind := range mutate.Kinds {
			cell := &Cell{Mutation: kind, Family: f.Name, Sites: map[string]int{}}
			for _, ss := range f.Schedulers {
				if err := m.sites(cell, f, prog, ss, kind); err != nil {
					return nil, err
				}
			}
			m.rep.Cells = append(m.rep.Cells, cell)
		}
		m.rep.Elapsed = append(m.rep.Elapsed, fmt.Sprintf("%s: %d ops, %v", f.Name, prog.NumOps(), time.Since(start).Round(time.Millisecond)))
	}
	return m.rep, nil
}

// simSuite is one MutationSuite: the slowed simulator, the mutations'
// jitter and delay, and the report so far.
type simSuite struct {
	cfg    *sim.Config
	d      *sim.Device
	jitter uint64
	delay  float64
	rep    *Report
}

// sites probes scheduler ss's schedule of prog for kind's sites and runs
// the mutation at up to SitesPerScheduler of them, adding the runs to cell.
func (m *simSuite) sites(cell *Cell, f Family, prog *workloads.Program, ss Spec, kind mutate.Kind) error {
	inner, err := NewScheduler(ss)
	if err != nil {
		return err
	}
	probe, err := mutate.New(inner, kind, -1)
	if err != nil {
		return err
	}
	probe.Jitter = m.jitter
	if _, err := RunOnce(m.d, prog, probe); err != nil {
		return fmt.Errorf("family %s, scheduler %s, probe %s: %w", f.Name, ss, kind, err)
	}
	sites := probe.Sites()
	cell.Sites[ss.String()] = len(sites)
	for _, site := range spread(sites, SitesPerScheduler) {
		inner, err := NewScheduler(ss)
		if err != nil {
			return err
		}
		mut, err := mutate.New(inner, kind, site)
		if err != nil {
			return err
		}
		mut.Jitter = m.jitter
		mut.DelayCommand, mut.DelayFactor = probe.Producer(site), m.delay
		races, err := RunOnce(m.d, prog, mut)
		if mut.Applied() == 0 && err == nil {
			if kind == mutate.EarlyReuse {
				// The scheduler never names the program's own buffers
				// (SET retargets jobs to its private ones): nothing to
				// alias.
				cell.Sites[ss.String()] = 0
				break
			}
			return fmt.Errorf("family %s, scheduler %s, %s at site %d: the probe's site was never reached", f.Name, ss, kind, site)
		}
		run := Run{Scheduler: ss.String(), Site: site, Why: probe.Why(site), Detail: mut.Detail(), Races: races, Err: err}
		if races == 0 && err == nil && run.Why != "" {
			run.Timing, run.Miss = missTiming(m.cfg, prog, ss, kind, site, m.jitter, probe.Producer(site), m.delay, run.Why)
		}
		cell.Runs = append(cell.Runs, run)
	}
	return nil
}

// Table is the catch-rate table in Markdown: one row per mutation, one
// column per family, caught / runs, "n/a" where no scheduler's schedule
// offers the mutation a site.
func (r *Report) Table() string {
	var fams []string
	seen := map[string]bool{}
	for _, c := range r.Cells {
		if !seen[c.Family] {
			seen[c.Family] = true
			fams = append(fams, c.Family)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| mutation | %s | total |\n|---|", strings.Join(fams, " | "))
	for range fams {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, k := range mutate.Kinds {
		fmt.Fprintf(&b, "| %s |", k.Describe())
		caught, runs := 0, 0
		for _, f := range fams {
			for _, c := range r.Cells {
				if c.Mutation != k || c.Family != f {
					continue
				}
				if !c.Applies() {
					b.WriteString(" n/a |")
					continue
				}
				fmt.Fprintf(&b, " %d / %d%s |", c.Caught(), len(c.Runs), c.missNote())
				caught += c.Caught()
				runs += len(c.Runs)
			}
		}
		fmt.Fprintf(&b, " %d / %d |\n", caught, runs)
	}
	return b.String()
}

// Details lists every mutated run and the sites per scheduler, for the
// record (and for finding a miss).
func (r *Report) Details() string {
	var b strings.Builder
	keys := make([]string, 0, len(r.Controls))
	for k := range r.Controls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(&b, "wall time: %s\n", strings.Join(r.Elapsed, "; "))
	b.WriteString("unmutated controls (races):\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-60s %d\n", k, r.Controls[k])
	}
	for _, c := range r.Cells {
		var sc []string
		for s, n := range c.Sites {
			sc = append(sc, fmt.Sprintf("%s: %d", s, n))
		}
		sort.Strings(sc)
		fmt.Fprintf(&b, "%s x %s (effective sites: %s)\n", c.Mutation, c.Family, strings.Join(sc, ", "))
		for _, run := range c.Runs {
			verdict := "caught"
			if !run.Caught() {
				verdict = "MISSED"
			}
			if run.Err != nil {
				verdict += fmt.Sprintf(" (run error: %v)", run.Err)
			}
			fmt.Fprintf(&b, "  %-40s site %-5d races %-4d %s: %s; %s\n", run.Scheduler, run.Site, run.Races, verdict, run.Why, run.Detail)
			if run.Timing != "" && run.Miss != "" {
				fmt.Fprintf(&b, "      %s: %s\n", run.Miss, run.Timing)
			} else if run.Timing != "" {
				fmt.Fprintf(&b, "      %s\n", run.Timing)
			}
		}
	}
	return b.String()
}

// missTiming reruns a missed mutation with the timeline on and says when
// the commands named in why ran: whether they ran apart in time (the race
// stayed latent) or in the wrong order.
func missTiming(cfg *sim.Config, prog *workloads.Program, ss Spec, kind mutate.Kind, site int, jitter uint64, producer int, delay float64, why string) (timing, miss string) {
	d, err := sim.New(cfg, sim.WithTrace(true))
	if err != nil {
		return "", ""
	}
	defer func() {
		if err := d.Close(); err != nil {
			timing, miss = "", ""
		}
	}()
	inner, err := NewScheduler(ss)
	if err != nil {
		return "", ""
	}
	m, err := mutate.New(inner, kind, site)
	if err != nil {
		return "", ""
	}
	m.Jitter = jitter
	m.DelayCommand, m.DelayFactor = producer, delay
	if _, err := RunOnce(d, prog, m); err != nil {
		return "", ""
	}
	var buf bytes.Buffer
	if err := d.WriteTrace(&buf); err != nil {
		return "", ""
	}
	var tr struct {
		TraceEvents []struct {
			Name string  `json:"name"`
			Ph   string  `json:"ph"`
			Ts   float64 `json:"ts"`
			Dur  float64 `json:"dur"`
		} `json:"traceEvents"`
	}
	if json.Unmarshal(buf.Bytes(), &tr) != nil {
		return "", ""
	}
	var parts []string
	for _, sep := range []string{" would no longer wait for ", " would no longer follow "} {
		if a, b, ok := strings.Cut(why, sep); ok {
			parts = []string{a, b}
		}
	}
	if parts == nil {
		return "", ""
	}
	var out []string
	var first [2][2]float64
	found := [2]bool{}
	for i, name := range parts {
		var spans []string
		for _, e := range tr.TraceEvents {
			if e.Ph == "X" && e.Name == name {
				if !found[i] {
					first[i], found[i] = [2]float64{e.Ts, e.Ts + e.Dur}, true
				}
				if len(spans) < 3 {
					spans = append(spans, fmt.Sprintf("[%.1f, %.1f]", e.Ts, e.Ts+e.Dur))
				}
			}
		}
		out = append(out, fmt.Sprintf("%s at %s", name, strings.Join(spans, " ")))
	}
	timing = strings.Join(out, "; ")
	if found[0] && found[1] {
		consumer, producer := first[0], first[1]
		switch {
		case consumer[1] <= producer[0]:
			miss = MissInverted
		case consumer[0] >= producer[1]:
			miss = MissLatent
		}
	}
	return timing, miss
}
