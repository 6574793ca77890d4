package hardening

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/mutate"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// GPUFamilies are Families with every buffer computed (tiles without
// no_data), for a device whose outputs mean something.
var GPUFamilies = func() []Family {
	out := make([]Family, len(Families))
	copy(out, Families)
	for i := range out {
		if out[i].Name == "tiles" {
			out[i].Workload = Spec{"tiles-mlp", "{model: gpt3, tokens: 8, hidden: 1024, ff: 1024, steps: 2}"}
		}
	}
	return out
}()

// RunOutputs binds prog on dev, runs s as the experiments runner does and
// returns the program's outputs.
func RunOutputs(dev device.Device, prog *workloads.Program, s sched.Scheduler) (map[string][]byte, error) {
	var out map[string][]byte
	err := dev.Run(func(h device.Host) error {
		return workloads.WithInstance(h, prog, func(in *workloads.Instance) error {
			if err := sched.RunOnce(h, in, s); err != nil {
				return err
			}
			var err error
			out, err = in.Outputs(h)
			return err
		})
	})
	return out, err
}

// differing names the outputs of got that differ from want, sorted.
func differing(want, got map[string][]byte) []string {
	var d []string
	for name, w := range want {
		if !bytes.Equal(w, got[name]) {
			d = append(d, name)
		}
	}
	sort.Strings(d)
	return d
}

// GPUMutationSuite is the mutation suite on a device that computes (a GPU):
// a mutation is caught when some output differs from the serial schedule's.
// Sites come from a probe on the simulator config simDev (the GPU's own
// timing decides nothing there, so the same ordinal names the same call in
// every repeat); each mutated schedule runs repeats times on gpu, and a run
// counts once per repeat whose outputs differed (Run.Races holds that count
// here). A race that does not happen in time changes no output: the GPU
// catch rate is expected below the simulator's.
//
// computes says the device computes (a GPU): the serial outputs are then
// checked against the program's CPU reference first.
func GPUMutationSuite(gpu device.Device, computes bool, simDev string, families []Family, repeats int, seed int64) (_ *Report, err error) {
	probeDev, err := sim.NewNamed(simDev, sim.WithRaceCheck(false))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, probeDev.Close()) }()
	g := &gpuSuite{gpu: gpu, probeDev: probeDev, repeats: repeats,
		rep: &Report{Device: fmt.Sprintf("%s (outputs vs serial, %d repeats; sites from %s)", gpu.Info().Name, repeats, simDev), Controls: map[string]int{}}}
	for _, f := range families {
		prog, err := NewProgram(f.Workload, seed)
		if err != nil {
			return nil, fmt.Errorf("family %s: %w", f.Name, err)
		}
		want, err := RunOutputs(gpu, prog, sched.NewSerial())
		if err != nil {
			return nil, fmt.Errorf("family %s, serial: %w", f.Name, err)
		}
		if computes && prog.Check != nil {
			if err := prog.Check(want); err != nil {
				return nil, fmt.Errorf("family %s: serial outputs fail the CPU reference: %w", f.Name, err)
			}
		}
		if err := g.family(f, prog, want); err != nil {
			return nil, err
		}
	}
	return g.rep, nil
}

// gpuSuite is one GPUMutationSuite: the GPU, the simulator that finds the
// sites, and the report so far.
type gpuSuite struct {
	gpu      device.Device
	probeDev *sim.Device
	repeats  int
	rep      *Report
}

// family runs family f's unmutated controls and every mutation kind's
// sites on the GPU, comparing outputs with the serial schedule's (want).
func (g *gpuSuite) family(f Family, prog *workloads.Program, want map[string][]byte) error {
	for _, ss := range f.Schedulers {
		s, err := NewScheduler(ss)
		if err != nil {
			return err
		}
		got, err := RunOutputs(g.gpu, prog, s)
		if err != nil {
			return fmt.Errorf("family %s, scheduler %s, unmutated: %w", f.Name, ss, err)
		}
		g.rep.Controls[f.Name+"/"+ss.String()] = len(differing(want, got))
	}
	for _, kind := range mutate.Kinds {
		cell := &Cell{Mutation: kind, Family: f.Name, Sites: map[string]int{}}
		for _, ss := range f.Schedulers {
			inner, err := NewScheduler(ss)
			if err != nil {
				return err
			}
			probe, err := mutate.New(inner, kind, -1)
			if err != nil {
				return err
			}
			if _, err := RunOnce(g.probeDev, prog, probe); err != nil {
				return fmt.Errorf("family %s, scheduler %s, probe %s: %w", f.Name, ss, kind, err)
			}
			sites := probe.Sites()
			cell.Sites[ss.String()] = len(sites)
			for _, site := range spread(sites, SitesPerScheduler) {
				run, err := g.site(prog, want, ss, kind, site, probe.Why(site))
				if err != nil {
					return err
				}
				cell.Runs = append(cell.Runs, run)
			}
		}
		g.rep.Cells = append(g.rep.Cells, cell)
	}
	return nil
}

// site runs scheduler ss with mutation kind at site repeats times on the
// GPU and counts the repeats whose outputs differ from want.
func (g *gpuSuite) site(prog *workloads.Program, want map[string][]byte, ss Spec, kind mutate.Kind, site int, why string) (Run, error) {
	run := Run{Scheduler: ss.String(), Site: site, Why: why}
	applied := false
	for r := 0; r < g.repeats; r++ {
		inner, err := NewScheduler(ss)
		if err != nil {
			return run, err
		}
		m, err := mutate.New(inner, kind, site)
		if err != nil {
			return run, err
		}
		got, err := RunOutputs(g.gpu, prog, m)
		if err != nil {
			run.Err = err
			break
		}
		if m.Applied() > 0 {
			applied = true
			run.Detail = m.Detail()
		}
		if d := differing(want, got); len(d) > 0 {
			run.Races++
			run.Timing = "differing outputs: " + fmt.Sprint(d)
		}
	}
	if !applied && run.Err == nil {
		// On the GPU the site's condition did not hold (a stream already
		// idle, say): nothing was broken.
		run.Detail = "not applied on the GPU (its condition did not hold at run time)"
	}
	return run, nil
}
