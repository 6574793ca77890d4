package experiments

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// WorkloadFactory builds a program from its parameters (a YAML mapping,
// possibly nil for defaults) and the experiment's seed. It must decode params
// strictly (DecodeParams) so a typo is an error, never a silent default.
type WorkloadFactory func(params *yaml.Node, seed int64) (*workloads.Program, error)

// SchedulerFactory builds a scheduler from its parameters.
type SchedulerFactory func(params *yaml.Node) (sched.Scheduler, error)

var (
	regMu      sync.Mutex
	workloadsR = map[string]registered[WorkloadFactory]{}
	schedR     = map[string]registered[SchedulerFactory]{}
	pathParams = map[string][]string{} // family -> parameters that are file paths
)

type registered[F any] struct {
	doc string
	f   F
}

// RegisterWorkload makes a workload family available to experiment files
// under name. Each strategy's package registers its own families from an
// init function in a file of this package named register_<strategy>.go.
func RegisterWorkload(name, doc string, f WorkloadFactory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := workloadsR[name]; dup {
		panic("experiments: workload " + name + " registered twice") // programming error at init
	}
	workloadsR[name] = registered[WorkloadFactory]{doc, f}
}

// RegisterPathParams declares parameters of a workload family that name
// files: LoadExperiment takes a relative path given there relative to the
// experiment file's folder, as a reader of the file expects.
func RegisterPathParams(family string, names ...string) {
	regMu.Lock()
	defer regMu.Unlock()
	pathParams[family] = append(pathParams[family], names...)
}

// RegisterScheduler makes a scheduler available under name.
func RegisterScheduler(name, doc string, f SchedulerFactory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := schedR[name]; dup {
		panic("experiments: scheduler " + name + " registered twice")
	}
	schedR[name] = registered[SchedulerFactory]{doc, f}
}

// NewWorkload builds the named workload.
func NewWorkload(name string, params *yaml.Node, seed int64) (*workloads.Program, error) {
	regMu.Lock()
	r, ok := workloadsR[name]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown workload family %q (known: %s)", name, strings.Join(Workloads(), ", "))
	}
	p, err := r.f(params, seed)
	if err == nil {
		err = p.Validate() // the program limits, before anything runs
	}
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", name, err)
	}
	return p, nil
}

// NewScheduler builds the named scheduler.
func NewScheduler(name string, params *yaml.Node) (sched.Scheduler, error) {
	regMu.Lock()
	r, ok := schedR[name]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown scheduler kind %q (known: %s)", name, strings.Join(Schedulers(), ", "))
	}
	s, err := r.f(params)
	if err != nil {
		return nil, fmt.Errorf("scheduler %s: %w", name, err)
	}
	return s, nil
}

// Workloads and Schedulers list the registered names, sorted.
func Workloads() []string  { return names(workloadsR) }
func Schedulers() []string { return names(schedR) }

// WorkloadDoc and SchedulerDoc are the descriptions a workload family or
// a scheduler was registered with ("" if none is registered by that name:
// a workload and a scheduler may share a name, as kesco does).
func WorkloadDoc(name string) string {
	regMu.Lock()
	defer regMu.Unlock()
	return workloadsR[name].doc
}

func SchedulerDoc(name string) string {
	regMu.Lock()
	defer regMu.Unlock()
	return schedR[name].doc
}

func names[F any](m map[string]registered[F]) []string {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DecodeParams decodes a parameter mapping strictly into v (which holds the
// defaults): an unknown field is an error naming the field, its line in the
// experiment file and the fields v does have; a value of the wrong type is an
// error naming its line. A nil or empty node leaves v as it is.
func DecodeParams(node *yaml.Node, v any) error {
	if node == describeNode {
		return &describeRequest{v} // WorkloadParams, SchedulerParams
	}
	if node == nil || node.Kind == 0 {
		return nil
	}
	if node.Kind == yaml.ScalarNode && node.ShortTag() == "!!null" {
		return nil // "params:" with nothing after it
	}
	if node.Kind != yaml.MappingNode {
		return &LineError{Line: node.Line, Msg: fmt.Sprintf("params must be a mapping of name: value, got %s", kindName(node))}
	}
	return decodeStrict(node, v, "params")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}
