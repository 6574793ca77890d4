package experiments

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/dnn"
)

// nasStaticModels are ACS's static NAS CNNs.
var nasStaticModels = []string{"nasnet-mobile", "nasnet-a", "amoebanet", "squeezenet", "randwire"}

// nasStaticParams are nas-static's parameters (no BERT options).
type nasStaticParams struct {
	Model  string `yaml:"model"`
	Inputs int    `yaml:"inputs"`
	Scale  int    `yaml:"scale"`
}

func init() {
	RegisterWorkload("dynamic-dnn", "batch-1 dynamic DNN on 32x32 inputs, one step per input, graph chosen per input "+
		"(params: variant=instanas|routing|condconv (required), inputs=8, scale=1 channel divisor)",
		func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			p := dnn.DefaultDynamic("")
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			if p.Variant == "" {
				return nil, fmt.Errorf("parameter variant is required (one of %v)", dnn.DynamicVariants)
			}
			return dnn.Dynamic(p, seed)
		})
	RegisterWorkload("nas-static", "batch-1 static NAS CNN, one inference per step "+
		"(params: model=nasnet-mobile|nasnet-a|amoebanet|squeezenet|randwire (required), inputs=1, scale=1 channel and resolution divisor)",
		func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			p := nasStaticParams{Inputs: 1, Scale: 1}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			if !slices.Contains(nasStaticModels, p.Model) {
				return nil, fmt.Errorf("parameter model %q: want one of %v", p.Model, nasStaticModels)
			}
			sp := dnn.DefaultStatic(p.Model)
			sp.Inputs, sp.Scale = p.Inputs, p.Scale
			return dnn.Static(sp, seed)
		})
	RegisterWorkload("dnn-static", "batch-1 static inference graph (AutoGraph's models), one inference per step "+
		"(params: model=inception-v3|resnext-50|nasnet-mobile|nasnet-a|amoebanet|squeezenet|randwire|bert (required), inputs=1, scale=1, seq_len=128 and layers=1 for bert)",
		func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			p := dnn.DefaultStatic("")
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			if p.Model == "" {
				return nil, fmt.Errorf("parameter model is required (one of %v)", dnn.StaticModels)
			}
			return dnn.Static(p, seed)
		})
}
