package experiments

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// SweepParam is one swept parameter and its values, in order. Name is
// "seed", "repetitions", "workloads.<workload>.<param>[.<sub>...]" or
// "schedulers.<scheduler>.<param>[.<sub>...]"; values are YAML scalars.
type SweepParam struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// ParseSweepParam parses "name=v1,v2,...". The name ends at the first
// '=' outside parentheses, so that it may name a scheduler by its own name
// ("schedulers.round-robin(k=2).k=2,3").
func ParseSweepParam(s string) (SweepParam, error) {
	name, vals, ok := cutOutside(s, '=')
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(vals) == "" {
		return SweepParam{}, fmt.Errorf("--param %q: want name=v1,v2,... (for example workloads.synthetic.width=4,8,16)", s)
	}
	p := SweepParam{Name: name}
	for _, v := range strings.Split(vals, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return SweepParam{}, fmt.Errorf("--param %q: empty value", s)
		}
		p.Values = append(p.Values, v)
	}
	return p, nil
}

// Assignment is one parameter's value at a sweep point.
type Assignment struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Shard selects every Count-th group of rows, starting at Index
// (0-based), so that the shards of a sweep partition it and can run as a
// cluster array job. A group is one (sweep point, workload, device): all
// its schedulers run in one shard, so speedups never need another shard's
// rows (and a GPU group's rows are measured together).
type Shard struct {
	Index int `json:"index"` // 0-based
	Count int `json:"count"`
}

// ParseShard parses a shard as --shard gives it: "I/N" numbers shards
// from 1 (1 <= I <= N: "3/8" is the third of eight, as an array
// --array=1-N names it), and "slurm" takes the shard from a Slurm array
// job's environment whatever its numbering (SLURM_ARRAY_TASK_ID less
// SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT). NewShard takes a
// 0-based index (--shard-index).
func ParseShard(s string) (Shard, error) {
	if s == "slurm" {
		return slurmShard()
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N (shards count from 1: 1/4 ... 4/4), "+
			"--shard-index I --shard-count N with 0 <= I < N, or --shard slurm", s)
	}
	return Shard{Index: i - 1, Count: n}, nil
}

// NewShard is shard index (0-based) of count.
func NewShard(index, count int) (Shard, error) {
	if count < 1 || index < 0 || index >= count {
		return Shard{}, fmt.Errorf("--shard-index %d --shard-count %d: want 0 <= index < count", index, count)
	}
	return Shard{Index: index, Count: count}, nil
}

func slurmShard() (Shard, error) {
	var v [3]int
	for k, name := range []string{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"} {
		s, ok := os.LookupEnv(name)
		n, err := strconv.Atoi(s)
		if !ok || err != nil {
			return Shard{}, fmt.Errorf("--shard slurm: %s is %q; run it as a Slurm array job (sbatch --array)", name, s)
		}
		v[k] = n
	}
	sh, err := NewShard(v[0]-v[1], v[2])
	if err != nil {
		return Shard{}, fmt.Errorf("--shard slurm: task %d of an array from %d with %d tasks: %w", v[0], v[1], v[2], err)
	}
	return sh, nil
}

// String names the shard as --shard takes it (from 1).
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index+1, s.Count) }

func (s Shard) takes(group int) bool { return s.Count <= 1 || group%s.Count == s.Index }

// job is one row of the matrix: a scheduler on a workload on a device, at a
// sweep point.
type job struct {
	index, group int
	point        []Assignment
	exp          *Experiment // the variant at this point
	workload     *WorkloadSpec
	sched        *SchedulerSpec
	device       string
	paper        *Paper // nil: gpusched run
	// shared, if set, is the program of the job's group, built once for
	// all its rows (runInterleaved), so its inputs are generated once.
	shared *built
	// lazy, if set, is the group's program built by the first of its rows
	// to need it (runSimJobs: the rows of a group run on several workers
	// at once, and only read it).
	lazy *lazyProgram
}

// lazyProgram is a group's program, built once.
type lazyProgram struct {
	once sync.Once
	b    built
	err  error
}

// plan expands e (and its sweep) into jobs, in the fixed order point,
// workload, device, scheduler. Every job is numbered; the shard decides
// which are returned.
func plan(e *Experiment, sweep []SweepParam, shard Shard) (jobs []*job, total int, err error) {
	points, err := sweepPoints(sweep)
	if err != nil {
		return nil, 0, err
	}
	index, group := 0, 0
	for _, pt := range points {
		v := e
		if len(pt) > 0 {
			if v, err = e.variant(pt); err != nil {
				return nil, 0, fmt.Errorf("sweep point %s: %w", pointString(pt), atFile(e.file, err))
			}
		}
		for wi := range v.Workloads {
			for _, d := range v.Devices {
				for si := range v.Schedulers {
					if shard.takes(group) {
						j := &job{index: index, group: group, point: pt, exp: v,
							workload: &v.Workloads[wi], sched: &v.Schedulers[si], device: d}
						jobs = append(jobs, j)
					}
					index++
				}
				group++
			}
		}
	}
	return jobs, index, nil
}

// Groups is the number of groups of e's matrix with sweep: the most
// shards it splits into.
func Groups(e *Experiment, sweep []SweepParam) (int, error) {
	points, err := sweepPoints(sweep)
	if err != nil {
		return 0, err
	}
	return len(points) * len(e.Workloads) * len(e.Devices), nil
}

// sweepPoints is the cartesian product of the parameters' values, the last
// parameter varying fastest. No parameters: one empty point.
func sweepPoints(sweep []SweepParam) ([][]Assignment, error) {
	points := [][]Assignment{nil}
	seen := map[string]bool{}
	for _, p := range sweep {
		if seen[p.Name] {
			return nil, fmt.Errorf("--param %s given twice", p.Name)
		}
		seen[p.Name] = true
		if len(p.Values) == 0 {
			return nil, fmt.Errorf("--param %s has no values", p.Name)
		}
		var next [][]Assignment
		for _, pt := range points {
			for _, v := range p.Values {
				q := append(append([]Assignment(nil), pt...), Assignment{p.Name, v})
				next = append(next, q)
			}
		}
		points = next
	}
	return points, nil
}

func pointString(pt []Assignment) string {
	parts := make([]string, len(pt))
	for i, a := range pt {
		parts[i] = a.Name + "=" + a.Value
	}
	return strings.Join(parts, " ")
}

// variant is a copy of e with the point's values applied, checked again.
func (e *Experiment) variant(pt []Assignment) (*Experiment, error) {
	v := *e
	v.Warmup = e.Warmup
	v.Workloads = make([]WorkloadSpec, len(e.Workloads))
	for i, w := range e.Workloads {
		w.Params = *cloneNode(&w.Params)
		v.Workloads[i] = w
	}
	v.Schedulers = make([]SchedulerSpec, len(e.Schedulers))
	for i, s := range e.Schedulers {
		s.Params = *cloneNode(&s.Params)
		if s.autoName {
			s.Name = "" // named again from the scheduler built with the new params
		}
		v.Schedulers[i] = s
	}
	v.Devices = append([]string(nil), e.Devices...)
	for _, a := range pt {
		if err := v.apply(a); err != nil {
			return nil, err
		}
	}
	// Sweeps that rename an auto-named scheduler must not change which
	// entry is the baseline.
	baseIdx := -1
	for i, s := range e.Schedulers {
		if s.Name == e.Baseline {
			baseIdx = i
		}
	}
	v.Baseline = ""
	if err := v.check(); err != nil {
		return nil, err
	}
	if baseIdx >= 0 {
		v.Baseline = v.Schedulers[baseIdx].Name
	}
	return &v, nil
}

func (e *Experiment) apply(a Assignment) error {
	parse := func() (int64, error) {
		n, err := strconv.ParseInt(a.Value, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("--param %s: %q is not an integer", a.Name, a.Value)
		}
		return n, nil
	}
	switch a.Name {
	case "seed":
		n, err := parse()
		e.Seed = n
		return err
	case "repetitions":
		n, err := parse()
		e.Repetitions = int(n)
		return err
	}
	parts := splitOutside(a.Name, '.')
	if len(parts) < 3 || (parts[0] != "workloads" && parts[0] != "schedulers") {
		return fmt.Errorf("--param %s: want seed, repetitions, workloads.<name>.<param> or schedulers.<name>.<param>", a.Name)
	}
	params, line, names := e.entryParams(parts[0], parts[1])
	if params == nil {
		return fmt.Errorf("--param %s: no %s named %q (have: %s)", a.Name, strings.TrimSuffix(parts[0], "s"), parts[1], strings.Join(names, ", "))
	}
	if params.Kind != 0 && params.Line > 0 {
		line = params.Line
	}
	setParam(params, parts[2:], a.Value, line)
	return nil
}

// entryParams finds the params of the workload or scheduler entry named
// name (a scheduler by the name it had before any sweep), with the entry's
// line; else it lists the names there are.
func (e *Experiment) entryParams(list, name string) (*yaml.Node, int, []string) {
	var names []string
	if list == "workloads" {
		for i := range e.Workloads {
			w := &e.Workloads[i]
			names = append(names, w.Name)
			if w.Name == name {
				return &w.Params, w.Line, nil
			}
		}
		return nil, 0, names
	}
	for i := range e.Schedulers {
		s := &e.Schedulers[i]
		n := s.Name
		if s.autoName {
			n = s.baseName
		}
		names = append(names, n)
		if n == name {
			return &s.Params, s.Line, nil
		}
	}
	return nil, 0, names
}

// cutOutside cuts s at the first sep outside parentheses.
func cutOutside(s string, sep byte) (before, after string, found bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				return s[:i], s[i+1:], true
			}
		}
	}
	return s, "", false
}

// splitOutside splits s at every sep outside parentheses.
func splitOutside(s string, sep byte) []string {
	var out []string
	for {
		before, after, found := cutOutside(s, sep)
		out = append(out, before)
		if !found {
			return out
		}
		s = after
	}
}

// setParam sets the scalar at path under mapping n, creating mappings on
// the way at line (the entry's, so that an error in a parameter the sweep
// adds points at it). The value is an untagged plain scalar, so YAML
// resolves it (8 is an int, 0.5 a float, true a bool) when the factory
// decodes it.
func setParam(n *yaml.Node, path []string, value string, line int) {
	if n.Kind != yaml.MappingNode {
		*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == path[0] {
			if len(path) == 1 {
				n.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Value: value, Line: n.Content[i+1].Line, Column: n.Content[i+1].Column}
				return
			}
			setParam(n.Content[i+1], path[1:], value, line)
			return
		}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0], Line: line}
	val := &yaml.Node{Kind: yaml.ScalarNode, Value: value, Line: line}
	if len(path) > 1 {
		val = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
		setParam(val, path[1:], value, line)
	}
	n.Content = append(n.Content, key, val)
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = cloneNode(k)
		}
	}
	return &c
}
