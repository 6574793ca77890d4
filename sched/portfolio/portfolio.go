package portfolio

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Estimate is what a cost model predicts for one schedule.
type Estimate struct {
	Makespan time.Duration // of the timed run, as the runner measures it
	Races    int           // races the model's race checker saw
}

// CostModel predicts a schedule's timed run without the device. Estimate
// must be safe for concurrent use: Prepare estimates candidates in
// parallel, each with a scheduler of its own.
type CostModel interface {
	Estimate(p *workloads.Program, s sched.Scheduler) (Estimate, error)
}

// Models resolves Options.Model for the device that Prepare runs on.
type Models func(name string, info device.Info) (CostModel, error)

// Options configure a Portfolio.
type Options struct {
	// Model names the cost model: "auto" (the simulator config of the
	// device Prepare runs on) or a simulator config's name or path.
	Model string `yaml:"model"`
	// Finalists is the most candidates checked on the device.
	Finalists int `yaml:"finalists"`
	// Check is how many timed runs each finalist gets on the device, each
	// after a fresh Prepare and one untimed run; 0 keeps the model's pick
	// without checking.
	Check int `yaml:"check"`
	// Margin: only candidates predicted within this fraction of the best
	// prediction are finalists (serial is one whenever Check > 0).
	Margin float64 `yaml:"margin"`
	// Pick, if set, names the candidate to run (as Picked reports it)
	// without selecting: the portfolio's own path around a fixed schedule,
	// to compare with the bare schedule on the device.
	Pick string `yaml:"pick"`
}

// DefaultOptions: the device's own simulator config, the 4 best
// predictions within 15% (and each other family's best) checked 3 times
// each.
func DefaultOptions() Options {
	return Options{Model: "auto", Finalists: 4, Check: 3, Margin: 0.15}
}

func (o Options) validate() error {
	switch {
	case o.Model == "":
		return errors.New("portfolio: model must name a cost model (auto, or a simulator config)")
	case o.Finalists < 1 || o.Finalists > 64:
		return fmt.Errorf("portfolio: finalists must be in [1, 64], got %d", o.Finalists)
	case o.Check < 0 || o.Check > 20:
		return fmt.Errorf("portfolio: check must be in [0, 20], got %d", o.Check)
	case !(o.Margin >= 0 && o.Margin <= 10):
		return fmt.Errorf("portfolio: margin must be in [0, 10], got %v", o.Margin)
	}
	return nil
}

// Portfolio is the scheduler; see the package doc.
type Portfolio struct {
	opt    Options
	models Models
	memo   *Memo
	chosen sched.Scheduler
	picked string // chosen's name, kept after Cleanup
	inst   *workloads.Instance
	stats  map[string]float64
}

// New returns a Portfolio that resolves its cost model through models and
// keeps its selections in memo (nil: none kept).
func New(opt Options, models Models, memo *Memo) (*Portfolio, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if models == nil {
		return nil, errors.New("portfolio: no cost models")
	}
	return &Portfolio{opt: opt, models: models, memo: memo}, nil
}

// Name is "portfolio(model=M,check=C)", or "portfolio(pick=NAME)".
func (p *Portfolio) Name() string {
	if p.opt.Pick != "" {
		return fmt.Sprintf("portfolio(pick=%s)", p.opt.Pick)
	}
	return fmt.Sprintf("portfolio(model=%s,check=%d)", p.opt.Model, p.opt.Check)
}

// Stats reports the last selection (see the package doc).
func (p *Portfolio) Stats() map[string]float64 {
	out := make(map[string]float64, len(p.stats))
	for k, v := range p.stats {
		out[k] = v
	}
	return out
}

// Picked is the name of the schedule the last Prepare picked ("" before).
func (p *Portfolio) Picked() string { return p.picked }

// Prepare selects a schedule for in (or recalls the selection) and
// prepares it on h.
func (p *Portfolio) Prepare(h device.Host, in *workloads.Instance) error {
	if p.chosen != nil {
		if err := p.Cleanup(h); err != nil {
			return err
		}
	}
	ih, ok := h.(device.InfoHost)
	if !ok {
		return errors.New("portfolio: the host does not describe its device (device.InfoHost), which the cost model needs")
	}
	if p.opt.Pick != "" {
		return p.prepareForced(h, in)
	}
	info := ih.DeviceInfo()
	key := memoKey{prog: in.Prog, device: info.Name, opt: p.opt}
	if d, ok := p.memo.get(key); ok {
		s, err := d.pick.build()
		if err != nil {
			return err
		}
		if err := prepare(h, in, s); err != nil {
			return fmt.Errorf("portfolio: %s: %w", d.pick.name, err)
		}
		p.chosen, p.picked, p.inst, p.stats = s, d.pick.name, in, d.statsCached()
		return nil
	}
	d, s, err := p.selectFor(h, in, info)
	if err != nil {
		return err
	}
	p.memo.put(key, d)
	p.chosen, p.picked, p.inst, p.stats = s, d.pick.name, in, d.stats
	return nil
}

// prepareForced prepares Options.Pick, selecting nothing.
func (p *Portfolio) prepareForced(h device.Host, in *workloads.Instance) error {
	s, err := Build(in.Prog, sched.DeviceTraits(h), p.opt.Pick)
	if err != nil {
		return err
	}
	if err := prepare(h, in, s); err != nil {
		return fmt.Errorf("portfolio: %s: %w", p.opt.Pick, err)
	}
	p.chosen, p.picked, p.inst = s, p.opt.Pick, in
	p.stats = map[string]float64{"picked:" + p.opt.Pick: 1, "forced": 1}
	return nil
}

// Cleanup releases the picked schedule.
func (p *Portfolio) Cleanup(h device.Host) error {
	if p.chosen == nil {
		return nil
	}
	err := cleanup(h, p.chosen)
	p.chosen, p.inst = nil, nil
	return err
}

// Run runs the picked schedule.
func (p *Portfolio) Run(h device.Host, in *workloads.Instance) error {
	if p.chosen == nil || p.inst != in {
		if err := p.Prepare(h, in); err != nil {
			return err
		}
	}
	return p.chosen.Run(h, in)
}

func prepare(h device.Host, in *workloads.Instance, s sched.Scheduler) error {
	if pr, ok := s.(sched.Preparer); ok {
		return pr.Prepare(h, in)
	}
	return nil
}

func cleanup(h device.Host, s sched.Scheduler) error {
	if pr, ok := s.(sched.Preparer); ok {
		return pr.Cleanup(h)
	}
	return nil
}
