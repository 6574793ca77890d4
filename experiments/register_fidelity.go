package experiments

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/synthetic"
)

func init() {
	RegisterWorkload("synthetic-random", "a random DAG whose shape (layers, widths, fan-in, grids, kernel lengths, steps, copies) is itself drawn from the experiment's seed "+
		"and the entry's index: held-out shapes for fidelity checks, fresh with every seed (params: draw=0)",
		func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			p := struct {
				Draw int `yaml:"draw"`
			}{}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			if p.Draw < 0 {
				return nil, fmt.Errorf("draw must not be negative, got %d", p.Draw)
			}
			return synthetic.Generate(synthetic.Draw(seed, p.Draw), seed)
		})
}
