package experiments

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/portfolio"
	"github.com/gpusched/gpusched/workloads"
)

// portfolioMemo keeps the portfolio's selections across the repetitions
// of a row (and the rows of a GPU group, which share one program).
var portfolioMemo portfolio.Memo

func init() {
	RegisterScheduler("portfolio", "gpusched's own: every applicable strategy and combination predicted on the simulator, the best few checked on the device, the fastest kept "+
		"(params: model=auto (the device's simulator config), auto-datasheet (its datasheet-only sibling) or a config name or path, finalists=4, check=3 timed runs per finalist (0: trust the model), margin=0.15, pick=NAME runs that candidate, selecting nothing)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			p := portfolio.DefaultOptions()
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return portfolio.New(p, simModels, &portfolioMemo)
		})
}

// simModel is the portfolio's cost model: the simulator with one device
// config, measuring a schedule as the runner does (runOnce).
type simModel struct{ cfg *sim.Config }

func (m simModel) Estimate(p *workloads.Program, s sched.Scheduler) (_ portfolio.Estimate, err error) {
	dev, err := sim.New(m.cfg)
	if err != nil {
		return portfolio.Estimate{}, err
	}
	defer func() { err = errors.Join(err, dev.Close()) }()
	o, err := runOnce(dev, p, s, false)
	if err != nil {
		return portfolio.Estimate{}, err
	}
	return portfolio.Estimate{Makespan: o.makespan, Races: len(dev.Races())}, nil
}

// simModels resolves a portfolio's model: a simulator config by name or
// path; for "auto" the embedded config that describes the device exactly
// (a simulated device) or else whose name is a word of the device's name
// ("h100" for "NVIDIA H100 80GB HBM3"); for "auto-datasheet" that config's
// datasheet-only sibling (h100-datasheet), to measure what calibration
// buys the selection.
func simModels(name string, info device.Info) (portfolio.CostModel, error) {
	if name == "auto" || name == "auto-datasheet" {
		n, err := deviceConfig(info)
		if err != nil {
			return nil, err
		}
		if name == "auto-datasheet" {
			n = strings.TrimSuffix(n, "-datasheet") + "-datasheet"
		}
		name = n
	}
	cfg, err := sim.LoadConfig(name)
	if err != nil {
		return nil, err
	}
	return simModel{cfg}, nil
}

// deviceConfig names the embedded config of the device info describes.
func deviceConfig(info device.Info) (string, error) {
	words := strings.Fields(strings.ToLower(info.Name))
	byWord := ""
	for _, n := range sim.ConfigNames() {
		cfg, err := sim.LoadConfig(n)
		if err != nil {
			return "", err
		}
		if cfg.Info == info {
			return n, nil
		}
		if byWord == "" && slices.Contains(words, n) {
			byWord = n
		}
	}
	if byWord == "" {
		return "", fmt.Errorf("no simulator config describes %q: give the portfolio a model (a config name or path)", info.Name)
	}
	return byWord, nil
}
