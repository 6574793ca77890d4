package kineto

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var profilerStep = regexp.MustCompile(`^ProfilerStep#(\d+)$`)

// window is the CPU time range whose launches make up the imported
// workload.
type window struct {
	name     string
	from, to int64
}

// pickWindow finds the iteration to import: ProfilerStep#iteration, or
// the last ProfilerStep when iteration is negative; or the first annotation
// or operator named rangeName; or, in a trace without ProfilerStep markers
// and no range asked for, the whole trace.
func (t *trace) pickWindow(iteration int, rangeName string) (window, error) {
	if rangeName != "" {
		for _, s := range t.spans {
			if s.name == rangeName {
				return window{name: rangeName, from: s.ts, to: s.end}, nil
			}
		}
		return window{}, fmt.Errorf("no annotation or operator named %q in the trace", rangeName)
	}
	var steps []*span
	var numbers []int
	for _, s := range t.spans {
		if m := profilerStep.FindStringSubmatch(s.name); m != nil {
			n, _ := strconv.Atoi(m[1])
			steps, numbers = append(steps, s), append(numbers, n)
		}
	}
	if len(steps) == 0 {
		if iteration >= 0 {
			return window{}, fmt.Errorf("the trace has no ProfilerStep markers, so no iteration %d (import it whole, or name a range)", iteration)
		}
		return window{name: "whole trace", from: -1 << 62, to: 1 << 62}, nil
	}
	pick := len(steps) - 1
	if iteration >= 0 {
		pick = -1
		for i, n := range numbers {
			if n == iteration {
				pick = i
			}
		}
		if pick < 0 {
			return window{}, fmt.Errorf("no ProfilerStep#%d in the trace (it has %s)", iteration, stepList(numbers))
		}
	}
	s := steps[pick]
	return window{name: s.name, from: s.ts, to: s.end}, nil
}

func stepList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = "#" + strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

// selectOps keeps the GPU operations on device dev launched inside w,
// links each to its launch call and innermost operator, and puts them in
// program order: the order of their launches (correlation ids grow with
// every API call), and, inside one graph launch, the order they started
// in, which is a topological order of the graph's dependencies.
func (t *trace) selectOps(w window, dev int64) (ops []*gpuOp, unlaunched int) {
	byTid := map[string][]*span{}
	for _, s := range t.spans {
		if s.cat == "cpu_op" {
			byTid[s.tid] = append(byTid[s.tid], s)
		}
	}
	for _, o := range t.ops {
		if o.device != dev {
			continue
		}
		call := t.calls[o.corr]
		if call == nil {
			unlaunched++
			continue
		}
		if call.ts < w.from || call.ts >= w.to {
			continue
		}
		o.launch = call
		o.graph = o.graphID > 0 || strings.Contains(call.name, "GraphLaunch")
		o.op = innermost(byTid[call.tid], call.ts)
		ops = append(ops, o)
	}
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].corr != ops[j].corr {
			return ops[i].corr < ops[j].corr
		}
		return ops[i].ts < ops[j].ts
	})
	for i, o := range ops {
		o.index = i
	}
	return ops, unlaunched
}

// innermost is the operator of spans (one thread's, sorted by start, the
// enclosing first on ties) that most closely encloses time x, or nil.
func innermost(spans []*span, x int64) *span {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].ts > x }) - 1
	for ; i >= 0; i-- {
		if spans[i].end >= x {
			return spans[i]
		}
	}
	return nil
}

// device picks the GPU the trace's kernels ran on (the one with the most
// operations) and its properties.
func (t *trace) device() (int64, *deviceProps, error) {
	count := map[int64]int{}
	for _, o := range t.ops {
		count[o.device]++
	}
	if len(count) == 0 {
		return 0, nil, fmt.Errorf("the trace has no kernels, copies or memsets (was it recorded with ProfilerActivity.CUDA?)")
	}
	best, n := int64(0), -1
	for d, c := range count {
		if c > n || (c == n && d < best) {
			best, n = d, c
		}
	}
	for i := range t.devices {
		if int64(t.devices[i].ID) == best {
			return best, &t.devices[i], nil
		}
	}
	return best, nil, nil
}
