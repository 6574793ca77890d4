package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Experiment is a decoded experiment file: a matrix of workloads x devices x
// schedulers, each cell run Repetitions times after Warmup unmeasured runs.
// See configs/experiments/quickstart.yaml for a commented example.
type Experiment struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// Seed is passed to every workload factory; the same seed builds the
	// same programs.
	Seed        int64 `yaml:"seed"`
	Repetitions int   `yaml:"repetitions"`
	// Warmup is the number of unmeasured runs before the measured ones. Nil
	// means the device's default: 1 on a GPU (first-launch costs: module
	// loading, clock ramp-up), 0 on the simulator (every run is identical).
	Warmup *int `yaml:"warmup,omitempty"`
	// Baseline names the scheduler entry that speedups are measured
	// against. Empty: no speedups.
	Baseline   string          `yaml:"baseline,omitempty"`
	Workloads  []WorkloadSpec  `yaml:"workloads"`
	Schedulers []SchedulerSpec `yaml:"schedulers"`
	// Devices are simulator configs by name (h100) or path (my.yaml), or
	// "cuda" for the first GPU.
	Devices []string    `yaml:"devices"`
	Outputs OutputsSpec `yaml:"outputs,omitempty"`

	// Source is the file the experiment was read from ("" if from bytes).
	Source string `yaml:"-"`
	// lines of entries, for errors found after decoding
	lines map[string]int
	// file names the experiment in errors (ParseExperiment's name)
	file string
}

// WorkloadSpec is one workload entry: a family registered with
// RegisterWorkload and its parameters.
type WorkloadSpec struct {
	Name   string    `yaml:"name"`             // label in results; default: the family
	Family string    `yaml:"family"`           // registered workload family
	Params yaml.Node `yaml:"params,omitempty"` // decoded strictly by the family
	Line   int       `yaml:"-"`

	keyLines map[string]int // line of each field of the entry
}

// SchedulerSpec is one scheduler entry: a kind registered with
// RegisterScheduler and its parameters.
type SchedulerSpec struct {
	Name   string    `yaml:"name"` // label in results; default: the scheduler's own Name()
	Kind   string    `yaml:"kind"` // registered scheduler
	Params yaml.Node `yaml:"params,omitempty"`
	Line   int       `yaml:"-"`

	keyLines map[string]int
	autoName bool   // Name came from the scheduler, not the file
	baseName string // Name in the file as loaded, before any sweep
}

// OutputsSpec says where and what the runner writes.
type OutputsSpec struct {
	// Dir is the results directory, relative to the working directory.
	// Default: results/<name>.
	Dir string `yaml:"dir"`
	// Timelines writes a Chrome trace (Perfetto opens it) of the last
	// measured repetition of every row, on devices that record traces.
	Timelines bool `yaml:"timelines"`
	// Formats to write; default all of md, csv, json, svg.
	Formats []string `yaml:"formats"`
}

// Formats the runner can write.
var allFormats = []string{"md", "csv", "json", "svg", "pdf"}

// LoadExperiment reads and strictly decodes an experiment file. Every error
// names the file and, where it can, the line and field. A results file
// (results.json) stands for the experiment it records: its resolved
// experiment runs again.
func LoadExperiment(path string) (*Experiment, error) {
	data, err := readLimited(path, maxExperimentBytes)
	isJSON := isJSONObject(data)
	if err != nil && isJSON {
		data, err = readLimited(path, maxResultsBytes) // results may be larger
	}
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	dir := filepath.Dir(path)
	if isJSON {
		r, err := ParseResults(data, path)
		if err != nil {
			return nil, err
		}
		if err := r.checkConfigs(path); err != nil {
			return nil, err
		}
		if data, err = r.Resolved.YAML(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		name += " (its resolved experiment)"
		// Its file paths were resolved when it ran: relative to the
		// working directory of that run (the repository root for the
		// committed files), not to the results file.
		dir = ""
	}
	e, err := parseExperiment(data, name, dir)
	if err != nil {
		return nil, err
	}
	e.Source = path
	return e, nil
}

// isJSONObject reports whether data starts with '{' (after blanks): a
// results file, not an experiment file.
func isJSONObject(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// ParseExperiment decodes an experiment from YAML; name is used in errors.
// It checks the structure and that every family, kind and device exists,
// and builds every workload and scheduler once so that bad parameters fail
// here, with their lines, rather than halfway through a run.
func ParseExperiment(data []byte, name string) (*Experiment, error) {
	return parseExperiment(data, name, "")
}

// ParseExperimentIn is ParseExperiment for a file that lives in dir: its
// file-path parameters (RegisterPathParams) are taken relative to dir.
func ParseExperimentIn(data []byte, name, dir string) (*Experiment, error) {
	return parseExperiment(data, name, dir)
}

// parseExperiment is ParseExperiment with file-path parameters taken
// relative to dir (RegisterPathParams).
func parseExperiment(data []byte, name, dir string) (*Experiment, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e := &Experiment{file: name}
	if err := decodeStrict(&root, e, "experiment"); err != nil {
		return nil, atFile(name, err)
	}
	e.lines = map[string]int{}
	if m := mappingOf(&root); m != nil {
		for i := 0; i+1 < len(m.Content); i += 2 {
			key, val := m.Content[i], m.Content[i+1]
			e.lines[key.Value] = key.Line
			switch key.Value {
			case "workloads":
				for j, item := range val.Content {
					if j < len(e.Workloads) {
						e.Workloads[j].Line, e.Workloads[j].keyLines = item.Line, keyLines(item)
					}
				}
			case "schedulers":
				for j, item := range val.Content {
					if j < len(e.Schedulers) {
						e.Schedulers[j].Line, e.Schedulers[j].keyLines = item.Line, keyLines(item)
					}
				}
			case "devices":
				for j, item := range val.Content {
					e.lines[fmt.Sprintf("devices[%d]", j)] = item.Line
				}
			}
		}
	}
	e.resolvePaths(dir)
	if err := e.check(); err != nil {
		return nil, atFile(name, err)
	}
	return e, nil
}

// resolvePaths rewrites relative file-path parameters to lie under dir.
func (e *Experiment) resolvePaths(dir string) {
	if dir == "" || dir == "." {
		return
	}
	regMu.Lock()
	defer regMu.Unlock()
	for i := range e.Workloads {
		w := &e.Workloads[i]
		for _, name := range pathParams[w.Family] {
			for k := 0; w.Params.Kind == yaml.MappingNode && k+1 < len(w.Params.Content); k += 2 {
				v := w.Params.Content[k+1]
				if w.Params.Content[k].Value == name && v.Kind == yaml.ScalarNode && v.Value != "" && !filepath.IsAbs(v.Value) {
					v.Value = filepath.Join(dir, v.Value)
				}
			}
		}
	}
}

// keyLines maps each key of a mapping node to its line.
func keyLines(n *yaml.Node) map[string]int {
	out := map[string]int{}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = n.Content[i].Line
		}
	}
	return out
}

// at is the line of an entry's field, or of the entry.
func at(lines map[string]int, key string, entry int) int {
	if l, ok := lines[key]; ok {
		return l
	}
	return entry
}

// atFile prefixes an error with its file, as file:line: for a LineError.
func atFile(file string, err error) error {
	var le *LineError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%d: %s", file, le.Line, le.Msg)
	}
	return fmt.Errorf("%s: %w", file, err)
}

func mappingOf(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

func (e *Experiment) line(key string) int { return e.lines[key] }

// check validates what decoding cannot: required fields, unique names,
// registered families and kinds, loadable devices, parameters. Its errors
// are LineErrors wherever a line is known.
// MaxRepetitions bounds repetitions and warmup: a typo such as 1e9 would
// run on for days (the committed experiments use at most 60).
const MaxRepetitions = 10000

func (e *Experiment) check() error {
	if e.Name == "" {
		return lineErr(1, "missing field \"name\"")
	}
	if e.Repetitions <= 0 || e.Repetitions > MaxRepetitions {
		return lineErr(e.line("repetitions"), "field \"repetitions\" must be at least 1 and at most %d (experiments.MaxRepetitions), got %d", MaxRepetitions, e.Repetitions)
	}
	if e.Warmup != nil && (*e.Warmup < 0 || *e.Warmup > MaxRepetitions) {
		return lineErr(e.line("warmup"), "field \"warmup\" must not be negative nor above %d (experiments.MaxRepetitions), got %d", MaxRepetitions, *e.Warmup)
	}
	if len(e.Workloads) == 0 {
		return lineErr(e.line("workloads"), "field \"workloads\" must list at least one workload (families: %s)", strings.Join(Workloads(), ", "))
	}
	if len(e.Schedulers) == 0 {
		return lineErr(e.line("schedulers"), "field \"schedulers\" must list at least one scheduler (kinds: %s)", strings.Join(Schedulers(), ", "))
	}
	if len(e.Devices) == 0 {
		return lineErr(e.line("devices"), "field \"devices\" must list at least one device (a simulator config such as h100, a config file, or cuda)")
	}
	if err := e.checkWorkloads(); err != nil {
		return err
	}
	seen, err := e.checkSchedulers()
	if err != nil {
		return err
	}
	if e.Baseline != "" {
		if _, ok := seen[e.Baseline]; !ok {
			return lineErr(e.line("baseline"), "baseline %q is not one of the schedulers (%s)", e.Baseline, strings.Join(e.schedulerNames(), ", "))
		}
	}
	if err := e.checkDevices(); err != nil {
		return err
	}
	for _, f := range e.Outputs.Formats {
		if !contains(allFormats, f) {
			return lineErr(e.line("outputs"), "unknown output format %q (known: %s)", f, strings.Join(allFormats, ", "))
		}
	}
	return nil
}

// checkWorkloads names every workload entry and builds it once.
func (e *Experiment) checkWorkloads() error {
	seen := map[string]int{}
	for i := range e.Workloads {
		w := &e.Workloads[i]
		if w.Family == "" {
			return lineErr(w.Line, "workload %d: missing field \"family\" (families: %s)", i, strings.Join(Workloads(), ", "))
		}
		if w.Name == "" {
			w.Name = w.Family
		}
		if prev, dup := seen[w.Name]; dup {
			return lineErr(w.Line, "workload name %q already used at line %d; give each entry its own name", w.Name, prev)
		}
		seen[w.Name] = w.Line
		if !contains(Workloads(), w.Family) {
			return lineErr(at(w.keyLines, "family", w.Line), "unknown workload family %q (known: %s)", w.Family, strings.Join(Workloads(), ", "))
		}
		if err := checkWorkload(w.Family, paramsNode(&w.Params), e.Seed); err != nil {
			return entryErr(err, w.Line, &w.Params, "workload %q", w.Name)
		}
	}
	return nil
}

// checkSchedulers names every scheduler entry (an unnamed one by its own
// Name()) and builds it once; it returns the names' lines.
func (e *Experiment) checkSchedulers() (map[string]int, error) {
	seen := map[string]int{}
	for i := range e.Schedulers {
		s := &e.Schedulers[i]
		if s.Kind == "" {
			return nil, lineErr(s.Line, "scheduler %d: missing field \"kind\" (kinds: %s)", i, strings.Join(Schedulers(), ", "))
		}
		if !contains(Schedulers(), s.Kind) {
			return nil, lineErr(at(s.keyLines, "kind", s.Line), "unknown scheduler kind %q (known: %s)", s.Kind, strings.Join(Schedulers(), ", "))
		}
		built, err := NewScheduler(s.Kind, paramsNode(&s.Params))
		if err != nil {
			return nil, entryErr(err, s.Line, &s.Params, "scheduler %q", firstNonEmpty(s.Name, s.Kind))
		}
		if s.Name == "" {
			s.Name, s.autoName = built.Name(), true
		}
		if s.baseName == "" {
			s.baseName = s.Name
		}
		if prev, dup := seen[s.Name]; dup {
			return nil, lineErr(s.Line, "scheduler name %q already used at line %d; give each entry its own name", s.Name, prev)
		}
		seen[s.Name] = s.Line
	}
	return seen, nil
}

// checkDevices checks that every device loads, once.
func (e *Experiment) checkDevices() error {
	seenDev := map[string]bool{}
	for i, d := range e.Devices {
		ln := e.line(fmt.Sprintf("devices[%d]", i))
		if seenDev[d] {
			return lineErr(ln, "device %q listed twice", d)
		}
		seenDev[d] = true
		if err := checkDeviceSpec(d); err != nil {
			return lineErr(ln, "device %q: %v", d, err)
		}
	}
	return nil
}

// checked remembers which (family, params, seed) have been built without
// error: factories are deterministic, and some take seconds, so a sweep's
// points and several files naming the same workload build it once to check
// it. Failures are not kept: their errors carry the lines of the file that
// named them.
var checked sync.Map // key -> *checkOnce

type checkOnce struct {
	once sync.Once
	err  error
}

func checkWorkload(family string, params *yaml.Node, seed int64) error {
	key := fmt.Sprintf("%s\x00%d\x00", family, seed)
	if params != nil {
		b, err := yaml.Marshal(params)
		if err != nil {
			return err
		}
		key += string(b)
	}
	c, _ := checked.LoadOrStore(key, &checkOnce{})
	co := c.(*checkOnce)
	co.once.Do(func() { _, co.err = NewWorkload(family, params, seed) })
	if co.err != nil {
		checked.CompareAndDelete(key, co)
		_, err := NewWorkload(family, params, seed) // with this file's lines
		return err
	}
	return nil
}

func lineErr(line int, format string, a ...any) error {
	return &LineError{Line: line, Msg: fmt.Sprintf(format, a...)}
}

// entryErr places a factory's error: at its own line if it has one (an
// unknown or mistyped parameter), else at the entry's params (a value the
// factory rejects), else at the entry.
func entryErr(err error, entryLine int, params *yaml.Node, format string, a ...any) error {
	what := fmt.Sprintf(format, a...)
	var le *LineError
	if errors.As(err, &le) {
		return &LineError{Line: le.Line, Msg: what + ": " + le.Msg}
	}
	line := entryLine
	if params.Kind != 0 && params.Line > 0 {
		line = params.Line
	}
	return &LineError{Line: line, Msg: what + ": " + err.Error()}
}

// paramsNode is nil for an absent params field, so factories keep defaults.
func paramsNode(n *yaml.Node) *yaml.Node {
	if n.Kind == 0 {
		return nil
	}
	return n
}

func (e *Experiment) schedulerNames() []string {
	out := make([]string, len(e.Schedulers))
	for i, s := range e.Schedulers {
		out[i] = s.Name
	}
	return out
}

// Formats is the list of output formats to write, in a fixed order.
func (e *Experiment) Formats() []string {
	if len(e.Outputs.Formats) == 0 {
		return allFormats
	}
	var out []string
	for _, f := range allFormats {
		if contains(e.Outputs.Formats, f) {
			out = append(out, f)
		}
	}
	return out
}

// OutDir is where results go unless the command line says otherwise:
// outputs.dir, or results/ and the name made a plain file name (a name
// such as ../../x never leaves results/).
func (e *Experiment) OutDir() string {
	if e.Outputs.Dir != "" {
		return e.Outputs.Dir
	}
	return filepath.Join("results", FileNames([][]string{{e.Name}})[0])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}
